"""structural_errors: the CRD validation rules a version's schema must pass.

`structural_field_errors(d, path=)` returns the field errors
apiextensions' CRD validation reports for an `openAPIV3Schema` dict, with
Kubernetes' paths (`<path>.properties[spec].type`) and words;
`structural_errors(d)` gives them as `(path, message)` pairs. The rules:

1. `ValidateCustomResourceDefinitionOpenAPISchema` (this module): no `id`,
   `$ref`, `additionalItems`, `patternProperties`, `definitions`,
   `dependencies`, `uniqueItems: true`, items arrays, `type: null` or
   unknown types; properties and additionalProperties exclusive; no
   defaults in the root's metadata; preserve-unknown-fields only `true`;
   list-type/map-type values and the types they need; list-map-keys name
   required (or defaulted), scalar, non-nullable item properties;
   x-kubernetes-validations: rule, message, messageExpression, reason and
   fieldPath checks, CEL compilation (`compilation failed: ...`), `oldSelf`
   only where old values correlate (map lists, granular maps, objects);
2. the structural invariants (`structural_invariants`);
3. defaults: pruned (`must not have unknown fields`) and valid under their
   own schema, CEL rules included (`default_errors`).

Caveats: CEL rules are not type-checked against the schema and no static
cost is estimated (see `cel_program`); formats are not checked here
(unknown formats are ignored at validation time, as in Kubernetes).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from runtime.server.schema.cel.program import CELCompileError, compile_expression
from runtime.server.schema.cel.rules import parse_field_path
from runtime.server.schema.default_rules import default_errors
from runtime.server.schema.schema_errors import (
    SchemaFieldError,
    forbidden,
    invalid,
    not_supported,
    required,
)
from runtime.server.schema.structural.schema import Structural
from runtime.server.schema.structural.invariants import invariant_errors
from runtime.machinery.validation.fielderrors import FieldError

__all__ = ["structural_errors", "structural_field_errors"]

_TYPES = ["array", "boolean", "integer", "number", "object", "string"]
_REASONS = ["FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"]
_META_FIELDS = ("apiVersion", "kind", "metadata")


def structural_errors(schema: Mapping[str, Any], path: str = "openAPIV3Schema") -> list[tuple[str, str]]:
    """`(field path, message)` of every rule `schema` breaks; empty for a valid structural schema."""
    return [(e.field, e.message) for e in structural_field_errors(schema, path=path)]


def structural_field_errors(schema: Mapping[str, Any], *, path: str = "openAPIV3Schema") -> list[FieldError]:
    """The same, as field errors (for a CRD's 422)."""
    if not isinstance(schema, Mapping):
        return [required(path, "")]
    schema_errors: list[SchemaFieldError] = []
    cel_errors: list[SchemaFieldError] = []
    _schema(schema, path, _Context(), schema_errors, cel_errors, is_root=True)
    errors: list[FieldError] = [*schema_errors, *invariant_errors(schema, path)]
    if not errors:
        errors.extend(default_errors(Structural.from_openapi(schema), path))
    return errors + cel_errors


class _Context:
    """What the enclosing schema decides for a node (Kubernetes' specStandardValidator)."""

    def __init__(self, defaults_forbidden: str | None = None, inside_meta: bool = False,
                 old_self_forbidden: str | None = None) -> None:
        self.defaults_forbidden = defaults_forbidden
        self.inside_meta = inside_meta
        self.old_self_forbidden = old_self_forbidden

    def but(self, **changes: Any) -> _Context:
        values = {"defaults_forbidden": self.defaults_forbidden, "inside_meta": self.inside_meta,
                  "old_self_forbidden": self.old_self_forbidden}
        values.update(changes)
        return _Context(**values)

    def forbid_old_self(self, path: str) -> _Context:
        return self if self.old_self_forbidden is not None else self.but(old_self_forbidden=path)


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _standard(d: Mapping[str, Any], path: str, ctx: _Context, out: list[SchemaFieldError]) -> None:
    typ = d.get("type")
    if isinstance(typ, str) and typ and typ not in _TYPES:
        out.append(not_supported(f"{path}.type", typ, _TYPES))
    if "default" in d and ctx.defaults_forbidden is not None:
        detail = "must not be set" + (f" {ctx.defaults_forbidden}" if ctx.defaults_forbidden else "")
        out.append(forbidden(f"{path}.default", detail))
    if d.get("id"):
        out.append(forbidden(f"{path}.id", "id is not supported"))
    if "additionalItems" in d:
        out.append(forbidden(f"{path}.additionalItems", "additionalItems is not supported"))
    if d.get("patternProperties"):
        out.append(forbidden(f"{path}.patternProperties", "patternProperties is not supported"))
    if d.get("definitions"):
        out.append(forbidden(f"{path}.definitions", "definitions is not supported"))
    if "dependencies" in d:
        out.append(forbidden(f"{path}.dependencies", "dependencies is not supported"))
    if "$ref" in d:
        out.append(forbidden(f"{path}.$ref", "$ref is not supported"))
    if "$schema" in d:
        out.append(forbidden(f"{path}.$schema", "$schema is not supported"))
    if typ == "null":
        out.append(forbidden(f"{path}.type", "type cannot be set to null, use nullable as an alternative"))
    if isinstance(d.get("items"), list):
        out.append(forbidden(f"{path}.items", "items must be a schema object and not an array"))
    if ctx.inside_meta and d.get("x-kubernetes-embedded-resource") is True:
        out.append(forbidden(f"{path}.x-kubernetes-embedded-resource", "must not be used inside of resource meta"))


def _schema(d: Mapping[str, Any], path: str, ctx: _Context, out: list[SchemaFieldError],
            cel_out: list[SchemaFieldError], *, is_root: bool = False) -> None:
    before = len(out)
    _standard(d, path, ctx, out)
    if d.get("uniqueItems") is True:
        out.append(forbidden(f"{path}.uniqueItems",
                             "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"))
    props = _map(d.get("properties"))
    ap = d.get("additionalProperties")
    if ap is not None:
        if props and (ap is False or isinstance(ap, Mapping)):
            out.append(forbidden(f"{path}.additionalProperties", "additionalProperties and properties are mutual exclusive"))
        sub = ctx.but(defaults_forbidden="inside additionalProperties applying to object metadata") \
            if ctx.inside_meta else ctx
        if isinstance(ap, Mapping):
            _schema(ap, f"{path}.additionalProperties", sub, out, cel_out)
    embedded = d.get("x-kubernetes-embedded-resource") is True
    for key, prop in props.items():
        sub = ctx if d.get("x-kubernetes-map-type") != "atomic" else ctx.forbid_old_self(path)
        if (is_root or embedded) and key in _META_FIELDS:
            sub = sub.but(inside_meta=True)
            if is_root:
                sub = sub.but(defaults_forbidden=f"in top-level {key}")
        if isinstance(prop, Mapping):
            _schema(prop, f"{path}.properties[{key}]", sub, out, cel_out)
    if isinstance(d.get("not"), Mapping):
        _schema(d["not"], f"{path}.not", ctx, out, cel_out)
    for junctor in ("allOf", "oneOf", "anyOf"):
        for i, sub_schema in enumerate(d.get(junctor) or []):
            if isinstance(sub_schema, Mapping):
                _schema(sub_schema, f"{path}.{junctor}[{i}]", ctx, out, cel_out)
    items = d.get("items")
    if isinstance(items, Mapping):
        sub = ctx if d.get("x-kubernetes-list-type") == "map" else ctx.forbid_old_self(path)
        _schema(items, f"{path}.items", sub, out, cel_out)
    _extensions(d, path, out)
    _validations(d, path, ctx, out, cel_out, schema_errors_below=len(out) > before)


def _extensions(d: Mapping[str, Any], path: str, out: list[SchemaFieldError]) -> None:
    typ = d.get("type") if isinstance(d.get("type"), str) else ""
    if d.get("x-kubernetes-preserve-unknown-fields") is False:
        out.append(invalid(f"{path}.x-kubernetes-preserve-unknown-fields", False, "must be true or undefined"))
    map_type, list_type = d.get("x-kubernetes-map-type"), d.get("x-kubernetes-list-type")
    keys = d.get("x-kubernetes-list-map-keys") or []
    if map_type is not None and typ != "object":
        if not typ:
            out.append(required(f"{path}.type", "must be object if x-kubernetes-map-type is specified"))
        else:
            out.append(invalid(f"{path}.type", typ, "must be object if x-kubernetes-map-type is specified"))
    if map_type is not None and map_type not in ("atomic", "granular"):
        out.append(not_supported(f"{path}.x-kubernetes-map-type", map_type, ["atomic", "granular"]))
    items = _map(d.get("items"))
    if list_type is not None and typ != "array":
        if not typ:
            out.append(required(f"{path}.type", "must be array if x-kubernetes-list-type is specified"))
        else:
            out.append(invalid(f"{path}.type", typ, "must be array if x-kubernetes-list-type is specified"))
    elif list_type == "set" and items:
        if items.get("type") == "array" and items.get("x-kubernetes-list-type", "atomic") != "atomic":
            out.append(invalid(f"{path}.items.x-kubernetes-list-type", items.get("x-kubernetes-list-type"),
                               "must be atomic as item of a list with x-kubernetes-list-type=set"))
        if items.get("type") == "object" and items.get("x-kubernetes-map-type") != "atomic":
            out.append(invalid(f"{path}.items.x-kubernetes-map-type", items.get("x-kubernetes-map-type"),
                               "must be atomic as item of a list with x-kubernetes-list-type=set"))
    if list_type is not None and list_type not in ("atomic", "set", "map"):
        out.append(not_supported(f"{path}.x-kubernetes-list-type", list_type, ["atomic", "set", "map"]))
    if keys:
        if list_type is None:
            out.append(required(f"{path}.x-kubernetes-list-type", "must be map if x-kubernetes-list-map-keys is non-empty"))
        elif list_type != "map":
            out.append(invalid(f"{path}.x-kubernetes-list-type", list_type,
                               "must be map if x-kubernetes-list-map-keys is non-empty"))
    if list_type == "map":
        _list_map(d, keys, items, path, out)
    if list_type in ("set", "map") and items.get("nullable") is True:
        out.append(forbidden(f"{path}.items.nullable", f"cannot be nullable when x-kubernetes-list-type is {list_type}"))


def _list_map(d: Mapping[str, Any], keys: list, items: Mapping[str, Any], path: str,
              out: list[SchemaFieldError]) -> None:
    if not keys:
        out.append(required(f"{path}.x-kubernetes-list-map-keys", "must not be empty if x-kubernetes-list-type is map"))
    if "items" not in d:
        out.append(required(f"{path}.items", "must have a schema if x-kubernetes-list-type is map"))
        return
    if not items:
        out.append(invalid(f"{path}.items", d.get("items"), "must only have a single schema if x-kubernetes-list-type is map"))
        return
    if items.get("type") != "object":
        out.append(invalid(f"{path}.items.type", items.get("type", ""),
                           "must be object if parent array's x-kubernetes-list-type is map"))
        return
    props, seen = _map(items.get("properties")), set()
    required_keys = set(items.get("required") or [])
    for key in keys:
        if key in props:
            prop = _map(props[key])
            if prop.get("type") in ("array", "object"):
                out.append(invalid(f"{path}.items.properties[{key}].type", items.get("type"),
                                   "must be a scalar type if parent array's x-kubernetes-list-type is map"))
            if key not in required_keys and "default" not in prop:
                out.append(required(f"{path}.items.properties[{key}].default",
                                    "this property is in x-kubernetes-list-map-keys, so it must have a default or "
                                    "be a required property"))
            if prop.get("nullable") is True:
                out.append(forbidden(f"{path}.items.properties[{key}].nullable",
                                     "this property is in x-kubernetes-list-map-keys, so it cannot be nullable"))
        else:
            out.append(invalid(f"{path}.x-kubernetes-list-map-keys", keys, "entries must all be names of item properties"))
        if key in seen:
            out.append(invalid(f"{path}.x-kubernetes-list-map-keys", keys, "must not contain duplicate entries"))
        seen.add(key)


def _validations(d: Mapping[str, Any], path: str, ctx: _Context, out: list[SchemaFieldError],
                 cel_out: list[SchemaFieldError], *, schema_errors_below: bool) -> None:
    rules = d.get("x-kubernetes-validations")
    if not isinstance(rules, list) or not rules:
        return
    for i, rule in enumerate(rules):
        rule = _map(rule)
        at = f"{path}.x-kubernetes-validations[{i}]"
        text, message = str(rule.get("rule") or ""), str(rule.get("message") or "")
        msg_expr, field_path = str(rule.get("messageExpression") or ""), rule.get("fieldPath")
        if not text.strip():
            out.append(required(f"{at}.rule", "rule is not specified"))
        elif message and not message.strip():
            out.append(invalid(f"{at}.message", message, "message must be non-empty if specified"))
        elif "\n" in message.strip() or "\r" in message.strip():
            out.append(invalid(f"{at}.message", message, "message must not contain line breaks"))
        elif ("\n" in text.strip() or "\r" in text.strip()) and not message.strip():
            out.append(required(f"{at}.message", "message must be specified if rule contains line breaks"))
        if msg_expr and not msg_expr.strip():
            out.append(required(f"{at}.messageExpression", "messageExpression must be non-empty if specified"))
        reason = rule.get("reason")
        if reason is not None and reason not in _REASONS:
            out.append(not_supported(f"{at}.reason", reason, _REASONS))
        if isinstance(field_path, str) and field_path:
            if not field_path.strip():
                out.append(invalid(f"{at}.fieldPath", field_path, "fieldPath must be non-empty if specified"))
            if "\n" in field_path or "\r" in field_path:
                out.append(invalid(f"{at}.fieldPath", field_path, "fieldPath must not contain line breaks"))
            if not _path_valid(d, field_path):
                out.append(invalid(f"{at}.fieldPath", field_path, "fieldPath must be a valid path"))
    if schema_errors_below:
        return
    for i, rule in enumerate(rules):
        _compile(_map(rule), f"{path}.x-kubernetes-validations[{i}]", ctx, cel_out)


def _path_valid(d: Mapping[str, Any], field_path: str) -> bool:
    steps = parse_field_path(field_path)
    if steps is None:
        return False
    return Structural.from_openapi(d).at(steps) is not None


def _compile(rule: Mapping[str, Any], at: str, ctx: _Context, out: list[SchemaFieldError]) -> None:
    text = str(rule.get("rule") or "")
    shown = json.loads(json.dumps(rule, default=str))
    if not text.strip():
        return
    try:
        program = compile_expression(text)
    except CELCompileError as exc:
        out.append(invalid(f"{at}.rule", shown, f"compilation failed: {exc}"))
        return
    msg_expr = str(rule.get("messageExpression") or "")
    if msg_expr.strip():
        try:
            compile_expression(msg_expr)
        except CELCompileError as exc:
            out.append(invalid(f"{at}.messageExpression", shown, f"messageExpression compilation failed: {exc}"))
    if program.uses_old_self:
        if ctx.old_self_forbidden is not None:
            out.append(invalid(f"{at}.rule", text, "oldSelf cannot be used on the uncorrelatable portion of the "
                                                   f"schema within {ctx.old_self_forbidden}"))
    elif rule.get("optionalOldSelf") is not None:
        out.append(invalid(f"{at}.optionalOldSelf", rule["optionalOldSelf"], "may not be set if oldSelf is not used in rule"))
