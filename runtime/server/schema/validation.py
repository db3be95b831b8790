"""validate: every rule a custom object must meet under its structural schema.

`validate(obj, schema, old=)` returns the field errors apiextensions'
custom resource strategy reports (the 422 causes), in its order:

1. OpenAPI value validation (`runtime.server.schema.openapi`): types, formats,
   enum, pattern, bounds, lengths, sizes, required, allOf/anyOf/oneOf/not;
2. embedded resources' apiVersion, kind and metadata (`embedded`);
3. `x-kubernetes-list-type` set/map uniqueness (`listtypes`);
4. `x-kubernetes-validations` CEL rules (`cel_rules`), with `oldSelf` bound
   on update (`old` given). When the steps before found a wrong type, a
   missing required field, a value outside its enum or a size over its
   maximum (kube's `hasBlockingErr`), the rules are not run, and one error
   says so, as Kubernetes does.

On update (`old` given) validation ratchets as Kubernetes 1.33: an OpenAPI
or CEL error on a value unchanged from `old` is not reported (a CEL one
becomes a Warning); transition rules are not ratcheted
(`runtime.server.schema.ratcheting`).

The root's ObjectMeta is not validated here: the caller's strategy runs
`runtime.machinery.validation.validate_object_meta` on `metadata` (names, labels,
annotations, ...), as Kubernetes' strategy runs `ValidateObjectMetaAccessor`
before the schema. `validate` never raises on any JSON input.

Internal to `runtime.server.schema`: imported by its modules only.
"""

from __future__ import annotations

from typing import Any

from runtime.server.schema.cel.rules import DEFAULT_LIMITS, CELLimits, cel_errors
from runtime.server.schema.embedded import embedded_errors
from runtime.server.schema.schema_errors import invalid
from runtime.server.schema.listtypes import list_type_errors
from runtime.server.schema.openapi import openapi_errors
from runtime.server.schema.ratcheting import Correlation, ratchets_at
from runtime.server.schema.structural.schema import Structural
from runtime.machinery.validation.fielderrors import FieldError

__all__ = ["RULES_NOT_CHECKED", "validate"]

#: Errors after which the CEL rules do not run: the object lacks the shape they were written for
#: (kube's hasBlockingErr: a wrong type, a required field missing, an enum, maxLength, maxItems/Properties).
_BLOCKING = frozenset({"FieldValueTypeInvalid", "FieldValueRequired", "FieldValueNotSupported",
                       "FieldValueTooLong", "FieldValueTooMany"})

RULES_NOT_CHECKED = ("some validation rules were not checked because the object was invalid; "
                     "correct the existing errors to complete validation")


def validate(obj: Any, schema: Structural, *, old: Any = None, cel_limits: CELLimits = DEFAULT_LIMITS,
             warnings: list[str] | None = None) -> list[FieldError]:
    """Field errors of `obj` (and of its change from `old`); empty when valid.

    With `old` (an update) errors on values unchanged from `old` are ratcheted
    (`runtime.server.schema.ratcheting`): OpenAPI errors dropped, CEL failures
    appended to `warnings` as Warning texts; list-type errors are reported only
    when `old` had none.
    """
    ratchet = Correlation(obj, old, schema) if old is not None else None
    errors: list[FieldError] = []
    errors.extend(e for e in openapi_errors(obj, schema) if ratchet is None or not ratchets_at(ratchet, e.field))
    errors.extend(embedded_errors(obj, schema))
    # Kubernetes checks list types on update only if the old object met them (they came after objects did).
    if old is None or not list_type_errors(old, schema):
        errors.extend(list_type_errors(obj, schema))
    if any(e.type in _BLOCKING for e in errors):
        if any(node.validations for node in schema.walk()):
            errors.append(invalid("<nil>", None, RULES_NOT_CHECKED))
        return errors
    errors.extend(cel_errors(obj, schema, old=old, limits=cel_limits, ratchet=ratchet, warnings=warnings))
    return errors
