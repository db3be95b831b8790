"""Patch engines: JSON patch, merge patch, strategic merge patch, server-side apply.

Pure functions over Kubernetes objects in their JSON form (dicts with
camelCase keys); no I/O, inputs never modified, results are new objects.

- `apply_json_patch(doc, operations)`: RFC 6902 (`application/json-patch+json`).
- `apply_merge_patch(doc, patch)`: RFC 7386 (`application/merge-patch+json`);
  `create_merge_patch(before, after)` the patch between two objects.
- `apply_strategic_merge_patch(doc, patch, model)`: Kubernetes' strategic
  merge patch (`application/strategic-merge-patch+json`), list semantics from
  the model's `x-kubernetes-patch-strategy`/`-merge-key` markers.
- `server_side_apply(live, applied, manager=, model=, force=, api_version=, now=)`:
  `application/apply-patch+yaml`, merging per `x-kubernetes-list-type` and
  tracking ownership in `metadata.managedFields`.
- `update_managed_fields(old, new, manager=, model=, api_version=, now=)`:
  ownership for every other write (create, update, non-apply patch).
- `fields_of(obj, model)`, `FieldSet` (FieldsV1 encoding), `schema_for(model)`,
  `manager_from_user_agent(user_agent)`.

Errors (`runtime.machinery.patch.errors`), each a `PatchError(ValueError)` with a
message in Kubernetes' words: `MalformedPatch` (the patch cannot be read),
`PatchNotApplicable` (it does not apply to this object), `TooManyOperations`
(a json patch over 10000 operations), `CorruptManagedFields` (stored managed
fields that do not decode), `ApplyConflict` (fields other managers own; each
a `FieldConflict`: `.conflicts`, `.causes()`).

The schema is derived from the pydantic models (`schema.py`); fields the
models do not describe behave as Kubernetes treats unknown fields: objects
merge per key, lists are replaced whole.
"""

from runtime.machinery.patch.apply import server_side_apply
from runtime.machinery.patch.errors import (
    ApplyConflict, CorruptManagedFields, FieldConflict, MalformedPatch, PatchError, PatchNotApplicable,
    TooManyOperations,
)
from runtime.machinery.patch.fieldpath import FieldSet, PathElement, path_string
from runtime.machinery.patch.json_patch import apply_json_patch
from runtime.machinery.patch.managed_fields import fields_of, manager_from_user_agent, update_managed_fields
from runtime.machinery.patch.merge import apply_merge_patch, create_merge_patch
from runtime.machinery.patch.schema import schema_for
from runtime.machinery.patch.strategic import apply_strategic_merge_patch

__all__ = [
    "PatchError", "MalformedPatch", "PatchNotApplicable", "TooManyOperations", "CorruptManagedFields",
    "ApplyConflict", "FieldConflict",
    "apply_json_patch", "apply_merge_patch", "create_merge_patch", "apply_strategic_merge_patch",
    "server_side_apply", "update_managed_fields", "fields_of", "manager_from_user_agent",
    "FieldSet", "PathElement", "path_string", "schema_for",
]
