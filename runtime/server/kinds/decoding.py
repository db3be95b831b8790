"""Decoding request bodies against a kind's pydantic model, with field validation.

`decode_object(rt, body, field_validation=...)` (the default of
`Strategy.decode`) checks a body against the kind's model. A wrong type is always a 400 reporting that first fatal error
only, in the words of Go's JSON decoder (nothing about unknown fields);
otherwise unknown and duplicate fields, found at any depth with their path
(`rules[0].foo`, `metadata.name`), are dropped (Ignore), reported as
warnings (Warn, the default; the HTTP layer writes one `Warning: 299 - "..."`
header each) or refused all together (Strict, 400 `strict decoding error:
unknown field "foo", duplicate field "metadata.name"`). Unknown fields are
never kept: the object returned is the model's dump.

Stored values are decoded by `runtime.machinery.storedobject.decode_stored`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from runtime.machinery.errors import BadRequest
from runtime.models.base import Base64
from runtime.models.introspect import FieldShape, fields_of, unknown_fields
from runtime.machinery.options import Body

if TYPE_CHECKING:
    from runtime.machinery.scheme import ResourceType

__all__ = ["decode_object", "type_error_message", "field_problems"]


_JSON_TYPE = {dict: "object", list: "array", str: "string", bool: "bool", int: "number",
              float: "number", type(None): "null"}
_GO_SCALAR = {str: "string", int: "int64", bool: "bool", float: "float64", Base64: "[]uint8"}


def _go_type(shape: FieldShape) -> str:
    if shape.kind == "model":
        return f"v1.{shape.model.__name__}"
    if shape.kind == "list" and shape.item is not None:
        return "[]" + _go_type(shape.item)
    if shape.kind == "map" and shape.item is not None:
        return "map[string]" + _go_type(shape.item)
    if shape.kind == "scalar":
        if shape.python_type is int and shape.ext("format") == "int32":
            return "int32"
        return _GO_SCALAR.get(shape.python_type, "string")
    return "interface {}"


def type_error_message(model: type[BaseModel], error: dict[str, Any]) -> str:
    """A pydantic type error in the words of Go's JSON decoder, as Kubernetes reports it.

    `json: cannot unmarshal string into Go struct field PolicyRule.rules.verbs
    of type []string`: the innermost struct, the field path from the root
    (no indices, no map keys), the Go type of the field.
    """
    shape = FieldShape("model", model=model)
    struct, path = model.__name__, []
    for part in error["loc"]:
        if isinstance(part, int) and shape.kind == "list" and shape.item is not None:
            shape = shape.item
        elif shape.kind == "model" and isinstance(part, str) and part in fields_of(shape.model):
            struct = shape.model.__name__
            path.append(part)
            shape = fields_of(shape.model)[part]
        elif shape.kind == "map" and shape.item is not None:
            shape = shape.item
    value = error.get("input")
    got = _JSON_TYPE.get(type(value), "value")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and shape.kind == "scalar" \
            and shape.python_type is int and (isinstance(value, float) or error.get("type") != "int_type"):
        # A fraction, or out of the Go type's range. Go echoes the number's JSON text here (UnmarshalTypeError),
        # not its `%v` (gofmt.go_number would print 3.0 as 3): the decoded number's JSON is the nearest echo.
        got = f"number {json.dumps(value)}"
    if not path:
        return f"json: cannot unmarshal {got} into Go value of type {_go_type(shape)}"
    return f"json: cannot unmarshal {got} into Go struct field {struct}.{'.'.join(path)} of type {_go_type(shape)}"


def field_problems(rt: "ResourceType", data: Any, duplicates: tuple[str, ...] = ()) -> list[str]:
    """Unknown and duplicate fields of `data` as Kubernetes words them (`unknown field "spec.foo"`)."""
    problems = [f'unknown field "{p}"' for p in unknown_fields(rt.model, data)]
    problems += [f'duplicate field "{p}"' for p in duplicates]
    return problems


def decode_object(rt: "ResourceType", body: Body, *, field_validation: str,
                  extra_problems: tuple[str, ...] = ()) -> tuple[dict[str, Any], list[str]]:
    """Check a body against `rt`'s model; return (the object without unknown fields, warnings).

    `extra_problems` are strict-decoding findings made elsewhere (e.g. in a
    JSON patch document), reported with the body's own. Raises BadRequest for
    a non-object body, a wrong type, a wrong apiVersion/kind, or (Strict) any
    unknown or duplicate field.
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
        # The first fatal error only: nothing about unknown or duplicate fields (the spec's rule).
        raise BadRequest(f"{prefix}: {type_error_message(rt.model, exc.errors()[0])}") from None
    problems = list(extra_problems) + field_problems(rt, data, body.duplicates)
    if problems and field_validation == "Strict":
        raise BadRequest(f"{prefix}: strict decoding error: " + ", ".join(problems))
    warnings = problems if field_validation == "Warn" else []
    obj = model.to_dict()
    obj["apiVersion"] = rt.api_version
    obj["kind"] = rt.kind
    obj.setdefault("metadata", {})
    return obj, warnings
