"""Type checking a ValidatingAdmissionPolicy's expressions, as kube's `validating.TypeChecker` (status.typeChecking).

Contract: `expression_warnings(policy, resolve, params)` is the policy's `status.typeChecking.expressionWarnings`:
one `{fieldRef, warning}` per `spec.validations[i].expression` or `.messageExpression` that refers to a field
the object's type lacks, for each type `spec.matchConstraints.resourceRules` names (as kube: rules with a `*`
group or version and `*` or sub-resources are skipped; a rule's first 10 types at most, by group, version and
kind). `resolve(group, version, resource)` gives `(kind, Shape)` or None for a resource it does not know, `params` the shape of the
paramKind (None: dyn); `model_shape` and `schema_shape` build a `Shape` from a built-in kind's model and a CRD
version's `openAPIV3Schema`.

Only undefined fields are reported (cel-python has no type checker: this walks the parsed tree along
`object`, `oldObject` and `params`, through fields, list items, map values and the variables of the `all`,
`exists`, `exists_one`, `map` and `filter` macros); anything else is dyn, as a preserve-unknown-fields schema
is in kube. The warning reads as cel-go's: `apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field 'x'` with the
source line and a caret under the '.'.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable

from pydantic import BaseModel

from runtime.models.introspect import FieldShape, fields_of
from runtime.models.meta import ObjectMeta

__all__ = ["Shape", "model_shape", "schema_shape", "expression_warnings", "MAX_TYPES"]

#: kube's maxTypesToCheck: the types of a policy's rules checked, at most.
MAX_TYPES = 10

_MACROS = frozenset(("all", "exists", "exists_one", "map", "filter"))


@dataclass(frozen=True, eq=False)
class Shape:
    """A CEL type as far as fields go: `object` (with `fields()`), `list` or `map` (of `item`)."""

    kind: str
    item: "Shape | None" = None
    fields: Callable[[], dict[str, "Shape | None"]] = field(default=dict)


@functools.cache
def model_shape(model: type[BaseModel]) -> Shape:
    """The shape of a built-in kind's pydantic model (once per model: shapes refer to each other)."""
    return Shape("object", fields=functools.cache(lambda: {k: _field(v) for k, v in fields_of(model).items()}))


def _field(shape: FieldShape) -> Shape | None:
    if shape.kind == "model":
        return model_shape(shape.model)
    if shape.kind in ("list", "map") and shape.item is not None:
        return Shape(shape.kind, item=_field(shape.item))
    return None


def schema_shape(schema: dict[str, Any] | None, *, root: bool = True) -> Shape | None:
    """The shape of a CRD version's openAPIV3Schema (None: dyn); the root also has apiVersion, kind and metadata."""
    if not isinstance(schema, dict) or schema.get("x-kubernetes-preserve-unknown-fields"):
        return None if not root else _root({})
    if isinstance(schema.get("items"), dict):
        return Shape("list", item=schema_shape(schema["items"], root=False))
    if isinstance(schema.get("additionalProperties"), dict):
        return Shape("map", item=schema_shape(schema["additionalProperties"], root=False))
    props = schema.get("properties")
    if root:
        return _root(props if isinstance(props, dict) else {})
    if isinstance(props, dict):
        return Shape("object", fields=functools.cache(lambda: {k: schema_shape(v, root=False)
                                                               for k, v in props.items()}))
    return None


def _root(props: dict[str, Any]) -> Shape:
    def fields() -> dict[str, Shape | None]:
        out = {k: schema_shape(v, root=False) for k, v in props.items()}
        out.update(apiVersion=None, kind=None, metadata=model_shape(ObjectMeta))
        return out
    return Shape("object", fields=functools.cache(fields))


def expression_warnings(policy: dict[str, Any], resolve: Callable[[str, str, str], tuple[str, Shape] | None],
                        params: Shape | None = None) -> list[dict[str, str]]:
    """The policy's expression warnings (see the module doc); `params` is the shape of its paramKind (None: dyn)."""
    types = _types(policy, resolve)
    if not types:
        return []
    warnings = []
    for i, validation in enumerate((policy.get("spec") or {}).get("validations") or ()):
        for key in ("expression", "messageExpression"):
            source = validation.get(key) if isinstance(validation, dict) else None
            if not isinstance(source, str) or not source:
                continue
            found = [f"{gvk}: {text}" for gvk, shape in types if (text := _check(source, shape, params))]
            if found:
                warnings.append({"fieldRef": f"spec.validations[{i}].{key}", "warning": "\n".join(found)})
    return warnings


def _types(policy: dict[str, Any], resolve: Callable[[str, str, str], tuple[str, Shape] | None],
           ) -> list[tuple[str, Shape]]:
    """(`group/version, Kind=K`, shape) of the types the policy's resource rules name, as kube's typesToCheck:
    rule by rule, its groups, versions and resources sorted; the first rule to give MAX_TYPES ends the search."""
    constraints = (policy.get("spec") or {}).get("matchConstraints") or {}
    seen: dict[tuple[str, str, str], Shape] = {}
    for rule in constraints.get("resourceRules") or ():
        groups, versions = rule.get("apiGroups") or [], rule.get("apiVersions") or []
        if "*" in groups or "*" in versions:
            continue
        resources = sorted(r for r in rule.get("resources") or () if r != "*" and "/" not in r)
        count = 0
        for group, version, resource in ((g, v, r) for g in sorted(groups) for v in sorted(versions)
                                         for r in resources):
            if (found := resolve(group, version, resource)) is None:
                continue
            seen[(group, version, found[0])] = found[1]
            count += 1
            if count == MAX_TYPES:
                return _named(seen)
    return _named(seen)


def _named(types: dict[tuple[str, str, str], Shape]) -> list[tuple[str, Shape]]:
    return [(f"{g}/{v}, Kind={k}", types[(g, v, k)]) for g, v, k in sorted(types)]


@functools.lru_cache(maxsize=256)
def _parse(source: str) -> Any:
    # late import: the controllers command loads CEL only once there is a policy to check
    import celpy

    try:
        return celpy.Environment().compile(source)
    except Exception:  # noqa: BLE001 - an expression that does not parse was refused when written
        return None


def _check(source: str, shape: Shape, params: Shape | None) -> str:
    """cel-go's display of the undefined-field errors of `source` with `object` of `shape`, or ''."""
    tree = _parse(source)
    if tree is None:
        return ""
    errors: list[tuple[int, str]] = []
    _Walker(errors).type_of(tree, {"object": shape, "oldObject": shape, "params": params})
    return "\n".join(_display(source, offset, message) for offset, message in sorted(errors))


class _Walker:
    """Types a parsed CEL tree's nodes along fields, recording undefined fields (offset of the '.', message)."""

    def __init__(self, errors: list[tuple[int, str]]) -> None:
        self.errors = errors

    def type_of(self, node: Any, scope: dict[str, Shape | None]) -> Shape | None:
        if not _is_tree(node):
            return None
        rule, children = node.data, node.children
        if rule == "ident" and children:
            return scope.get(str(children[0]))
        if rule == "member_dot":
            return self._select(self.type_of(children[0], scope), children[1])
        if rule == "member_index":
            owner = self.type_of(children[0], scope)
            self.type_of(children[1], scope)
            return owner.item if owner is not None and owner.kind in ("list", "map") else None
        if rule == "member_dot_arg":
            return self._call(children, scope)
        trees = [c for c in children if _is_tree(c)]
        if len(trees) == 1 and len(children) == 1:
            return self.type_of(trees[0], scope)  # a wrapper of one expression: its type
        for child in trees:
            self.type_of(child, scope)
        return None

    def _select(self, owner: Shape | None, name: Any) -> Shape | None:
        if owner is None or owner.kind == "list":
            return None
        if owner.kind == "map":
            return owner.item
        known = owner.fields()
        if str(name) in known:
            return known[str(name)]
        self.errors.append((name.start_pos, f"undefined field '{name}'"))
        return None

    def _call(self, children: list[Any], scope: dict[str, Shape | None]) -> Shape | None:
        owner = self.type_of(children[0], scope)
        method, args = str(children[1]), children[2] if len(children) > 2 else None
        exprs = [c for c in args.children if _is_tree(c)] if _is_tree(args) else []
        variable = _ident_name(exprs[0]) if method in _MACROS and len(exprs) >= 2 else None
        if variable is None:
            for expr in exprs:
                self.type_of(expr, scope)
            return None
        item = owner.item if owner is not None and owner.kind == "list" else None
        inner = {**scope, variable: item}
        for expr in exprs[1:]:
            self.type_of(expr, inner)
        return owner if method == "filter" else None


def _is_tree(node: Any) -> bool:
    """Whether `node` is a parse tree's node (lark's Tree, not one of its tokens: celpy's parser is lark's)."""
    return hasattr(node, "data") and hasattr(node, "children")


def _ident_name(node: Any) -> str | None:
    """The name of an expression that is a lone identifier (a macro's variable)."""
    while _is_tree(node):
        if node.data == "ident":
            return str(node.children[0]) if node.children else None
        trees = [c for c in node.children if _is_tree(c)]
        if len(trees) != 1 or len(node.children) != 1:
            return None
        node = trees[0]
    return None


def _display(source: str, token_start: int, message: str) -> str:
    """cel-go's `ERROR: <input>:L:C: message`, the line and a caret under the '.' before the field at `token_start`."""
    dot = token_start - 1
    while dot > 0 and source[dot].isspace():
        dot -= 1
    line_start = source.rfind("\n", 0, dot) + 1
    line_no = source.count("\n", 0, dot) + 1
    column = dot - line_start
    end = source.find("\n", line_start)
    snippet = source[line_start:end if end >= 0 else len(source)].replace("\t", " ")
    marks = "".join("\uff0e" if ord(ch) > 0x7f else "." for ch in snippet[:column])
    caret = "\uff3e" if column < len(snippet) and ord(snippet[column]) > 0x7f else "^"
    return f"ERROR: <input>:{line_no}:{column + 1}: {message}\n | {snippet}\n | {marks}{caret}"
