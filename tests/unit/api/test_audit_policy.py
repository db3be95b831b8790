"""The audit policy's rules (Kubernetes' policy checker) and the audit log's rotation (lumberjack's)."""

from __future__ import annotations

import datetime as dt

import pytest

from api.audit import PolicyError, load_policy
from api.auditlog import AuditLog
from api.requestinfo import request_info
from runtime.server.rbac.user import UserInfo

ALICE = UserInfo("alice", groups=("devs", "system:authenticated"))
BOB = UserInfo("bob", groups=("system:authenticated",))


def level(policy: str, user: UserInfo | None, method: str, path: str, query: dict | None = None) -> str:
    rules = load_policy("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n" + policy)
    return rules.evaluate(user, request_info(method, path, query or {}))[0]


RULES = """
- level: RequestResponse
  resources: [{group: "", resources: ["namespaces/status"]}]
- level: Request
  resources: [{group: "g.io", resources: ["*/scale"]}]
- level: RequestResponse
  users: [alice]
  resources: [{group: "g.io", resources: ["widgets"], resourceNames: [w1]}]
- level: Metadata
  resources: [{group: "g.io", resources: ["widgets/*"]}]
- level: Request
  userGroups: [devs]
  namespaces: [team]
- level: Metadata
  verbs: [get]
  nonResourceURLs: ["/healthz*", /version]
- level: None
"""


@pytest.mark.parametrize("user, method, path, expected", [
    (BOB, "PUT", "/api/v1/namespaces/a/status", "RequestResponse"),  # resource/subresource
    (BOB, "GET", "/api/v1/namespaces/a", "None"),
    (BOB, "PUT", "/apis/g.io/v1/namespaces/x/gadgets/g/scale", "Request"),  # */sub
    (BOB, "GET", "/apis/g.io/v1/namespaces/x/widgets/w1/log", "Metadata"),  # res/*
    (ALICE, "GET", "/apis/g.io/v1/namespaces/x/widgets/w1", "RequestResponse"),  # user and name
    (ALICE, "GET", "/apis/g.io/v1/namespaces/x/widgets/w2", "Metadata"),  # another name: res/* takes it
    (BOB, "GET", "/apis/g.io/v1/namespaces/x/widgets/w1", "Metadata"),  # another user: res/* (the bare too)
    (BOB, "GET", "/apis/g.io/v1/namespaces/x/gadgets/g", "None"),
    (ALICE, "DELETE", "/apis/h.io/v1/namespaces/team/things/t", "Request"),  # group and namespace
    (ALICE, "DELETE", "/apis/h.io/v1/namespaces/other/things/t", "None"),
    (BOB, "GET", "/healthz/ping", "Metadata"),  # prefix
    (BOB, "GET", "/version", "Metadata"),
    (BOB, "POST", "/version", "None"),  # verb
    (BOB, "GET", "/versions", "None"),  # exact
    (None, "GET", "/version", "Metadata"),  # a request that failed authentication: no user
])
def test_the_first_rule_that_matches_decides_the_level(user, method, path, expected):
    assert level(RULES, user, method, path) == expected


def test_namespaces_match_resources_only_and_the_empty_string_is_cluster_scope():
    rule = '- level: Request\n  namespaces: [""]\n- level: None\n'
    assert level(rule, BOB, "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles") == "Request"
    assert level(rule, BOB, "GET", "/api/v1/namespaces/a/configmaps") == "None"
    assert level(rule, BOB, "GET", "/version") == "None"


def test_omitted_stages_add_up_and_managed_fields_follow_the_rule():
    policy = load_policy("""
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
omitManagedFields: true
rules:
- level: Metadata
  verbs: [watch]
  omitStages: [ResponseStarted]
  omitManagedFields: false
- level: Metadata
""")
    watch = request_info("GET", "/api/v1/namespaces", {"watch": "1"})
    assert policy.evaluate(BOB, watch) == ("Metadata", frozenset({"RequestReceived", "ResponseStarted"}), False)
    assert policy.evaluate(BOB, request_info("GET", "/api/v1/namespaces", {})) == (
        "Metadata", frozenset({"RequestReceived"}), True)


@pytest.mark.parametrize("rules, message", [
    ("- {}\n", "rules[0].level: Required value"),
    ("- level: Metadata\n  omitStages: [Later]\n", 'rules[0].omitStages[0]: Unsupported value: "Later"'),
    ("- level: Metadata\n  nonResourceURLs: [healthz]\n", 'Invalid value: "healthz"'),
    ("- level: Metadata\n  resources: [{group: '', resources: ['p*ds']}]\n", 'Invalid value: "p*ds"'),
    ("- level: Metadata\n  resources: [{resources: ['*'], resourceNames: [a]}]\n", "cannot be used with wildcard"),
    ("- level: Metadata\n  colour: red\n", 'rules[0]: unknown field "colour"'),
])
def test_a_malformed_policy_is_refused_saying_where(rules, message):
    with pytest.raises(PolicyError, match=message.replace("[", r"\[").replace("]", r"\]").replace("*", r"\*")):
        load_policy("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n" + rules)


def test_the_log_rotates_by_size_and_keeps_the_newest_backups(tmp_path):
    clock = [dt.datetime(2025, 1, 1, 12, 0, 0, tzinfo=dt.timezone.utc)]
    path = tmp_path / "audit.log"
    log = AuditLog(open(path, "a"), path, max_bytes=100, max_backups=2, clock=lambda: clock[0])
    line = "x" * 39 + "\n"  # 40 bytes: two fit, the third rotates
    for i in range(9):
        clock[0] += dt.timedelta(seconds=1)
        log.write(line)
    log.close()
    backups = log.backups()
    assert [b.name for b in backups] == ["audit-2025-01-01T12-00-07.000.log", "audit-2025-01-01T12-00-09.000.log"]
    assert all(b.read_text() == line * 2 for b in backups)
    assert path.read_text() == line  # the ninth, in a fresh file
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_backups_older_than_max_age_are_removed(tmp_path):
    clock = [dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)]
    path = tmp_path / "audit.log"
    log = AuditLog(open(path, "a"), path, max_bytes=10, max_age_days=2, clock=lambda: clock[0])
    for day in range(5):
        clock[0] = dt.datetime(2025, 1, 1 + day, tzinfo=dt.timezone.utc)
        log.write("0123456789\n")
        log.write("0123456789\n")  # rotates the day's first line away
    log.close()
    assert [b.name for b in log.backups()] == ["audit-2025-01-03T00-00-00.000.log", "audit-2025-01-04T00-00-00.000.log",
                                               "audit-2025-01-05T00-00-00.000.log"]
