"""`miniplane who-can | access-matrix | rbac diff | rbac lint` against a server the test starts.

The commands read a kubeconfig as kubectl does and ask the server's insight
kinds; most tests run them in process (the server's ASGI transport), one runs
the real `miniplane` entry point over HTTPS.
"""

from __future__ import annotations

import json
import sys

import pytest
import trio
import yaml

from runtime.client.kubeconfig import write_kubeconfig
from tests.support.insight import cli
from tests.support.rbac import bind, grant, namespaces, ok, rule, token_file, user
from tests.support.server import Server, start_in_process, start_server


@pytest.fixture
async def srv(nursery, tmp_path) -> Server:
    srv = await start_in_process(nursery, tmp_path, token_auth_file=token_file(tmp_path))
    await namespaces(srv, "team-a")
    return srv


def rbac(srv: Server) -> str:
    return f"rbac.authorization.{srv.domain}"


def lines(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()]


async def test_who_can_prints_a_row_per_grant_in_kubectl_columns(srv):
    await grant(srv, user("alice"), rule(["list"], ["roles"], [rbac(srv)]), namespace="team-a", name="readers")
    await grant(srv, {"kind": "ServiceAccount", "name": "bot"}, rule(["*"], ["roles"], [rbac(srv)]),
                namespace="team-a", name="bots")
    r = await cli(srv, "who-can", "list", "roles", "-n", "team-a")
    assert r.code == 0, r.err
    head, *rows = r.out.splitlines()
    assert head.split() == ["KIND", "SUBJECT", "NAMESPACE", "BINDING", "ROLE", "RULE"]
    assert rows[0].split()[:2] == ["Group", "system:masters"]
    assert ["ServiceAccount", "bot", "team-a", "RoleBinding", "team-a/bots", "ClusterRole", "bots", "[0]", "*",
            f"roles.{rbac(srv)}"] in lines(r.out)
    assert ["User", "alice", "RoleBinding", "team-a/readers", "ClusterRole", "readers", "[0]", "list",
            f"roles.{rbac(srv)}"] in lines(r.out)
    assert r.err == f"Subjects who can list roles.{rbac(srv)} in namespace 'team-a':\n"
    cluster = await cli(srv, "who-can", "list", "roles", "-A")
    assert "alice" not in cluster.out and "system:masters" in cluster.out


async def test_who_can_takes_short_names_groups_subresources_names_and_urls(srv):
    await grant(srv, user("alice"), rule(["get"], ["pods/log"]), namespace="team-a", name="logs")
    await grant(srv, user("bob"), rule(["impersonate"], ["users"], names=["carol"]), name="imp")
    await grant(srv, user("carol"), rule(["get"], urls=["/metrics"]), name="metrics")
    assert "alice" in (await cli(srv, "who-can", "get", "pods/log", "-n", "team-a")).out
    assert "alice" in (await cli(srv, "who-can", "get", "pods", "--subresource", "log", "-n", "team-a")).out
    assert "alice" not in (await cli(srv, "who-can", "get", "pods", "-n", "team-a")).out
    unserved = await cli(srv, "who-can", "get", "replicationcontrollers/log")  # scope unknown: cluster-wide unless -n
    assert "alice" not in unserved.out and unserved.err.endswith("cluster-wide:\n")
    served = await cli(srv, "who-can", "get", "pods/log")  # a served namespaced kind: the kubeconfig's namespace
    assert "alice" not in served.out and served.err.endswith("in namespace 'default':\n")
    assert "bob" in (await cli(srv, "who-can", "impersonate", "users", "carol")).out
    assert "bob" not in (await cli(srv, "who-can", "impersonate", "users", "dave")).out
    assert "carol" in (await cli(srv, "who-can", "get", "/metrics")).out
    answer = json.loads((await cli(srv, "who-can", "list", "roles.rbac", "-n", "team-a", "-o", "json")).out)
    assert answer["kind"] == "WhoCan" and answer["spec"]["resourceAttributes"]["group"] == rbac(srv)
    own = yaml.safe_load((await cli(srv, "who-can", "get", "ns", "team-a", "-o", "yaml")).out)
    assert own["spec"]["resourceAttributes"]["resource"] == "namespaces" and own["status"]["namespace"] == "team-a"


async def test_access_matrix_prints_rakkess_marks(srv):
    await grant(srv, user("alice"), rule(["list", "create"], ["roles"], [rbac(srv)]), namespace="team-a",
                name="exact")
    await grant(srv, user("alice"), rule(["*"], ["leases"], ["*"]), namespace="team-a", name="wild")
    r = await cli(srv, "access-matrix", "--as", "alice", "-n", "team-a")
    assert r.code == 0, r.err
    table = {row[0]: row[1:] for row in lines(r.out)}
    assert table["NAME"] == ["LIST", "CREATE", "UPDATE", "DELETE"]
    assert table[f"roles.{rbac(srv)}"] == ["✔", "✔", "✖", "✖"]
    assert table[f"leases.coordination.{srv.domain}"] == ["✔*"] * 4
    assert "✔* allowed only through a wildcard" in r.err
    as_group = await cli(srv, "access-matrix", "--as-group", "system:masters", "--verbs", "get,watch", "-o", "json")
    status = json.loads(as_group.out)["status"]
    assert status["groups"] == ["system:masters"] and status["verbs"] == ["get", "watch"]
    assert all(set(row["access"].values()) == {"allowed"} for row in status["rows"])


async def test_rbac_diff_dry_runs_the_manifest_and_prints_changes_per_subject(srv, tmp_path):
    await bind(srv, "alice-view", "ClusterRole", "view", [user("alice")], namespace="team-a")
    manifest = tmp_path / "policy.yaml"
    manifest.write_text(yaml.safe_dump_all([
        {"apiVersion": f"{rbac(srv)}/v1", "kind": "ClusterRole",
         "metadata": {"name": "lease-watch", "labels": {f"{rbac(srv)}/aggregate-to-view": "true"}},
         "rules": [rule(["watch"], ["leases"], [f"coordination.{srv.domain}"])]},
        {"apiVersion": f"{rbac(srv)}/v1", "kind": "RoleBinding", "metadata": {"name": "bob-edit"},
         "roleRef": {"apiGroup": rbac(srv), "kind": "ClusterRole", "name": "lease-watch"},
         "subjects": [user("bob")]},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-z"}}]))
    r = await cli(srv, "rbac", "diff", "-f", str(manifest), "-n", "team-a")
    assert r.code == 1, r.err
    assert lines(r.out) == [["SUBJECT", "CHANGE", "NAMESPACE", "VERB", "RESOURCE", "NAME"],
                            ["User", "alice", "granted", "team-a", "watch", f"leases.coordination.{srv.domain}"],
                            ["User", "bob", "granted", "team-a", "watch", f"leases.coordination.{srv.domain}"]]
    assert "ignored (not RBAC policy): Namespace team-z" in r.err
    async with srv.client() as admin:  # a dry run: nothing was stored
        assert (await admin.get(f"{srv.rbac}/clusterroles/lease-watch")).status_code == 404
    again = await cli(srv, "rbac", "diff", "-f", str(manifest), "-n", "team-b")
    assert again.code == 1 and "Error from server (NotFound)" in again.err  # no namespace team-b
    unchanged = tmp_path / "same.yaml"
    unchanged.write_text(yaml.safe_dump({"apiVersion": f"{rbac(srv)}/v1", "kind": "ClusterRole",
                                         "metadata": {"name": "nothing"}, "rules": []}))
    quiet = await cli(srv, "rbac", "diff", "-f", str(unchanged))
    assert (quiet.code, quiet.out, quiet.err) == (0, "", "no permission changes\n")


async def test_rbac_diff_refuses_what_the_dry_run_refuses(srv, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"apiVersion": f"{rbac(srv)}/v1", "kind": "ClusterRole",
                                   "metadata": {"name": "x"}, "rules": [{"resources": ["pods"]}]}))
    r = await cli(srv, "rbac", "diff", "-f", str(bad))
    assert r.code == 1 and r.err.startswith("Error from server (Invalid): ") and "verbs: Required value" in r.err


async def test_rbac_lint_prints_findings_and_a_terminating_namespaces_blockers(srv):
    await bind(srv, "dangling", "ClusterRole", "not-there", [user("bob")])
    async with srv.client() as admin:
        await ok(await admin.post(f"{srv.rbac}/namespaces/team-a/roles", json={
            "metadata": {"name": "held", "finalizers": ["example.com/hold"]}}), 201)
        await ok(await admin.delete("/api/v1/namespaces/team-a"))
    r = await cli(srv, "rbac", "lint")
    assert r.code == 0, r.err
    table, _, stuck = r.out.partition("\nNamespace team-a is terminating since ")
    assert table.splitlines()[0].split() == ["SEVERITY", "KIND", "OBJECT", "PATH", "MESSAGE"]
    assert any(row[:4] == ["Medium", "RoleRefNotFound", "ClusterRoleBinding", "dangling"] for row in lines(table))
    assert any(row[:4] == ["Medium", "FinalizerBlocksNamespace", "Role", "team-a/held"] for row in lines(table))
    assert "(its finalizers: kubernetes); what remains:" in stuck
    assert ["Role", "held", "example.com/hold"] in lines(stuck)
    assert not any(row[0] == "Info" for row in lines(table)[1:])
    info = json.loads((await cli(srv, "rbac", "lint", "--min-severity", "Info", "-o", "json")).out)
    assert any(f["severity"] == "Info" for f in info["status"]["findings"])


async def test_errors_print_as_kubectl_prints_them(srv, tmp_path):
    bob = write_kubeconfig(tmp_path / "bob.kubeconfig", srv.url, None, token="bob-token")
    r = await cli(srv, "who-can", "get", "roles", kubeconfig=bob)
    assert r.code == 1 and r.out == ""
    assert r.err.startswith(f"Error from server (Forbidden): whocans.insight.{srv.domain} is forbidden: "
                            'User "bob" cannot list resource "clusterroles"')
    missing = await cli(srv, "rbac", "lint", kubeconfig=tmp_path / "nope")
    assert (missing.code, missing.err) == (1, f"error: no kubeconfig at {tmp_path / 'nope'} (use --kubeconfig or "
                                              "$KUBECONFIG)\n")


async def test_the_miniplane_command_runs_over_https_with_the_kubeconfig(nursery, tmp_path):
    srv = await start_server(nursery, tmp_path)
    proc = await trio.run_process([sys.executable, "-m", "api.cli", "who-can", "get", "/healthz", "-o", "json"],
                                  capture_stdout=True, capture_stderr=True, check=False,
                                  env={"KUBECONFIG": str(srv.kubeconfig), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr.decode()
    answer = json.loads(proc.stdout)
    assert {"kind": "Group", "name": "system:unauthenticated"} in [s["subject"] for s in answer["status"]["subjects"]]
