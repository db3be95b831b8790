"""Audit (issue 17.2): `--audit-policy-file` (audit.k8s.io/v1 Policy) and `--audit-log-path`, one JSON
audit.k8s.io/v1 Event per line, as kube-apiserver writes them.

The same session is replayed under a policy at each level and its events checked: which stages, which
fields, which objects, the authorization annotations, impersonation, and never a token.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from api.cli import main as miniplane
from tests.support.metrics import scrape
from tests.support.server import Server, start_in_process

RBAC = "rbac.authorization.svc.io"
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


def cr(name: str, **extra) -> dict:
    return {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole", "metadata": {"name": name}, "rules": [], **extra}


async def audited_server(nursery, tmp_path: Path, policy: str) -> tuple[Server, Path]:
    (tmp_path / "policy.yaml").write_text(policy)
    log = tmp_path / "audit" / "audit.log"
    server = await start_in_process(nursery, tmp_path, audit_policy_file=str(tmp_path / "policy.yaml"),
                                    audit_log_path=str(log))
    return server, log


def events_of(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


async def replay_session(server: Server) -> dict[str, str]:
    """A kubectl-like session; returns each step's Audit-Id answer header."""
    url = f"{server.rbac}/clusterroles"
    ids: dict[str, str] = {}
    async with server.client() as admin, server.client(token=None) as anonymous, \
            server.client(token="not-a-token") as stranger:
        steps = [
            ("create", admin.post(url, json=cr("audited", rules=[{"verbs": ["get"], "apiGroups": [""],
                                                                   "resources": ["pods"]}]))),
            ("get", admin.get(f"{url}/audited")),
            ("list", admin.get(url, params={"limit": "2"})),
            ("patch", admin.patch(f"{url}/audited", json={"metadata": {"labels": {"a": "b"}}},
                                  headers={"Content-Type": "application/merge-patch+json"})),
            ("missing", admin.get(f"{url}/missing")),
            ("forbidden", anonymous.get(url)),
            ("unauthenticated", stranger.get(url)),
            ("impersonated", admin.get(f"{url}/audited", headers={"Impersonate-User": "bob"})),
            ("version", admin.get("/version")),
            ("delete", admin.delete(f"{url}/audited")),
        ]
        for step, call in steps:
            response = await call
            ids[step] = response.headers.get("Audit-Id", "")
        async with admin.stream("GET", url, params={"watch": "1", "fieldSelector": "metadata.name=nothing",
                                                    "timeoutSeconds": "1"}) as watch:
            ids["watch"] = watch.headers.get("Audit-Id", "")
            async for _ in watch.aiter_lines():
                pass  # the stream's end comes after the server wrote the watch's last event
    return ids


@pytest.mark.parametrize("level", ["None", "Metadata", "Request", "RequestResponse"])
async def test_a_session_is_audited_at_the_policy_level(nursery, tmp_path, autojump_clock, level):
    policy = f"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: {level}\n"
    server, log = await audited_server(nursery, tmp_path, policy)
    ids = await replay_session(server)
    events = events_of(log)
    assert server.token not in log.read_text() if log.exists() else True  # never a credential
    assert "not-a-token" not in (log.read_text() if log.exists() else "")
    if level == "None":  # not audited, yet each answer names an ID of its own, as kube-apiserver's
        assert events == [] and "" not in ids.values() and len(set(ids.values())) == len(ids)
        return
    by_id: dict[str, list[dict]] = {}
    for event in events:
        by_id.setdefault(event["auditID"], []).append(event)
        assert (event["kind"], event["apiVersion"], event["level"]) == ("Event", "audit.k8s.io/v1", level)
        assert TIMESTAMP.match(event["requestReceivedTimestamp"]) and TIMESTAMP.match(event["stageTimestamp"])
        assert event["sourceIPs"] and event["userAgent"].startswith("python-httpx")
    assert set(by_id) == set(ids.values())  # one audit ID per request, answered in the Audit-Id header
    steps = {step: by_id[audit_id] for step, audit_id in ids.items()}
    for step, stages in steps.items():
        expected = ["RequestReceived", "ResponseStarted", "ResponseComplete"] if step == "watch" else \
            ["RequestReceived", "ResponseComplete"]
        assert [e["stage"] for e in stages] == expected, step
        assert "responseStatus" not in stages[0]
    done = {step: stages[-1] for step, stages in steps.items()}

    create = done["create"]
    assert (create["verb"], create["requestURI"]) == ("create", f"{server.rbac}/clusterroles")
    assert create["user"] == {"username": "admin", "uid": "admin", "groups": ["system:masters",
                                                                            "system:authenticated"]}
    # The name of a create comes from its body, as kube-apiserver's LogRequestObject completes the reference.
    assert create["objectRef"] == {"resource": "clusterroles", "name": "audited", "apiGroup": RBAC,
                                   "apiVersion": "v1"}
    assert create["responseStatus"] == {"metadata": {}, "code": 201}
    assert create["annotations"]["authorization.k8s.io/decision"] == "allow"
    assert "authorization.k8s.io/reason" in create["annotations"]
    assert done["list"]["requestURI"] == f"{server.rbac}/clusterroles?limit=2"
    assert done["list"]["objectRef"] == {"resource": "clusterroles", "apiGroup": RBAC, "apiVersion": "v1"}
    assert done["patch"]["verb"] == "patch" and done["delete"]["verb"] == "delete"
    assert done["watch"]["verb"] == "watch" and steps["watch"][1]["responseStatus"] == {"metadata": {},
                                                                                       "code": 200}
    missing = done["missing"]["responseStatus"]
    assert (missing["code"], missing["reason"], missing["status"]) == (404, "NotFound", "Failure")
    forbidden = done["forbidden"]
    assert forbidden["user"] == {"username": "system:anonymous", "groups": ["system:unauthenticated"]}
    assert forbidden["responseStatus"]["code"] == 403
    assert forbidden["annotations"] == {"authorization.k8s.io/decision": "forbid",
                                        "authorization.k8s.io/reason": ""}
    unauthenticated = done["unauthenticated"]
    assert unauthenticated["user"] == {} and unauthenticated["responseStatus"]["code"] == 401
    assert "annotations" not in unauthenticated  # never authorized
    impersonated = done["impersonated"]
    assert impersonated["user"]["username"] == "admin"
    assert impersonated["impersonatedUser"] == {"username": "bob", "groups": ["system:authenticated"]}
    assert impersonated["responseStatus"]["code"] == 403  # bob may not get clusterroles
    assert impersonated["annotations"]["authorization.k8s.io/decision"] == "forbid"
    version = done["version"]
    assert (version["verb"], version["requestURI"], version["responseStatus"]["code"]) == ("get", "/version", 200)
    assert "objectRef" not in version

    # The objects, by level.
    if level == "Metadata":
        assert not any("requestObject" in e or "responseObject" in e for e in events)
        return
    assert create["requestObject"]["metadata"]["name"] == "audited"
    assert create["requestObject"]["rules"] == [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]
    assert done["patch"]["requestObject"] == {"metadata": {"labels": {"a": "b"}}}
    assert "requestObject" not in done["get"]
    if level == "Request":
        assert not any("responseObject" in e for e in events)
        return
    assert create["responseObject"]["metadata"]["name"] == "audited"
    assert create["responseObject"]["metadata"]["uid"]
    assert done["get"]["responseObject"]["metadata"]["name"] == "audited"
    assert done["list"]["responseObject"]["kind"] == "ClusterRoleList"
    assert len(done["list"]["responseObject"]["items"]) == 2
    assert done["patch"]["responseObject"]["metadata"]["labels"] == {"a": "b"}
    assert done["missing"]["responseObject"]["reason"] == "NotFound"


async def test_rules_pick_the_level_per_request_first_match_wins_and_stages_are_omitted(nursery, tmp_path,
                                                                                         autojump_clock):
    policy = f"""
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
omitManagedFields: true
rules:
- level: None
  nonResourceURLs: ["/version", "/healthz*"]
- level: None
  verbs: [watch]
- level: RequestResponse
  users: [admin]
  resources:
  - group: {RBAC}
    resources: [clusterroles]
    resourceNames: [kept]
- level: Request
  userGroups: [system:masters]
  verbs: [create, update, patch, delete]
- level: Metadata
"""
    server, log = await audited_server(nursery, tmp_path, policy)
    url = f"{server.rbac}/clusterroles"
    async with server.client() as admin:
        await admin.get("/version")
        await admin.get("/healthz")
        await admin.post(url, json=cr("kept"))
        await admin.post(url, json=cr("other"))
        await admin.get(f"{url}/kept")
        await admin.get(f"{url}/other")
        async with admin.stream("GET", url, params={"watch": "1", "timeoutSeconds": "1"}) as watch:
            async for _ in watch.aiter_lines():
                pass
    events = events_of(log)
    seen = [(e["verb"], e.get("objectRef", {}).get("name", ""), e["level"], e["stage"]) for e in events]
    # A create names no object in its path: resourceNames never match it, as in Kubernetes.
    assert seen == [("create", "kept", "Request", "ResponseComplete"),
                    ("create", "other", "Request", "ResponseComplete"),
                    ("get", "kept", "RequestResponse", "ResponseComplete"),
                    ("get", "other", "Metadata", "ResponseComplete")]
    assert events[2]["responseObject"]["metadata"]["name"] == "kept"
    assert "managedFields" not in events[2]["responseObject"]["metadata"]


async def test_an_unexpected_error_is_audited_at_the_panic_stage(nursery, tmp_path, autojump_clock, caplog):
    server, log = await audited_server(nursery, tmp_path, "apiVersion: audit.k8s.io/v1\nkind: Policy\n"
                                                           "rules: [{level: Metadata}]\n")

    async def broken(*args, **kwargs):
        raise RuntimeError("a bug")
    server.registry.get = broken
    async with server.client() as admin:
        answer = await admin.get(f"{server.rbac}/clusterroles/admin")
    assert answer.status_code == 500
    events = events_of(log)
    assert [e["stage"] for e in events] == ["RequestReceived", "Panic"]
    assert events[1]["responseStatus"]["code"] == 500 and events[1]["responseStatus"]["reason"] == "InternalError"


async def test_the_audit_log_goes_to_stdout_with_a_dash(nursery, tmp_path, autojump_clock, capsys):
    (tmp_path / "policy.yaml").write_text("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Metadata}]\n")
    server = await start_in_process(nursery, tmp_path, audit_policy_file=str(tmp_path / "policy.yaml"),
                                    audit_log_path="-")
    async with server.client() as admin:
        await admin.get("/version")
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert [(e["requestURI"], e["stage"]) for e in lines] == [("/version", "RequestReceived"),
                                                              ("/version", "ResponseComplete")]


@pytest.mark.parametrize("policy, message", [
    ("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Loud}]\n", 'rules[0].level: Unsupported value: "Loud"'),
    ("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: [/x], namespaces: [a]}]\n",
     "rules cannot apply to both regular resources and non-resource URLs"),
    ("apiVersion: v1\nkind: ConfigMap\n", "expected apiVersion audit.k8s.io/v1, kind Policy"),
])
def test_a_policy_kubernetes_would_refuse_stops_the_server_at_start(tmp_path, capsys, policy, message):
    (tmp_path / "policy.yaml").write_text(policy)
    code = miniplane(["serve", "--data-dir", str(tmp_path / "data"), "--audit-policy-file",
                      str(tmp_path / "policy.yaml"), "--audit-log-path", str(tmp_path / "audit.log")])
    assert code == 2
    assert message in capsys.readouterr().err


async def test_an_audit_log_that_cannot_be_written_is_counted_and_requests_are_still_answered(
        nursery, tmp_path, autojump_clock, caplog):
    server, log = await audited_server(nursery, tmp_path, "apiVersion: audit.k8s.io/v1\nkind: Policy\n"
                                                           "rules: [{level: Metadata}]\n")

    def full_disk(line: str) -> None:
        raise OSError(28, "No space left on device")
    server.plane.state.auditor.log.write = full_disk
    async with server.client() as admin:
        assert (await admin.get("/version")).status_code == 200
        samples = await scrape(admin)
    assert samples.value("apiserver_audit_error_total", plugin="log") >= 2  # the version's two stages at least
    assert "No space left on device" in caplog.text


async def test_every_answer_names_an_audit_id_and_echoes_one_sent_without_a_policy(server):
    # kube-apiserver's WithAuditInit runs whatever the audit policy: every answer carries an Audit-Id.
    async with server.client() as c:
        first, missing = await c.get("/version"), await c.get(f"{server.rbac}/clusterroles/missing")
        sent = await c.get("/version", headers={"Audit-ID": "my-request"})
    assert missing.status_code == 404 and first.headers["audit-id"] != missing.headers["audit-id"]
    assert len(first.headers["audit-id"]) == 36 and sent.headers["audit-id"] == "my-request"
