"""Deletion: preconditions, two-phase deletion with finalizers, the namespace rules, collections.

An object with finalizers gets `deletionTimestamp` (set by the first delete,
never moved by a later one) and stays until an update removes the last
finalizer. One without finalizers is removed at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from runtime import errors
from runtime.errors import success_status
from runtime.objects import StoredObject
from runtime.rbac.user import UserInfo
from runtime.registry.options import DeleteOptions, ListOptions
from runtime.scheme import ResourceType
from runtime.storage import KeyNotFound, RevisionConflict

if TYPE_CHECKING:
    from runtime.registry.registry import DeleteResult, Registry

__all__ = ["delete_object", "delete_collection", "PROTECTED_NAMESPACES"]

PROTECTED_NAMESPACES = ("default",)
_POLICIES = ("Orphan", "Background", "Foreground")


def _check_options(options: DeleteOptions) -> None:
    if options.propagation_policy is not None and options.propagation_policy not in _POLICIES:
        raise errors.Invalid(
            f'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: '
            f'"{options.propagation_policy}": supported values: "Foreground", "Background", "Orphan", "nil"',
            causes=[errors.Cause("FieldValueNotSupported", "Unsupported value", "propagationPolicy")])
    if options.orphan_dependents is not None and options.propagation_policy is not None:
        raise errors.Invalid('DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: '
                             '"' + options.propagation_policy + '": orphanDependents and deletionPropagation '
                             "cannot be both set")
    if options.grace_period_seconds is not None and options.grace_period_seconds < 0:
        raise errors.Invalid('DeleteOptions.meta.k8s.io "" is invalid: gracePeriodSeconds: Invalid value: '
                             f"{options.grace_period_seconds}: must be >= 0")


def _check_preconditions(rt: ResourceType, obj: dict[str, Any], options: DeleteOptions) -> None:
    pre = options.preconditions or {}
    meta = obj["metadata"]
    if pre.get("uid") and pre["uid"] != meta.get("uid"):
        raise errors.Conflict(f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: "
                              f"{meta.get('uid')}", name=meta.get("name", ""), group=rt.group, kind=rt.plural)
    if pre.get("resourceVersion") and pre["resourceVersion"] != meta.get("resourceVersion"):
        raise errors.Conflict(f"Precondition failed: ResourceVersion in precondition: {pre['resourceVersion']}, "
                              f"ResourceVersion in object meta: {meta.get('resourceVersion')}",
                              name=meta.get("name", ""), group=rt.group, kind=rt.plural)


def _has_finalizers(rt: ResourceType, obj: dict[str, Any]) -> bool:
    if obj["metadata"].get("finalizers"):
        return True
    return rt.kind == "Namespace" and bool((obj.get("spec") or {}).get("finalizers"))


def _success(rt: ResourceType, current: StoredObject) -> dict[str, Any]:
    return success_status(name=current.name, group=rt.group, kind=rt.plural,
                          uid=current.obj["metadata"].get("uid", ""))


async def delete_object(registry: "Registry", user: UserInfo, rt: ResourceType, namespace: str, name: str,
                        options: DeleteOptions) -> "DeleteResult":
    from runtime.registry.registry import DeleteResult, not_found, now_rfc3339
    _check_options(options)
    if rt.kind == "Namespace" and name in PROTECTED_NAMESPACES:
        raise errors.Forbidden(f'namespaces "{name}" is forbidden: this namespace may not be deleted',
                               name=name, kind="namespaces")
    key = rt.storage_key(namespace if rt.namespaced else None, name)
    for _attempt in range(16):
        current = await registry._current(key)
        if current is None:
            raise not_found(rt, name)
        _check_preconditions(rt, current.obj, options)
        await registry._admit(user, rt, "delete", current.obj, current.obj, options)
        if _has_finalizers(rt, current.obj):
            if current.obj["metadata"].get("deletionTimestamp"):
                # Already terminating: the first delete's timestamp stands; answer the object as it is.
                return DeleteResult(200, current)
            obj = current.copy_dict()
            obj["metadata"]["deletionTimestamp"] = now_rfc3339()
            obj["metadata"]["deletionGracePeriodSeconds"] = 0
            if rt.kind == "Namespace":
                obj.setdefault("status", {})["phase"] = "Terminating"
            code = 202 if options.orphan_dependents is False else 200
            if options.dry_run:
                return DeleteResult(code, StoredObject(key, obj, current.revision))
            from runtime.objects import dumps_json

            def encode(revision: int, obj: dict[str, Any] = obj) -> bytes:
                obj["metadata"]["resourceVersion"] = str(revision)
                return dumps_json(obj)
            try:
                entry = await registry.store.update(key, encode, expected_revision=current.revision)
            except RevisionConflict:
                continue
            except KeyNotFound:
                raise not_found(rt, name) from None
            return DeleteResult(code, StoredObject(key, obj, entry.mod_revision, entry.value))
        if options.dry_run:
            body: Any = current if rt.kind == "Namespace" else _success(rt, current)
            return DeleteResult(200, body)
        try:
            await registry.store.delete(key, expected_revision=current.revision)
        except RevisionConflict:
            continue
        except KeyNotFound:
            raise not_found(rt, name) from None
        return DeleteResult(200, current if rt.kind == "Namespace" else _success(rt, current))
    raise errors.Conflict(f'Operation cannot be fulfilled on {rt.group_resource} "{name}": too many conflicts')


async def delete_collection(registry: "Registry", user: UserInfo, rt: ResourceType, namespace: str,
                            list_opts: ListOptions, options: DeleteOptions) -> dict[str, Any]:
    from runtime.registry.listing import list_objects
    from runtime.registry.registry import DeleteResult
    listed = await list_objects(registry, rt, namespace, list_opts)
    for obj in listed.items:
        try:
            await delete_object(registry, user, rt, obj.namespace, obj.name, options)
        except errors.NotFound:
            pass  # deleted meanwhile: the collection is still gone
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
