"""Field errors of custom-resource validation, in apimachinery's words.

`runtime.validation.fielderrors.FieldError` knows the common error types;
schema validation also reports `Too many` (maxItems, maxProperties) and the
type errors kube-openapi reports as `FieldValueTypeInvalid` (printed
`Invalid value`). `SchemaFieldError` is a `FieldError` that knows those too,
so the registry builds its 422 causes from it unchanged.

Values print as apimachinery prints them: strings quoted, numbers and
booleans bare, `null` for nil; objects and lists as JSON (Go prints them
with `%#v`, which has no JSON equivalent).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runtime.validation.fielderrors import FieldError
from runtime.validation.gofmt import go_quote, go_value

__all__ = [
    "NO_VALUE",
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

NO_VALUE: Any = FieldError("FieldValueRequired", "").value  # the sentinel FieldError uses for "no value"

_HEADS = {
    "FieldValueRequired": "Required value",
    "FieldValueInvalid": "Invalid value",
    "FieldValueTypeInvalid": "Invalid value",
    "FieldValueNotSupported": "Unsupported value",
    "FieldValueForbidden": "Forbidden",
    "FieldValueDuplicate": "Duplicate value",
    "FieldValueTooLong": "Too long",
    "FieldValueTooMany": "Too many",
}


@dataclass(frozen=True)
class SchemaFieldError(FieldError):
    """A `FieldError` that also knows `FieldValueTooMany` and `FieldValueTypeInvalid`."""

    @property
    def message(self) -> str:
        head = _HEADS[self.type]
        if self.value is not NO_VALUE and self.type not in ("FieldValueTooLong",):
            head = f"{head}: {go_value(self.value, decoded=True)}"
        return f"{head}: {self.detail}" if self.detail else head

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


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
