"""Per-kind strategy: defaults on create, what an update may not change, when it deletes.

Kubernetes keeps these per kind in `pkg/registry/<group>/<kind>/strategy.go`;
miniplane's kinds are few enough for one module.
"""

from __future__ import annotations

from typing import Any

from runtime.registry.options import WriteOptions
from runtime.scheme import ResourceType, Scheme

__all__ = ["prepare_for_create", "prepare_for_update", "should_delete_on_update", "track_managers",
           "field_manager", "write_warnings", "spec_of", "NAMESPACE_FINALIZER", "NAMESPACE_NAME_LABEL",
           "AGGREGATION_MANAGER"]

NAMESPACE_FINALIZER = "kubernetes"

# Fields the server owns: an update body cannot set them.
_SERVER_META = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation")


def _default_subjects(scheme: Scheme, obj: dict[str, Any]) -> None:
    for subject in obj.get("subjects") or []:
        # Go's defaulting sees "" as unset (len == 0), so an explicit "" is defaulted too.
        if not subject.get("apiGroup") and subject.get("kind") in ("User", "Group", "ServiceAccount"):
            subject["apiGroup"] = "" if subject.get("kind") == "ServiceAccount" else scheme.rbac_group
    ref = obj.get("roleRef")
    if ref is not None and not ref.get("apiGroup"):
        ref["apiGroup"] = scheme.rbac_group


# ObjectMeta's collections are `omitempty` in Kubernetes' JSON: an emptied one is not kept.
_OMITEMPTY_META = ("labels", "annotations", "ownerReferences", "finalizers", "managedFields")

#: The label every Namespace carries with its own name (Kubernetes' `v1.LabelMetadataName`).
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


def _drop_empty_meta(meta: dict[str, Any]) -> None:
    for name in _OMITEMPTY_META:
        if name in meta and not meta[name]:
            del meta[name]


def _label_namespace(obj: dict[str, Any]) -> None:
    # Kubernetes sets it on every create and update (defaulting and Canonicalize), so it
    # always names the namespace and cannot be removed or changed.
    meta = obj["metadata"]
    if meta.get("name"):
        meta["labels"] = dict(meta.get("labels") or {}, **{NAMESPACE_NAME_LABEL: meta["name"]})


def prepare_for_create(scheme: Scheme, rt: ResourceType, obj: dict[str, Any]) -> None:
    """Defaults a new object: subject apiGroups; a namespace's finalizer, Active phase and name label.

    Emptied metadata collections (labels, annotations, ...) are dropped, as Go's `omitempty` does.
    """
    _drop_empty_meta(obj["metadata"])
    if rt.kind in ("RoleBinding", "ClusterRoleBinding"):
        _default_subjects(scheme, obj)
    elif rt.kind == "Namespace":
        spec = obj.setdefault("spec", {})
        finalizers = spec.setdefault("finalizers", [])
        if NAMESPACE_FINALIZER not in finalizers:
            finalizers.append(NAMESPACE_FINALIZER)
        obj["status"] = {"phase": "Active"}
        _label_namespace(obj)


def spec_of(obj: dict[str, Any]) -> dict[str, Any]:
    """Everything but metadata and status: what `generation` counts changes of."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def prepare_for_update(scheme: Scheme, rt: ResourceType, new: dict[str, Any], old: dict[str, Any],
                       subresource: str = "") -> None:
    """Carries server-owned fields over from `old` and applies the subresource's scope.

    `status` writes change only status; `finalize` only spec.finalizers; the main
    resource of a Namespace changes neither. Emptied metadata collections are
    dropped; a Namespace keeps its `kubernetes.io/metadata.name` label.
    """
    meta, old_meta = new["metadata"], old["metadata"]
    _drop_empty_meta(meta)
    for name in _SERVER_META:
        if name in old_meta:
            meta[name] = old_meta[name]
        else:
            meta.pop(name, None)
    if rt.namespaced:
        meta["namespace"] = old_meta.get("namespace")
    if rt.kind in ("RoleBinding", "ClusterRoleBinding"):
        _default_subjects(scheme, new)
    if rt.kind == "Namespace":
        if subresource == "status":
            keep = {k: v for k, v in old.items() if k not in ("status",)}
            # Kubernetes defaults an empty phase to Active when it decodes a Namespace.
            status = dict(new.get("status") or {})
            status["phase"] = status.get("phase") or "Active"
            new.clear()
            new.update(keep)
            new["status"] = status
        elif subresource == "finalize":
            spec = dict(old.get("spec") or {})
            spec["finalizers"] = list((new.get("spec") or {}).get("finalizers") or [])
            status = old.get("status")
            new_meta = old_meta.copy()
            new.clear()
            new.update({k: v for k, v in old.items() if k not in ("spec", "status", "metadata")})
            new["metadata"] = new_meta
            new["spec"] = spec
            if status is not None:
                new["status"] = status
        else:
            if "spec" in old:
                new["spec"] = old["spec"]
            else:
                new.pop("spec", None)
            if "status" in old:
                new["status"] = old["status"]
        _label_namespace(new)
    if spec_of(new) != spec_of(old):
        meta["generation"] = int(old_meta.get("generation") or 0) + 1


def should_delete_on_update(rt: ResourceType, obj: dict[str, Any]) -> bool:
    """A terminating object whose last finalizer an update removed is gone."""
    meta = obj["metadata"]
    if not meta.get("deletionTimestamp") or meta.get("finalizers"):
        return False
    if rt.kind == "Namespace" and (obj.get("spec") or {}).get("finalizers"):
        return False
    return True


def field_manager(opts: WriteOptions) -> str:
    """The manager a write is recorded under: `fieldManager`, else the User-Agent up to its first `/`."""
    from runtime.patch import manager_from_user_agent
    return opts.field_manager or manager_from_user_agent(opts.user_agent) or "unknown"


def track_managers(scheme: Scheme, rt: ResourceType, old: dict[str, Any] | None, new: dict[str, Any],
                   opts: WriteOptions, operation: str, now: str, subresource: str = "") -> None:
    """Record a non-apply write (create, update, non-apply patch) in metadata.managedFields.

    The fields this write adds or changes become the writer's (an `Update`
    entry; see `runtime.patch.update_managed_fields`). `metadata.managedFields`
    itself is not writable this way: whatever the body says is replaced by the
    stored entries (none on create) before the write is recorded; only apply
    changes ownership on a manager's behalf.
    """
    from runtime.patch import update_managed_fields
    meta = new["metadata"]
    stored = ((old or {}).get("metadata") or {}).get("managedFields")
    if stored:
        meta["managedFields"] = stored
    else:
        meta.pop("managedFields", None)
    tracked = update_managed_fields(old, new, manager=field_manager(opts), operation=operation, model=rt.model,
                                    api_version=rt.api_version, now=now, subresource=subresource)
    new["metadata"] = tracked["metadata"]


AGGREGATION_MANAGER = "clusterrole-aggregation-controller"


def write_warnings(scheme: Scheme, rt: ResourceType, old: dict[str, Any] | None,
                   new: dict[str, Any], manager: str = "") -> list[str]:
    """Warnings a write earns: rules of an aggregated ClusterRole belong to its controller
    (whose own writes, by `manager`, earn none)."""
    if rt.kind != "ClusterRole" or not new.get("aggregationRule") or manager == AGGREGATION_MANAGER:
        return []
    if old is not None and (old.get("rules") or []) == (new.get("rules") or []):
        return []
    if old is None and not new.get("rules"):
        return []
    return [f"the rules of an aggregated ClusterRole are managed by the {AGGREGATION_MANAGER} "
            "and will be overwritten"]
