"""The bootstrap: the default RBAC policy and the system namespaces, created or reconciled at every start.

The policy is Kubernetes' (`manifests/bootstrap-policy.yaml`) plus miniplane's
own (`manifests/insight-ui-policy.yaml`: everyone may load the /ui/ page).
One function for the server and the test environment. Each policy object is
reconciled with what is stored (`runtime.server.rbac.reconcile`: missing rules,
subjects and labels added, nothing a user added removed, objects annotated
`rbac.authorization.kubernetes.io/autoupdate: "false"` left alone); a binding
whose roleRef changed is deleted and re-created (roleRef is immutable). The
namespaces every Kubernetes cluster has are created when missing: `default`
(kube-apiserver's bootstrap controller) and `kube-system`, `kube-public` and
`kube-node-lease` (its system namespaces controller), and so are the built-in PriorityClasses
`system-node-critical` and `system-cluster-critical` (its scheduling post-start hook). Writes go through the registry
as `SYSTEM_USER`, with field manager `miniplane-bootstrap`.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from runtime.machinery import errors
from runtime.models.k8s.scheduling_v1 import PriorityClass
from runtime.server.kinds.cluster import SYSTEM_PRIORITY_CLASSES
from runtime.server.rbac import load_bootstrap_policy, reconcile
from runtime.server.rbac.user import UserInfo
from runtime.server.registry import Registry
from runtime.machinery.options import Body, WriteOptions

__all__ = ["bootstrap", "SYSTEM_USER", "FIELD_MANAGER", "MINIPLANE_POLICY", "SYSTEM_NAMESPACES"]

log = logging.getLogger(__name__)

#: The identity of the server's own in-process writes (bootstrap, built-in controllers).
SYSTEM_USER = UserInfo("system:apiserver", groups=("system:masters", "system:authenticated"))
FIELD_MANAGER = "miniplane-bootstrap"
#: miniplane's own bootstrap objects, reconciled after Kubernetes' policy.
MINIPLANE_POLICY = Path(__file__).resolve().parents[2] / "manifests" / "insight-ui-policy.yaml"
#: The namespaces kube-apiserver creates (metav1.NamespaceDefault, NamespaceSystem, NamespacePublic,
#: NamespaceNodeLease).
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


async def bootstrap(registry: Registry, user: UserInfo = SYSTEM_USER) -> None:
    """Create or reconcile the bootstrap policy, then create the system namespaces and the built-in
    PriorityClasses that are missing."""
    await registry.cache.wait_fresh()
    domain = registry.scheme.domain
    for obj in [*load_bootstrap_policy(domain), *load_bootstrap_policy(domain, MINIPLANE_POLICY)]:
        await _reconcile(registry, user, obj)
    namespaces = registry.namespaces
    for name in SYSTEM_NAMESPACES:
        if registry.kind_cache(namespaces).get(namespaces.storage_key(None, name)) is not None:
            continue
        try:
            await registry.create(user, namespaces, "", Body({"apiVersion": namespaces.api_version,
                                                             "kind": namespaces.kind,
                                                             "metadata": {"name": name}}),
                                  WriteOptions(field_manager=FIELD_MANAGER))
        except errors.AlreadyExists:
            pass  # created meanwhile (another server), or being deleted (kube-node-lease may be)
    classes = registry.scheme.by_model(PriorityClass)
    for name, value, description in SYSTEM_PRIORITY_CLASSES if classes is not None else ():
        if registry.kind_cache(classes).get(classes.storage_key(None, name)) is not None:
            continue
        try:
            await registry.create(user, classes, "", Body({"apiVersion": classes.api_version, "kind": classes.kind,
                                                          "metadata": {"name": name}, "value": value,
                                                          "description": description}),
                                  WriteOptions(field_manager=FIELD_MANAGER))
        except errors.AlreadyExists:
            pass  # created meanwhile (another server)


async def _reconcile(registry: Registry, user: UserInfo, wanted_obj: dict[str, Any]) -> None:
    rt = registry.scheme.by_api_version_kind(wanted_obj["apiVersion"], wanted_obj["kind"])
    meta = wanted_obj["metadata"]
    namespace, name = meta.get("namespace", ""), meta["name"]
    existing = registry.kind_cache(rt).get(rt.storage_key(namespace or None, name))
    wanted = reconcile(existing.obj if existing else None, wanted_obj)
    if wanted is None:
        return
    opts = WriteOptions(field_manager=FIELD_MANAGER)
    try:
        if existing is None:
            await registry.create(user, rt, namespace, Body(wanted), opts)
        elif wanted.get("roleRef") != existing.obj.get("roleRef"):
            # roleRef is immutable: delete and re-create, as Kubernetes' reconciler does.
            await registry.delete(user, rt, namespace, name)
            await registry.create(user, rt, namespace, Body(wanted), opts)
        else:
            wanted = dict(wanted)
            wanted["metadata"] = dict(wanted["metadata"], resourceVersion=existing.obj["metadata"]["resourceVersion"])
            await registry.update(user, rt, namespace, name, Body(wanted), opts)
    except (errors.Conflict, errors.AlreadyExists):
        log.warning("bootstrap: %s %s changed meanwhile; left as is", rt.kind, name)
