"""Which admission hooks a request matches, as kube-apiserver decides: the request's facts, rules,
namespace and object selectors, `matchPolicy: Equivalent` and CEL `matchConditions`.

Shared by the webhooks (`runtime.server.admission.webhooks`) and the CEL
policies (`runtime.server.admission.policies`), as Kubernetes'
`admission/plugin/webhook/predicates/{rules,namespace,object}`,
`plugin/policy/generic/matching` and `plugin/webhook/matchconditions` are.

- `RequestFacts.of(request)`: what a rule sees of an `AdmissionRequest`
  (group, version, resource, subresource, the kind of the object written:
  a subresource's own kind, autoscaling/v1 Scale for deployments/scale;
  namespace, name, operation in kube's words CREATE, UPDATE, DELETE).
  `exempt` is kube's `IsExemptAdmissionConfigurationResource`: the
  admissionregistration kinds themselves are never sent to a hook.
- `rule_matches(rule, facts)`: a RuleWithOperations or
  NamedRuleWithOperations (`resourceNames`) as `rules.Matcher`.
- `namespace_selector_matches` / `object_selector_matches`: kube's
  `MatchNamespaceSelector` (a cluster-scoped object other than a Namespace
  always matches; a Namespace is matched by its own labels; labels read
  from the watch cache, then the store; a missing namespace is kube's 404)
  and `MatchObjectSelector` (the new or the old object's labels).
- `equivalent(facts, rules, context, match_policy)`: the first rule the
  request matches exactly, else (matchPolicy Equivalent) the first rule one
  of the resource's other versions matches (the kinds of one storage in
  this scheme: HorizontalPodAutoscaler autoscaling/v2 and v1, a CRD's
  versions), as kube's `ShouldCallHook`; a `Match` says the version the hook
  sees, and `present` shows an object in it.
- `MatchConditions(conditions, failure_policy)`: compiled once per
  expression; `evaluate(variables)` as kube's `matchconditions.Match`: any
  false skips, all true matches, errors are the failure policy's (Ignore:
  skip; Fail: the error, in kube's words). `cel_variables(match, request)`
  is what kube's CEL sees: `object`, `oldObject`, `request`.

The `authorizer` variable is not in `cel_variables` (this module decides
nothing); a caller passes it, with its library, in `evaluate(variables,
functions)`, as webhooks (`webhooks.calls`) and policies do. Caveats: `present` converts through the kind's
`VersionConverter` (stored version to the served one); an object sent in a
version the converter does not read is shown as sent.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from celpy import celtypes
from runtime.machinery import errors
from runtime.machinery.scheme import ResourceType
from runtime.machinery.selectors import SelectorError, label_selector_from_dict
from runtime.machinery.storedobject import StoredObject, copy_json
from runtime.models.catalog import ADMISSION_KINDS
from runtime.server.kinds.subresources import ViewSubresource
from runtime.server.schema.cel.program import (
    CELCompileError, CELEvaluationError, CostExceeded, Meter, Program, compile_expression,
)
from runtime.server.schema.cel.rules import RUNTIME_CEL_COST_BUDGET, to_cel

if TYPE_CHECKING:
    from runtime.server.admission.context import AdmissionContext
    from runtime.server.kinds import AdmissionRequest

__all__ = ["RequestFacts", "Match", "MatchResult", "MatchConditions", "rule_matches", "namespace_selector_matches",
           "object_selector_matches", "equivalent", "cel_variables", "admission_request", "user_info", "options_of",
           "subresource_kind", "internal_error", "OPERATIONS"]

#: The registry's operation names in kube's (admission.Operation).
OPERATIONS = {"create": "CREATE", "update": "UPDATE", "delete": "DELETE", "connect": "CONNECT"}

GVR = tuple[str, str, str]
GVK = tuple[str, str, str]


@dataclass(frozen=True)
class RequestFacts:
    """What admission matching sees of a request (kube's admission.Attributes)."""

    group: str
    version: str
    resource: str
    subresource: str
    #: (group, version, kind) of the object written (a subresource's own kind).
    kind: GVK
    namespace: str
    name: str
    operation: str
    namespaced: bool
    #: The request is for a Namespace object itself (kube compares the resource with core/v1 namespaces).
    is_namespace: bool
    #: The admissionregistration kinds are exempt from admission hooks.
    exempt: bool
    rt: ResourceType

    @classmethod
    def of(cls, request: "AdmissionRequest") -> "RequestFacts":
        rt = request.resource
        is_namespace = bool(rt.strategy.namespace_kind)
        name = request.name
        namespace = request.namespace
        if is_namespace and request.operation != "create":
            # kube's RequestInfo reads /namespaces/{name} as the request's namespace.
            namespace = name
        kind = request.kind if request.kind is not None else subresource_kind(rt, request.subresource)
        return cls(rt.group, rt.version, rt.plural, request.subresource, tuple(kind), namespace, name,
                   OPERATIONS.get(request.operation, request.operation.upper()), rt.namespaced, is_namespace,
                   rt.info in ADMISSION_KINDS, rt)

    @property
    def gvr(self) -> GVR:
        return (self.group, self.version, self.resource)


def subresource_kind(rt: ResourceType, subresource: str) -> GVK:
    """The kind a write of `subresource` of `rt` carries: a view's or action's own kind, else the object's."""
    if subresource:
        kind = getattr(rt.strategy.subresources.get(subresource), "kind", None)
        if kind is not None:
            return tuple(kind)  # type: ignore[return-value]
    return (rt.group, rt.version, rt.kind)


def internal_error(detail: str) -> errors.InternalError:
    """kube's `apierrors.NewInternalError`: 500, `Internal error occurred: <detail>`, the detail its cause."""
    return errors.InternalError(f"Internal error occurred: {detail}", causes=[errors.Cause("", detail)])


def _exact_or_wildcard(items: Sequence[str] | None, requested: str) -> bool:
    return any(item == "*" or item == requested for item in items or ())


def _scope_matches(scope: str | None, facts: RequestFacts) -> bool:
    if scope is None or scope == "*":
        return True
    if scope == "Namespaced":
        # A Namespace is cluster-scoped, whatever namespace its request names.
        return not facts.is_namespace and facts.namespace != ""
    if scope == "Cluster":
        return facts.is_namespace or facts.namespace == ""
    return False


def _resource_matches(resources: Sequence[str] | None, facts: RequestFacts) -> bool:
    for entry in resources or ():
        res, _, sub = entry.partition("/")
        if (res == "*" or res == facts.resource) and (sub == "*" or sub == facts.subresource):
            return True
    return False


def rule_matches(rule: Mapping[str, Any], facts: RequestFacts, *, names: bool = True) -> bool:
    """Whether `rule` (RuleWithOperations; NamedRuleWithOperations: `resourceNames` checked when `names`)
    matches the request: scope, operations, apiGroups, apiVersions, resources ("*", "*/*", "pods/status",
    "*/status"), as kube's `rules.Matcher`."""
    ok = (_scope_matches(rule.get("scope"), facts)
          and _exact_or_wildcard(rule.get("operations"), facts.operation)
          and _exact_or_wildcard(rule.get("apiGroups"), facts.group)
          and _exact_or_wildcard(rule.get("apiVersions"), facts.version)
          and _resource_matches(rule.get("resources"), facts))
    if ok and names and rule.get("resourceNames"):
        return facts.name in rule["resourceNames"]
    return ok


def _selector(selector: Mapping[str, Any] | None) -> Any:
    """A LabelSelector parsed; an unparsable one is kube's InternalError (a nil selector: everything)."""
    try:
        return label_selector_from_dict(selector if selector is not None else {})
    except SelectorError as exc:
        raise internal_error(str(exc)) from None


def _labels(obj: Mapping[str, Any] | None) -> dict[str, str] | None:
    return ((obj or {}).get("metadata") or {}).get("labels")


async def namespace_selector_matches(selector: Mapping[str, Any] | None, facts: RequestFacts,
                                     request: "AdmissionRequest", context: "AdmissionContext") -> bool:
    """kube's `MatchNamespaceSelector`. Raises NotFound (404) for a namespace that does not exist,
    InternalError for a selector that does not parse."""
    if not facts.namespace and not facts.is_namespace:
        return True  # a cluster-scoped object is never exempted
    parsed = _selector(selector)
    if parsed.empty:
        return True
    if facts.is_namespace and not facts.subresource and facts.operation in ("CREATE", "UPDATE"):
        # The cache does not hold the namespace being written yet: its own labels.
        return parsed.matches(_labels(request.obj))
    ns_rt = context.scheme.namespace_type
    key = ns_rt.storage_key(None, facts.namespace)
    found = context.kind_cache(ns_rt).get(key)
    if found is None:
        found = await context.read_current(ns_rt, key, facts.namespace)  # the cache may lag
    if found is None:
        raise errors.NotFound(f'namespaces "{facts.namespace}" not found', name=facts.namespace, kind="namespaces")
    return parsed.matches(_labels(found.obj))


def object_selector_matches(selector: Mapping[str, Any] | None, request: "AdmissionRequest") -> bool:
    """kube's `MatchObjectSelector`: the new or the old object's labels (a delete has only the old)."""
    parsed = _selector(selector)
    if parsed.empty:
        return True
    new = None if request.operation == "delete" else request.obj
    return any(obj is not None and parsed.matches(_labels(obj)) for obj in (new, request.old))


@dataclass(frozen=True)
class Match:
    """The version a hook sees a request in: its own, or an equivalent one (matchPolicy Equivalent)."""

    facts: RequestFacts
    rt: ResourceType
    resource: GVR
    kind: GVK

    @property
    def equivalent(self) -> bool:
        return self.rt is not self.facts.rt

    def present(self, obj: dict[str, Any] | None) -> dict[str, Any] | None:
        """`obj` as this version shows it (through the kind's `VersionConverter`); for a subresource that is
        another kind's view (deployments/scale), that view (kube's admission sees the Scale)."""
        if obj is None:
            return None
        if self.facts.subresource and self.kind != (self.rt.group, self.rt.version, self.rt.kind):
            sub = self.rt.strategy.subresources.get(self.facts.subresource)
            is_view = isinstance(sub, ViewSubresource) and obj.get("kind") == self.rt.kind
            return sub.view(copy_json(obj)) if is_view else obj
        if obj.get("apiVersion") == self.rt.api_version or not self.rt.strategy.converts:
            return obj
        return self.rt.strategy.present(StoredObject("", obj, 0)).obj


def _versions_of(rt: ResourceType, context: "AdmissionContext") -> list[ResourceType]:
    """The kinds served from `rt`'s storage (kube's EquivalentResourcesFor), in the scheme's order."""
    return [t for t in context.scheme.types if not t.virtual and t.storage_prefix == rt.storage_prefix]


def equivalent(facts: RequestFacts, rules: Sequence[Mapping[str, Any]], context: "AdmissionContext",
               match_policy: str | None) -> Match | None:
    """The version `rules` match the request in (None: no rule matches), exact first (see the module doc).

    Raises InternalError when the matched version lacks the request's subresource (kube's `unable to
    convert to ...: unknown kind`).
    """
    if any(rule_matches(rule, facts) for rule in rules):
        return Match(facts, facts.rt, facts.gvr, facts.kind)
    if match_policy != "Equivalent":
        return None
    others = [t for t in _versions_of(facts.rt, context) if t is not facts.rt]
    for rule in rules:
        for other in others:
            moved = replace(facts, group=other.group, version=other.version, resource=other.plural)
            if not rule_matches(rule, moved, names=False):
                continue
            if facts.subresource and facts.subresource not in dict(other.info.subresources):
                raise internal_error(f"unable to convert to {other.group}/{other.version}, "
                                     f"Resource={other.plural}: unknown kind")
            return Match(facts, other, moved.gvr, subresource_kind(other, facts.subresource))
    return None


def _gvk(gvk: GVK) -> dict[str, str]:
    return {"group": gvk[0], "version": gvk[1], "kind": gvk[2]}


def _gvr(gvr: GVR) -> dict[str, str]:
    return {"group": gvr[0], "version": gvr[1], "resource": gvr[2]}


def user_info(request: "AdmissionRequest") -> dict[str, Any]:
    """The request's user as authentication/v1 UserInfo (empty fields omitted, as Go's omitempty)."""
    user = request.user
    out: dict[str, Any] = {"username": user.name}
    if user.uid:
        out["uid"] = user.uid
    if user.groups:
        out["groups"] = list(user.groups)
    if user.extra:
        out["extra"] = {k: list(v) for k, v in user.extra.items()}
    return out


def options_of(request: "AdmissionRequest") -> dict[str, Any] | None:
    """The write's options as kube's admission attributes carry them (meta.k8s.io/v1 CreateOptions,
    UpdateOptions, DeleteOptions)."""
    opts = request.options
    if opts is None:
        return None
    kind = {"create": "CreateOptions", "update": "UpdateOptions", "delete": "DeleteOptions"}.get(request.operation)
    if kind is None:
        return None
    out: dict[str, Any] = {"kind": kind, "apiVersion": "meta.k8s.io/v1"}
    if request.dry_run:
        out["dryRun"] = ["All"]
    if kind == "DeleteOptions":
        for name, attr in (("gracePeriodSeconds", "grace_period_seconds"), ("propagationPolicy", "propagation_policy"),
                           ("preconditions", "preconditions"), ("orphanDependents", "orphan_dependents")):
            value = getattr(opts, attr, None)
            if value is not None:
                out[name] = value
        return out
    manager = getattr(opts, "field_manager", None)
    if manager:
        out["fieldManager"] = manager
    validation = getattr(opts, "field_validation", None)
    if validation:
        out["fieldValidation"] = validation
    return out


def admission_request(match: Match, request: "AdmissionRequest") -> dict[str, Any]:
    """The admission/v1 AdmissionRequest kube builds for a hook (without uid, object, oldObject: kube's
    `CreateAdmissionRequest`, what CEL's `request` is; a webhook's review adds them)."""
    facts = match.facts
    out: dict[str, Any] = {
        "kind": _gvk(match.kind), "resource": _gvr(match.resource),
        "requestKind": _gvk(facts.kind), "requestResource": _gvr(facts.gvr),
        "name": facts.name, "namespace": facts.namespace, "operation": facts.operation,
        "userInfo": user_info(request), "dryRun": bool(request.dry_run),
    }
    if facts.subresource:
        out["subResource"] = out["requestSubResource"] = facts.subresource
    if not facts.name:
        del out["name"]
    if not facts.namespace:
        del out["namespace"]
    options = options_of(request)
    if options is not None:
        out["options"] = options
    return out


def cel_variables(match: Match, request: "AdmissionRequest") -> dict[str, Any]:
    """`object`, `oldObject` and `request` as kube's admission CEL sees them (null object on DELETE, null
    oldObject on CREATE), in the matched version."""
    obj = None if request.operation == "delete" else match.present(request.obj)
    return {"object": to_cel(obj, None), "oldObject": to_cel(match.present(request.old), None),
            "request": to_cel(admission_request(match, request), None)}


@dataclass(frozen=True)
class MatchResult:
    """`matches`; `error` (kube's words) when a condition failed under failurePolicy Fail; the first false
    condition's name."""

    matches: bool
    error: str = ""
    failed_condition: str = ""


_COMPILED: dict[str, Program | CELCompileError] = {}
_OUT_OF_BUDGET = "validation failed due to running out of cost budget, no further validation rules will be run"


def _compiled(expression: str) -> Program | CELCompileError:
    found = _COMPILED.get(expression)
    if found is None:
        try:
            found = compile_expression(expression)
        except CELCompileError as exc:
            found = exc
        if len(_COMPILED) < 10_000:  # a bound: expressions come from objects users write
            _COMPILED[expression] = found
    return found


class MatchConditions:
    """A hook's `matchConditions`, each compiled once (see the module doc)."""

    def __init__(self, conditions: Sequence[Mapping[str, Any]], failure_policy: str | None,
                 budget: int = RUNTIME_CEL_COST_BUDGET) -> None:
        self.conditions = [(c.get("name", ""), c.get("expression", ""), _compiled(c.get("expression", "")))
                           for c in conditions]
        self.fail_open = failure_policy == "Ignore"
        self.budget = budget

    def __bool__(self) -> bool:
        return bool(self.conditions)

    def evaluate(self, variables: Mapping[str, Any], functions: Mapping[str, Any] | None = None) -> MatchResult:
        """kube's `matcher.Match` over CEL `variables` (`cel_variables`, and `authorizer` if the caller has it,
        with its library in `functions`)."""
        meter = Meter(self.budget)
        failures: list[str] = []
        for name, expression, program in self.conditions:
            if isinstance(program, CELCompileError):
                failures.append(f"compilation error: {program}")
                continue
            try:
                value = program.evaluate(variables, meter, functions)
            except CostExceeded:
                return self._failed([_OUT_OF_BUDGET])
            except CELEvaluationError as exc:
                failures.append(f"expression '{expression}' resulted in error: {exc}")
                continue
            if not isinstance(value, celtypes.BoolType):
                # kube's compiler refuses a non-bool condition; here it shows when evaluated.
                failures.append(f"expression '{expression}' resulted in error: no such overload")
            elif not value:
                return MatchResult(False, failed_condition=name)
        return self._failed(failures) if failures else MatchResult(True)

    def _failed(self, failures: list[str]) -> MatchResult:
        if self.fail_open:
            return MatchResult(False)
        # utilerrors.NewAggregate: one error is itself, several are bracketed.
        return MatchResult(False, error=failures[0] if len(failures) == 1 else "[" + ", ".join(failures) + "]")
