"""The OpenAPI value validation of a custom object, in kube-openapi's words.

`openapi_errors(obj, schema)` is kube-openapi's `SchemaValidator.Validate`
followed by apiextensions' `kubeOpenAPIResultToFieldErrors`: per node, in
kube-openapi's order, the type, allOf/anyOf/oneOf/not, string (maxLength,
minLength, pattern: the first failure only), format, number (multipleOf,
minimum, maximum), array (items, minItems, maxItems, uniqueItems), enum and
object (min/maxProperties stop the node; additionalProperties, properties,
required) checks.

Names in messages are kube-openapi's (`spec.replicas in body must be of
type integer: "string"`, items as `spec.ports[0]`, map values as
`spec.labels.key`); the field path of each error is that name without a
leading dot. Error kinds are apiextensions': Required, NotSupported (enum),
TooLong (maxLength), TooMany (maxItems, maxProperties), TypeInvalid (type
and format), Invalid for the rest; the allOf/anyOf/oneOf/not summaries have
no field (`<nil>`), as in Kubernetes.

Numbers follow Kubernetes' JSON decoding: an integral float is an integer.
String lengths count code points (Go's `utf8.RuneCount`).

Internal to `runtime.server.schema`: imported by its modules only.
"""

from __future__ import annotations

import json
import math
from typing import Any

from runtime.server.schema.schema_errors import (
    SchemaFieldError,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
    type_invalid,
)
from runtime.server.schema.formats import format_checker
from runtime.machinery.validation.gofmt import go_number, go_quote
from runtime.server.schema.structural.schema import Structural

__all__ = ["json_equal", "json_type", "openapi_errors"]

_IN = "body"


def json_type(value: Any) -> str:
    """The JSON type of a decoded value (`integer` for integral numbers)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if math.isfinite(value) and value == int(value) else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "unknown"


def json_equal(a: Any, b: Any) -> bool:
    """Deep JSON equality: booleans are not numbers, 1 equals 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def openapi_errors(obj: Any, schema: Structural, *, path: str = "") -> list[SchemaFieldError]:
    """kube-openapi's errors for `obj` under `schema`, as field errors (see the module docstring)."""
    out: list[SchemaFieldError] = []
    _validate(schema, obj, path, out)
    return out


def _field(name: str) -> str:
    return name.removeprefix(".")


def _msg(name: str, text: str) -> str:
    return f"{name} in {_IN} {text}"


def _types(s: Structural) -> list[str]:
    if s.x_int_or_string:
        return ["integer", "string"]
    return [s.type] if s.type else []


def _validate(s: Structural, data: Any, name: str, out: list[SchemaFieldError]) -> None:
    types = _types(s)
    if data is None:
        if types and "null" not in types and not s.nullable:
            out.append(type_invalid(_field(name), "null", _msg(name, f"must be of type {','.join(types)}: \"null\"")))
        _enum(s, data, name, out)
        return
    kind = json_type(data)
    _check_type(s, types, data, kind, name, out)
    _junctors(s, data, name, out)
    if isinstance(data, str):
        _string(s, data, name, out)
        check = format_checker(s.type, s.format)
        if check is not None and not check(data):
            out.append(type_invalid(_field(name), data, _msg(name, f"must be of type {s.format}: {go_quote(data)}")))
    elif kind in ("integer", "number"):
        _number(s, data, name, out)
    elif isinstance(data, list):
        _array(s, data, name, out)
    _enum(s, data, name, out)
    if isinstance(data, dict):
        _object(s, data, name, out)


def _check_type(s: Structural, types: list[str], data: Any, kind: str, name: str,
                out: list[SchemaFieldError]) -> None:
    if not types:
        return
    if not ("number" in types or "integer" in types) and s.format and isinstance(data, (str, list)):
        return
    if kind in types or (kind == "integer" and "number" in types):
        return
    out.append(type_invalid(_field(name), kind, _msg(name, f"must be of type {','.join(types)}: {go_quote(kind)}")))


def _junctors(s: Structural, data: Any, name: str, out: list[SchemaFieldError]) -> None:
    quoted = go_quote(name)
    if s.all_of:
        failed = False
        for sub in s.all_of:
            errs = openapi_errors(data, sub, path=name)
            failed = failed or bool(errs)
            out.extend(errs)
        if failed:
            out.append(invalid("<nil>", "", f"{quoted} must validate all the schemas (allOf)"))
    if s.any_of:
        results = [openapi_errors(data, sub, path=name) for sub in s.any_of]
        if all(results):
            out.append(invalid("<nil>", "", f"{quoted} must validate at least one schema (anyOf)"))
            out.extend(min(results, key=len))
    if s.one_of:
        results = [openapi_errors(data, sub, path=name) for sub in s.one_of]
        valid = sum(1 for r in results if not r)
        if valid != 1:
            found = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
            out.append(invalid("<nil>", "", f"{quoted} must validate one and only one schema (oneOf). {found}"))
            if valid == 0:
                out.extend(min(results, key=len))
    if s.not_ is not None and not openapi_errors(data, s.not_, path=name):
        out.append(invalid("<nil>", "", f"{quoted} must not validate the schema (not)"))


def _string(s: Structural, data: str, name: str, out: list[SchemaFieldError]) -> None:
    length = len(data)
    if s.max_length is not None and length > s.max_length:
        out.append(too_long(_field(name), s.max_length))
    elif s.min_length is not None and length < s.min_length:
        out.append(invalid(_field(name), data, _msg(name, f"should be at least {s.min_length} chars long")))
    elif s.pattern:
        if s.compiled_pattern is None:
            detail = f"{s.pattern}, but pattern is invalid: {s.pattern_error}"
            out.append(invalid(_field(name), data, _msg(name, f"should match '{detail}'")))
        elif not s.compiled_pattern.search(data):
            out.append(invalid(_field(name), data, _msg(name, f"should match '{s.pattern}'")))


def _number(s: Structural, data: float, name: str, out: list[SchemaFieldError]) -> None:
    as_int = isinstance(data, int)
    if s.multiple_of is not None and s.multiple_of > 0:
        factor = s.multiple_of
        if as_int and float(factor).is_integer():
            ok = data % int(factor) == 0
        else:
            quotient = (1 / factor) * data if factor < 1 else data / factor
            ok = math.isfinite(quotient) and quotient == int(quotient)
        if not ok:
            out.append(invalid(_field(name), data, _msg(name, f"should be a multiple of {go_number(factor)}")))
    elif s.multiple_of is not None and s.multiple_of < 0:
        out.append(invalid(_field(name), s.multiple_of,
                           f"factor MultipleOf declared for {name} must be positive: {go_number(s.multiple_of)}"))
    if s.minimum is not None:
        bound = int(s.minimum) if as_int else s.minimum
        if (data <= bound) if s.exclusive_minimum else (data < bound):
            words = "greater than" if s.exclusive_minimum else "greater than or equal to"
            out.append(invalid(_field(name), data, _msg(name, f"should be {words} {go_number(bound)}")))
    if s.maximum is not None:
        bound = int(s.maximum) if as_int else s.maximum
        if (data >= bound) if s.exclusive_maximum else (data > bound):
            words = "less than" if s.exclusive_maximum else "less than or equal to"
            out.append(invalid(_field(name), data, _msg(name, f"should be {words} {go_number(bound)}")))


def _array(s: Structural, data: list, name: str, out: list[SchemaFieldError]) -> None:
    if s.items is not None:
        for i, item in enumerate(data):
            _validate(s.items, item, f"{name}[{i}]", out)
    size = len(data)
    if s.min_items is not None and size < s.min_items:
        out.append(invalid(_field(name), size, _msg(name, f"should have at least {s.min_items} items")))
    if s.max_items is not None and size > s.max_items:
        out.append(too_many(_field(name), size, s.max_items))
    if s.unique_items:
        for i, item in enumerate(data):
            if any(json_equal(item, other) for other in data[:i]):
                out.append(invalid(_field(name), "", _msg(name, "shouldn't contain duplicates")))
                break


def _enum(s: Structural, data: Any, name: str, out: list[SchemaFieldError]) -> None:
    if not s.enum:
        return
    if data is not None and any(json_equal(data, v) for v in s.enum):
        return
    values = [v if isinstance(v, str) else json.dumps(v, separators=(",", ":")) for v in s.enum]
    out.append(not_supported(_field(name), data, values))


def _object(s: Structural, data: dict, name: str, out: list[SchemaFieldError]) -> None:
    count = len(data)
    if s.min_properties is not None and count < s.min_properties:
        out.append(invalid(_field(name), count, _msg(name, f"should have at least {s.min_properties} properties")))
        return
    if s.max_properties is not None and count > s.max_properties:
        out.append(too_many(_field(name), count, s.max_properties))
        return
    if s.additional_properties is False:
        for key in data:
            if key not in s.properties:
                out.append(invalid(_field(name), key, f"{name}.{key} in {_IN} is a forbidden property"))
    elif s.additional_schema is not None:
        for key, value in data.items():
            if key not in s.properties:
                _validate(s.additional_schema, value, f"{name}.{key}", out)
    for key, prop in s.properties.items():
        if key in data:
            _validate(prop, data[key], f"{name}.{key}" if name else key, out)
    for key in s.required:
        if key not in data:
            out.append(required(_field(f"{name}.{key}")))
