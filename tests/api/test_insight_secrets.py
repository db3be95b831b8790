"""RBAC over ConfigMaps and Secrets now they are served (issue 37, point 5): Kubernetes' bootstrap policy
(`view` reads configmaps, never secrets; `edit` reads both), `miniplane rbac lint` ranking a grant that
reads secrets Critical, and `who-can` and `access-matrix` knowing both resources as served ones.
"""

from __future__ import annotations

import json

import pytest

from tests.support.insight import cli
from tests.support.rbac import bind, grant, namespaces, ok, rule, token_file, user
from tests.support.server import Server, start_in_process


@pytest.fixture
async def srv(nursery, tmp_path) -> Server:
    srv = await start_in_process(nursery, tmp_path, token_auth_file=token_file(tmp_path))
    await namespaces(srv, "team-a")
    async with srv.client() as admin:
        await ok(await admin.post("/api/v1/namespaces/team-a/secrets", json={
            "metadata": {"name": "db"}, "stringData": {"password": "x"}}), 201)
        await ok(await admin.post("/api/v1/namespaces/team-a/configmaps", json={
            "metadata": {"name": "app"}, "data": {"k": "v"}}), 201)
    return srv


def rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()]


async def test_view_reads_configmaps_never_secrets_and_edit_reads_both(srv):
    # The roles `view` and `edit` aggregate (a controller, off here): their rules are these.
    await bind(srv, "viewer", "ClusterRole", "system:aggregate-to-view", [user("alice")], namespace="team-a")
    await bind(srv, "editor", "ClusterRole", "system:aggregate-to-edit", [user("bob")], namespace="team-a")
    for who, secrets in (("alice", ["✖", "✖", "✖"]), ("bob", ["✔", "✔", "✔"])):
        r = await cli(srv, "access-matrix", "--as", who, "-n", "team-a", "--verbs", "get,list,watch")
        assert r.code == 0, r.err
        table = {row[0]: row[1:] for row in rows(r.out)}
        assert table["secrets"] == secrets
        if who == "alice":
            assert table["configmaps"] == ["✔", "✔", "✔"]


async def test_rbac_lint_ranks_a_grant_that_reads_secrets_critical(srv):
    await grant(srv, user("alice"), rule(["get", "list", "watch"], ["secrets"]), namespace="team-a",
                name="secret-reader")
    await grant(srv, user("alice"), rule(["get", "list", "watch"], ["configmaps"]), namespace="team-a",
                name="config-reader")
    r = await cli(srv, "rbac", "lint")
    assert r.code == 0, r.err
    found = [row for row in rows(r.out) if "secret-reader" in row or "config-reader" in row]
    assert [row[:3] for row in found] == [["Critical", "RiskyGrant", "ClusterRole"]], r.out
    assert "secret-reader" in found[0] and "read secrets" in " ".join(found[0])


async def test_who_can_read_secrets_and_configmaps_knows_them_as_namespaced_served_resources(srv):
    await grant(srv, user("alice"), rule(["get"], ["secrets"]), namespace="team-a", name="reads-secrets")
    await grant(srv, user("bob"), rule(["list"], ["configmaps"]), namespace="team-a", name="lists-configmaps")
    secrets = await cli(srv, "who-can", "get", "secrets", "-n", "team-a")
    assert "alice" in secrets.out and "bob" not in secrets.out
    configmaps = await cli(srv, "who-can", "list", "cm", "-n", "team-a")  # kube's short name, served
    assert "bob" in configmaps.out and "alice" not in configmaps.out
    assert configmaps.err == "Subjects who can list configmaps in namespace 'team-a':\n"
    default_ns = await cli(srv, "who-can", "get", "secrets")  # namespaced: the kubeconfig's namespace
    assert default_ns.err == "Subjects who can get secrets in namespace 'default':\n"


async def test_an_access_matrix_lists_configmaps_and_secrets_unnamed_in_any_rule(srv):
    r = await cli(srv, "access-matrix", "--as", "nobody", "-n", "team-a", "-o", "json")
    assert r.code == 0, r.err
    listed = {(row["resource"], row["apiGroup"]) for row in json.loads(r.out)["status"]["rows"]}
    assert {("configmaps", ""), ("secrets", "")} <= listed
