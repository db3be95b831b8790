"""PATCH: JSON patch, merge patch, strategic merge patch and server-side apply.

`patch_object(...)` picks the engine by Content-Type (`PATCH_TYPES`; any
other is 415), applies the patch to the stored object, and sends the result
through the same decoding (field validation), defaulting, validation and
admission as a PUT, with Kubernetes' GuaranteedUpdate retries: on a write
conflict the patch is applied again to the newer object. Rules:

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
  `json patch ...`) are dropped, warned about or refused (400), as for PUT.
- The caller must be allowed to `patch`; an apply that creates must also be
  allowed to `create`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from runtime import errors
from runtime.objects import StoredObject
from runtime.patch import (
    ApplyConflict, PatchError, apply_json_patch, apply_merge_patch, apply_strategic_merge_patch,
    server_side_apply,
)
from runtime.rbac.user import UserInfo
from runtime.registry.decode import Body, decode_object
from runtime.registry.options import WriteOptions
from runtime.scheme import ResourceType

if TYPE_CHECKING:
    from runtime.registry.registry import Registry, WriteResult

__all__ = ["PATCH_TYPES", "patch_object", "check_patch_options"]

#: Content-Type -> engine, in the order a 415 lists them.
PATCH_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+json": "apply",
    "application/apply-patch+cbor": "apply",
}

_JSON_PATCH_KEYS = ("op", "path", "from", "value")


def _patch_error(exc: PatchError) -> errors.StatusError:
    """The engine's error as the HTTP answer Kubernetes gives."""
    if isinstance(exc, ApplyConflict):
        return errors.Conflict(exc.message, causes=exc.causes())
    if exc.code == 422:
        return errors.Invalid(exc.message)
    if exc.code == 413:
        return errors.RequestEntityTooLarge(exc.message)
    if exc.code == 500:
        return errors.InternalError(exc.message)
    return errors.BadRequest(exc.message)


def _invalid_patch_options(field: str, reason: str, message: str) -> errors.Invalid:
    return errors.Invalid(f'PatchOptions.meta.k8s.io "" is invalid: {field}: {message}',
                          group="meta.k8s.io", kind="PatchOptions", causes=[errors.Cause(reason, message, field)])


def check_patch_options(kind: str, opts: WriteOptions) -> None:
    """apimachinery's ValidatePatchOptions: apply needs a fieldManager; force is for apply only (422)."""
    if kind == "apply" and not opts.field_manager:
        raise _invalid_patch_options("fieldManager", "FieldValueRequired",
                                     "Required value: is required for apply patch")
    if kind != "apply" and opts.force:
        raise _invalid_patch_options("force", "FieldValueForbidden", "Forbidden: may not be specified for "
                                     "non-apply patch")


def _json_patch_problems(patch: Body) -> tuple[str, ...]:
    """Strict-decoding findings in a json patch document itself (unknown keys of an operation)."""
    found: list[str] = []
    if isinstance(patch.data, list):
        for i, op in enumerate(patch.data):
            if isinstance(op, dict):
                found += [f'json patch unknown field "[{i}].{k}"' for k in op if k not in _JSON_PATCH_KEYS]
    found += [f'json patch duplicate field "{p}"' for p in patch.duplicates]
    return tuple(found)


def _apply_patch(kind: str, doc: dict[str, Any], patch: Any, rt: ResourceType) -> Any:
    if kind == "json":
        return apply_json_patch(doc, patch)
    if kind == "merge":
        return apply_merge_patch(doc, patch)
    return apply_strategic_merge_patch(doc, patch, rt.model)


def _check_identity(rt: ResourceType, obj: dict[str, Any], namespace: str, name: str) -> None:
    """The patched object keeps the URL's name (and namespace); 400 otherwise."""
    meta = obj["metadata"]
    if meta.get("name") not in (None, "", name):
        raise errors.BadRequest(f"the name of the object ({meta['name']}) does not match the name on "
                                f"the URL ({name})")
    meta["name"] = name
    if rt.namespaced:
        if meta.get("namespace") not in (None, "", namespace):
            raise errors.BadRequest("the namespace of the provided object does not match the namespace sent "
                                    "on the request")
        meta["namespace"] = namespace


def _decode_apply_config(rt: ResourceType, patch: Body, opts: WriteOptions) -> tuple[dict[str, Any], list[str]]:
    """The apply configuration, field-validated; apiVersion and kind kept as sent (apply checks them)."""
    config, warnings = decode_object(rt, patch, field_validation=opts.field_validation)
    data = patch.data if isinstance(patch.data, dict) else {}
    for key in ("apiVersion", "kind"):
        if data.get(key) in (None, ""):
            config.pop(key, None)
    return config, warnings


async def patch_object(registry: "Registry", user: UserInfo, rt: ResourceType, namespace: str, name: str,
                       patch_type: str, patch: Body, opts: WriteOptions, subresource: str) -> "WriteResult":
    """PATCH one object; see the module doc. Returns the written (or dry-run) object, `created` for 201."""
    from runtime.registry.registry import conflict, not_found, now_rfc3339
    kind = PATCH_TYPES.get(patch_type)
    if kind is None:
        raise errors.UnsupportedMediaType(f"the body of the request was in an unknown format - accepted media "
                                          f"types include: {', '.join(PATCH_TYPES)}")
    check_patch_options(kind, opts)
    ns = namespace if rt.namespaced else ""
    key = rt.storage_key(ns if rt.namespaced else None, name)
    current = await registry._current(key)
    # The spec's verb rule: a server-side apply of a missing object is a create, any other PATCH a patch.
    creates = current is None and kind == "apply" and not subresource
    registry._authorize(user, "create" if creates else "patch", rt, namespace, name, "" if creates else subresource)
    config: dict[str, Any] | None = None
    warnings: list[str] = []
    if kind == "apply":
        config, warnings = _decode_apply_config(rt, patch, opts)
    if current is None:
        if not creates:
            raise not_found(rt, name)
        assert config is not None
        uid = config["metadata"].get("uid")
        if uid:
            raise errors.Conflict(f'Operation cannot be fulfilled on {rt.group_resource} "{name}": uid mismatch: '
                                  f"the provided object specified uid {uid}, and no existing object was found",
                                  name=name, group=rt.group, kind=rt.plural)
        _check_identity(rt, config, ns, name)
        try:
            obj = server_side_apply(None, config, manager=opts.field_manager, model=rt.model, force=opts.force,
                                    api_version=rt.api_version, now=now_rfc3339())
        except PatchError as exc:
            raise _patch_error(exc) from None
        # Server-set fields are wiped on create by patch (rest.WipeObjectMetaSystemFields).
        obj["metadata"].pop("resourceVersion", None)
        return await registry._create(user, rt, namespace, obj, opts, warnings, operation="Apply")

    extra = _json_patch_problems(patch) if kind == "json" else ()
    duplicates = () if kind == "json" else patch.duplicates

    def transform(cur: StoredObject) -> dict[str, Any]:
        try:
            if config is not None:
                patched = server_side_apply(cur.copy_dict(), config, manager=opts.field_manager, model=rt.model,
                                            force=opts.force, api_version=rt.api_version, now=now_rfc3339(),
                                            subresource=subresource)
            else:
                result = _apply_patch(kind, cur.copy_dict(), patch.data, rt)
                patched, found = decode_object(rt, Body(result, duplicates), field_validation=opts.field_validation,
                                               extra_problems=extra)
                warnings[:] = found
        except PatchError as exc:
            raise _patch_error(exc) from None
        wanted = patched["metadata"].get("resourceVersion")
        if wanted and wanted != cur.obj["metadata"].get("resourceVersion"):
            raise conflict(rt, name)  # a conditional patch on a stale version
        _check_identity(rt, patched, ns, name)
        return patched

    return await registry._update_with(user, rt, key, name, transform, opts, warnings, subresource=subresource,
                                       first=current, operation="Apply" if kind == "apply" else "Update")
