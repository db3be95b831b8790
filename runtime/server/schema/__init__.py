"""The schema engine of custom resources: structural schemas, as apiextensions-apiserver.

Pure functions over JSON values (dicts, lists, scalars); no I/O; inputs are
never modified. A custom kind's strategy parses its CRD version's schema
once and calls the rest per object:

- `Structural.from_openapi(d)`: parse an `openAPIV3Schema` dict into frozen
  nodes (patterns compiled with RE2, CEL rules compiled with cel-python,
  once). `structural_errors(d, path=)` -> `[(path, message)]` and
  `structural_field_errors(d, path=)` -> `[FieldError]`: the CRD validation
  rules (structural invariants, forbidden keywords, list/map markers,
  defaults pruned and valid, CEL rules compile), Kubernetes' paths and words.
- `prune(obj, schema)` -> `(pruned, paths)`: drop undeclared fields (kept:
  root and embedded `apiVersion`/`kind`/`metadata`, anything under
  preserve-unknown-fields); `paths` are the words of `unknown field "<path>"`.
- `apply_defaults(obj, schema)`: nulls of non-nullable fields without
  default dropped, then `default`s applied (properties, map values, items).
  Kubernetes does this on every decode: create, update, read from storage.
  `needs_defaults(obj, schema)` says, without copying, whether it would
  change anything (reads default only the objects that need it).
- `validate(obj, schema, old=, warnings=)` -> `[FieldError]`: kube-openapi's value
  validation, embedded resources, list-type uniqueness, then the CEL rules
  (`oldSelf` on update; ratcheted on update, CEL failures on unchanged
  values appended to `warnings`); errors are `FieldError`s (`SchemaFieldError`
  adds `Too many` and type errors) for `invalid_error(...)` to make a 422.
  The root's ObjectMeta is the caller's (`validate_object_meta`).
- `Structural.at(path)`, `Structural.merge_info(path)` and
  `schema_node(structural, metadata=)`: the list type, map keys and map
  type of any field, and the `runtime.machinery.patch.schema` node tree that
  server-side apply reads, so apply works for custom kinds unchanged.

The usual order on a write is: `prune` -> `apply_defaults` -> the caller's
ObjectMeta checks -> `validate`.

CEL (`cel_program`, `cel_rules`, `cel_library`): x-kubernetes-validations
evaluated by cel-python, metered per parse-tree node; `CELLimits` bounds a
rule (`per_call`) and all rules of one validation (`per_request`).

Caveats: CEL rules are not type-checked against the schema, no static cost
is estimated at CRD creation, and Kubernetes' URL, IP/CIDR, quantity,
format, semver and authorizer CEL libraries are missing, and of CEL
optionals only what `optionalOldSelf` rules need (`cel/optionals.py`).
Validation ratchets on update as Kubernetes 1.33 (`ratcheting`): an
OpenAPI error on an unchanged value is dropped, a CEL one a Warning.
"""

from runtime.server.schema.applyschema import schema_node
from runtime.server.schema.cel.rules import PER_CALL_LIMIT, RUNTIME_CEL_COST_BUDGET, CELLimits
from runtime.server.schema.defaulting import apply_defaults, needs_defaults
from runtime.server.schema.schema_errors import SchemaFieldError
from runtime.server.schema.pruning import prune
from runtime.server.schema.structural.schema import NO_DEFAULT, MergeInfo, Rule, Structural
from runtime.server.schema.structural.rules import structural_errors, structural_field_errors
from runtime.server.schema.validation import validate

__all__ = [
    "NO_DEFAULT",
    "PER_CALL_LIMIT",
    "RUNTIME_CEL_COST_BUDGET",
    "CELLimits",
    "MergeInfo",
    "Rule",
    "SchemaFieldError",
    "Structural",
    "apply_defaults",
    "needs_defaults",
    "prune",
    "schema_node",
    "structural_errors",
    "structural_field_errors",
    "validate",
]
