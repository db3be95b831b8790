"""x-kubernetes-validations: run a schema's CEL rules over an object.

`cel_errors(obj, schema, old=, limits=)` walks the object with its schema
as apiextensions' `cel.Validator` does: at each node that has rules, each
rule runs with `self` bound to the node's value (and `oldSelf` to the old
value, for transition rules), then the walk descends into properties,
additionalProperties (correlated with the old object by key) and items
(correlated only for `x-kubernetes-list-type: map` lists, by their keys).
A `null` value runs no rule.

- A transition rule (one that names `oldSelf`) runs only on update, where
  an old value correlates; on create it is skipped, unless it sets
  `optionalOldSelf` (then `oldSelf` is an optional, empty on create).
- Ratcheting (update, `ratchet=` given): a failing rule that does not name
  `oldSelf`, on a node unchanged from the old object
  (`runtime.server.schema.ratcheting`), is a Warning, not an error, as
  Kubernetes 1.33 does; transition rules are never ratcheted.
- A failure is `field.Invalid(path, <schema type>, detail)`, or the error
  its `reason` names (FieldValueForbidden, FieldValueRequired,
  FieldValueDuplicate); `fieldPath` (`.a.b`, `['a.b']`) extends the path.
  The detail is the `messageExpression`'s value, else `message`, else
  `failed rule: <rule>`.
- Values are converted as Kubernetes does: property names are escaped
  (`foo-bar` is `self.foo__dash__bar`), and at the resource root and in
  embedded resources `metadata` shows only `name` and `generateName`.

Cost: each evaluation runs under a `Meter` (see `cel_program`) limited to
`limits.per_call` units; all rules of one `cel_errors` call share
`limits.per_request`. Over the per-call limit the rule fails with
Kubernetes' words (`operation cancelled: actual cost limit exceeded`) and no
further rule runs; over the request budget: `validation failed due to
running out of cost budget, no further validation rules will be run`.

Caveats: the limits are in celpy units (one parse-tree node visited, 12 to
20 µs on a 2-core machine), not cel-go's (about 10 ns a unit), so the
defaults are Kubernetes' figures (1,000,000 per call, 10,000,000 per
request) divided by twenty: a rule runs at most about 1 s, all rules of a
request about 10 s. A unit here is also finer than cel-go's (`x > 0` in a
loop costs about 17 units against cel-go's 3), so a rule Kubernetes
accepts may exceed these limits on large lists; pass `CELLimits` to widen.
A rule with `optionalOldSelf: true` runs on create too, `oldSelf` an empty
optional (`cel/optionals.py`: `hasValue`, `value`, `orValue`,
`optional.of`/`none`; no `?.` syntax). There is no static cost estimate at
CRD creation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from celpy import celtypes

from runtime.server.schema.cel.optionals import FUNCTIONS as OPTIONAL_FUNCTIONS, OPTIONAL, Optional
from runtime.server.schema.cel.program import CELEvaluationError, CostExceeded, Meter
from runtime.server.schema.ratcheting import Correlation, should_ratchet
from runtime.server.schema.schema_errors import (
    SchemaFieldError,
    duplicate,
    forbidden,
    invalid,
    required,
)
from runtime.server.schema.structural.schema import Rule, Structural

__all__ = [
    "PER_CALL_LIMIT",
    "RUNTIME_CEL_COST_BUDGET",
    "CELLimits",
    "cel_errors",
    "escape_property_name",
    "parse_field_path",
]

PER_CALL_LIMIT = 50_000
RUNTIME_CEL_COST_BUDGET = 500_000

_RESERVED = frozenset({
    "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if",
    "import", "let", "loop", "package", "namespace", "return", "var", "void", "while",
})
_IDENT = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_FIELD_PATH_STEP = re.compile(r"""\.([a-zA-Z_][a-zA-Z0-9_-]*)|\[\s*'((?:[^'\\]|\\.)*)'\s*\]|\[\s*"((?:[^"\\]|\\.)*)"\s*\]""")


@dataclass(frozen=True)
class CELLimits:
    """Cost limits in celpy units (see the module docstring)."""

    per_call: int = PER_CALL_LIMIT
    per_request: int = RUNTIME_CEL_COST_BUDGET


DEFAULT_LIMITS = CELLimits()


def escape_property_name(name: str) -> str | None:
    """The CEL name of property `name`, or None when CEL cannot name it (Kubernetes' escaping)."""
    if name in _RESERVED:
        return f"__{name}__"
    escaped = (name.replace("__", "__underscores__").replace(".", "__dot__")
               .replace("-", "__dash__").replace("/", "__slash__"))
    return escaped if _IDENT.match(escaped) else None


def parse_field_path(path: str) -> list[str] | None:
    """The steps of a rule's `fieldPath` (`.a['b.c']` -> ["a", "b.c"]); None if malformed."""
    steps, pos = [], 0
    text = path.strip()
    while pos < len(text):
        match = _FIELD_PATH_STEP.match(text, pos)
        if match is None:
            return None
        steps.append(next(g for g in match.groups() if g is not None))
        pos = match.end()
    return steps or None


@dataclass
class _Walk:
    limits: CELLimits
    remaining: int
    errors: list[SchemaFieldError] = field(default_factory=list)
    stopped: bool = False
    #: Ratcheted failures (update only), as Warning texts.
    warnings: list[str] | None = None


def cel_errors(obj: Any, schema: Structural, *, old: Any = None, limits: CELLimits = DEFAULT_LIMITS,
               path: str = "", ratchet: Correlation | None = None,
               warnings: list[str] | None = None) -> list[SchemaFieldError]:
    """Field errors of every failing rule under `schema` (see the module docstring).

    `ratchet` (an update's root correlation of `obj` with the old object): a rule without `oldSelf`
    failing on an unchanged node is a Warning appended to `warnings`, not an error.
    """
    walk = _Walk(limits, limits.per_request, warnings=warnings if warnings is not None else [])
    _validate(walk, schema, obj, old, path, is_root=True, corr=ratchet)
    return walk.errors


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _validate(walk: _Walk, s: Structural, obj: Any, old: Any, path: str, *, is_root: bool = False,
              corr: Correlation | None = None, parent: Correlation | None = None) -> None:
    if walk.stopped or obj is None:
        return
    if s.validations:
        _run_rules(walk, s, obj, old, path, is_root, should_ratchet(corr, parent))
    if walk.stopped:
        return
    # The ratcheting correlation follows the walk (kube's ratchetingOptions.key and .index): below a node
    # that does not correlate, its nearest correlated ancestor decides.
    below = corr if corr is not None else parent
    if isinstance(obj, dict):
        old_map = old if isinstance(old, dict) else {}
        for key, value in obj.items():
            child = corr.key(key) if corr is not None else None
            if is_root and parent is None and key in ("apiVersion", "kind"):
                child, below_here = None, None  # conversion rewrites them: never ratcheted
            else:
                below_here = below
            prop = s.properties.get(key)
            if prop is not None:
                _validate(walk, prop, value, old_map.get(key), _child(path, key), corr=child, parent=below_here)
            elif s.additional_schema is not None:
                correlated = old_map.get(key) if s.x_map_type != "atomic" else None
                _validate(walk, s.additional_schema, value, correlated, f"{path}[{key}]", corr=child,
                          parent=below_here)
            if walk.stopped:
                return
    elif isinstance(obj, list) and s.items is not None:
        olds = _correlate_items(s, obj, old)
        for i, value in enumerate(obj):
            _validate(walk, s.items, value, olds[i], f"{path}[{i}]",
                      corr=corr.index(i) if corr is not None else None, parent=below)
            if walk.stopped:
                return


def _correlate_items(s: Structural, obj: list, old: Any) -> list[Any]:
    if s.x_list_type != "map" or not isinstance(old, list) or not s.x_list_map_keys:
        return [None] * len(obj)
    keys = s.x_list_map_keys

    def key_of(item: Any) -> tuple | None:
        if not isinstance(item, dict):
            return None
        return tuple(repr(item.get(k)) for k in keys)

    by_key = {key_of(o): o for o in old if key_of(o) is not None}
    return [by_key.get(key_of(item)) for item in obj]


def _run_rules(walk: _Walk, s: Structural, obj: Any, old: Any, path: str, is_root: bool,
               unchanged: bool) -> None:
    self_value = to_cel(obj, s, is_resource=is_root or s.x_embedded_resource)
    old_value = None if old is None else to_cel(old, s, is_resource=is_root or s.x_embedded_resource)
    for rule in s.validations:
        if rule.program is None:
            walk.errors.append(invalid(path, s.type, f"rule compile error: {rule.compile_error}"))
            continue
        optional = bool(rule.optional_old_self) and rule.uses_old_self
        if rule.uses_old_self and old is None and not optional:
            continue
        variables = {"self": self_value}
        if rule.uses_old_self and old is not None:
            variables["oldSelf"] = old_value
        # optionalOldSelf: the rule runs on create too, `oldSelf` an optional (kube's optionalOldSelfActivation).
        evaluated = dict(variables, oldSelf=Optional.of(old_value), optional=OPTIONAL) if optional else variables
        limit = min(walk.limits.per_call, walk.remaining)
        meter = Meter(limit)
        try:
            result = rule.program.evaluate(evaluated, meter, OPTIONAL_FUNCTIONS if optional else None)
        except CostExceeded:
            if walk.remaining < walk.limits.per_call:
                walk.errors.append(invalid(path, s.type, "validation failed due to running out of cost budget, "
                                                         "no further validation rules will be run"))
            else:
                walk.errors.append(invalid(path, s.type, "'operation cancelled: actual cost limit exceeded': "
                                           "no further validation rules will be run due to call cost exceeds "
                                           f"limit for rule: {_rule_string(rule)}"))
            walk.stopped = True
            return
        except CELEvaluationError as exc:
            walk.remaining -= meter.used
            message = str(exc)
            if message.startswith("no such overload"):
                walk.errors.append(invalid(path, s.type, f"'{message}': call arguments did not match a supported "
                                           f"operator, function or macro signature for rule: {_rule_string(rule)}"))
            else:
                walk.errors.append(invalid(path, s.type, f"{message} evaluating rule: {_rule_string(rule)}"))
            continue
        walk.remaining -= meter.used
        if not isinstance(result, (bool, celtypes.BoolType)):
            walk.errors.append(invalid(path, s.type, f"rule evaluated to a non-boolean value: {_rule_string(rule)}"))
            continue
        if result:
            continue
        detail = _message(walk, rule, variables)
        _add_failure(walk, s, rule, path, detail, ratchet=unchanged and not rule.uses_old_self)


def _rule_string(rule: Rule) -> str:
    return rule.message.strip() if rule.message.strip() else rule.rule.strip()


def _message(walk: _Walk, rule: Rule, variables: dict[str, Any]) -> str:
    default = rule.message.strip() if rule.message.strip() else f"failed rule: {_rule_string(rule)}"
    if rule.message_program is None:
        return default
    meter = Meter(min(walk.limits.per_call, max(walk.remaining, 0)))
    try:
        value = rule.message_program.evaluate(variables, meter)
    except (CELEvaluationError, CostExceeded):
        return default
    finally:
        walk.remaining -= meter.used
    if not isinstance(value, str) or not value.strip() or "\n" in value or "\r" in value:
        return default
    return value.strip()


def _add_failure(walk: _Walk, s: Structural, rule: Rule, path: str, detail: str, *, ratchet: bool = False) -> None:
    if rule.field_path:
        for step in parse_field_path(rule.field_path) or []:
            path = _child(path, step)
    reason = rule.reason or "FieldValueInvalid"
    if reason == "FieldValueForbidden":
        error = forbidden(path, detail)
    elif reason == "FieldValueRequired":
        error = required(path, detail)
    elif reason == "FieldValueDuplicate":
        error = duplicate(path, s.type)
    else:
        error = invalid(path, s.type, detail)
    if ratchet and walk.warnings is not None:
        walk.warnings.append(str(error))  # kube: warning.AddWarning(ctx, "", e.Error())
    else:
        walk.errors.append(error)


def to_cel(value: Any, s: Structural | None, *, is_resource: bool = False) -> Any:
    """`value` as a CEL value under schema `s` (escaped property names, restricted metadata)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, int):
        return celtypes.IntType(value)
    if isinstance(value, float):
        return celtypes.DoubleType(value)
    if isinstance(value, str):
        return celtypes.StringType(value)
    if isinstance(value, list):
        items = s.items if s is not None else None
        return celtypes.ListType([to_cel(v, items) for v in value])
    if isinstance(value, dict):
        out = celtypes.MapType()
        for key, v in value.items():
            if is_resource and key == "metadata" and isinstance(v, dict):
                out[celtypes.StringType(key)] = celtypes.MapType(
                    {celtypes.StringType(k): to_cel(v[k], None) for k in ("name", "generateName") if k in v})
                continue
            prop = s.properties.get(key) if s is not None else None
            if prop is not None:
                name = escape_property_name(key)
                if name is not None:
                    out[celtypes.StringType(name)] = to_cel(v, prop, is_resource=prop.x_embedded_resource)
            else:
                child = s.additional_schema if s is not None else None
                out[celtypes.StringType(key)] = to_cel(v, child, is_resource=bool(child and child.x_embedded_resource))
        return out
    return value
