"""`kubectl auth can-i`, `auth whoami`, `--as` / `--as-group` and `--token` through the real kubectl.

The server runs under `--api-domain k8s.io` (kubectl's typed commands name
Kubernetes' groups) with a token file; permissions are granted with
`kubectl create role|rolebinding` as the admin of the generated kubeconfig.
"""

from __future__ import annotations

import json

import pytest

from tests.support.server import Server, start_server
from tests.support.kubectl import Kubectl

TOKENS = 'alice-token,alice,alice-uid,"devs"\nbob-token,bob,bob-uid\n'


@pytest.fixture
async def auth_server(nursery, tmp_path) -> Server:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(TOKENS)
    return await start_server(nursery, tmp_path, api_domain="k8s.io", token_auth_file=str(tokens))


@pytest.fixture
async def kubectl(auth_server, tmp_path) -> Kubectl:
    k = Kubectl(auth_server, str(tmp_path / "kube-cache"))
    await k("create", "namespace", "team-a")
    await k("create", "namespace", "team-b")
    return k


async def grant_role_readers(kubectl: Kubectl, *subject: str) -> None:
    """In team-a: a Role reading roles, bound to `subject` (`--user=x` or `--group=y`)."""
    await kubectl("create", "role", "role-reader", "--verb=get,list,watch", "--resource=roles", "-n", "team-a")
    await kubectl("create", "rolebinding", "role-readers", "--role=role-reader", *subject, "-n", "team-a")


async def test_can_i_answers_no_then_yes_once_a_rolebinding_grants_it(kubectl):
    before = await kubectl("auth", "can-i", "get", "roles", "--as", "alice", "-n", "team-a", check=False)
    assert (before.code, before.out.strip()) == (1, "no")
    await grant_role_readers(kubectl, "--user=alice")
    after = await kubectl("auth", "can-i", "get", "roles", "--as", "alice", "-n", "team-a", check=False)
    assert (after.code, after.out.strip()) == (0, "yes")
    elsewhere = await kubectl("auth", "can-i", "get", "roles", "--as", "alice", "-n", "team-b", check=False)
    assert (elsewhere.code, elsewhere.out.strip()) == (1, "no")


async def test_can_i_names_a_bindings_missing_role_once(kubectl):
    # As kube-apiserver: RBAC's error is the review's reason, not also its evaluationError (which kubectl
    # would print a second time).
    await kubectl("create", "rolebinding", "ghostly", "--role=ghost", "--user=alice", "-n", "team-a")
    got = await kubectl("auth", "can-i", "get", "roles", "--as", "alice", "-n", "team-a", check=False)
    assert (got.code, got.out.strip()) == (1, 'no - RBAC: role.rbac.authorization.k8s.io "ghost" not found')


async def test_can_i_list_shows_the_callers_rules_in_the_namespace(kubectl):
    await grant_role_readers(kubectl, "--user=alice")
    listed = await kubectl("auth", "can-i", "--list", "--as", "alice", "-n", "team-a")
    rows = [line.split() for line in listed.out.splitlines()]
    assert ["roles.rbac.authorization.k8s.io", "[]", "[]", "[get", "list", "watch]"] in rows
    assert ["selfsubjectaccessreviews.authorization.k8s.io", "[]", "[]", "[create]"] in rows
    other = await kubectl("auth", "can-i", "--list", "--as", "alice", "-n", "team-b")
    assert "roles.rbac.authorization.k8s.io" not in other.out


async def test_can_i_list_for_the_admin_shows_everything(kubectl):
    listed = await kubectl("auth", "can-i", "--list")
    assert ["*.*", "[]", "[]", "[*]"] in [line.split() for line in listed.out.splitlines()]


async def test_whoami_reports_the_admin_of_the_kubeconfig(kubectl):
    got = json.loads((await kubectl("auth", "whoami", "-o", "json")).out)
    assert (got["apiVersion"], got["kind"]) == ("authentication.k8s.io/v1", "SelfSubjectReview")
    assert got["status"]["userInfo"]["username"] == "admin"
    assert "system:masters" in got["status"]["userInfo"]["groups"]


async def test_whoami_with_a_token_reports_the_token_user(kubectl):
    got = json.loads((await kubectl("auth", "whoami", "-o", "json", "--token", "alice-token")).out)
    assert got["status"]["userInfo"] == {"username": "alice", "uid": "alice-uid",
                                         "groups": ["devs", "system:authenticated"]}


async def test_whoami_with_as_and_as_group_reports_the_impersonated_user(kubectl):
    got = json.loads((await kubectl("auth", "whoami", "-o", "json", "--as", "carol", "--as-group", "ops")).out)
    assert got["status"]["userInfo"] == {"username": "carol", "groups": ["ops", "system:authenticated"]}


async def test_as_acts_with_the_impersonated_users_permissions(kubectl):
    await grant_role_readers(kubectl, "--user=alice")
    allowed = await kubectl("get", "roles", "-n", "team-a", "--as", "alice")
    assert "role-reader" in allowed.out
    denied = await kubectl("get", "roles", "-n", "team-b", "--as", "alice", check=False)
    assert denied.code == 1
    assert ('Error from server (Forbidden): roles.rbac.authorization.k8s.io is forbidden: User "alice" cannot list '
            'resource "roles" in API group "rbac.authorization.k8s.io" in the namespace "team-b"') in denied.err


async def test_as_group_brings_the_groups_permissions(kubectl):
    await grant_role_readers(kubectl, "--group=devs")
    assert (await kubectl("get", "roles", "-n", "team-a", "--as", "bob", "--as-group", "devs")).code == 0
    assert (await kubectl("get", "roles", "-n", "team-a", "--as", "bob", check=False)).code == 1


async def test_impersonation_without_the_impersonate_verb_is_forbidden(kubectl):
    # `get --raw` prints the server's Status message (kubectl's discovery client prints "unknown" for it)
    denied = await kubectl("get", "--raw", "/version", "--token", "bob-token", "--as", "alice", check=False)
    assert denied.code == 1
    assert ('Error from server (Forbidden): users "alice" is forbidden: User "bob" cannot impersonate resource '
            '"users" in API group "" at the cluster scope') in denied.err


async def test_creating_a_role_beyond_ones_permissions_is_refused_as_escalation(kubectl):
    await kubectl("create", "role", "role-writer", "--verb=create,get,list", "--resource=roles", "-n", "team-a")
    await kubectl("create", "rolebinding", "alice-writes", "--role=role-writer", "--user=alice", "-n", "team-a")
    held = await kubectl("create", "role", "lister", "--verb=list", "--resource=roles", "-n", "team-a",
                         "--token", "alice-token")
    assert held.code == 0
    refused = await kubectl("create", "role", "deleter", "--verb=delete", "--resource=roles", "-n", "team-a",
                            "--token", "alice-token", check=False)
    assert refused.code == 1
    assert ('roles.rbac.authorization.k8s.io "deleter" is forbidden: user "alice" '
            '(groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:'
            ) in refused.err
    assert '{APIGroups:["rbac.authorization.k8s.io"], Resources:["roles"], Verbs:["delete"]}' in refused.err
