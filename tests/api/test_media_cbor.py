"""CBOR (`application/cbor`), behind the CBORServingAndStorage gate, off by default.

Bodies in and out as Kubernetes writes them (self-described tag 55799,
strings as byte strings), watch streams as CBOR Sequences
(`application/cbor-seq`), server-side apply as `application/apply-patch+cbor`,
and no CBOR form of the other patch types.
"""

from __future__ import annotations

import cbor2
import pytest

from runtime.machinery.serializer import cbor
from runtime.server.featuregates import DEFAULT_GATES
from tests.support.server import Server, start_in_process

CBOR = "application/cbor"


@pytest.fixture
async def srv(nursery, tmp_path) -> Server:
    return await start_in_process(nursery, tmp_path, feature_gates={**DEFAULT_GATES, "CBORServingAndStorage": True})


def role(srv: Server, name: str, **extra) -> dict:
    return {"apiVersion": f"rbac.authorization.{srv.domain}/v1", "kind": "ClusterRole", "metadata": {"name": name},
            "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["namespaces"]}], **extra}


async def test_cbor_is_406_and_415_while_the_gate_is_off(server):
    async with server.client() as c:
        answer = await c.get(f"{server.rbac}/clusterroles", headers={"Accept": CBOR})
        body = await c.post(f"{server.rbac}/clusterroles", content=cbor.encode(role(server, "x")),
                            headers={"Content-Type": CBOR})
        apply = await c.patch(f"{server.rbac}/clusterroles/x", params={"fieldManager": "m"},
                              content=cbor.encode(role(server, "x")),
                              headers={"Content-Type": "application/apply-patch+cbor"})
    assert answer.status_code == 406 and answer.json()["reason"] == "NotAcceptable"
    assert "application/cbor" not in answer.json()["message"]
    assert body.status_code == 415 and body.json()["reason"] == "UnsupportedMediaType"
    assert apply.status_code == 415


async def test_cbor_answers_are_self_described_with_byte_strings(srv):
    async with srv.client() as c:
        r = await c.get(f"{srv.rbac}/clusterroles/admin", headers={"Accept": CBOR})
        plain = (await c.get(f"{srv.rbac}/clusterroles/admin")).json()
    assert r.status_code == 200 and r.headers["content-type"] == CBOR
    assert r.content[:3] == b"\xd9\xd9\xf7"
    raw = cbor2.loads(r.content[3:])
    assert raw[b"kind"] == b"ClusterRole" and raw[b"metadata"][b"name"] == b"admin"
    assert cbor.decode(r.content) == plain


async def test_cbor_bodies_are_read_tagged_or_not_with_text_or_byte_strings(srv):
    async with srv.client() as c:
        tagged = await c.post(f"{srv.rbac}/clusterroles", content=cbor.encode(role(srv, "tagged")),
                              headers={"Content-Type": CBOR})
        plain_text = await c.post(f"{srv.rbac}/clusterroles", content=cbor2.dumps(role(srv, "text")),
                                  headers={"Content-Type": CBOR})
    assert tagged.status_code == 201 and tagged.json()["metadata"]["name"] == "tagged"
    assert plain_text.status_code == 201 and plain_text.json()["rules"] == role(srv, "x")["rules"]


async def test_cbor_body_with_a_duplicate_key_is_400(srv):
    body = cbor2.dumps(role(srv, "dup"))
    dup = b"\xa5" + body[1:] + cbor2.dumps("kind") + cbor2.dumps("ClusterRole")  # a 5th pair repeating "kind"
    async with srv.client() as c:
        r = await c.post(f"{srv.rbac}/clusterroles", content=dup, headers={"Content-Type": CBOR})
    assert r.status_code == 400 and "duplicate key" in r.json()["message"]


async def test_errors_are_status_in_cbor_when_asked(srv):
    async with srv.client() as c:
        r = await c.get(f"{srv.rbac}/clusterroles/missing", headers={"Accept": CBOR})
    assert r.status_code == 404 and r.headers["content-type"] == CBOR
    status = cbor.decode(r.content)
    assert (status["kind"], status["reason"], status["code"]) == ("Status", "NotFound", 404)


async def test_cbor_watch_is_a_cbor_sequence_of_self_described_events(srv, autojump_clock):
    async with srv.client() as c:
        await c.post(f"{srv.rbac}/clusterroles", json=role(srv, "w"))
        async with c.stream("GET", f"{srv.rbac}/clusterroles",
                            params={"watch": "1", "timeoutSeconds": "1", "fieldSelector": "metadata.name=w"},
                            headers={"Accept": CBOR}) as r:
            assert r.headers["content-type"] == "application/cbor-seq"
            data = await r.aread()
    assert data[:3] == b"\xd9\xd9\xf7"
    events = cbor.decode_sequence(data)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "w")]
    # The event's object is the object's own self-described encoding, embedded.
    assert cbor.encode(events[0]["object"]) in data


async def test_server_side_apply_takes_cbor_bodies(srv):
    async with srv.client() as c:
        r = await c.patch(f"{srv.rbac}/clusterroles/applied", params={"fieldManager": "tool"},
                          content=cbor.encode(role(srv, "applied")),
                          headers={"Content-Type": "application/apply-patch+cbor", "Accept": CBOR})
    assert r.status_code == 201, r.content
    applied = cbor.decode(r.content)
    assert applied["metadata"]["managedFields"][0]["manager"] == "tool"
    assert applied["rules"] == role(srv, "x")["rules"]


@pytest.mark.parametrize("patch_type", ["application/merge-patch+cbor", "application/json-patch+cbor",
                                        "application/strategic-merge-patch+cbor"])
async def test_other_patch_types_have_no_cbor_form(srv, patch_type):
    async with srv.client() as c:
        await c.post(f"{srv.rbac}/clusterroles", json=role(srv, "p"))
        r = await c.patch(f"{srv.rbac}/clusterroles/p", content=cbor.encode({"metadata": {"labels": {"a": "b"}}}),
                          headers={"Content-Type": patch_type})
    assert r.status_code == 415 and r.json()["reason"] == "UnsupportedMediaType"
