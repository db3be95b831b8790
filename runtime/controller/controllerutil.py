"""controller-runtime's `controllerutil`: create-or-update and owner references, for dicts and typed models.

`create_or_update(client, obj, mutate)` and `create_or_patch(client, obj,
mutate)` make the object named by `obj`'s kind and key what `mutate` says:
they read it, run `mutate(obj)` on the current state (on `obj` as given when
there is none), create it when missing and write only when `mutate` changed
something. `obj` is then the object as stored, as in Go. `mutate` is sync
(it only sets fields) and may not change the name or namespace::

    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": ns}}
    result = await create_or_update(client, cm, lambda o: o.update(data={"mode": "fast"}))
    # OperationResult.CREATED, then UPDATED or UNCHANGED on later runs

`create_or_update` writes with an update conditional on the version read (a
Conflict propagates: the reconcile is retried); `create_or_patch` sends a
merge patch of what `mutate` changed outside `status`, then one of `status`
to the status subresource, and says which it sent.

`set_controller_reference(owner, obj, scheme)` / `set_owner_reference(...)`
add (or update in place) `obj`'s reference to `owner` in memory, so the
garbage collector deletes `obj` with its owner; write `obj` afterwards.
The owner's apiVersion and kind are its model's bound or served kind, or a
dict's own fields. Refused, with controller-runtime's messages: a
cluster-scoped dependent of a namespaced owner and an owner in another
namespace (ValueError), a second controller (`AlreadyOwnedError`).
"""

from __future__ import annotations

import copy
import enum
import inspect
from typing import Any, Callable, Mapping

from pydantic import BaseModel

from runtime.client.interface import MERGE_PATCH, Client, Kind, ObjectKey
from runtime.client.typed import bound_kind_of, kind_of_model
from runtime.machinery import errors
from runtime.machinery.scheme import Scheme
from runtime.models.meta import OwnerReference

__all__ = ["OperationResult", "AlreadyOwnedError", "create_or_update", "create_or_patch",
           "set_controller_reference", "set_owner_reference"]

#: `mutate(obj)`: set the wanted fields on `obj` (a dict or a model instance); its return value is ignored.
MutateFn = Callable[[Any], object]


class OperationResult(str, enum.Enum):
    """What `create_or_update` / `create_or_patch` did (controllerutil's values)."""

    UNCHANGED = "unchanged"
    CREATED = "created"
    UPDATED = "updated"
    #: create_or_patch: the object and its status subresource were patched.
    UPDATED_STATUS = "updatedStatus"
    #: create_or_patch: only the status subresource was patched.
    UPDATED_STATUS_ONLY = "updatedStatusOnly"


class AlreadyOwnedError(ValueError):
    """The object already has another controller; `owner` is that controller's reference (a dict)."""

    def __init__(self, obj: Any, owner: Mapping[str, Any]) -> None:
        meta = _meta(obj)
        self.owner = dict(owner)
        super().__init__(f"Object {meta.get('namespace') or ''}/{meta.get('name') or ''} is already owned by "
                         f"another {owner.get('kind')} controller {owner.get('name')}")


# ---- objects in either form ----------------------------------------------------------------------

def _as_dict(obj: Any) -> dict[str, Any]:
    """A deep copy of `obj` in JSON form."""
    if isinstance(obj, BaseModel):
        return obj.model_dump(by_alias=True, exclude_none=True, mode="json")
    return copy.deepcopy(obj)


def _meta(obj: Any) -> dict[str, Any]:
    if isinstance(obj, BaseModel):
        meta = getattr(obj, "metadata", None)
        return meta.model_dump(by_alias=True, exclude_none=True) if meta is not None else {}
    return obj.get("metadata") or {}


def _key(obj: Any) -> ObjectKey:
    meta = _meta(obj)
    return ObjectKey(meta.get("namespace") or "", meta.get("name") or "")


def _assign(target: Any, source: Any) -> None:
    """Make `target` (in place) the object `source` (of the same form)."""
    if isinstance(target, BaseModel):
        for name in type(target).model_fields:
            setattr(target, name, getattr(source, name))
    else:
        target.clear()
        target.update(source)


def _kind(client: Client, obj: Any) -> Kind:
    """What to name `obj`'s kind by in client calls: its model class, or its ResourceType (dicts)."""
    if isinstance(obj, BaseModel):
        return type(obj)
    api_version, kind = obj.get("apiVersion") or "", obj.get("kind") or ""
    rt = client.scheme.by_api_version_kind(api_version, kind) or bound_kind_of(api_version, kind)
    if rt is None:
        raise ValueError(f"no stored kind {kind!r} in {api_version!r}")
    return rt


# ---- create or update ----------------------------------------------------------------------------

def _mutate(mutate: MutateFn, obj: Any, key: ObjectKey) -> None:
    outcome = mutate(obj)
    if inspect.isawaitable(outcome):
        if inspect.iscoroutine(outcome):
            outcome.close()  # it will never run: no "was never awaited" warning
        raise TypeError("mutate must be a plain function: it only sets fields")
    if _key(obj) != key:
        raise ValueError("MutateFn cannot mutate object name and/or object namespace")


async def _read(client: Client, kind: Kind, obj: Any, mutate: MutateFn) -> bool:
    """Read the current state into `obj` (True); or, missing, mutate and create it (False)."""
    key = _key(obj)
    try:
        current = await client.get(kind, key.name, namespace=key.namespace)
    except errors.NotFound:
        _mutate(mutate, obj, key)
        _assign(obj, await client.create(obj))
        return False
    _assign(obj, current)
    return True


async def create_or_update(client: Client, obj: Any, mutate: MutateFn) -> OperationResult:
    """Create `obj` or update it to what `mutate` makes of its current state; return what was done.

    CREATED (missing: `mutate(obj)` then create), UPDATED (changed: an update
    conditional on the version read) or UNCHANGED (nothing written). `obj`
    ends as stored. Raises the API's errors (Conflict, Forbidden, ...),
    ValueError when `mutate` changed the name or namespace.
    """
    kind = _kind(client, obj)
    if not await _read(client, kind, obj, mutate):
        return OperationResult.CREATED
    before = _as_dict(obj)
    _mutate(mutate, obj, _key(obj))
    if _as_dict(obj) == before:
        return OperationResult.UNCHANGED
    _assign(obj, await client.update(obj))
    return OperationResult.UPDATED


async def create_or_patch(client: Client, obj: Any, mutate: MutateFn) -> OperationResult:
    """Create `obj` or merge-patch what `mutate` changes of its current state; return what was done.

    CREATED, UNCHANGED, UPDATED (a patch of the object outside `status`),
    UPDATED_STATUS_ONLY (a patch of `status` to the status subresource) or
    UPDATED_STATUS (both, object first). The patches carry no
    resourceVersion: they apply to whatever is stored. Raises as
    `create_or_update`.
    """
    # late import: only create_or_patch needs the patch engine, which costs a controller's start ~45 ms
    from runtime.machinery.patch import create_merge_patch

    kind = _kind(client, obj)
    if not await _read(client, kind, obj, mutate):
        return OperationResult.CREATED
    key = _key(obj)
    before = _as_dict(obj)
    before_status = before.pop("status", None)
    _mutate(mutate, obj, key)
    after = _as_dict(obj)
    after_status = after.pop("status", None)
    result = OperationResult.UNCHANGED
    if before != after:
        patched = await client.patch(kind, key.name, create_merge_patch(before, after), patch_type=MERGE_PATCH,
                                     namespace=key.namespace)
        _assign(obj, patched)
        result = OperationResult.UPDATED
    if before_status != after_status:
        status = create_merge_patch(before_status or {}, after_status) if isinstance(after_status, dict) else None
        patched = await client.patch(kind, key.name, {"status": status}, patch_type=MERGE_PATCH,
                                     namespace=key.namespace, subresource="status")
        _assign(obj, patched)
        updated = result is OperationResult.UPDATED
        result = OperationResult.UPDATED_STATUS if updated else OperationResult.UPDATED_STATUS_ONLY
    return result


# ---- owner references ----------------------------------------------------------------------------

def _reference(owner: Any, scheme: Scheme) -> dict[str, Any]:
    if isinstance(owner, BaseModel):
        rt = kind_of_model(type(owner), scheme)
        if rt is None:
            raise ValueError(f"{type(owner).__name__} is neither bound to a kind nor a kind of the scheme")
        api_version, kind = rt.api_version, rt.kind
    else:
        api_version, kind = owner.get("apiVersion") or "", owner.get("kind") or ""
        if not api_version or not kind:
            raise ValueError("the owner has no apiVersion or kind")
    meta = _meta(owner)
    return {"apiVersion": api_version, "kind": kind, "name": meta.get("name") or "", "uid": meta.get("uid") or ""}


def _validate_owner(owner: Any, obj: Any) -> None:
    owner_ns, obj_ns = _meta(owner).get("namespace") or "", _meta(obj).get("namespace") or ""
    if not owner_ns:
        return
    if not obj_ns:
        raise ValueError(f"cluster-scoped resource must not have a namespace-scoped owner, owner's namespace "
                         f"{owner_ns}")
    if owner_ns != obj_ns:
        raise ValueError(f"cross-namespace owner references are disallowed, owner's namespace {owner_ns}, "
                         f"obj's namespace {obj_ns}")


def _same_object(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    # As controller-runtime's referSameObject: the API group (not its version), kind and name.
    def group(ref: Mapping[str, Any]) -> str:
        api_version = ref.get("apiVersion") or ""
        return api_version.rpartition("/")[0] if "/" in api_version else ""

    return group(a) == group(b) and a.get("kind") == b.get("kind") and a.get("name") == b.get("name")


def _references(obj: Any) -> list[dict[str, Any]]:
    return [dict(r) for r in _meta(obj).get("ownerReferences") or []]


def _upsert(obj: Any, ref: dict[str, Any]) -> None:
    refs = _references(obj)
    index = next((i for i, r in enumerate(refs) if _same_object(r, ref)), None)
    if index is None:
        refs.append(ref)
    else:
        refs[index] = ref
    if isinstance(obj, BaseModel):
        obj.metadata.owner_references = [OwnerReference.model_validate(r) for r in refs]
    else:
        obj.setdefault("metadata", {})["ownerReferences"] = refs


def set_controller_reference(owner: Any, obj: Any, scheme: Scheme) -> None:
    """Make `owner` the controller of `obj` (`controller` and `blockOwnerDeletion` true), in memory.

    Raises AlreadyOwnedError when another object controls `obj`, ValueError
    for a cluster-scoped `obj` of a namespaced owner or an owner in another
    namespace (see the module doc).
    """
    _validate_owner(owner, obj)
    ref = _reference(owner, scheme) | {"controller": True, "blockOwnerDeletion": True}
    existing = next((r for r in _references(obj) if r.get("controller")), None)
    if existing is not None and not _same_object(existing, ref):
        raise AlreadyOwnedError(obj, existing)
    _upsert(obj, ref)


def set_owner_reference(owner: Any, obj: Any, scheme: Scheme) -> None:
    """Add `owner` to `obj`'s owners (not as controller; an existing reference to it is replaced), in memory.

    Raises ValueError as `set_controller_reference` does for namespaces.
    """
    _validate_owner(owner, obj)
    _upsert(obj, _reference(owner, scheme))
