"""The order of checks of RBAC writes, as Kubernetes' policy-based RBAC storage (issue 16)."""

from __future__ import annotations

from tests.support.rbac import grant, namespaces, ok, rule, token_file, user
from tests.support.server import start_in_process


async def test_escalation_check_runs_before_validation_a_forbidden_invalid_role_is_403(nursery, tmp_path):
    srv = await start_in_process(nursery, tmp_path, token_auth_file=token_file(tmp_path))
    g = f"rbac.authorization.{srv.domain}"
    await grant(srv, user("bob"), rule(["create"], ["clusterroles"], [g]))
    invalid_and_escalating = {"metadata": {"name": "x"},
                              "rules": [{"verbs": ["delete"], "apiGroups": [""], "resources": ["pods"]},
                                        {"verbs": [], "apiGroups": [""], "resources": ["pods"]}]}
    async with srv.client(token="bob-token") as bob:
        r = await bob.post(f"{srv.rbac}/clusterroles", json=invalid_and_escalating)
    assert r.status_code == 403 and r.json()["reason"] == "Forbidden"
    async with srv.client() as admin:  # the admin may escalate: the same body is then invalid
        assert (await admin.post(f"{srv.rbac}/clusterroles", json=invalid_and_escalating)).status_code == 422


async def test_binding_to_a_missing_role_by_a_user_without_bind_is_404_for_the_role(nursery, tmp_path):
    srv = await start_in_process(nursery, tmp_path, token_auth_file=token_file(tmp_path))
    await namespaces(srv, "a")
    g = f"rbac.authorization.{srv.domain}"
    await grant(srv, user("bob"), rule(["create"], ["rolebindings"], [g]), namespace="a")
    async with srv.client(token="bob-token") as bob:
        for kind, plural in (("Role", "roles"), ("ClusterRole", "clusterroles")):
            body = {"metadata": {"name": f"to-{plural}"}, "subjects": [user("alice")],
                    "roleRef": {"apiGroup": g, "kind": kind, "name": "ghost"}}
            r = await bob.post(f"{srv.rbac}/namespaces/a/rolebindings", json=body)
            assert r.status_code == 404, r.text
            assert r.json()["message"] == f'{plural}.{g} "ghost" not found'
            assert r.json()["details"] == {"name": "ghost", "group": g, "kind": plural}
    async with srv.client() as admin:  # with escalation allowed the binding is created (roleRef unresolved)
        body = {"metadata": {"name": "dangling"}, "subjects": [user("alice")],
                "roleRef": {"apiGroup": g, "kind": "Role", "name": "ghost"}}
        await ok(await admin.post(f"{srv.rbac}/namespaces/a/rolebindings", json=body), 201)
