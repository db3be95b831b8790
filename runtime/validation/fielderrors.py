"""Field errors in Kubernetes' words (`field.Error`), and the 422 they add up to."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from runtime.errors import Cause, Invalid
from runtime.validation.gofmt import go_quote

__all__ = ["FieldError", "GoText", "go_value", "required", "invalid", "not_supported", "forbidden", "duplicate",
           "too_long", "invalid_error"]

_NO_VALUE = object()


@dataclass(frozen=True)
class FieldError:
    """One broken rule: its type (FieldValueRequired, ...), field path and detail."""

    type: str
    field: str
    detail: str = ""
    value: Any = _NO_VALUE

    @property
    def message(self) -> str:
        """The cause message: `Required value: detail`, `Invalid value: "x": detail`."""
        head = {
            "FieldValueRequired": "Required value",
            "FieldValueInvalid": "Invalid value",
            "FieldValueNotSupported": "Unsupported value",
            "FieldValueForbidden": "Forbidden",
            "FieldValueDuplicate": "Duplicate value",
            "FieldValueTooLong": "Too long",
        }[self.type]
        if self.value is not _NO_VALUE:
            head = f"{head}: {go_value(self.value)}"
        return f"{head}: {self.detail}" if self.detail else head

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


class GoText(str):
    """A bad value already written as Go prints it (e.g. a struct's `%#v`): shown as it is."""


def go_value(value: Any) -> str:
    """A bad value as apimachinery's `field.Error` prints it.

    Strings (and nil, printed "null") as Go's `%q` (non-ASCII kept, control
    characters escaped), numbers and booleans as `%v`, a `[]string` as `%#v`
    (`[]string{"a", "b"}`); anything else as compact JSON.
    """
    if isinstance(value, GoText):
        return str(value)
    if value is None:
        return go_quote("null")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "[]string{" + ", ".join(go_quote(v) for v in value) + "}"
    return json.dumps(value, separators=(",", ":"))


def required(field: str, detail: str = "") -> FieldError:
    return FieldError("FieldValueRequired", field, detail)


def invalid(field: str, value: Any, detail: str) -> FieldError:
    return FieldError("FieldValueInvalid", field, detail, value)


def not_supported(field: str, value: Any, supported: list[str]) -> FieldError:
    return FieldError("FieldValueNotSupported", field,
                      "supported values: " + ", ".join(go_quote(s) for s in supported), value)


def forbidden(field: str, detail: str) -> FieldError:
    return FieldError("FieldValueForbidden", field, detail)


def duplicate(field: str, value: Any) -> FieldError:
    return FieldError("FieldValueDuplicate", field, "", value)


def too_long(field: str, limit: int) -> FieldError:
    return FieldError("FieldValueTooLong", field, f"must have at most {limit} bytes")


def invalid_error(kind: str, group_resource_kind: str, name: str, errors: list[FieldError]) -> Invalid:
    """The 422 Kubernetes answers: `Kind.group "name" is invalid: [e1, e2]`."""
    joined = str(errors[0]) if len(errors) == 1 else "[" + ", ".join(str(e) for e in errors) + "]"
    message = f'{group_resource_kind} "{name}" is invalid: {joined}'
    group = group_resource_kind.partition(".")[2]
    return Invalid(message, name=name, group=group, kind=kind,
                   causes=[Cause(e.type, e.message, e.field) for e in errors])
