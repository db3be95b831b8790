"""What the Pod's action subresources (`binding`, `eviction`) ask of the server, and their one write primitive.

Kubernetes' BindingREST and EvictionREST write beside the kind's strategy:
the binding sets `spec.nodeName` with a raw storage GuaranteedUpdate (no
update validation: the spec is otherwise immutable), the eviction writes a
PodDisruptionBudget's status and a Pod's condition the same way, then
deletes the Pod through the store's deletion (graceful for a Pod on a node).

`PodServer` names what they use of the policy object the registry hands an
action (`PolicyContext`, the registry itself): its store, its watch cache,
its consistent reads, its delete. `rewrite` is the read-modify-write they
share, retried on conflict, with uid and resourceVersion preconditions (409
in Kubernetes' words).
"""

from __future__ import annotations

from typing import Any, Callable, Protocol

from runtime.machinery import errors
from runtime.machinery.options import ParsedDeleteOptions
from runtime.machinery.scheme import ResourceType
from runtime.machinery.storedobject import ObjectEncoder, StoredObject, decode_stored
from runtime.server.kinds.base import PolicyContext
from runtime.server.rbac.user import UserInfo
from runtime.server.storage import RevisionConflict, Store

__all__ = ["PodServer", "rewrite"]


class PodServer(PolicyContext, Protocol):
    """The policy object as the pod's subresources use it (see the module doc)."""

    store: Store

    def kind_cache(self, rt: ResourceType) -> Any: ...

    async def wait_fresh(self) -> bool: ...

    async def delete(self, user: UserInfo, rt: ResourceType, namespace: str, name: str,
                     options: ParsedDeleteOptions) -> Any: ...


async def rewrite(server: PodServer, rt: ResourceType, namespace: str, name: str,
                  change: Callable[[dict[str, Any]], None], *, uid: str = "", resource_version: str = "",
                  dry_run: bool = False) -> StoredObject:
    """Read object `name`, apply `change` to a copy (it may raise a StatusError) and store it, retried on a
    conflicting write (not when `resource_version` pins the version). Returns what was stored.

    Raises NotFound, Conflict (a precondition that does not hold), and what `change` raises.
    """
    key = rt.storage_key(namespace, name)
    current = await server.read_current(rt, key, name)
    while True:
        if current is None:
            raise errors.NotFound(f'{rt.group_resource} "{name}" not found', name=name, group=rt.group,
                                  kind=rt.plural)
        meta = current.obj["metadata"]
        for field, wanted, actual in (("UID", uid, meta.get("uid", "")),
                                      ("ResourceVersion", resource_version, meta.get("resourceVersion", ""))):
            if wanted and wanted != actual:
                # storage.NewInvalidObjError's words, as the store's GuaranteedUpdate answers a precondition
                raise errors.Conflict(f'Operation cannot be fulfilled on {rt.group_resource} "{name}": StorageError: '
                                      f"invalid object, Code: 4, Key: {key}, ResourceVersion: 0, AdditionalErrorMsg: "
                                      f"Precondition failed: {field} in precondition: {wanted}, {field} in object "
                                      f"meta: {actual}", name=name, group=rt.group, kind=rt.plural)
        obj = current.copy_dict()
        change(obj)
        if dry_run:
            return StoredObject(key, obj, current.revision)
        encoder = ObjectEncoder(obj)
        try:
            entry = await server.store.update(key, encoder, expected_revision=current.revision)
        except RevisionConflict as exc:
            if resource_version:
                raise errors.Conflict(f'Operation cannot be fulfilled on {rt.group_resource} "{name}": the object '
                                      "has been modified; please apply your changes to the latest version and try "
                                      "again", name=name, group=rt.group, kind=rt.plural) from None
            current = decode_stored(key, exc.current.value, exc.current.mod_revision)
            continue
        return encoder.stored(key, entry.mod_revision) or StoredObject(key, obj, entry.mod_revision, entry.value)
