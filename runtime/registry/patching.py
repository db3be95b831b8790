"""PATCH: JSON patch, merge patch, strategic merge patch and server-side apply.

The patch is applied to the stored object, the result goes through the same
decoding, defaulting, validation and admission as a PUT, and the write is
retried on conflict unless the patch itself names a resourceVersion
(a conditional patch: stale means 409).
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

__all__ = ["PATCH_TYPES", "patch_object"]

PATCH_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+json": "apply",
    "application/apply-patch+cbor": "apply",
}


def _patch_error(exc: PatchError) -> errors.StatusError:
    if isinstance(exc, ApplyConflict):
        return errors.Conflict(str(exc))
    if exc.code == 422:
        return errors.Invalid(str(exc))
    return errors.BadRequest(str(exc))


def _apply_patch(kind: str, doc: dict[str, Any], patch: Any, rt: ResourceType) -> dict[str, Any]:
    if kind == "json":
        return apply_json_patch(doc, patch)
    if not isinstance(patch, dict):
        raise errors.BadRequest("the body of the request was in an unknown format - accepted media types "
                                "include: application/json-patch+json, application/merge-patch+json, "
                                "application/apply-patch+yaml")
    if kind == "merge":
        return apply_merge_patch(doc, patch)
    return apply_strategic_merge_patch(doc, patch, rt.model)


async def patch_object(registry: "Registry", user: UserInfo, rt: ResourceType, namespace: str, name: str,
                       patch_type: str, patch: Body, opts: WriteOptions, subresource: str) -> "WriteResult":
    from runtime.registry.registry import conflict, not_found, now_rfc3339
    kind = PATCH_TYPES.get(patch_type)
    if kind is None:
        raise errors.UnsupportedMediaType(f"the body of the request was in an unknown format - accepted media "
                                          f"types include: {', '.join(PATCH_TYPES)}")
    if kind == "apply" and not opts.field_manager:
        raise errors.Invalid('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is '
                             "required for apply patch",
                             causes=[errors.Cause("FieldValueRequired", "Required value: is required for "
                                                  "apply patch", "fieldManager")])
    if kind != "apply" and opts.force:
        raise errors.Invalid('PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified '
                             "for non-apply patch",
                             causes=[errors.Cause("FieldValueForbidden", "Forbidden: may not be specified "
                                                  "for non-apply patch", "force")])
    key = rt.storage_key(namespace if rt.namespaced else None, name)
    current = await registry._current(key)
    if current is None:
        if kind != "apply" or subresource:
            registry._authorize(user, "patch", rt, namespace, name, subresource)
            raise not_found(rt, name)
        registry._authorize(user, "create", rt, namespace, name)
        applied, warnings = decode_object(rt, Body(patch.data, patch.duplicates),
                                          field_validation=opts.field_validation)
        applied["metadata"]["name"] = applied["metadata"].get("name") or name
        if applied["metadata"]["name"] != name:
            raise errors.BadRequest(f"the name of the object ({applied['metadata']['name']}) does not match "
                                    f"the name on the URL ({name})")
        try:
            obj = server_side_apply(None, applied, manager=opts.field_manager, model=rt.model, force=opts.force,
                                    api_version=rt.api_version, now=now_rfc3339())
        except PatchError as exc:
            raise _patch_error(exc) from None
        obj["metadata"].pop("resourceVersion", None)
        result = await registry._create(user, rt, namespace, obj, opts, warnings)
        return result
    registry._authorize(user, "patch", rt, namespace, name, subresource)
    warnings: list[str] = []

    def transform(cur: StoredObject) -> dict[str, Any]:
        doc = cur.copy_dict()
        try:
            if kind == "apply":
                applied, found = decode_object(rt, Body(patch.data, patch.duplicates),
                                               field_validation=opts.field_validation)
                applied["metadata"].setdefault("name", name)
                if rt.namespaced:
                    applied["metadata"].setdefault("namespace", cur.namespace)
                patched = server_side_apply(doc, applied, manager=opts.field_manager, model=rt.model,
                                            force=opts.force, api_version=rt.api_version, now=now_rfc3339())
            else:
                patched = _apply_patch(kind, doc, patch.data, rt)
                patched, found = decode_object(rt, Body(patched, patch.duplicates),
                                               field_validation=opts.field_validation)
        except PatchError as exc:
            raise _patch_error(exc) from None
        warnings[:] = found
        wanted = patched.get("metadata", {}).get("resourceVersion")
        if wanted and wanted != cur.obj["metadata"].get("resourceVersion"):
            raise conflict(rt, name)
        if patched["metadata"].get("name", name) != name:
            raise errors.BadRequest(f"the name of the object ({patched['metadata']['name']}) does not match "
                                    f"the name on the URL ({name})")
        patched["metadata"]["name"] = name
        return patched

    return await registry._update_with(user, rt, key, name, transform, opts, warnings, subresource=subresource,
                                       first=current, operation="Apply" if kind == "apply" else "Update")
