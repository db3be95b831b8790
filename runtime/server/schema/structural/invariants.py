"""What makes a schema structural (apiextensions' `schema.ValidateStructural`).

`invariant_errors(d, path)` checks an `openAPIV3Schema` dict for the
invariants of a structural schema, with Kubernetes' paths and words:

- every node has a `type` (`must not be empty at the root` / `for specified
  array items` / `for specified object fields`) unless it is
  `x-kubernetes-int-or-string` or `x-kubernetes-preserve-unknown-fields`;
  an array has `items`; the root is an object without additionalProperties;
- `x-kubernetes-embedded-resource` nodes are objects, without
  additionalProperties, with properties unless they preserve unknown fields;
- `x-kubernetes-int-or-string` excludes preserve-unknown-fields and
  embedded-resource;
- at the root and in embedded resources `kind` and `apiVersion` are
  strings, `metadata` an object; the root's metadata may only restrict
  `name` and `generateName`;
- inside allOf/anyOf/oneOf/not (value validations) no type, default, title,
  description, nullable, additionalProperties, x-kubernetes-* extensions or
  `metadata` — except the two int-or-string patterns (`anyOf: [{type:
  integer}, {type: string}]`, alone or first in `allOf`);
- completeness: a property or items described in a value validation is
  also described in the structural part (`because it is defined in ...`);
- `pattern` compiles (Go's RE2 words).

Errors are sorted by their text, as Kubernetes sorts them.

Internal to `runtime.server.schema.structural`: imported by its modules only.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from runtime.server.schema.schema_errors import SchemaFieldError, forbidden, invalid, required
from runtime.server.schema.regex import PatternError, compile_pattern

__all__ = ["invariant_errors"]

_ROOT, _ITEM, _FIELD = "root", "item", "field"
_INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]


def invariant_errors(d: Mapping[str, Any], path: str) -> list[SchemaFieldError]:
    """Structural invariants and completeness (see the module docstring), sorted."""
    out: list[SchemaFieldError] = []
    _invariants(d, _ROOT, path, out)
    _completeness(d, path, out)
    return sorted(out, key=str)


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _junctors(d: Mapping[str, Any], path: str) -> Iterator[tuple[Mapping[str, Any], str]]:
    """The schemas under `d`'s allOf, anyOf, oneOf and not, with their paths."""
    for key in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(d.get(key) or []):
            yield _map(sub), f"{path}.{key}[{i}]"
    if isinstance(d.get("not"), Mapping):
        yield d["not"], f"{path}.not"


def _props(d: Mapping[str, Any]) -> Mapping[str, Any]:
    return _map(d.get("properties"))


def _is_int_or_string_any_of(any_of: Any) -> bool:
    return isinstance(any_of, list) and any_of == _INT_OR_STRING_ANY_OF


def _invariants(d: Mapping[str, Any], level: str, path: str, out: list[SchemaFieldError]) -> None:
    typ = d.get("type") if isinstance(d.get("type"), str) else ""
    int_or_string = d.get("x-kubernetes-int-or-string") is True
    preserve = d.get("x-kubernetes-preserve-unknown-fields") is True
    embedded = d.get("x-kubernetes-embedded-resource") is True
    items = d.get("items")
    if typ == "array" and not isinstance(items, Mapping):
        out.append(required(f"{path}.items", "must be specified"))
    if isinstance(items, Mapping):
        _invariants(items, _ITEM, f"{path}.items", out)
    for key, prop in _props(d).items():
        if isinstance(prop, Mapping):
            _invariants(prop, _FIELD, f"{path}.properties[{key}]", out)
    ap = d.get("additionalProperties")
    if ap is not None:
        if level == _ROOT:
            out.append(forbidden(f"{path}.additionalProperties", "must not be used at the root"))
        if isinstance(ap, Mapping):
            _invariants(ap, _FIELD, f"{path}.additionalProperties", out)
    if int_or_string and preserve:
        out.append(invalid(f"{path}.x-kubernetes-preserve-unknown-fields", True,
                           "must be false if x-kubernetes-int-or-string is true"))
    if int_or_string and embedded:
        out.append(invalid(f"{path}.x-kubernetes-embedded-resource", True,
                           "must be false if x-kubernetes-int-or-string is true"))
    _value_validation(d, _is_int_or_string_any_of(d.get("anyOf")), _first_all_of_is_int_or_string(d), path, out)
    check_metadata = level == _ROOT or embedded
    if embedded and typ != "object":
        if not typ:
            out.append(required(f"{path}.type", "must be object if x-kubernetes-embedded-resource is true"))
        else:
            out.append(invalid(f"{path}.type", typ, "must be object if x-kubernetes-embedded-resource is true"))
    elif not typ and not int_or_string and not preserve:
        words = {_ROOT: "must not be empty at the root", _ITEM: "must not be empty for specified array items",
                 _FIELD: "must not be empty for specified object fields"}[level]
        out.append(required(f"{path}.type", words))
    if embedded and ap is not None:
        out.append(forbidden(f"{path}.additionalProperties", "must not be used if x-kubernetes-embedded-resource is set"))
    if level == _ROOT and typ and typ != "object":
        out.append(invalid(f"{path}.type", typ, "must be object at the root"))
    props = _props(d)
    for name in ("kind", "apiVersion"):
        if name in props and check_metadata and _map(props[name]).get("type") != "string":
            out.append(invalid(f"{path}.properties[{name}].type", _map(props[name]).get("type", ""), "must be string"))
    if "metadata" in props:
        _metadata(_map(props["metadata"]), check_metadata, level, f"{path}.properties[metadata]", out)
    if embedded and not preserve and not props:
        out.append(required(f"{path}.properties", "must not be empty if x-kubernetes-embedded-resource is true "
                                                  "without x-kubernetes-preserve-unknown-fields"))


def _first_all_of_is_int_or_string(d: Mapping[str, Any]) -> bool:
    all_of = d.get("allOf")
    return isinstance(all_of, list) and bool(all_of) and _is_int_or_string_any_of(_map(all_of[0]).get("anyOf"))


def _metadata(m: Mapping[str, Any], check: bool, level: str, path: str, out: list[SchemaFieldError]) -> None:
    if check and m.get("type") != "object":
        out.append(invalid(f"{path}.type", m.get("type", ""), "must be object"))
    if level != _ROOT:
        return
    rest = {k: v for k, v in m.items() if k not in ("type", "default") and v not in (False, None, "", [], {})}
    props = rest.get("properties")
    if isinstance(props, Mapping) and set(props) <= {"name", "generateName"}:
        rest.pop("properties")
    if rest:
        out.append(forbidden(path, "must not specify anything other than name and generateName, "
                                   "but metadata is implicitly specified"))


_NESTED_FORBIDDEN_EMPTY = (("type", "must be empty to be structural"), ("title", "must be empty to be structural"),
                           ("description", "must be empty to be structural"),
                           ("x-kubernetes-list-map-keys", "must be empty to be structural"),
                           ("x-kubernetes-validations", "must be empty to be structural"))
_NESTED_FORBIDDEN_UNDEFINED = (("default", "must be undefined to be structural"),
                               ("externalDocs", "must be undefined to be structural"),
                               ("x-kubernetes-list-type", "must be undefined to be structural"),
                               ("x-kubernetes-map-type", "must be undefined to be structural"))
_NESTED_FORBIDDEN_TRUE = (("nullable", "must be false to be structural"),
                          ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
                          ("x-kubernetes-embedded-resource", "must be false to be structural"),
                          ("x-kubernetes-int-or-string", "must be false to be structural"))


def _value_validation(d: Mapping[str, Any], skip_any_of: bool, skip_first_all_of_any_of: bool, path: str,
                      out: list[SchemaFieldError]) -> None:
    if not skip_any_of:
        for i, sub in enumerate(d.get("anyOf") or []):
            _nested(_map(sub), False, f"{path}.anyOf[{i}]", out)
    for i, sub in enumerate(d.get("allOf") or []):
        _nested(_map(sub), skip_first_all_of_any_of and i == 0, f"{path}.allOf[{i}]", out)
    for i, sub in enumerate(d.get("oneOf") or []):
        _nested(_map(sub), False, f"{path}.oneOf[{i}]", out)
    if isinstance(d.get("not"), Mapping):
        _nested(d["not"], False, f"{path}.not", out)
    pattern = d.get("pattern")
    if isinstance(pattern, str) and pattern:
        try:
            compile_pattern(pattern)
        except PatternError as exc:
            out.append(invalid(f"{path}.pattern", pattern, f"must be a valid regular expression, but isn't: {exc}"))


def _nested(v: Mapping[str, Any], skip_any_of: bool, path: str, out: list[SchemaFieldError]) -> None:
    _value_validation(v, skip_any_of, False, path, out)
    if isinstance(v.get("items"), Mapping):
        _nested(v["items"], False, f"{path}.items", out)
    for key, prop in _props(v).items():
        _nested(_map(prop), False, f"{path}.properties[{key}]", out)
    for key, words in _NESTED_FORBIDDEN_EMPTY:
        if v.get(key):
            out.append(forbidden(f"{path}.{key}", words))
    if "additionalProperties" in v:
        out.append(forbidden(f"{path}.additionalProperties", "must be undefined to be structural"))
    for key, words in _NESTED_FORBIDDEN_UNDEFINED:
        if v.get(key) is not None:
            out.append(forbidden(f"{path}.{key}", words))
    for key, words in _NESTED_FORBIDDEN_TRUE:
        if v.get(key) is True:
            out.append(forbidden(f"{path}.{key}", words))
    if "metadata" in _props(v):
        out.append(forbidden(f"{path}.properties[metadata]", "must not be specified in a nested context"))


def _completeness(d: Mapping[str, Any], path: str, out: list[SchemaFieldError]) -> None:
    """Every field or items a value validation names exists in the structural part."""
    def nested(v: Mapping[str, Any], s: Mapping[str, Any] | None, s_path: str, v_path: str) -> None:
        if s is None:
            out.append(required(s_path, f"because it is defined in {v_path}"))
            return
        for sub, sub_path in _junctors(v, v_path):
            nested(sub, s, s_path, sub_path)
        if isinstance(v.get("items"), Mapping):
            items = s.get("items")
            nested(v["items"], items if isinstance(items, Mapping) else None, f"{s_path}.items", f"{v_path}.items")
        for key, prop in _props(v).items():
            sp = _props(s).get(key)
            nested(_map(prop), sp if isinstance(sp, Mapping) else None, f"{s_path}.properties[{key}]",
                   f"{v_path}.properties[{key}]")

    def walk(s: Mapping[str, Any], s_path: str) -> None:
        for sub, sub_path in _junctors(s, s_path):
            nested(sub, s, s_path, sub_path)
        if isinstance(s.get("items"), Mapping):
            walk(s["items"], f"{s_path}.items")
        for key, prop in _props(s).items():
            if isinstance(prop, Mapping):
                walk(prop, f"{s_path}.properties[{key}]")
        if isinstance(s.get("additionalProperties"), Mapping):
            walk(s["additionalProperties"], f"{s_path}.additionalProperties")

    walk(d, path)

