"""Authorization comes before any read (kube-apiserver's filter chain), so a 403 does not tell whether an object
exists; an update or apply that would create needs `create` too, asked where admission validates (kube's
withAuthorization in endpoints/handlers/update.go and patch.go), in its own words.

The registry's side (every verb asks before it touches the store) is proven in
tests/unit/test_registry_authorize_first.py; here the answers, through the HTTP app.
"""

from __future__ import annotations

import pytest

from tests.support.rbac import grant, namespaces, ok, rule, token_file, user
from tests.support.server import Server, start_in_process


APPLY = {"headers": {"Content-Type": "application/apply-patch+yaml"}, "params": {"fieldManager": "me"}}


@pytest.fixture
async def srv(nursery, tmp_path) -> Server:
    return await start_in_process(nursery, tmp_path, token_auth_file=token_file(tmp_path))


def role_body(name: str) -> dict:
    return {"metadata": {"name": name}, "rules": []}


def applied(srv: Server, name: str) -> dict:
    return {"apiVersion": f"rbac.authorization.{srv.domain}/v1", "kind": "ClusterRole",
            "metadata": {"name": name}, "rules": []}


def create_on_update_forbidden(srv: Server, name: str) -> dict:
    """The 403 of an update or apply allowed but not allowed to create (kube's withAuthorization:
    NewForbidden with the authorizer's reason, empty for an RBAC denial without evaluation errors)."""
    group = f"rbac.authorization.{srv.domain}"
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f'clusterroles.{group} "{name}" is forbidden: ', "reason": "Forbidden",
            "details": {"name": name, "group": group, "kind": "clusterroles"}, "code": 403}


async def test_put_that_would_create_by_a_caller_allowed_update_but_not_create_is_403(srv):
    await grant(srv, user("bob"), rule(["update"], ["clusterroles"], ["*"]))
    async with srv.client(token="bob-token") as bob:
        r = await bob.put(f"{srv.rbac}/clusterroles/mine", json=role_body("mine"))
    assert (r.status_code, r.json()) == (403, create_on_update_forbidden(srv, "mine"))
    async with srv.client() as admin:
        assert (await admin.get(f"{srv.rbac}/clusterroles/mine")).status_code == 404


async def test_apply_that_would_create_by_a_caller_allowed_patch_but_not_create_is_403(srv):
    # The spec: "for server-side apply, a request is a create if the object does not exist"; kube asks
    # patch first (the filter), then create (withAuthorization, inside admission).
    await grant(srv, user("bob"), rule(["patch"], ["clusterroles"], ["*"]))
    async with srv.client(token="bob-token") as bob:
        r = await bob.patch(f"{srv.rbac}/clusterroles/new", json=applied(srv, "new"), **APPLY)
    assert (r.status_code, r.json()) == (403, create_on_update_forbidden(srv, "new"))
    async with srv.client() as admin:
        assert (await admin.get(f"{srv.rbac}/clusterroles/new")).status_code == 404


async def test_a_caller_without_rights_gets_the_same_403_whether_or_not_the_object_exists(srv):
    group = f"rbac.authorization.{srv.domain}"
    url = f"{srv.rbac}/clusterroles/target"
    writes = [("PUT", "update", {"json": role_body("target")}),
              ("PATCH", "patch", {"json": {"metadata": {"labels": {"a": "b"}}},
                                  "headers": {"Content-Type": "application/merge-patch+json"}}),
              ("PATCH", "patch", {"json": applied(srv, "target"), **APPLY}),
              ("DELETE", "delete", {})]

    async def answers() -> list[tuple[int, dict]]:
        async with srv.client(token="bob-token") as bob:
            return [((r := await bob.request(method, url, **kw)).status_code, r.json()) for method, _, kw in writes]
    missing = await answers()
    async with srv.client() as admin:
        await ok(await admin.post(f"{srv.rbac}/clusterroles", json=role_body("target")), 201)
    assert await answers() == missing
    assert [(code, status["reason"], status["message"]) for code, status in missing] == [
        (403, "Forbidden", f'clusterroles.{group} "target" is forbidden: User "bob" cannot {verb} resource '
                           f'"clusterroles" in API group "{group}" at the cluster scope') for _, verb, _ in writes]


async def test_a_status_put_without_rights_gets_the_same_403_whether_or_not_the_namespace_exists(srv):
    async def answer() -> tuple[int, dict]:
        async with srv.client(token="bob-token") as bob:
            r = await bob.put("/api/v1/namespaces/later/status", json={"metadata": {"name": "later"}})
            return r.status_code, r.json()
    missing = await answer()
    await namespaces(srv, "later")
    assert await answer() == missing
    assert missing[0] == 403 and missing[1]["message"] == (
        'namespaces "later" is forbidden: User "bob" cannot update resource "namespaces/status" in API group "" '
        'in the namespace "later"')
