"""PATCH: JSON patch, merge patch, strategic merge patch and server-side apply.

`patch(...)` takes the engine its Content-Type picked (`runtime.machinery.options.patch_type`,
which answers 415 for any other), applies the patch to the stored object, and
sends the result through the same decoding (field validation), defaulting,
validation and admission as a PUT, with Kubernetes' GuaranteedUpdate retries:
on a write conflict the patch is applied again to the newer object. Rules:

- A `metadata.resourceVersion` in the patched result that differs from the
  stored one makes the patch conditional: 409 Conflict, never retried.
- A json patch that does not apply (a failed `test`, a missing path) is 422
  and changes nothing; more than 10000 operations is 413; a malformed patch
  400. A result that fails validation is 422 and changes nothing.
- Apply (`application/apply-patch+yaml`, `+json`, and `+cbor` behind its gate)
  needs `fieldManager` (422 otherwise), creates a missing object (201), and
  answers conflicts with other managers' fields as 409 with one
  `FieldManagerConflict` cause per field; `force=true` takes them over.
  `force` on another patch type is 422.
- Every other patch records its writer (`fieldManager`, else the User-Agent
  up to its first `/`) as an `Update` manager of the fields it changed.
- Field validation: unknown and duplicate fields of the patched object (for
  apply, of the configuration; for a json patch, also of the operations, as
  `json patch ...`) are dropped or warned about as for PUT; Strict refuses
  them with 400 for apply, 422 for the other patches (as a wrong type in
  them), in Kubernetes' words (`patch: Invalid value: ...`).
- The caller must be allowed to `patch` (of the subresource), asked before
  anything is read (Kubernetes' filter chain: the same 403 whether the
  object exists or not); an apply that creates must also be allowed to
  `create`, asked after validation (Kubernetes' withAuthorization).

Internal to `runtime.server.registry`: imported by its modules only.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from runtime.machinery import errors
from runtime.server.kinds import Subresource, ViewSubresource
from runtime.machinery.storedobject import StoredObject
from runtime.machinery.patch import (
    ApplyConflict, CorruptManagedFields, MalformedPatch, PatchError, PatchNotApplicable, TooManyOperations,
    apply_json_patch, apply_merge_patch, apply_strategic_merge_patch, server_side_apply,
)
from runtime.server.rbac.user import UserInfo
from runtime.server.registry.answers import WriteResult, check_name, claim_namespace, conflict, not_found, now_rfc3339
from runtime.server.registry.conversion import converting
from runtime.server.registry.primitives import RegistryCore
from runtime.server.registry.view_subresources import update_view
from runtime.machinery.options import Body, PatchType, WriteOptions
from runtime.machinery.scheme import ResourceType
from runtime.server.kinds.decoding import field_problems
from runtime.machinery.validation.fielderrors import invalid
from runtime.machinery.validation.gofmt import go_json, go_plus_v

__all__ = ["patch", "check_patch_options", "patch_errors"]

_JSON_PATCH_KEYS = ("op", "path", "from", "value")

#: The answer each patch engine error gets (Kubernetes' codes).
_PATCH_ANSWERS: dict[type[PatchError], type[errors.StatusError]] = {
    MalformedPatch: errors.BadRequest,
    PatchNotApplicable: errors.Invalid,
    TooManyOperations: errors.RequestEntityTooLarge,
    CorruptManagedFields: errors.InternalError,
}


@contextmanager
def patch_errors() -> Iterator[None]:
    """The one place where the patch engines' errors become Status answers."""
    try:
        yield
    except ApplyConflict as exc:
        raise errors.Conflict(exc.message, causes=exc.causes()) from None
    except PatchError as exc:
        answer = next(status for kind, status in _PATCH_ANSWERS.items() if isinstance(exc, kind))
        raise answer(exc.message) from None


def _invalid_patch_options(field: str, reason: str, message: str) -> errors.Invalid:
    return errors.Invalid(f'PatchOptions.meta.k8s.io "" is invalid: {field}: {message}',
                          group="meta.k8s.io", kind="PatchOptions", causes=[errors.Cause(reason, message, field)])


def check_patch_options(kind: PatchType, opts: WriteOptions) -> None:
    """apimachinery's ValidatePatchOptions: apply needs a fieldManager; force is for apply only (422)."""
    if kind is PatchType.APPLY and not opts.field_manager:
        raise _invalid_patch_options("fieldManager", "FieldValueRequired",
                                     "Required value: is required for apply patch")
    if kind is not PatchType.APPLY and opts.force:
        raise _invalid_patch_options("force", "FieldValueForbidden", "Forbidden: may not be specified for "
                                     "non-apply patch")


def _json_patch_problems(body: Body) -> tuple[str, ...]:
    """Strict-decoding findings in a json patch document itself (unknown keys of an operation)."""
    found: list[str] = []
    if isinstance(body.data, list):
        for i, op in enumerate(body.data):
            if isinstance(op, dict):
                found += [f'json patch unknown field "[{i}].{k}"' for k in op if k not in _JSON_PATCH_KEYS]
    found += [f'json patch duplicate field "{p}"' for p in body.duplicates]
    return tuple(found)


def _apply_patch(kind: PatchType, doc: dict[str, Any], data: Any, rt: ResourceType) -> Any:
    if kind is PatchType.JSON:
        return apply_json_patch(doc, data)
    if kind is PatchType.MERGE:
        return apply_merge_patch(doc, data)
    return apply_strategic_merge_patch(doc, data, rt.strategy.merge_schema)


def _decode_patched(rt: ResourceType, kind: PatchType, patch: Any, result: Any, duplicates: tuple[str, ...],
                    opts: WriteOptions, extra: tuple[str, ...]) -> tuple[dict[str, Any], list[str]]:
    """The patched object decoded; what does not decode is 422, as Kubernetes' patchers answer.

    A wrong type, and (Strict) unknown or duplicate fields, are `field.Invalid("patch", ...)` of
    an Invalid without a kind: the patched object as JSON for a json or merge patch, the patch
    map as Go's `%+v` for a strategic merge patch (not 400, as for POST and PUT).
    """
    try:
        return rt.strategy.decode(Body(result, duplicates), opts.field_validation, extra)
    except errors.BadRequest as exc:
        prefix = f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: '
        detail = exc.message[len(prefix):] if exc.message.startswith(prefix) else exc.message
        if not detail.startswith("strict decoding error") and (extra or _has_unknown_fields(rt, result, duplicates)):
            raise  # the spec (field validation 4): unknown fields and another error are 400, whatever the level
        shown = go_plus_v(patch) if kind is PatchType.STRATEGIC else go_json(result)
        error = invalid("patch", shown, detail)
        raise errors.Invalid(f' "" is invalid: {error}', causes=[errors.Cause(error.type, error.message,
                                                                              error.field)]) from None


def _has_unknown_fields(rt: ResourceType, data: Any, duplicates: tuple[str, ...]) -> bool:
    try:
        return bool(field_problems(rt, data, duplicates))
    except Exception:  # a kind without a pydantic model of its own (custom kinds) decodes by its schema
        return False


def _check_identity(rt: ResourceType, obj: dict[str, Any], namespace: str, name: str) -> None:
    """The patched object names the URL's object in the URL's namespace (Kubernetes' checkName, then
    EnsureObjectNamespaceMatchesRequestNamespace); 400 otherwise. An apply configuration without a
    name takes the URL's."""
    meta = obj["metadata"]
    if not meta.get("name"):
        meta["name"] = name
    check_name(meta, name, namespace if rt.namespaced else "")
    claim_namespace(rt, meta, namespace)


def _decode_apply_config(rt: ResourceType, body: Body, opts: WriteOptions) -> tuple[dict[str, Any], list[str]]:
    """The apply configuration, field-validated; apiVersion and kind kept as sent (apply checks them)."""
    config, warnings = rt.strategy.decode(body, opts.field_validation)
    data = body.data if isinstance(body.data, dict) else {}
    for key in ("apiVersion", "kind"):
        if data.get(key) in (None, ""):
            config.pop(key, None)
    return config, warnings


async def patch(core: RegistryCore, user: UserInfo, rt: ResourceType, namespace: str, name: str,
                kind: PatchType, body: Body, opts: WriteOptions, subresource: Subresource | None = None) -> WriteResult:
    """PATCH one object (or its `subresource`; None: the main resource) with engine `kind` (see the
    module doc). Returns the written (or dry-run) object, `created` for 201."""
    core.authorize_request(user, "patch", rt, namespace, name, subresource)
    core.check_verb(rt, "patch", subresource)
    core = converting(core, rt)  # the request's version throughout, when a webhook converts
    ns = namespace if rt.namespaced else ""
    key = rt.storage_key(ns if rt.namespaced else None, name)
    current = await core.read_current(rt, key, name)
    # The spec's verb rule: a server-side apply of a missing object is a create, any other PATCH a patch.
    creates = current is None and kind is PatchType.APPLY and subresource is None
    if creates:
        core.check_verb(rt, "create")
    check_patch_options(kind, opts)
    if subresource is not None and isinstance(subresource, ViewSubresource):
        if current is None:
            raise not_found(rt, name)
        if kind not in (PatchType.JSON, PatchType.MERGE):
            raise errors.UnsupportedMediaType(f"the {subresource.name} subresource takes json and merge patches")

        def patch_view(view: dict[str, Any]) -> dict[str, Any]:
            with patch_errors():
                return _apply_patch(kind, view, body.data, rt)
        return await update_view(core, user, rt, key, name, None, opts, subresource, current, patch_view)
    config: dict[str, Any] | None = None
    warnings: list[str] = []
    if kind is PatchType.APPLY:
        config, warnings = _decode_apply_config(rt, body, opts)
    if current is None:
        if not creates:
            raise not_found(rt, name)
        assert config is not None
        uid = config["metadata"].get("uid")
        if uid:
            raise conflict(rt, name, f"uid mismatch: the provided object specified uid {uid}, and no existing "
                                     "object was found")
        _check_identity(rt, config, ns, name)
        with patch_errors():
            obj = server_side_apply(None, config, manager=opts.field_manager, model=rt.strategy.merge_schema,
                                    kind=rt.kind, force=opts.force,
                                    api_version=rt.api_version, now=now_rfc3339())
        # Server-set fields are wiped on create by patch (rest.WipeObjectMetaSystemFields).
        obj["metadata"].pop("resourceVersion", None)
        return await core.create_object(user, rt, namespace, obj, opts, warnings, operation="Apply",
                                        on_update=True)

    extra = _json_patch_problems(body) if kind is PatchType.JSON else ()
    duplicates = () if kind is PatchType.JSON else body.duplicates

    def transform(cur: StoredObject) -> dict[str, Any]:
        with patch_errors():
            if config is not None:
                patched = server_side_apply(cur.copy_dict(), config, manager=opts.field_manager,
                                            model=rt.strategy.merge_schema, kind=rt.kind,
                                            force=opts.force, api_version=rt.api_version, now=now_rfc3339(),
                                            subresource=subresource.name if subresource is not None else "")
            else:
                result = _apply_patch(kind, cur.copy_dict(), body.data, rt)
                patched, found = _decode_patched(rt, kind, body.data, result, duplicates, opts, extra)
                warnings[:] = found
        wanted = patched["metadata"].get("resourceVersion")
        if wanted and wanted != cur.obj["metadata"].get("resourceVersion"):
            raise conflict(rt, name)  # a conditional patch on a stale version
        _check_identity(rt, patched, ns, name)
        return patched

    return await core.guaranteed_update(user, rt, key, name, transform, opts, warnings, subresource=subresource,
                                        first=current,
                                        operation="Apply" if kind is PatchType.APPLY else "Update")
