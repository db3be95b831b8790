"""Deletion: delete options, preconditions, two-phase deletion, collections, force delete.

An object with finalizers gets `deletionTimestamp` (set by the first delete,
never moved by a later one) and stays until an update removes the last
finalizer. One without finalizers is removed at once.

Delete options (apimachinery's ValidateDeleteOptions, 422 otherwise):

- `preconditions.uid` / `.resourceVersion` that differ from the stored
  object: 409 Conflict, in Kubernetes' words (rest.BeforeDelete: on
  `<Kind>.<group>`, details naming the kind; namespaces in their own).
- `propagationPolicy` is `Orphan`, `Background` or `Foreground`, and not set
  together with `orphanDependents`. The first delete records them as the
  garbage collector's finalizer (`orphan`, `foregroundDeletion`; none for
  Background, the default of every kind here), as the kind's strategy
  decides (`runtime.server.kinds.deletion_propagation`); the object then stays until the
  collector (`controllers.gc`) has done its part and removed that finalizer.
- `gracePeriodSeconds`: a kind with graceful deletion (its strategy's
  `grace_period`, Kubernetes' CheckGracefulDelete: Pods) is marked with
  `deletionTimestamp` (now + the period) and `deletionGracePeriodSeconds`
  and stays (a period of 0 goes at once); a later delete may only shorten
  the period (rest.BeforeDelete). Other kinds go at once. An object kept by finalizers is marked as Kubernetes'
  markAsDeleting does: `deletionGracePeriodSeconds: 0` and a positive
  `generation` bumped (a kind's strategy may differ: a namespace gets neither).
- `orphanDependents=false` on an object that stays (finalizers) answers 202.
- `dryRun`: every check runs, nothing is written.
- Deleting a namespace (a kind whose strategy has `namespace_kind`) waits
  for creates in it that already found it open (`namespace_gate`): none can
  land once it is terminating. What a kind refuses to delete, what keeps it
  (its strategy's `has_finalizers`), how it looks while terminating and what
  an immediate delete answers are its strategy's.

Force delete (`ignoreStoreReadErrorWithClusterBreakingPotential=true`): with
the feature gate `AllowUnsafeMalformedObjectDeletion` off the option is
dropped, as Kubernetes does, so it cannot bypass anything (a corrupt object
still answers 500). With the gate on it needs every other option unset (422),
the `unsafe-delete-ignore-read-errors` verb besides `delete` (403), and an
object that cannot be decoded: on a readable (or missing) object the request
is aborted with 422. The corrupt object is then removed without reading it,
ignoring finalizers and preconditions; the answer is a success Status. It is
refused on deletecollection (422).

Internal to `runtime.server.registry`: imported by its modules only.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

from runtime.machinery import errors
from runtime.machinery.errors import Cause, success_status
from runtime.machinery.storedobject import CorruptObject, ObjectEncoder, StoredObject, decode_stored
from runtime.server.rbac.attributes import resource_attributes
from runtime.server.rbac.user import UserInfo
from runtime.server.registry.answers import DeleteResult, not_found, now_rfc3339, store_errors
from runtime.server.registry.primitives import RegistryCore
from runtime.server.registry.listing import select
from runtime.machinery.options import ListOptions, ParsedDeleteOptions
from runtime.machinery.scheme import ResourceType
from runtime.server.storage import RevisionConflict
from runtime.machinery.validation import FieldError, invalid_error

__all__ = ["delete", "delete_collection", "validate_delete_options", "FORCE_DELETE_GATE", "UNSAFE_DELETE_VERB",
           "PROPAGATION_POLICIES"]

PROPAGATION_POLICIES = ("Foreground", "Background", "Orphan")
FORCE_DELETE_GATE = "AllowUnsafeMalformedObjectDeletion"
#: The extra verb a force delete needs on the resource (Kubernetes' authorizeUnsafeDelete).
UNSAFE_DELETE_VERB = "unsafe-delete-ignore-read-errors"
_FORCE_OPTION = "ignoreStoreReadErrorWithClusterBreakingPotential"
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def _effective(core: RegistryCore, options: ParsedDeleteOptions) -> ParsedDeleteOptions:
    """The options as the server honours them: the force option is dropped while its gate is off."""
    if options.ignore_store_read_error and not core.gate(FORCE_DELETE_GATE):
        return replace(options, ignore_store_read_error=False)
    return options


def validate_delete_options(options: ParsedDeleteOptions) -> None:
    """apimachinery's ValidateDeleteOptions. Raises Invalid (422, `DeleteOptions.meta.k8s.io "" is invalid`)."""
    errs: list[FieldError] = []
    if options.orphan_dependents is not None and options.propagation_policy is not None:
        errs.append(FieldError("FieldValueInvalid", "propagationPolicy",
                               "orphanDependents and deletionPropagation cannot be both set",
                               options.propagation_policy))
    if options.propagation_policy is not None and options.propagation_policy not in PROPAGATION_POLICIES:
        errs.append(FieldError("FieldValueNotSupported", "propagationPolicy", "supported values: " + ", ".join(
            f'"{p}"' for p in (*PROPAGATION_POLICIES, "nil")), options.propagation_policy))
    if options.ignore_store_read_error:
        others = (("dryRun", options.dry_run), ("propagationPolicy", options.propagation_policy is not None),
                  ("orphanDependents", options.orphan_dependents is not None),
                  ("gracePeriodSeconds", options.grace_period_seconds is not None),
                  ("preconditions", options.preconditions is not None))
        errs += [FieldError("FieldValueInvalid", _FORCE_OPTION, f"cannot be set together with .{name}", True)
                 for name, is_set in others if is_set]
    if errs:
        raise invalid_error("DeleteOptions", "DeleteOptions.meta.k8s.io", "", errs)


def _check_preconditions(rt: ResourceType, current: StoredObject, options: ParsedDeleteOptions) -> None:
    """UID first, then resourceVersion (409 in the kind's words: `Strategy.precondition_failed`)."""
    pre = options.preconditions or {}
    meta = current.obj["metadata"]
    name = meta.get("name", "")
    for field, key in (("UID", "uid"), ("ResourceVersion", "resourceVersion")):
        if pre.get(key) is not None and pre[key] != meta.get(key, ""):
            raise rt.strategy.precondition_failed(name, field, pre[key], meta.get(key, ""))


def _success(rt: ResourceType, current: StoredObject) -> dict[str, Any]:
    return success_status(name=current.name, group=rt.group, kind=rt.plural,
                          uid=current.obj["metadata"].get("uid", ""))


async def delete(core: RegistryCore, user: UserInfo, rt: ResourceType, namespace: str, name: str,
                 options: ParsedDeleteOptions) -> DeleteResult:
    """DELETE one object. See the module doc."""
    core.authorize_request(user, "delete", rt, namespace, name)
    core.check_verb(rt, "delete")
    return await _delete_object(core, user, rt, namespace, name, options)


async def _delete_object(core: RegistryCore, user: UserInfo, rt: ResourceType, namespace: str, name: str,
                         options: ParsedDeleteOptions) -> DeleteResult:
    """`delete` once authorized (also each item of a collection delete)."""
    options = _effective(core, options)
    validate_delete_options(options)
    if options.ignore_store_read_error:
        return await _delete_corrupt(core, user, rt, namespace, name)
    rt.strategy.check_delete(name)
    if rt.strategy.namespace_kind and not options.dry_run:
        # Creates in the namespace that checked it open finish first; later ones see it terminating.
        async with core.namespace_gate.closing(name):
            return await _delete_stored(core, user, rt, namespace, name, options)
    return await _delete_stored(core, user, rt, namespace, name, options)


async def _delete_stored(core: RegistryCore, user: UserInfo, rt: ResourceType, namespace: str, name: str,
                         options: ParsedDeleteOptions) -> DeleteResult:
    """`delete` once the options are checked: set the deletion timestamp, or remove."""
    key = rt.storage_key(namespace if rt.namespaced else None, name)
    strategy = rt.strategy
    # Retried until it applies (a conflict means another write to the key committed), as
    # Kubernetes' GuaranteedUpdate and conditional delete do.
    while True:
        current = await core.read_current(rt, key, name)
        if current is None:
            raise not_found(rt, name)
        _check_preconditions(rt, current, options)
        admitted = await core.admit(user, rt, "delete", current.obj, current.obj, options.dry_run, options=options)
        code = 202 if options.orphan_dependents is False else 200
        obj = current.copy_dict()
        graceful, pending = _before_delete(strategy, obj, options)
        if pending or (not graceful and current.obj["metadata"].get("deletionTimestamp")
                       and strategy.has_finalizers(current.obj)):
            # Already terminating: the first delete's timestamp and finalizers stand; answer the object as it is
            # (202 as any delete that leaves the object, when orphanDependents=false asked for one).
            return DeleteResult(code, current, admitted.warnings)
        # The garbage collector's finalizer the propagation policy asks for.
        finalizers = strategy.deletion_finalizers(obj["metadata"].get("finalizers") or [], options)
        if finalizers:
            obj["metadata"]["finalizers"] = finalizers
        else:
            obj["metadata"].pop("finalizers", None)
        if not graceful and strategy.has_finalizers(obj):
            obj["metadata"]["deletionTimestamp"] = now_rfc3339()
            strategy.prepare_for_delete(obj)  # the rest of Kubernetes' markAsDeleting, as the kind does it
        if strategy.has_finalizers(obj) or (graceful and obj["metadata"]["deletionGracePeriodSeconds"] > 0):
            if options.dry_run:
                return DeleteResult(code, StoredObject(key, obj, current.revision), admitted.warnings)
            with store_errors(rt, name):
                try:
                    encoder = ObjectEncoder(obj)
                    entry = await core.store.update(key, encoder, expected_revision=current.revision)
                except RevisionConflict:
                    continue
            return DeleteResult(code, encoder.stored(key, entry.mod_revision)
                                or StoredObject(key, obj, entry.mod_revision, entry.value), admitted.warnings)
        # Deleted now; a graceful delete of period 0 answers the object as it marked it.
        gone = StoredObject(key, obj, current.revision) if graceful else current
        body: Any = gone if strategy.returns_deleted_object else _success(rt, current)
        if options.dry_run:
            return DeleteResult(200, body, admitted.warnings)
        with store_errors(rt, name):
            try:
                await core.store.delete(key, expected_revision=current.revision)
            except RevisionConflict:
                continue
        await admitted.finish(True)  # removed: what the kind's admission holds for it may go (a Service's IPs)
        return DeleteResult(200, body, admitted.warnings)


def _before_delete(strategy: Any, obj: dict[str, Any], options: ParsedDeleteOptions) -> tuple[bool, bool]:
    """Kubernetes' rest.BeforeDelete for a kind with graceful deletion (its strategy's `grace_period`):
    (graceful, pending). Graceful: `obj` is marked (deletionTimestamp = now + the period,
    deletionGracePeriodSeconds, a positive generation bumped), or a terminating one's period shortened
    (only a shorter one is taken). Pending: a terminating object this delete leaves as it is."""
    meta = obj["metadata"]
    asked = options.grace_period_seconds
    if asked is not None and asked < 0:
        asked = 1  # Kubernetes: a negative period is 1s on the delete path
    if meta.get("deletionTimestamp"):
        stored = int(meta.get("deletionGracePeriodSeconds") or 0)
        if stored <= 0:
            return False, False  # marked without a period (finalizers): not graceful, delete as any kind
        if asked is None or asked >= stored:
            return False, True
        meta["deletionTimestamp"] = _shifted(meta["deletionTimestamp"], asked - stored)
        meta["deletionGracePeriodSeconds"] = asked
        return True, False
    period = strategy.grace_period(obj, asked)
    if period is None:
        return False, False
    meta["deletionTimestamp"] = _shifted(now_rfc3339(), period)
    meta["deletionGracePeriodSeconds"] = period
    if int(meta.get("generation") or 0) > 0:
        meta["generation"] = int(meta["generation"]) + 1
    return True, False


def _shifted(timestamp: str, seconds: int) -> str:
    """An RFC 3339 timestamp (metav1.Time's, in UTC) `seconds` later."""
    moved = datetime.strptime(timestamp, _TIME_FORMAT).replace(tzinfo=timezone.utc) + timedelta(seconds=seconds)
    return moved.strftime(_TIME_FORMAT)


async def _delete_corrupt(core: RegistryCore, user: UserInfo, rt: ResourceType, namespace: str,
                          name: str) -> DeleteResult:
    """Kubernetes' corruptObjectDeleter: remove a stored value that does not decode, unread."""
    decision = core.decide(resource_attributes(
        user, UNSAFE_DELETE_VERB, rt.plural, api_group=rt.group, api_version=rt.version,
        namespace=namespace if rt.namespaced else "", name=name))
    if not decision.allowed:
        raise errors.Forbidden(f'{rt.group_resource} "{name}" is forbidden: not permitted to do '
                               f'"{UNSAFE_DELETE_VERB}", reason: {decision.reason}',
                               name=name, group=rt.group, kind=rt.plural)
    key = rt.storage_key(namespace if rt.namespaced else None, name)
    while True:  # retried while the key is rewritten meanwhile, as _delete_stored
        with store_errors(rt, name):
            entry = await core.store.get(key)
        if entry is not None:
            try:
                decode_stored(key, entry.value, entry.mod_revision)
            except CorruptObject:
                pass
            else:
                entry = None  # readable: not for this option
        if entry is None:
            detail = "is exclusively used to delete corrupt object(s), try again by removing this option"
            raise errors.Invalid(f'{rt.group_resource} "{name}" is invalid: {_FORCE_OPTION}: Invalid value: '
                                 f"true: {detail}", name=name, group=rt.group, kind=rt.plural,
                                 causes=[Cause("FieldValueInvalid", f"Invalid value: true: {detail}", _FORCE_OPTION)])
        # Admission still runs (it sees only the name); preconditions and finalizers are ignored.
        stub: dict[str, Any] = {"apiVersion": rt.api_version, "kind": rt.kind, "metadata": {"name": name}}
        if rt.namespaced:
            stub["metadata"]["namespace"] = namespace
        await core.admit(user, rt, "delete", stub, None, False)
        with store_errors(rt, name):
            try:
                await core.store.delete(key, expected_revision=entry.mod_revision)
            except RevisionConflict:
                continue  # rewritten meanwhile: look again (it may be readable now)
        # The object could not be read, so the answer is the handler's bare success Status.
        return DeleteResult(200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                                  "code": 200, "details": {"name": name, "kind": rt.kind}})


async def delete_collection(core: RegistryCore, user: UserInfo, rt: ResourceType, namespace: str,
                            list_opts: ListOptions, options: ParsedDeleteOptions) -> dict[str, Any]:
    """DELETE on a collection: every object the list (selectors, limit/continue, resourceVersion) gives.

    Each is deleted as by `delete` with the same options (objects deleted
    meanwhile are skipped). Returns the success Status Kubernetes' handler
    answers with. Raises MethodNotAllowed for kinds without collection
    delete, Invalid for bad options or the force option.
    """
    selection = core.authorized_selection(user, "deletecollection", rt, namespace, list_opts)
    options = _effective(core, options)
    validate_delete_options(options)
    if options.ignore_store_read_error:
        detail = "is not allowed with DELETECOLLECTION, try again after removing the option"
        raise invalid_error("DeleteOptions", "DeleteOptions.meta.k8s.io", "",
                            [FieldError("FieldValueInvalid", _FORCE_OPTION, detail, True)])
    listed = await select(core, rt, namespace, list_opts, selection)
    for obj in listed.items:
        try:
            await _delete_object(core, user, rt, obj.namespace, obj.name, options)
        except errors.NotFound:
            pass  # deleted meanwhile: the collection is still gone
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 200,
            "details": {"kind": rt.kind}}
