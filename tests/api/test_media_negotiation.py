"""Negotiation over HTTP: Accept picks the answer, Content-Type reads the body, independently; 406 and 415."""

from __future__ import annotations

import json

import yaml

from runtime.machinery.serializer import protobuf

PB = "application/vnd.kubernetes.protobuf"


def role(srv, name: str) -> dict:
    return {"apiVersion": f"rbac.authorization.{srv.domain}/v1", "kind": "ClusterRole", "metadata": {"name": name},
            "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["namespaces"]}]}


async def test_nothing_acceptable_is_a_406_status(server):
    async with server.client() as c:
        r = await c.get(f"{server.rbac}/clusterroles", headers={"Accept": "text/html, application/xml"})
    assert r.status_code == 406 and r.headers["content-type"] == "application/json"
    status = r.json()
    assert (status["kind"], status["reason"], status["code"]) == ("Status", "NotAcceptable", 406)
    assert status["message"].startswith("only the following media types are accepted: application/json")


async def test_unsupported_request_content_type_is_a_415_status(server):
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", content=b"<role/>", headers={"Content-Type": "text/xml"})
    assert r.status_code == 415 and r.json()["reason"] == "UnsupportedMediaType"


async def test_body_and_answer_encodings_are_chosen_independently(server):
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", content=yaml.safe_dump(role(server, "ind")).encode(),
                         headers={"Content-Type": "application/yaml", "Accept": PB})
        back = await c.put(f"{server.rbac}/clusterroles/ind", content=protobuf.encode(protobuf.decode(r.content)),
                           headers={"Content-Type": PB, "Accept": "application/yaml"})
    assert r.status_code == 201 and r.headers["content-type"] == PB
    assert protobuf.decode(r.content)["metadata"]["name"] == "ind"
    assert back.status_code == 200 and yaml.safe_load(back.content)["metadata"]["name"] == "ind"


async def test_q_values_and_wildcards_choose_among_several_types(server):
    async with server.client() as c:
        yaml_first = await c.get(f"{server.rbac}/clusterroles/admin",
                                 headers={"Accept": "application/json;q=0.5, application/yaml;q=0.9"})
        wildcard = await c.get(f"{server.rbac}/clusterroles/admin", headers={"Accept": "*/*"})
        skipped = await c.get(f"{server.rbac}/clusterroles/admin",
                              headers={"Accept": "text/html, application/vnd.kubernetes.protobuf;q=0.1"})
    assert yaml_first.headers["content-type"] == "application/yaml"
    assert wildcard.headers["content-type"] == "application/json" and wildcard.json()["kind"] == "ClusterRole"
    assert skipped.headers["content-type"] == PB


async def test_pretty_true_indents_json(server):
    async with server.client() as c:
        pretty = await c.get(f"{server.rbac}/clusterroles/admin", params={"pretty": "true"})
        compact = await c.get(f"{server.rbac}/clusterroles/admin")
        by_agent = await c.get(f"{server.rbac}/clusterroles/admin", headers={"User-Agent": "curl/8.5.0"})
    assert pretty.text.startswith('{\n  "') and json.loads(pretty.text) == compact.json()
    assert "\n" not in compact.text.strip()
    assert by_agent.text.startswith('{\n  "')


async def test_a_yaml_only_watch_is_406(server):
    async with server.client() as c:
        r = await c.get(f"{server.rbac}/clusterroles", params={"watch": "1"}, headers={"Accept": "application/yaml"})
    status = yaml.safe_load(r.content)  # the error itself can be YAML: it is one document, not a stream
    assert r.status_code == 406 and status["reason"] == "NotAcceptable"
    assert "application/yaml" not in status["message"]


async def test_a_json_watch_is_answered_as_application_json(server, autojump_clock):
    async with server.client() as c:
        async with c.stream("GET", f"{server.rbac}/clusterroles", params={"watch": "1", "timeoutSeconds": "1"},
                            headers={"Accept": "application/json;stream=watch"}) as r:
            lines = [json.loads(line) async for line in r.aiter_lines() if line]
    assert r.headers["content-type"] == "application/json"
    assert lines and all(set(e) == {"type", "object"} for e in lines)
