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

import json
import math
from dataclasses import dataclass
from typing import Any

from runtime.validation.fielderrors import FieldError

__all__ = [
    "NO_VALUE",
    "SchemaFieldError",
    "duplicate",
    "forbidden",
    "go_number",
    "go_value",
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


def go_number(value: float) -> str:
    """A number as Go's `%v` prints it (`10`, `1.5`, `1e+21`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if math.isnan(value):
        return "NaN"
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" in text:
        mantissa, _, exponent = text.partition("e")
        sign = "-" if exponent.startswith("-") else "+"
        digits = exponent.lstrip("+-").rjust(2, "0")
        text = f"{mantissa}e{sign}{digits}"
    return text


def go_value(value: Any) -> str:
    """A bad value as apimachinery's field error prints it."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (bool, int, float)):
        return go_number(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class SchemaFieldError(FieldError):
    """A `FieldError` that also knows `FieldValueTooMany` and `FieldValueTypeInvalid`."""

    @property
    def message(self) -> str:
        head = _HEADS[self.type]
        if self.value is not NO_VALUE and self.type not in ("FieldValueTooLong",):
            head = f"{head}: {go_value(self.value)}"
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
    detail = "supported values: " + ", ".join(json.dumps(s, ensure_ascii=False) for s in supported) \
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
