"""Turning a request body into a stored kind's dict: types (400), unknown/duplicate fields.

The spec's field-validation rules: a wrong type is fatal (400, first error
only, nothing about unknown fields); otherwise unknown and duplicate fields
are dropped (Ignore), reported as warnings (Warn, the default) or refused
all together (Strict, 400).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from runtime.errors import BadRequest
from runtime.models.introspect import unknown_fields
from runtime.scheme import ResourceType

__all__ = ["Body", "FIELD_VALIDATION_LEVELS", "decode_object", "type_error_message"]

FIELD_VALIDATION_LEVELS = ("Ignore", "Warn", "Strict")


@dataclass(frozen=True)
class Body:
    """A request body as the media decoder read it: the data, and keys it saw twice."""

    data: Any
    duplicates: tuple[str, ...] = field(default=())


_JSON_TYPE = {dict: "object", list: "array", str: "string", bool: "bool", int: "number",
              float: "number", type(None): "null"}
_GO_TYPE = {"int_type": "int64", "string_type": "string", "bool_type": "bool", "list_type": "[]",
            "dict_type": "map", "model_type": "struct", "float_type": "float64",
            "model_attributes_type": "struct"}


def type_error_message(model_name: str, error: dict[str, Any]) -> str:
    """A pydantic type error in the words of Go's JSON decoder, as Kubernetes reports it."""
    loc = ".".join(str(p) for p in error["loc"] if not isinstance(p, int))
    got = _JSON_TYPE.get(type(error.get("input")), "value")
    go_type = _GO_TYPE.get(error["type"], error["type"])
    return f"json: cannot unmarshal {got} into Go struct field {model_name}.{loc} of type {go_type}"


def decode_object(rt: ResourceType, body: Body, *, field_validation: str) -> tuple[dict[str, Any], list[str]]:
    """Check a body against `rt`'s model; return (the object without unknown fields, warnings).

    Raises BadRequest for a non-object body, a wrong type, a wrong apiVersion/kind,
    or (Strict) any unknown or duplicate field.
    """
    data = body.data
    prefix = f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}'
    if not isinstance(data, dict):
        got = _JSON_TYPE.get(type(data), "value")
        raise BadRequest(f"{prefix}: json: cannot unmarshal {got} into Go value of type struct")
    api_version, kind = data.get("apiVersion"), data.get("kind")
    if api_version not in (None, "") and api_version != rt.api_version:
        raise BadRequest(f"the API version in the data ({api_version}) does not match the expected "
                         f"API version ({rt.api_version})")
    if kind not in (None, "") and kind != rt.kind:
        raise BadRequest(f"the kind in the data ({kind}) does not match the expected kind ({rt.kind})")
    try:
        model = rt.model.model_validate(data)
    except ValidationError as exc:
        raise BadRequest(f"{prefix}: {type_error_message(rt.kind, exc.errors()[0])}") from None
    problems = [f'unknown field "{p}"' for p in unknown_fields(rt.model, data)]
    problems += [f'duplicate field "{p}"' for p in body.duplicates]
    if problems and field_validation == "Strict":
        raise BadRequest(f"{prefix}: strict decoding error: " + ", ".join(problems))
    warnings = problems if field_validation == "Warn" else []
    obj = model.to_dict()
    obj["apiVersion"] = rt.api_version
    obj["kind"] = rt.kind
    obj.setdefault("metadata", {})
    return obj, warnings
