"""POST and PUT: create an object, replace one (or create it, for kinds that allow it).

Both decode the body against the kind's model (field validation), then go
through the kind's strategy (defaults, validation, admission) and the store,
in `RegistryCore.create_object` and `RegistryCore.guaranteed_update` (for a kind
whose CRD converts with a webhook, on a core whose store converts:
`runtime.server.registry.conversion`). Dry run
runs every stage and stops right before the store write.

Internal to `runtime.server.registry`: imported by its modules only.
"""

from __future__ import annotations

import copy

from runtime.server.kinds import Subresource, ViewSubresource
from runtime.server.rbac.user import UserInfo
from runtime.server.registry.answers import WriteResult, check_name, claim_namespace, conflict, invalid_object, not_found
from runtime.server.registry.conversion import converting
from runtime.server.registry.primitives import RegistryCore
from runtime.server.registry.view_subresources import update_view
from runtime.machinery.options import Body, WriteOptions
from runtime.machinery.scheme import ResourceType

__all__ = ["create", "update"]


async def create(core: RegistryCore, user: UserInfo, rt: ResourceType, namespace: str, body: Body,
                 opts: WriteOptions) -> WriteResult:
    """POST: a new object (201). 409 AlreadyExists if the name is taken.

    With `opts.dry_run` every stage runs (defaulting, validation, admission,
    the name check) and the answer is the object that would have been
    stored, without a resourceVersion; nothing is written.
    """
    core.authorize_request(user, "create", rt, namespace)
    core.check_verb(rt, "create")
    obj, warnings = rt.strategy.decode(body, opts.field_validation)
    # A kind whose webhook converts is written through a store that converts (`conversion.converting`).
    return await converting(core, rt).create_object(user, rt, namespace, obj, opts, warnings)


async def update(core: RegistryCore, user: UserInfo, rt: ResourceType, namespace: str, name: str, body: Body,
                 opts: WriteOptions, subresource: Subresource | None = None) -> WriteResult:
    """PUT: replace an object (200), or create it when missing and the kind allows it (201); of
    `subresource` (None: the main resource), a write of what it keeps, or of its view.

    The body must name the URL's object (400 otherwise, as Kubernetes'
    checkName). With metadata.resourceVersion set, a stale version is 409
    Conflict; without, the update is unconditional. A metadata.uid that is
    not the stored object's is 409 too (Kubernetes' UID precondition). With `opts.dry_run` the answer is
    the object that would have been stored, at the stored resourceVersion;
    nothing is written.

    Authorized as `update` (of the subresource) before anything is read, as
    Kubernetes' filter chain does: a caller who may not update gets the
    same 403 whether the object exists or not. A PUT that creates also
    needs `create` (asked by `create_object`, Kubernetes' withAuthorization).
    """
    core.authorize_request(user, "update", rt, namespace, name, subresource)
    core.check_verb(rt, "update", subresource)
    core = converting(core, rt)  # the request's version throughout, when a webhook converts
    key = rt.storage_key(namespace if rt.namespaced else None, name)
    current = await core.read_current(rt, key, name)
    if subresource is not None and isinstance(subresource, ViewSubresource):
        if current is None:
            raise not_found(rt, name)
        return await update_view(core, user, rt, key, name, body.data, opts, subresource, current)
    obj, warnings = rt.strategy.decode(body, opts.field_validation)
    meta = obj["metadata"]
    # As Kubernetes' update handler: the namespace first, then the name (both 400).
    claim_namespace(rt, meta, namespace)
    check_name(meta, name, namespace if rt.namespaced else "")
    if current is None:
        if subresource is not None or not rt.strategy.allow_create_on_update:
            raise not_found(rt, name)
        if meta.get("uid"):  # the UID precondition fails against the missing object, as in Kubernetes' store
            raise conflict(rt, name, invalid_object(key, f"Precondition failed: UID in precondition: {meta['uid']}, "
                                                         "UID in object meta: "))
        meta.pop("resourceVersion", None)
        return await core.create_object(user, rt, namespace, obj, opts, warnings, on_update=True)
    return await core.guaranteed_update(user, rt, key, name, lambda _old: copy.deepcopy(obj), opts, warnings,
                                        precondition_rv=meta.get("resourceVersion"),
                                        precondition_uid=meta.get("uid"), subresource=subresource,
                                        first=current)
