"""Field errors in Kubernetes' words (`field.Error`), and the 422 they add up to."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from runtime.machinery.errors import Cause, Invalid
from runtime.machinery.validation.gofmt import go_quote, go_value

__all__ = ["FieldError", "required", "invalid", "not_supported", "forbidden", "duplicate",
           "too_long", "too_many", "invalid_error", "nonnegative", "NONNEGATIVE"]

_NO_VALUE = object()

#: What a cause message opens with, per error type (apimachinery's `field.ErrorType.String()`);
#: TooMany and TypeInvalid come from custom-resource schemas (`runtime.server.schema.schema_errors`).
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
class FieldError:
    """One broken rule: its type (FieldValueRequired, ...), field path and detail."""

    #: Whether a bad value is a decoded JSON value rather than a typed field's (see `go_value`).
    decoded: ClassVar[bool] = False

    type: str
    field: str
    detail: str = ""
    value: Any = _NO_VALUE

    @property
    def message(self) -> str:
        """The cause message: `Required value: detail`, `Invalid value: "x": detail`."""
        head = _HEADS[self.type]
        if self.value is not _NO_VALUE:
            head = f"{head}: {go_value(self.value, decoded=self.decoded)}"
        return f"{head}: {self.detail}" if self.detail else head

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


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


def too_many(field: str, count: int, limit: int) -> FieldError:
    """field.TooMany: `Too many: <count>: must have at most <limit> items`."""
    return FieldError("FieldValueTooMany", field, f"must have at most {limit} items", count)


def invalid_error(kind: str, group_resource_kind: str, name: str, errors: list[FieldError]) -> Invalid:
    """The 422 Kubernetes answers: `Kind.group "name" is invalid: [e1, e2]`."""
    joined = str(errors[0]) if len(errors) == 1 else "[" + ", ".join(str(e) for e in errors) + "]"
    message = f'{group_resource_kind} "{name}" is invalid: {joined}'
    group = group_resource_kind.partition(".")[2]
    return Invalid(message, name=name, group=group, kind=kind,
                   causes=[Cause(e.type, e.message, e.field) for e in errors])


NONNEGATIVE = "must be greater than or equal to 0"


def nonnegative(value: Any, path: str) -> list[FieldError]:
    """apimachinery's `ValidateNonnegativeField`: an integer (when set) below 0 is `Invalid value: -1: must be
    greater than or equal to 0`."""
    return [invalid(path, value, NONNEGATIVE)] if isinstance(value, int) and value < 0 else []
