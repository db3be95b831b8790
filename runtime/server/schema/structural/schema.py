"""The structural schema of a custom resource version, parsed once.

`Structural.from_openapi(d)` reads a CRD version's `openAPIV3Schema` (a
JSON dict) into frozen nodes, as apiextensions' `NewStructural` does: the
generic part (type, format, nullable, default), the structure (properties,
items, additionalProperties), the value validations (enum, pattern, bounds,
lengths, sizes, required, allOf/anyOf/oneOf/not) and the Kubernetes
extensions (`x-kubernetes-*`). Patterns are compiled (RE2) and CEL rules are
compiled here, once per schema, never per object; what fails to compile is
kept on the node (`pattern_error`, `Rule.compile_error`) for
`structural_errors` to report.

`from_openapi` never raises on a malformed schema: anything it cannot read
is left out (a non-dict `items`, a non-string `type`), and
`structural_errors(dict)` is the judge of validity. Nodes compare and hash
by identity, so a node is a cache key.

`at(path)` and `merge_info(path)` answer what server-side apply needs for a
field path (`("spec", "ports")`, or `"spec.ports"`): the node, and its
list type, map keys and map type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from runtime.server.schema.cel.program import CELCompileError, Program, compile_expression
from runtime.server.schema.regex import Pattern, PatternError, compile_pattern

__all__ = ["NO_DEFAULT", "MergeInfo", "Rule", "Structural", "visit_declared"]


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()


@dataclass(frozen=True, eq=False)
class Rule:
    """One `x-kubernetes-validations` entry and its compiled programs."""

    rule: str
    message: str = ""
    message_expression: str = ""
    field_path: str = ""
    reason: str | None = None
    optional_old_self: bool | None = None
    program: Program | None = None
    compile_error: str = ""
    message_program: Program | None = None
    message_compile_error: str = ""

    @property
    def uses_old_self(self) -> bool:
        """A transition rule: evaluated only on update, when an old value exists."""
        return self.program is not None and self.program.uses_old_self


@dataclass(frozen=True)
class MergeInfo:
    """The merge markers of one field (what server-side apply reads)."""

    list_type: str = ""  # atomic | set | map ("" when not a list or unset)
    map_keys: tuple[str, ...] = ()
    map_type: str = ""  # atomic | granular ("" when unset)


@dataclass(frozen=True, eq=False)
class Structural:
    """One node of a structural schema (see the module docstring)."""

    type: str = ""
    format: str = ""
    description: str = ""
    nullable: bool = False
    default: Any = NO_DEFAULT
    properties: Mapping[str, Structural] = field(default_factory=dict)
    items: Structural | None = None
    additional_properties: Structural | bool | None = None
    # value validations
    enum: tuple[Any, ...] | None = None
    pattern: str = ""
    maximum: float | int | None = None
    exclusive_maximum: bool = False
    minimum: float | int | None = None
    exclusive_minimum: bool = False
    multiple_of: float | int | None = None
    max_length: int | None = None
    min_length: int | None = None
    max_items: int | None = None
    min_items: int | None = None
    unique_items: bool = False
    max_properties: int | None = None
    min_properties: int | None = None
    required: tuple[str, ...] = ()
    all_of: tuple[Structural, ...] = ()
    any_of: tuple[Structural, ...] = ()
    one_of: tuple[Structural, ...] = ()
    not_: Structural | None = None
    # extensions
    x_int_or_string: bool = False
    x_embedded_resource: bool = False
    x_preserve_unknown_fields: bool = False
    x_list_type: str = ""
    x_list_map_keys: tuple[str, ...] = ()
    x_map_type: str = ""
    validations: tuple[Rule, ...] = ()
    # compiled
    compiled_pattern: Pattern | None = None
    pattern_error: str = ""

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    @property
    def additional_schema(self) -> Structural | None:
        """The schema of additionalProperties when it is a schema (not a bool)."""
        ap = self.additional_properties
        return ap if isinstance(ap, Structural) else None

    @classmethod
    def from_openapi(cls, schema: Mapping[str, Any] | None) -> Structural:
        """Parse an `openAPIV3Schema` dict (never raises; see the module docstring)."""
        return _parse(schema if isinstance(schema, Mapping) else {})

    def child(self, key: str) -> Structural | None:
        """The schema of object key `key`: a property, else additionalProperties' schema."""
        prop = self.properties.get(key)
        return prop if prop is not None else self.additional_schema

    def at(self, path: str | Sequence[str | int]) -> Structural | None:
        """The node at a field path (`"spec.ports"`, `("spec", "ports", 0)`); None if undeclared."""
        node: Structural | None = self
        for step in _steps(path):
            if node is None:
                return None
            node = node.items if isinstance(step, int) else node.child(step)
        return node

    def merge_info(self, path: str | Sequence[str | int] = ()) -> MergeInfo:
        """List type, map keys and map type of the field at `path` (empty when undeclared)."""
        node = self.at(path)
        if node is None:
            return MergeInfo()
        return MergeInfo(node.x_list_type if node.type == "array" else "", node.x_list_map_keys, node.x_map_type)

    def walk(self) -> Iterator[Structural]:
        """This node and every node under it (properties, items, additionalProperties)."""
        yield self
        for prop in self.properties.values():
            yield from prop.walk()
        if self.items is not None:
            yield from self.items.walk()
        if self.additional_schema is not None:
            yield from self.additional_schema.walk()


def visit_declared(x: Any, s: Structural, path: str, visit: Callable[[Any, Structural, str], None]) -> None:
    """Call `visit(value, its schema, its field path)` for `x` (at `path`), then, depth first, for each
    object and list under it that `s` declares.

    An object's keys are properties (`path.key`) or, failing that,
    additionalProperties (`path[key]`); a list's items are `path[i]`.
    Undeclared values and scalars are not visited (nothing under them to check).
    """
    visit(x, s, path)
    if isinstance(x, dict):
        extra = s.additional_schema
        for key, value in x.items():
            if isinstance(value, (dict, list)):
                prop = s.properties.get(key)
                if prop is not None:
                    visit_declared(value, prop, f"{path}.{key}" if path else key, visit)
                elif extra is not None:
                    visit_declared(value, extra, f"{path}[{key}]", visit)
    elif isinstance(x, list) and s.items is not None:
        items = s.items
        for i, item in enumerate(x):
            if isinstance(item, (dict, list)):
                visit_declared(item, items, f"{path}[{i}]", visit)


def _steps(path: str | Sequence[str | int]) -> list[str | int]:
    if isinstance(path, str):
        return [p for p in path.split(".") if p]
    return list(path)


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value == int(value):
        return int(value)
    return None


def _num(value: Any) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _schemas(value: Any) -> tuple[Structural, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(_parse(v) for v in value if isinstance(v, Mapping))


def _parse(d: Mapping[str, Any]) -> Structural:
    items = d.get("items")
    ap = d.get("additionalProperties")
    additional: Structural | bool | None
    if isinstance(ap, bool):
        additional = ap
    elif isinstance(ap, Mapping):
        additional = _parse(ap)
    else:
        additional = None
    props = d.get("properties")
    properties = {k: _parse(v) for k, v in props.items() if isinstance(v, Mapping)} \
        if isinstance(props, Mapping) else {}
    pattern = _str(d.get("pattern"))
    compiled, pattern_error = None, ""
    if pattern:
        try:
            compiled = compile_pattern(pattern)
        except PatternError as exc:
            pattern_error = str(exc)
    enum = d.get("enum")
    return Structural(
        type=_str(d.get("type")),
        format=_str(d.get("format")),
        description=_str(d.get("description")),
        nullable=d.get("nullable") is True,
        default=d.get("default", NO_DEFAULT),
        properties=properties,
        items=_parse(items) if isinstance(items, Mapping) else None,
        additional_properties=additional,
        enum=tuple(enum) if isinstance(enum, list) else None,
        pattern=pattern,
        maximum=_num(d.get("maximum")),
        exclusive_maximum=d.get("exclusiveMaximum") is True,
        minimum=_num(d.get("minimum")),
        exclusive_minimum=d.get("exclusiveMinimum") is True,
        multiple_of=_num(d.get("multipleOf")),
        max_length=_int(d.get("maxLength")),
        min_length=_int(d.get("minLength")),
        max_items=_int(d.get("maxItems")),
        min_items=_int(d.get("minItems")),
        unique_items=d.get("uniqueItems") is True,
        max_properties=_int(d.get("maxProperties")),
        min_properties=_int(d.get("minProperties")),
        required=tuple(r for r in d.get("required") or () if isinstance(r, str))
        if isinstance(d.get("required"), list) else (),
        all_of=_schemas(d.get("allOf")),
        any_of=_schemas(d.get("anyOf")),
        one_of=_schemas(d.get("oneOf")),
        not_=_parse(d["not"]) if isinstance(d.get("not"), Mapping) else None,
        x_int_or_string=d.get("x-kubernetes-int-or-string") is True,
        x_embedded_resource=d.get("x-kubernetes-embedded-resource") is True,
        x_preserve_unknown_fields=d.get("x-kubernetes-preserve-unknown-fields") is True,
        x_list_type=_str(d.get("x-kubernetes-list-type")),
        x_list_map_keys=tuple(k for k in d.get("x-kubernetes-list-map-keys") or () if isinstance(k, str))
        if isinstance(d.get("x-kubernetes-list-map-keys"), list) else (),
        x_map_type=_str(d.get("x-kubernetes-map-type")),
        validations=tuple(_rule(r) for r in d.get("x-kubernetes-validations") or () if isinstance(r, Mapping))
        if isinstance(d.get("x-kubernetes-validations"), list) else (),
        compiled_pattern=compiled,
        pattern_error=pattern_error,
    )


def _compiled(expression: str) -> tuple[Any, str]:
    """The CEL program of `expression` and "", or None and why it does not compile (None and "" if blank)."""
    if not expression.strip():
        return None, ""
    try:
        return compile_expression(expression), ""
    except CELCompileError as exc:
        return None, str(exc)


def _rule(d: Mapping[str, Any]) -> Rule:
    text = _str(d.get("rule"))
    message_expression = _str(d.get("messageExpression"))
    program, error = _compiled(text)
    message_program, message_error = _compiled(message_expression)
    reason = d.get("reason")
    optional = d.get("optionalOldSelf")
    return Rule(
        rule=text, message=_str(d.get("message")), message_expression=message_expression,
        field_path=_str(d.get("fieldPath")), reason=reason if isinstance(reason, str) else None,
        optional_old_self=optional if isinstance(optional, bool) else None,
        program=program, compile_error=error, message_program=message_program,
        message_compile_error=message_error,
    )
