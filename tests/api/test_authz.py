"""RBAC authorization of every request, through the HTTP app (in process) with token users from `--token-auth-file`.

The rule matching itself is unit-tested in tests/unit/rbac; here each test
proves one rule end to end: how a request's method, path and query become the
attributes RBAC judges, what the 403 says, and escalation prevention.

Most servers here run without controllers, so the bootstrap `view`, `edit`
and `admin` ClusterRoles are not aggregated: `aggregate()` below writes one's
rules as the aggregation controller would (the union of the rules of the
ClusterRoles labelled `rbac.authorization.<domain>/aggregate-to-<name>`), as the admin. One test runs
the built-in controllers (`controllers=True`) and lets them do it.
"""

from __future__ import annotations

import pytest
import trio

from runtime.client.kubeconfig import load_kubeconfig
from runtime.client.http import open_http_client
from runtime.controller.testing import wait_for_object
from tests.support.rbac import bind, grant, group, namespaces, ok, rule, token_file, user
from tests.support.server import Server, start_in_process


@pytest.fixture
async def srv(nursery, tmp_path) -> Server:
    return await start_in_process(nursery, tmp_path, token_auth_file=token_file(tmp_path))


# ---- helpers ------------------------------------------------------------------------------------

async def aggregate(srv: Server, target: str) -> None:
    """Write `target`'s rules as the ClusterRole aggregation controller would (see the module docstring)."""
    label = f"rbac.authorization.{srv.domain}/aggregate-to-{target}"
    async with srv.client() as admin:
        roles = (await ok(await admin.get(f"{srv.rbac}/clusterroles", params={"labelSelector": f"{label}=true"})))
        rules = [r for item in sorted(roles["items"], key=lambda i: i["metadata"]["name"])
                 for r in item.get("rules") or []]
        current = await ok(await admin.get(f"{srv.rbac}/clusterroles/{target}"))
        await ok(await admin.put(f"{srv.rbac}/clusterroles/{target}", json=dict(current, rules=rules)))


def role_body(name: str, *rules: dict) -> dict:
    return {"metadata": {"name": name}, "rules": list(rules)}


# ---- the acceptance scenario ---------------------------------------------------------------------

async def test_admin_in_one_namespace_lists_roles_there_only_and_cannot_grant_more_than_it_holds(srv):
    """Kubernetes' `view` does not read roles (its bootstrap policy): `admin` does (issue 16)."""
    await namespaces(srv, "a", "b")
    await aggregate(srv, "admin")
    await bind(srv, "alice-admin", "ClusterRole", "admin", [user("alice")], namespace="a")
    async with srv.client(token="alice-token") as alice:
        assert (await alice.get(f"{srv.rbac}/namespaces/a/roles")).status_code == 200
        denied = await alice.get(f"{srv.rbac}/namespaces/b/roles")
        assert denied.status_code == 403
        create = await alice.post(f"{srv.rbac}/namespaces/a/roles",
                                  json=role_body("deleter", rule(["delete"], ["pods"])))
        assert create.status_code == 403


async def test_admin_aggregated_by_the_controller_lists_roles_in_its_namespace(nursery, tmp_path):
    """The same, with the built-in controllers running: `admin` gets its rules by aggregation."""
    srv = await start_in_process(nursery, tmp_path, token_auth_file=token_file(tmp_path), controllers=True)

    def reads_roles(role: dict | None) -> bool:
        return bool(role) and any("roles" in r.get("resources", []) for r in role.get("rules") or [])
    with trio.fail_after(30):
        async with open_http_client(load_kubeconfig(srv.kubeconfig), transport=srv.transport) as client:
            await wait_for_object(client, client.scheme.by_kind("ClusterRole"), "admin", reads_roles)
    await namespaces(srv, "a", "b")
    await bind(srv, "alice-admin", "ClusterRole", "admin", [user("alice")], namespace="a")
    async with srv.client(token="alice-token") as alice:
        assert (await alice.get(f"{srv.rbac}/namespaces/a/roles")).status_code == 200
        assert (await alice.get(f"{srv.rbac}/namespaces/a/rolebindings")).status_code == 200
        assert (await alice.get(f"{srv.rbac}/namespaces/b/roles")).status_code == 403


async def test_forbidden_status_names_user_verb_resource_group_and_namespace(srv):
    await namespaces(srv, "b")
    async with srv.client(token="alice-token") as alice:
        r = await alice.get(f"{srv.rbac}/namespaces/b/roles")
    status = r.json()
    group = f"rbac.authorization.{srv.domain}"
    assert (r.status_code, status["kind"], status["reason"], status["code"]) == (403, "Status", "Forbidden", 403)
    assert status["message"] == (f'roles.{group} is forbidden: User "alice" cannot list resource "roles" '
                                 f'in API group "{group}" in the namespace "b"')
    assert status["details"] == {"group": group, "kind": "roles"}


async def test_forbidden_on_a_named_cluster_object_says_at_the_cluster_scope(srv):
    async with srv.client(token="bob-token") as bob:
        r = await bob.get(f"{srv.rbac}/clusterroles/view")
    group = f"rbac.authorization.{srv.domain}"
    assert r.status_code == 403
    assert r.json()["message"] == (f'clusterroles.{group} "view" is forbidden: User "bob" cannot get resource '
                                   f'"clusterroles" in API group "{group}" at the cluster scope')


# ---- scope of bindings ---------------------------------------------------------------------------

async def test_rolebinding_to_a_clusterrole_grants_only_in_its_namespace(srv):
    await namespaces(srv, "a", "b")
    await grant(srv, user("bob"), rule(["list"], ["roles"], ["*"]), namespace="a")
    async with srv.client(token="bob-token") as bob:
        assert (await bob.get(f"{srv.rbac}/namespaces/a/roles")).status_code == 200
        assert (await bob.get(f"{srv.rbac}/namespaces/b/roles")).status_code == 403


async def test_rolebinding_to_a_role_of_its_namespace_grants_there(srv):
    await namespaces(srv, "a")
    await grant(srv, user("bob"), rule(["get", "list"], ["rolebindings"], ["*"]), namespace="a", role_kind="Role")
    async with srv.client(token="bob-token") as bob:
        assert (await bob.get(f"{srv.rbac}/namespaces/a/rolebindings")).status_code == 200


async def test_clusterrolebinding_grants_in_every_namespace_and_across_all(srv):
    await namespaces(srv, "a", "b")
    await grant(srv, user("bob"), rule(["list"], ["roles"], ["*"]))
    async with srv.client(token="bob-token") as bob:
        for path in ("/namespaces/a/roles", "/namespaces/b/roles", "/roles"):
            assert (await bob.get(srv.rbac + path)).status_code == 200, path


async def test_listing_across_all_namespaces_needs_a_clusterrolebinding(srv):
    await namespaces(srv, "a")
    await grant(srv, user("bob"), rule(["list"], ["roles"], ["*"]), namespace="a")
    async with srv.client(token="bob-token") as bob:
        r = await bob.get(f"{srv.rbac}/roles")
    assert r.status_code == 403 and r.json()["message"].endswith("at the cluster scope")


async def test_group_subject_matches_members(srv):
    await grant(srv, group("devs"), rule(["list"], ["clusterroles"], ["*"]))
    async with srv.client(token="alice-token") as alice, srv.client(token="bob-token") as bob:
        assert (await alice.get(f"{srv.rbac}/clusterroles")).status_code == 200
        assert (await bob.get(f"{srv.rbac}/clusterroles")).status_code == 403


async def test_system_masters_is_allowed_everything_without_any_binding(srv):
    async with srv.client() as admin:
        await ok(await admin.delete(f"{srv.rbac}/clusterrolebindings/cluster-admin"))
    async with srv.client(token="root-token") as root:
        assert (await root.get(f"{srv.rbac}/clusterroles")).status_code == 200
        assert (await root.post("/api/v1/namespaces", json={"metadata": {"name": "x"}})).status_code == 201


# ---- service accounts ----------------------------------------------------------------------------

async def test_service_account_subject_defaults_to_the_rolebinding_namespace(srv):
    await namespaces(srv, "team", "other")
    await grant(srv, {"kind": "ServiceAccount", "name": "robot"}, rule(["list"], ["roles"], ["*"]), namespace="team")
    await grant(srv, {"kind": "ServiceAccount", "name": "robot"}, rule(["list"], ["rolebindings"], ["*"]),
                namespace="other")
    async with srv.client(token="robot-token") as robot:
        assert (await robot.get(f"{srv.rbac}/namespaces/team/roles")).status_code == 200
        # in "other" the subject means system:serviceaccount:other:robot, someone else
        assert (await robot.get(f"{srv.rbac}/namespaces/other/rolebindings")).status_code == 403


async def test_service_account_users_are_in_the_service_account_groups(srv):
    await namespaces(srv, "team")
    await grant(srv, group("system:serviceaccounts:team"), rule(["list"], ["roles"], ["*"]), namespace="team")
    await grant(srv, group("system:serviceaccounts"), rule(["list"], ["clusterroles"], ["*"]))
    async with srv.client(token="robot-token") as robot:
        assert (await robot.get(f"{srv.rbac}/namespaces/team/roles")).status_code == 200
        assert (await robot.get(f"{srv.rbac}/clusterroles")).status_code == 200


async def test_service_account_subject_in_a_clusterrolebinding_needs_its_namespace(srv):
    async with srv.client() as admin:
        r = await admin.post(f"{srv.rbac}/clusterrolebindings", json={
            "metadata": {"name": "sa"}, "subjects": [{"kind": "ServiceAccount", "name": "robot"}],
            "roleRef": {"apiGroup": f"rbac.authorization.{srv.domain}", "kind": "ClusterRole", "name": "view"}})
    assert r.status_code == 422 and "subjects[0].namespace" in r.json()["message"]


# ---- policy errors do not stop evaluation ---------------------------------------------------------

async def test_namespace_on_a_user_subject_is_reported_while_other_rules_still_count(srv):
    await namespaces(srv, "a")
    await grant(srv, {"kind": "User", "name": "bob", "namespace": "a"}, rule(["list"], ["rolebindings"], ["*"]),
                namespace="a", name="broken")
    await grant(srv, user("bob"), rule(["list"], ["roles"], ["*"]), namespace="a")
    async with srv.client(token="bob-token") as bob:
        assert (await bob.get(f"{srv.rbac}/namespaces/a/roles")).status_code == 200
        denied = await bob.get(f"{srv.rbac}/namespaces/a/rolebindings")
    assert denied.status_code == 403
    assert denied.json()["message"].endswith(
        ': RBAC: RoleBinding "broken/a" subjects[0]: User subject "bob" must not set a namespace (got "a")')


async def test_unknown_subject_kind_is_refused_by_validation(srv):
    async with srv.client() as admin:
        r = await admin.post(f"{srv.rbac}/clusterrolebindings", json={
            "metadata": {"name": "odd"}, "subjects": [{"kind": "Robot", "name": "r2"}],
            "roleRef": {"apiGroup": f"rbac.authorization.{srv.domain}", "kind": "ClusterRole", "name": "view"}})
    assert r.status_code == 422 and "subjects[0].kind" in r.json()["message"]


async def test_unresolvable_role_ref_is_reported_while_other_rules_still_count(srv):
    await bind(srv, "ghostly", "ClusterRole", "ghost", [user("bob")])
    await grant(srv, user("bob"), rule(["list"], ["clusterroles"], ["*"]))
    async with srv.client(token="bob-token") as bob:
        assert (await bob.get(f"{srv.rbac}/clusterroles")).status_code == 200
        denied = await bob.get(f"{srv.rbac}/clusterrolebindings")
    assert denied.status_code == 403
    assert denied.json()["message"].endswith(
        f': RBAC: clusterrole.rbac.authorization.{srv.domain} "ghost" not found')


# ---- request attributes: verbs ---------------------------------------------------------------------

async def test_put_of_a_missing_object_needs_update_and_create(srv):
    # kube-apiserver's filter authorizes the request's verb (update) before the handler reads anything.
    await grant(srv, user("bob"), rule(["create"], ["clusterroles"], ["*"]))
    await grant(srv, user("alice"), rule(["create", "update"], ["clusterroles"], ["*"]))
    async with srv.client(token="bob-token") as bob, srv.client(token="alice-token") as alice:
        r = await bob.put(f"{srv.rbac}/clusterroles/mine", json=role_body("mine"))
        assert r.status_code == 403 and 'cannot update resource "clusterroles"' in r.json()["message"]
        assert (await alice.put(f"{srv.rbac}/clusterroles/mine", json=role_body("mine"))).status_code == 201


def applied(srv: Server, name: str) -> dict:
    return {"apiVersion": f"rbac.authorization.{srv.domain}/v1", "kind": "ClusterRole",
            "metadata": {"name": name}, "rules": []}


APPLY = {"headers": {"Content-Type": "application/apply-patch+yaml"}, "params": {"fieldManager": "me"}}


async def test_apply_of_a_missing_object_needs_patch_and_create(srv):
    await grant(srv, user("bob"), rule(["create"], ["clusterroles"], ["*"]))
    await grant(srv, user("alice"), rule(["create", "patch"], ["clusterroles"], ["*"]))
    async with srv.client(token="bob-token") as bob, srv.client(token="alice-token") as alice:
        r = await bob.patch(f"{srv.rbac}/clusterroles/new", json=applied(srv, "new"), **APPLY)
        assert r.status_code == 403 and 'cannot patch resource "clusterroles"' in r.json()["message"]
        assert (await alice.patch(f"{srv.rbac}/clusterroles/new", json=applied(srv, "new"), **APPLY)
                ).status_code == 201


async def test_apply_of_an_existing_object_is_authorized_as_patch(srv):
    await grant(srv, user("bob"), rule(["patch"], ["clusterroles"], ["*"]))
    await grant(srv, user("alice"), rule(["create", "update"], ["clusterroles"], ["*"]))
    async with srv.client() as admin:
        await ok(await admin.post(f"{srv.rbac}/clusterroles", json=role_body("old")), 201)
    async with srv.client(token="bob-token") as bob, srv.client(token="alice-token") as alice:
        assert (await bob.patch(f"{srv.rbac}/clusterroles/old", json=applied(srv, "old"), **APPLY)).status_code == 200
        r = await alice.patch(f"{srv.rbac}/clusterroles/old", json=applied(srv, "old"), **APPLY)
    assert r.status_code == 403 and 'cannot patch resource "clusterroles"' in r.json()["message"]


async def test_watch_query_is_authorized_as_watch(srv):
    await grant(srv, user("bob"), rule(["list"], ["clusterroles"], ["*"]))
    async with srv.client(token="bob-token") as bob:
        assert (await bob.get(f"{srv.rbac}/clusterroles")).status_code == 200
        r = await bob.get(f"{srv.rbac}/clusterroles", params={"watch": "1"})
    assert r.status_code == 403 and 'cannot watch resource "clusterroles"' in r.json()["message"]


async def test_delete_on_a_collection_is_authorized_as_deletecollection(srv):
    await namespaces(srv, "a")
    await grant(srv, user("bob"), rule(["delete"], ["roles"], ["*"]), namespace="a")
    await grant(srv, user("alice"), rule(["deletecollection"], ["roles"], ["*"]), namespace="a")
    async with srv.client(token="bob-token") as bob, srv.client(token="alice-token") as alice:
        r = await bob.delete(f"{srv.rbac}/namespaces/a/roles")
        assert r.status_code == 403 and 'cannot deletecollection resource "roles"' in r.json()["message"]
        assert (await alice.delete(f"{srv.rbac}/namespaces/a/roles")).status_code == 200


# ---- request attributes: resources, subresources, names ---------------------------------------------

async def test_core_group_is_the_empty_string(srv):
    await grant(srv, user("bob"), rule(["list"], ["namespaces"], [""]))
    await grant(srv, user("alice"), rule(["list"], ["namespaces"], [f"rbac.authorization.{srv.domain}"]))
    async with srv.client(token="bob-token") as bob, srv.client(token="alice-token") as alice:
        assert (await bob.get("/api/v1/namespaces")).status_code == 200
        r = await alice.get("/api/v1/namespaces")
    assert r.status_code == 403 and 'in API group ""' in r.json()["message"]


async def test_verb_star_allows_every_verb(srv):
    await grant(srv, user("bob"), rule(["*"], ["clusterroles"], ["*"]))
    async with srv.client(token="bob-token") as bob:
        assert (await bob.post(f"{srv.rbac}/clusterroles", json=role_body("x"))).status_code == 201
        async with bob.stream("GET", f"{srv.rbac}/clusterroles", params={"watch": "1"}) as watch:
            assert watch.status_code == 200
        assert (await bob.delete(f"{srv.rbac}/clusterroles/x")).status_code == 200


async def test_a_namespace_is_authorized_in_its_own_namespace_scope(srv):
    await namespaces(srv, "a", "b")
    await grant(srv, user("bob"), rule(["get"], ["namespaces"]), namespace="a")
    async with srv.client(token="bob-token") as bob:
        assert (await bob.get("/api/v1/namespaces/a")).status_code == 200
        r = await bob.get("/api/v1/namespaces/b")
    assert r.status_code == 403
    assert r.json()["message"] == ('namespaces "b" is forbidden: User "bob" cannot get resource "namespaces" '
                                   'in API group "" in the namespace "b"')


async def test_namespace_status_is_its_own_resource(srv):
    await namespaces(srv, "a")
    await grant(srv, user("bob"), rule(["get"], ["namespaces/status"]))
    async with srv.client(token="bob-token") as bob:
        assert (await bob.get("/api/v1/namespaces/a/status")).status_code == 200
        r = await bob.get("/api/v1/namespaces/a")
    assert r.status_code == 403 and 'cannot get resource "namespaces"' in r.json()["message"]


async def test_namespace_finalize_needs_namespaces_finalize(srv):
    await namespaces(srv, "a")
    await grant(srv, user("bob"), rule(["get", "update"], ["namespaces"]))
    await grant(srv, user("alice"), rule(["update"], ["namespaces/finalize"]), rule(["get"], ["namespaces"]))
    async with srv.client(token="bob-token") as bob, srv.client(token="alice-token") as alice:
        ns = await ok(await bob.get("/api/v1/namespaces/a"))
        r = await bob.put("/api/v1/namespaces/a/finalize", json=ns)
        assert r.status_code == 403 and 'cannot update resource "namespaces/finalize"' in r.json()["message"]
        assert (await alice.put("/api/v1/namespaces/a/finalize", json=ns)).status_code == 200


async def test_star_slash_subresource_matches_that_subresource_of_any_resource(srv):
    await namespaces(srv, "a")
    await grant(srv, user("bob"), rule(["get"], ["*/status"]))
    async with srv.client(token="bob-token") as bob:
        assert (await bob.get("/api/v1/namespaces/a/status")).status_code == 200
        assert (await bob.get("/api/v1/namespaces/a")).status_code == 403


async def test_resource_names_allow_get_of_listed_names_only(srv):
    await grant(srv, user("bob"), rule(["get"], ["clusterroles"], ["*"], names=["view"]))
    async with srv.client(token="bob-token") as bob:
        assert (await bob.get(f"{srv.rbac}/clusterroles/view")).status_code == 200
        assert (await bob.get(f"{srv.rbac}/clusterroles/edit")).status_code == 403


async def test_resource_names_never_match_a_list_of_the_whole_collection(srv):
    await grant(srv, user("bob"), rule(["list"], ["clusterroles"], ["*"], names=["view"]))
    async with srv.client(token="bob-token") as bob:
        assert (await bob.get(f"{srv.rbac}/clusterroles")).status_code == 403
        pinned = await bob.get(f"{srv.rbac}/clusterroles", params={"fieldSelector": "metadata.name=view"})
    assert pinned.status_code == 200 and [i["metadata"]["name"] for i in pinned.json()["items"]] == ["view"]


async def test_resource_names_never_match_a_create(srv):
    await grant(srv, user("bob"), rule(["create"], ["clusterroles"], ["*"], names=["mine"]))
    async with srv.client(token="bob-token") as bob:
        r = await bob.post(f"{srv.rbac}/clusterroles", json=role_body("mine"))
    assert r.status_code == 403


# ---- non-resource paths -------------------------------------------------------------------------------

async def test_health_and_version_are_public_through_system_public_info_viewer(srv):
    async with srv.client(token=None) as anonymous:
        for path in ("/healthz", "/livez", "/readyz", "/version"):
            assert (await anonymous.get(path)).status_code == 200, path


async def test_discovery_is_for_authenticated_users_only(srv):
    async with srv.client(token=None) as anonymous, srv.client(token="bob-token") as bob:
        assert (await bob.get("/apis")).status_code == 200
        assert (await bob.get("/api")).status_code == 200
        r = await anonymous.get("/apis")
    assert r.status_code == 403
    assert r.json()["message"] == 'forbidden: User "system:anonymous" cannot get path "/apis"'


async def test_non_resource_url_star_suffix_is_a_prefix_match(srv):
    await grant(srv, user("system:anonymous"), rule(["get"], urls=["/apis/*"]))
    async with srv.client(token=None) as anonymous:
        assert (await anonymous.get(f"/apis/rbac.authorization.{srv.domain}")).status_code == 200
        assert (await anonymous.get(f"{srv.rbac}")).status_code == 200
        assert (await anonymous.get("/apis")).status_code == 403


async def test_non_resource_url_without_star_is_an_exact_match(srv):
    await grant(srv, user("system:anonymous"), rule(["get"], urls=["/api"]))
    async with srv.client(token=None) as anonymous:
        assert (await anonymous.get("/api")).status_code == 200
        assert (await anonymous.get("/api/v1")).status_code == 403


async def test_non_resource_verb_is_the_lower_cased_http_method(srv):
    async with srv.client(token="bob-token") as bob:
        r = await bob.post("/healthz", content=b"")
    assert r.status_code == 403 and r.json()["message"] == 'forbidden: User "bob" cannot post path "/healthz"'


# ---- escalation prevention ------------------------------------------------------------------------------

async def test_creating_a_role_needs_every_permission_in_it(srv):
    await namespaces(srv, "a")
    g = f"rbac.authorization.{srv.domain}"
    await grant(srv, user("bob"), rule(["create", "get", "list"], ["roles"], [g]), namespace="a")
    async with srv.client(token="bob-token") as bob:
        held = await bob.post(f"{srv.rbac}/namespaces/a/roles", json=role_body("reader", rule(["get"], ["roles"], [g])))
        assert held.status_code == 201, held.text
        r = await bob.post(f"{srv.rbac}/namespaces/a/roles",
                           json=role_body("deleter", rule(["get", "delete"], ["roles"], [g])))
    assert r.status_code == 403
    assert r.json()["message"] == (
        f'roles.{g} "deleter" is forbidden: user "bob" (groups=["system:authenticated"]) is attempting to grant '
        f'RBAC permissions not currently held:\n{{APIGroups:["{g}"], Resources:["roles"], Verbs:["delete"]}}')


async def test_updating_a_role_beyond_held_permissions_is_forbidden(srv):
    await namespaces(srv, "a")
    g = f"rbac.authorization.{srv.domain}"
    await grant(srv, user("bob"), rule(["create", "get", "update"], ["roles"], [g]), namespace="a")
    async with srv.client(token="bob-token") as bob:
        await ok(await bob.post(f"{srv.rbac}/namespaces/a/roles", json=role_body("r", rule(["get"], ["roles"], [g]))),
                 201)
        r = await bob.put(f"{srv.rbac}/namespaces/a/roles/r", json=role_body("r", rule(["*"], ["*"], ["*"])))
    assert r.status_code == 403 and "is attempting to grant RBAC permissions not currently held" in r.text


async def test_escalate_verb_allows_writing_any_role(srv):
    g = f"rbac.authorization.{srv.domain}"
    await grant(srv, user("bob"), rule(["create", "escalate"], ["clusterroles"], [g]))
    async with srv.client(token="bob-token") as bob:
        r = await bob.post(f"{srv.rbac}/clusterroles", json=role_body("mighty", rule(["*"], ["*"], ["*"])))
    assert r.status_code == 201, r.text


async def test_a_role_permission_held_only_in_another_namespace_is_not_held(srv):
    await namespaces(srv, "a", "b")
    g = f"rbac.authorization.{srv.domain}"
    await grant(srv, user("bob"), rule(["create"], ["roles"], [g]), namespace="a")
    await grant(srv, user("bob"), rule(["delete"], ["roles"], [g]), namespace="b")
    async with srv.client(token="bob-token") as bob:
        r = await bob.post(f"{srv.rbac}/namespaces/a/roles", json=role_body("d", rule(["delete"], ["roles"], [g])))
    assert r.status_code == 403


async def test_binding_needs_the_referenced_roles_permissions(srv):
    await namespaces(srv, "a")
    g = f"rbac.authorization.{srv.domain}"
    await grant(srv, user("bob"), rule(["create"], ["rolebindings"], [g]), rule(["list"], ["roles"], [g]),
                namespace="a")
    async with srv.client() as admin:
        await ok(await admin.post(f"{srv.rbac}/clusterroles", json=role_body("lister", rule(["list"], ["roles"], [g]))),
                 201)
        await ok(await admin.post(f"{srv.rbac}/clusterroles", json=role_body("killer", rule(["delete"], ["roles"], [g]))),
                 201)

    def binding(name, role):
        return {"metadata": {"name": name}, "subjects": [user("alice")],
                "roleRef": {"apiGroup": g, "kind": "ClusterRole", "name": role}}
    async with srv.client(token="bob-token") as bob:
        assert (await bob.post(f"{srv.rbac}/namespaces/a/rolebindings", json=binding("ok", "lister"))).status_code == 201
        r = await bob.post(f"{srv.rbac}/namespaces/a/rolebindings", json=binding("no", "killer"))
    assert r.status_code == 403
    assert r.json()["message"].startswith(f'rolebindings.{g} "no" is forbidden: user "bob"')
    assert f'{{APIGroups:["{g}"], Resources:["roles"], Verbs:["delete"]}}' in r.json()["message"]


async def test_bind_verb_allows_binding_a_role_not_held(srv):
    await namespaces(srv, "a")
    g = f"rbac.authorization.{srv.domain}"
    await grant(srv, user("bob"), rule(["create"], ["rolebindings"], [g]),
                rule(["bind"], ["clusterroles"], [g], names=["admin"]), namespace="a")
    body = {"metadata": {"name": "alice-admin"}, "subjects": [user("alice")],
            "roleRef": {"apiGroup": g, "kind": "ClusterRole", "name": "admin"}}
    async with srv.client(token="bob-token") as bob:
        r = await bob.post(f"{srv.rbac}/namespaces/a/rolebindings", json=body)
    assert r.status_code == 201, r.text


async def test_binding_to_a_missing_role_without_bind_is_404_for_the_role(srv):
    await namespaces(srv, "a")
    g = f"rbac.authorization.{srv.domain}"
    await grant(srv, user("bob"), rule(["create"], ["rolebindings"], [g]), namespace="a")
    body = {"metadata": {"name": "b"}, "subjects": [user("alice")],
            "roleRef": {"apiGroup": g, "kind": "Role", "name": "ghost"}}
    async with srv.client(token="bob-token") as bob:
        r = await bob.post(f"{srv.rbac}/namespaces/a/rolebindings", json=body)
    # Kubernetes' rule resolution reports the missing role itself.
    assert r.status_code == 404 and r.json()["reason"] == "NotFound"
    assert r.json()["message"] == f'roles.{g} "ghost" not found'
    assert r.json()["details"] == {"name": "ghost", "group": g, "kind": "roles"}


async def test_labelling_a_role_into_an_aggregation_is_an_escalation_check(srv):
    g = f"rbac.authorization.{srv.domain}"
    await grant(srv, user("bob"), rule(["get", "update"], ["clusterroles"], [g]))
    async with srv.client(token="bob-token") as bob:
        role = await ok(await bob.get(f"{srv.rbac}/clusterroles/cluster-admin"))
        role["metadata"]["labels"][f"{g}/aggregate-to-view"] = "true"
        r = await bob.put(f"{srv.rbac}/clusterroles/cluster-admin", json=role)
    assert r.status_code == 403 and "not currently held" in r.text


async def test_changing_only_finalizers_of_a_role_is_not_an_escalation_check(srv):
    g = f"rbac.authorization.{srv.domain}"
    await grant(srv, user("bob"), rule(["get", "update"], ["clusterroles"], [g]))
    async with srv.client(token="bob-token") as bob:
        role = await ok(await bob.get(f"{srv.rbac}/clusterroles/cluster-admin"))
        role["metadata"]["finalizers"] = ["example.com/hold"]
        r = await bob.put(f"{srv.rbac}/clusterroles/cluster-admin", json=role)
    assert r.status_code == 200, r.text


async def test_an_aggregation_rule_needs_full_authority(srv):
    g = f"rbac.authorization.{srv.domain}"
    await grant(srv, user("bob"), rule(["create"], ["clusterroles"], [g]))
    body = {"metadata": {"name": "gather"}, "rules": [],
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}}
    async with srv.client(token="bob-token") as bob:
        r = await bob.post(f"{srv.rbac}/clusterroles", json=body)
    assert r.status_code == 403
    assert r.json()["message"] == (f'clusterroles.{g} "gather" is forbidden: must have cluster-admin privileges '
                                   "to use the aggregationRule")


async def test_dry_run_is_authorized_as_the_real_request(srv):
    async with srv.client(token="bob-token") as bob:
        r = await bob.post(f"{srv.rbac}/clusterroles", json=role_body("x"), params={"dryRun": "All"})
    assert r.status_code == 403


# ---- the index behind the authorizer ----------------------------------------------------------------

async def test_a_relist_forgets_bindings_deleted_while_the_cache_was_not_following(nursery):
    """In-process: the RBAC index is rebuilt when the watch cache lists the store again."""
    from runtime.server.bootstrap import SYSTEM_USER, bootstrap
    from runtime.server.rbac import resource_attributes
    from runtime.server.rbac.user import UserInfo
    from runtime.server.registry import Registry
    from runtime.machinery.options import Body
    from runtime.machinery.scheme import Scheme
    from runtime.server.storage import MemoryStore

    store = MemoryStore()
    registry = Registry(store, Scheme())
    rt = registry.scheme.by_kind("ClusterRoleBinding")
    ask = resource_attributes(UserInfo("alice"), "list", "roles", api_group=registry.scheme.rbac_group)
    async with trio.open_nursery() as first:
        await first.start(registry.run)
        await bootstrap(registry)
        await registry.create(SYSTEM_USER, rt, "", Body({
            "metadata": {"name": "alice-admin"}, "subjects": [user("alice")],
            "roleRef": {"apiGroup": registry.scheme.rbac_group, "kind": "ClusterRole", "name": "cluster-admin"}}))
        await registry.cache.wait_fresh()
        assert registry.authorizer.authorize(ask).allowed
        first.cancel_scope.cancel()
    await store.delete(rt.storage_key(None, "alice-admin"), expected_revision=None)
    await nursery.start(registry.run)
    assert not registry.authorizer.authorize(ask).allowed


async def test_an_unknown_resource_is_403_to_callers_not_allowed_to_ask(srv):
    async with srv.client(token="bob-token") as bob, srv.client() as admin:
        denied = await bob.get("/apis/example.com/v1/widgets")
        missing = await admin.get("/apis/example.com/v1/widgets")
    assert denied.status_code == 403
    assert denied.json()["message"] == ('widgets.example.com is forbidden: User "bob" cannot list resource "widgets" '
                                        'in API group "example.com" at the cluster scope')
    assert missing.status_code == 404
