"""Example controller: group `team-x` may view every namespace labelled `team=x`.

In each such namespace it keeps a RoleBinding `team-x-view` (ClusterRole
`view` to group `team-x`) owned by the namespace: restored when edited or
deleted, deleted when the label goes. The same `setup` runs in a test
(`runtime.controller.testing`) or against any server:

    miniplane controllers --kubeconfig admin.kubeconfig --module examples.team_rolebindings --builtin false
"""

from __future__ import annotations

from runtime.client.interface import APPLY_PATCH, ObjectKey, ignore_not_found
from runtime.controller import Manager, set_controller_reference

__all__ = ["setup", "BINDING", "GROUP", "CLUSTER_ROLE"]

BINDING, GROUP, CLUSTER_ROLE = "team-x-view", "team-x", "view"


def setup(manager: Manager) -> None:
    """Add the controller to `manager` (the `miniplane controllers --module` convention)."""
    client, rbac = manager.client, manager.scheme.rbac_group
    namespaces, bindings = manager.scheme.by_kind("Namespace"), manager.scheme.by_kind("RoleBinding")
    namespace_cache, binding_cache = manager.informers.informer(namespaces), manager.informers.informer(bindings)

    def desired(namespace: dict) -> dict:
        binding = {"apiVersion": bindings.api_version, "kind": "RoleBinding",
                   "metadata": {"name": BINDING, "namespace": namespace["metadata"]["name"]},
                   "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": CLUSTER_ROLE},
                   "subjects": [{"apiGroup": rbac, "kind": "Group", "name": GROUP}]}
        set_controller_reference(namespace, binding, manager.scheme)  # deleted with its namespace
        return binding

    async def reconcile(key: ObjectKey) -> None:
        namespace = namespace_cache.get(key)
        current = binding_cache.get(ObjectKey(key.name, BINDING))
        meta = namespace["metadata"] if namespace is not None else {}
        if (meta.get("labels") or {}).get("team") != "x" or "deletionTimestamp" in meta:
            if current is not None:  # unlabelled (or going away): revoke
                with ignore_not_found():
                    await client.delete(bindings, BINDING, namespace=key.name)
            return
        wanted = desired(namespace)
        if current is not None and current.get("roleRef") != wanted["roleRef"]:  # roleRef is immutable
            with ignore_not_found():
                await client.delete(bindings, BINDING, namespace=key.name)
        elif current is not None and current.get("subjects") == wanted["subjects"]:
            return  # up to date
        await client.patch(bindings, BINDING, wanted, patch_type=APPLY_PATCH, namespace=key.name,
                           field_manager="team-x-rolebindings", force=True)

    # Namespaces are the primary kind; a change to a binding they own reconciles its namespace.
    manager.controller("team-x-rolebindings").for_(namespaces).owns(bindings).complete(reconcile)
