"""Audit of Secrets and ConfigMaps (issue 37, point 5): the default policy (`--audit-log-path` without
`--audit-policy-file`: Kubernetes' recommended policy, kube-up's and GKE's `audit-policy.yaml`) logs their
requests at `Metadata`, never their data; a user's policy that asks more gets it, as kube-apiserver does.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from api.audit import default_policy
from runtime.server.rbac import RequestInfo
from tests.support.server import Server, start_in_process

RBAC = "rbac.authorization.svc.io"
SECRET_VALUE = "hunter2-the-secret-value"
CONFIG_VALUE = "the-configmap-value"
SECRETS = "/api/v1/namespaces/default/secrets"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def events_of(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


async def write_secrets_and_configmaps(server: Server) -> None:
    """Every write a client makes of a Secret and a ConfigMap, and the reads, each answered 2xx."""
    merge = {"Content-Type": "application/merge-patch+json"}
    apply = {"Content-Type": "application/apply-patch+yaml"}
    async with server.client() as admin:
        secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
                  "data": {"password": b64(SECRET_VALUE)}, "stringData": {"plain": SECRET_VALUE}}
        configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": CONFIG_VALUE}}
        answers = [
            await admin.post(SECRETS, json=secret),
            await admin.get(f"{SECRETS}/s"),
            await admin.get(SECRETS),
            await admin.patch(f"{SECRETS}/s", json={"stringData": {"more": SECRET_VALUE}}, headers=merge),
            await admin.patch(f"{SECRETS}/applied", params={"fieldManager": "me"}, headers=apply,
                              content=json.dumps({**secret, "metadata": {"name": "applied"}})),
            await admin.post(CONFIGMAPS, json=configmap),
            await admin.patch(f"{CONFIGMAPS}/c", json={"data": {"k2": CONFIG_VALUE}}, headers=merge),
            await admin.get(f"{CONFIGMAPS}/c"),
        ]
        current = (await admin.get(f"{SECRETS}/s")).json()
        current["data"]["other"] = b64(SECRET_VALUE)
        answers.append(await admin.put(f"{SECRETS}/s", json=current))
        answers.append(await admin.delete(f"{SECRETS}/s"))
        answers.append(await admin.delete(f"{CONFIGMAPS}/c"))
        assert [a.status_code for a in answers if a.status_code >= 300] == [], [a.text for a in answers]


async def test_the_default_policy_logs_secret_and_configmap_requests_at_metadata_never_their_data(
        nursery, tmp_path, autojump_clock):
    log = tmp_path / "audit.log"
    server = await start_in_process(nursery, tmp_path, audit_log_path=str(log))  # no policy file: the default
    await write_secrets_and_configmaps(server)
    async with server.client() as admin:  # the same default logs an RBAC write with its objects
        assert (await admin.post(f"{server.rbac}/clusterroles", json={
            "apiVersion": f"{RBAC}/v1", "kind": "ClusterRole", "metadata": {"name": "r"}})).status_code == 201
    events = events_of(log)
    sensitive = [e for e in events if e.get("objectRef", {}).get("resource") in ("secrets", "configmaps")]
    assert {(e["objectRef"]["resource"], e["verb"]) for e in sensitive} >= {
        ("secrets", "create"), ("secrets", "get"), ("secrets", "list"), ("secrets", "patch"), ("secrets", "update"),
        ("secrets", "delete"), ("configmaps", "create"), ("configmaps", "patch"), ("configmaps", "delete")}
    assert {e["level"] for e in sensitive} == {"Metadata"}
    assert {e["stage"] for e in sensitive} == {"ResponseComplete"}  # the recommended policy omits RequestReceived
    assert [e for e in sensitive if "requestObject" in e or "responseObject" in e] == []
    text = log.read_text()
    for value in (SECRET_VALUE, CONFIG_VALUE, b64(SECRET_VALUE)):
        assert value not in text
    role = [e for e in events if e.get("objectRef", {}).get("resource") == "clusterroles"]
    assert [(e["level"], e["responseObject"]["metadata"]["name"]) for e in role] == [("RequestResponse", "r")]


@pytest.mark.stores("memory")  # the policy alone: no store to vary
@pytest.mark.parametrize("resource", ["secrets", "configmaps", "serviceaccounts/token", "tokenreviews"])
@pytest.mark.parametrize("verb", ["create", "get", "list", "watch", "update", "patch", "delete", "deletecollection"])
def test_the_default_policy_puts_credentials_at_metadata_for_every_verb(resource, verb):
    name, _, sub = resource.partition("/")
    group = "authentication.k8s.io" if name == "tokenreviews" else ""
    info = RequestInfo(verb=verb, api_group=group, api_version="v1", resource=name, subresource=sub,
                       namespace="" if group else "default", name="x", resource_request=True,
                       path=f"/api/v1/{resource}")
    level, _, _ = default_policy("k8s.io").evaluate(None, info)
    assert level == "Metadata"


async def test_a_policy_asking_request_response_of_secrets_logs_their_data_as_kube_does(
        nursery, tmp_path, autojump_clock):
    (tmp_path / "policy.yaml").write_text("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n"
                                          "- level: RequestResponse\n  resources: [{group: '', resources: [secrets]}]\n")
    log = tmp_path / "audit.log"
    server = await start_in_process(nursery, tmp_path, audit_log_path=str(log),
                                    audit_policy_file=str(tmp_path / "policy.yaml"))
    await write_secrets_and_configmaps(server)
    created = [e for e in events_of(log) if e["verb"] == "create" and e["stage"] == "ResponseComplete"]
    assert created[0]["requestObject"]["stringData"] == {"plain": SECRET_VALUE}  # kube does not redact
    assert created[0]["responseObject"]["data"]["password"] == b64(SECRET_VALUE)
