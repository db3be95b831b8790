"""Deletion answers as kube-apiserver answers (issue 16)."""

from __future__ import annotations

from tests.support.rbac import ok

MERGE = {"Content-Type": "application/merge-patch+json"}


def role(srv, name: str = "r", **meta) -> dict:
    return {"apiVersion": f"rbac.authorization.{srv.domain}/v1", "kind": "ClusterRole",
            "metadata": {"name": name, **meta}, "rules": []}


async def test_no_new_finalizer_may_be_added_to_an_object_being_deleted(server):
    async with server.client() as c:
        await ok(await c.post(f"{server.rbac}/clusterroles", json=role(server, finalizers=["x.io/hold"])), 201)
        await ok(await c.delete(f"{server.rbac}/clusterroles/r"))
        r = await c.patch(f"{server.rbac}/clusterroles/r",
                          json={"metadata": {"finalizers": ["x.io/hold", "x.io/more"]}}, headers=MERGE)
        assert r.status_code == 422 and r.json()["reason"] == "Invalid"
        assert r.json()["details"]["causes"] == [{
            "reason": "FieldValueForbidden", "field": "metadata.finalizers",
            "message": 'Forbidden: no new finalizers can be added if the object is being deleted, found new '
                       'finalizers []string{"x.io/more"}'}]
        # Removing one is fine (and the last one's removal deletes it).
        done = await c.patch(f"{server.rbac}/clusterroles/r", json={"metadata": {"finalizers": None}}, headers=MERGE)
        assert done.status_code == 200
        assert (await c.get(f"{server.rbac}/clusterroles/r")).status_code == 404


async def test_deletion_grace_period_is_set_as_kubernetes_unset_on_namespaces_zero_on_roles(server):
    # A namespace is marked by its own storage (no grace period); other kinds by the generic store's
    # markAsDeleting (deletionGracePeriodSeconds 0, a generation there is bumped).
    async with server.client() as c:
        await ok(await c.post("/api/v1/namespaces", json={"metadata": {"name": "gone", "generation": 2}}), 201)
        ns = await ok(await c.delete("/api/v1/namespaces/gone"))
        assert ns["metadata"]["deletionTimestamp"] and "deletionGracePeriodSeconds" not in ns["metadata"]
        assert ns["metadata"]["generation"] == 2
        await ok(await c.post(f"{server.rbac}/clusterroles", json=role(server, finalizers=["x.io/h"])), 201)
        marked = await ok(await c.delete(f"{server.rbac}/clusterroles/r"))
        assert marked["metadata"]["deletionGracePeriodSeconds"] == 0 and "generation" not in marked["metadata"]
        # markAsDeleting bumps a generation there is (here one the create sent: RBAC kinds count none).
        await ok(await c.post(f"{server.rbac}/clusterroles", json=role(server, "g", finalizers=["x.io/h"],
                                                                        generation=3)), 201)
        assert (await ok(await c.delete(f"{server.rbac}/clusterroles/g")))["metadata"]["generation"] == 4
        await ok(await c.post(f"{server.rbac}/clusterroles", json=role(server, "top", finalizers=["x.io/h"],
                                                                        generation=2**63 - 1)), 201)
        top = await ok(await c.delete(f"{server.rbac}/clusterroles/top"))
        assert top["metadata"]["generation"] == 2**63 - 1  # int64's largest: no further


async def test_namespaces_offer_no_collection_delete(server):
    async with server.client() as c:
        r = await c.delete("/api/v1/namespaces")
        assert r.status_code == 405 and r.json()["reason"] == "MethodNotAllowed"


async def test_failed_delete_precondition_names_the_kind_as_rest_before_delete(server):
    async with server.client() as c:
        created = await ok(await c.post(f"{server.rbac}/clusterroles", json=role(server)), 201)
        r = await c.request("DELETE", f"{server.rbac}/clusterroles/r",
                            json={"preconditions": {"resourceVersion": "1"}})
        group = f"rbac.authorization.{server.domain}"
        assert r.status_code == 409 and r.json()["reason"] == "Conflict"
        assert r.json()["message"] == (
            f'Operation cannot be fulfilled on ClusterRole.{group} "r": the ResourceVersion in the precondition (1) '
            f"does not match the ResourceVersion in record ({created['metadata']['resourceVersion']}). The object "
            "might have been modified")
        assert r.json()["details"] == {"name": "r", "group": group, "kind": "ClusterRole"}
