"""Field errors of custom-resource validation, in apimachinery's words.

`runtime.machinery.validation.fielderrors.FieldError` writes every error type, the
schema's own included: `Too many` (maxItems, maxProperties) and the type
errors kube-openapi reports as `FieldValueTypeInvalid` (printed `Invalid
value`). `SchemaFieldError` is a `FieldError` whose value is decoded JSON,
so the registry builds its 422 causes from it unchanged.

Values print as apimachinery prints them: strings quoted, numbers and
booleans bare, `null` for nil; objects and lists as JSON (Go prints them
with `%#v`, which has no JSON equivalent).

Internal to `runtime.server.schema`: imported by its modules only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from runtime.machinery.validation.fielderrors import FieldError
from runtime.machinery.validation.gofmt import go_quote

__all__ = [
    "SchemaFieldError",
    "duplicate",
    "forbidden",
    "invalid",
    "not_supported",
    "required",
    "too_long",
    "too_many",
    "type_invalid",
]

@dataclass(frozen=True)
class SchemaFieldError(FieldError):
    """A `FieldError` about a decoded JSON value: nil is `null`, lists and objects JSON (see `go_value`)."""

    decoded: ClassVar[bool] = True


def required(field: str, detail: str = "") -> SchemaFieldError:
    return SchemaFieldError("FieldValueRequired", field, detail)


def invalid(field: str, value: Any, detail: str) -> SchemaFieldError:
    return SchemaFieldError("FieldValueInvalid", field, detail, value)


def type_invalid(field: str, value: Any, detail: str) -> SchemaFieldError:
    return SchemaFieldError("FieldValueTypeInvalid", field, detail, value)


def not_supported(field: str, value: Any, supported: list[str]) -> SchemaFieldError:
    detail = "supported values: " + ", ".join(go_quote(s) for s in supported) \
        if supported else ""
    return SchemaFieldError("FieldValueNotSupported", field, detail, value)


def forbidden(field: str, detail: str) -> SchemaFieldError:
    return SchemaFieldError("FieldValueForbidden", field, detail)


def duplicate(field: str, value: Any) -> SchemaFieldError:
    return SchemaFieldError("FieldValueDuplicate", field, "", value)


def too_long(field: str, limit: int) -> SchemaFieldError:
    """apimachinery 1.32's `field.TooLong`: the value is omitted."""
    unit = "byte" if limit == 1 else "bytes"
    return SchemaFieldError("FieldValueTooLong", field, f"may not be more than {limit} {unit}")


def too_many(field: str, actual: int, limit: int) -> SchemaFieldError:
    return SchemaFieldError("FieldValueTooMany", field, f"must have at most {limit} items", actual)
