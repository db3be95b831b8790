"""A MutatingAdmissionPolicy compiled, and its mutations applied: kube's `mutating/patch` (smd.go, json_patch.go).

`compile_mutating(policy)` -> `CompiledMutating` (mutations, variables,
match conditions, each compiled once). `CompiledMutating.mutation(index,
scope, obj, merge_schema)` evaluates mutation `index` (its own cost budget)
and returns the new object, or raises `MutationError` in kube's words:

- `ApplyConfiguration`: the expression builds an `Object{...}` literal
  (`values.ObjectType`); its type names must follow the field path (`type
  mismatch: unexpected type name ...`); it may not set atomic lists, maps or
  structs (`invalid ApplyConfiguration: may not mutate atomic arrays, maps or
  structs: .spec.x`); it is merged into the object by server-side apply's
  merge rules (`runtime.machinery.patch.server_side_apply`, forced, the
  object's managed fields kept as they were: a policy owns nothing, as
  kube's);
- `JSONPatch`: the expression builds a list of `JSONPatch{op, path, from,
  value}`, applied as RFC 6902 (`runtime.machinery.patch.apply_json_patch`);
  a failing `test` operation leaves the object unchanged, any other failure
  is `JSONPath: <why>`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runtime.machinery.patch import PatchError, apply_json_patch, server_side_apply
from runtime.machinery.patch.schema import ListNode, MapNode, Node, Struct, merge_node
from runtime.server.admission.matching import MatchConditions
from runtime.server.admission.policies.expressions import (
    Budget, Expression, ExpressionError, OutOfBudget, Scope, compile_cel,
)
from runtime.server.admission.policies.validator import cel_type_name
from runtime.server.admission.policies.values import (
    JSONPATCH_NAMESPACE, JSONPATCH_TYPE, OBJECT_TYPE, JSONPatchValue, ObjectValue, to_json, type_mismatches,
)

__all__ = ["CompiledMutating", "MutationError", "compile_mutating", "MUTATION_INPUTS", "atomic_paths"]

#: The names mutations see beside the request's variables: the `Object`, `JSONPatch` types and `jsonpatch`.
MUTATION_INPUTS = {"Object": OBJECT_TYPE, "JSONPatch": JSONPATCH_TYPE, "jsonpatch": JSONPATCH_NAMESPACE}
_MANAGER = "mutating-admission-policy"
_COMPILATION_PREFIX = "compilation error: "


class MutationError(Exception):
    """A mutation failed; `str()` is kube's text; `error_type` the metric's label."""

    def __init__(self, message: str, error_type: str = "invalid_error") -> None:
        super().__init__(message)
        self.error_type = error_type


@dataclass(frozen=True)
class _Mutation:
    patch_type: str
    expression: Expression


def atomic_paths(value: Any, node: Node, path: str = "") -> list[str]:
    """kube's findAtomics: the paths of `value` (an apply configuration) that set an atomic list, map or struct."""
    found: list[str] = []
    if isinstance(value, dict) and isinstance(node, (Struct, MapNode)):
        if node.atomic:
            found.append(path)
        for key, child in value.items():
            found += atomic_paths(child, node.child(key).node, f"{path}.{key}")
    elif isinstance(value, list) and isinstance(node, ListNode):
        if node.list_type == "atomic":
            found.append(path)
        for index, item in enumerate(value):
            found += atomic_paths(item, node.item, f"{path}[{index}]")
    return found


def _evaluate(scope: Scope, expression: Expression) -> Any:
    if expression.program is None:
        raise MutationError(expression.error.removeprefix(_COMPILATION_PREFIX), "compile_error")
    try:
        return scope.run(expression, Budget(scope.limits))
    except OutOfBudget as exc:
        raise MutationError(str(exc), "out_of_budget") from None
    except ExpressionError as exc:
        raise MutationError(str(exc)) from None


def _apply_configuration(value: Any, obj: dict[str, Any], merge_schema: Any) -> dict[str, Any]:
    if not isinstance(value, ObjectValue):
        raise MutationError(f"unsupported return type from ApplyConfiguration expression: {cel_type_name(value)}")
    mismatches = type_mismatches(value)
    if mismatches:
        raise MutationError("type mismatch: " + "\n".join(mismatches))
    try:
        config = to_json(value)
    except ValueError as exc:
        raise MutationError(f"invalid return type: {exc}") from None
    atomics = atomic_paths(config, merge_node(merge_schema))
    if atomics:
        raise MutationError("error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps "
                            "or structs: " + ", ".join(atomics))
    config["apiVersion"], config["kind"] = obj.get("apiVersion"), obj.get("kind")
    meta = obj.get("metadata") or {}
    try:
        merged = server_side_apply(obj, config, manager=_MANAGER, model=merge_schema, kind=obj.get("kind"),
                                   force=True, api_version=obj.get("apiVersion") or "", now="")
    except PatchError as exc:
        raise MutationError(f"error applying patch: failed to merge patch: {exc.message}") from None
    # The policy owns no field (kube tracks no ownership for it): the object's managed fields stay as they were.
    merged_meta = merged.setdefault("metadata", {})
    merged_meta.pop("managedFields", None)
    if "managedFields" in meta:
        merged_meta["managedFields"] = meta["managedFields"]
    return merged


def _json_patch(value: Any, obj: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(value, list):
        raise MutationError("type mismatch: JSONPatchType.expression should evaluate to array")
    operations = []
    for item in value:
        if not isinstance(item, JSONPatchValue):
            raise MutationError("type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch, "
                                f"got element of {cel_type_name(item)}")
        fields = {str(k): v for k, v in item.items()}  # celpy's MapType.get raises for a missing key
        operation: dict[str, Any] = {"op": str(fields.get("op", "")), "path": str(fields.get("path", ""))}
        if fields.get("from"):
            operation["from"] = str(fields["from"])
        if "value" in fields:
            mismatches = type_mismatches(fields["value"]) if isinstance(fields["value"], ObjectValue) else []
            if mismatches:
                raise MutationError("type mismatch: " + "\n".join(mismatches))
            try:
                operation["value"] = to_json(fields["value"])
            except ValueError as exc:
                raise MutationError("JSONPath valueExpression evaluated to a type that could not marshal to JSON: "
                                    f"{exc}") from None
        operations.append(operation)
    try:
        return apply_json_patch(obj, operations)
    except PatchError as exc:
        if exc.message.endswith("test failed"):
            return obj  # a failed test: the patch is not applied, and that is no error
        raise MutationError(f"JSONPath: {exc.message}") from None


@dataclass(frozen=True)
class CompiledMutating:
    """A policy's expressions, compiled (see the module doc)."""

    failure_policy: str
    reinvocation_policy: str
    mutations: tuple[_Mutation, ...]
    variables: dict[str, Expression]
    match_conditions: MatchConditions | None

    def mutation(self, index: int, scope: Scope, obj: dict[str, Any], merge_schema: Any) -> dict[str, Any]:
        """`obj` after mutation `index`. Raises MutationError."""
        mutation = self.mutations[index]
        value = _evaluate(scope, mutation.expression)
        if mutation.patch_type == "JSONPatch":
            return _json_patch(value, obj)
        return _apply_configuration(value, obj, merge_schema)


def compile_mutating(policy: dict[str, Any]) -> CompiledMutating:
    """Compile a MutatingAdmissionPolicy's expressions (once per version: `source.PolicySource`)."""
    spec = policy.get("spec") or {}
    failure_policy = spec.get("failurePolicy") or "Fail"
    mutations = []
    for m in spec.get("mutations") or []:
        member = m.get("jsonPatch") if m.get("patchType") == "JSONPatch" else m.get("applyConfiguration")
        mutations.append(_Mutation(m.get("patchType") or "", compile_cel((member or {}).get("expression") or "")))
    variables = {v.get("name") or "": compile_cel(v.get("expression") or "") for v in spec.get("variables") or []}
    conditions = spec.get("matchConditions") or []
    return CompiledMutating(failure_policy, spec.get("reinvocationPolicy") or "Never", tuple(mutations), variables,
                            MatchConditions(conditions, failure_policy) if conditions else None)
