"""Core `ResourceQuota`: a namespace's limits on objects and resources (Kubernetes' `pkg/registry/core/resourcequota`).

- Validation (`ValidateResourceQuota`): the name is a DNS subdomain; each
  `spec.hard` (and `status.hard`, `status.used`) name is a quota resource
  (a standard one: `pods`, `requests.cpu`, `limits.memory`, `services`, ...,
  or a domain-prefixed one: `count/deployments.apps`,
  `requests.example.com/gpu`; "must be a standard resource for quota") with
  a non-negative quantity, whole for counted resources (path
  `spec.hard[pods]`); `scopes` are Terminating, NotTerminating, BestEffort,
  NotBestEffort, PriorityClass or CrossNamespacePodAffinity, each valid for
  every standard resource in `hard` ("unsupported scope applied to
  resource"), no conflicting pair; `scopeSelector` expressions likewise, with
  their operator rules ("must be 'Exist' when scope is any of ...").
- Update (`ValidateResourceQuotaUpdate`): `spec.scopes` may not change.
- A create starts with an empty status (the quota controller fills it);
  `status` subresource; a PUT of a missing quota is 404.
- `kubectl get`: NAME AGE REQUEST LIMIT (printResourceQuota: `used/hard` of
  each resource of the status, `limits.*` in LIMIT, the rest in REQUEST).
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import invalid, required
from runtime.machinery.validation.gofmt import GoText, go_quote
from runtime.server.kinds.cluster.resources import (
    is_standard_quota_resource, quantity, quantity_value_errors, quota_resource_name_errors,
)
from runtime.server.kinds.cluster.stored import ClusterStrategy
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column
from runtime.server.kinds.subresources import StatusSubresource

__all__ = ["ResourceQuotaStrategy", "QUOTA_SCOPES"]

QUOTA_SCOPES = ("Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass",
                "CrossNamespacePodAffinity")
_POD_COUNT = frozenset(("pods",))
_POD_COMPUTE = frozenset(("cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory"))
_CONFLICTS = (("BestEffort", "NotBestEffort"), ("NotTerminating", "Terminating"))
_EXISTS_ONLY = ("BestEffort", "NotBestEffort", "Terminating", "NotTerminating", "CrossNamespacePodAffinity")
_EXISTS_MSG = ("must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, "
               "ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or "
               "ResourceQuotaScopeCrossNamespacePodAffinity")


def _scope_fits(scope: str, resource: str) -> bool:
    """`helper.IsResourceQuotaScopeValidForResource`."""
    if scope == "BestEffort":
        return resource in _POD_COUNT
    if scope in QUOTA_SCOPES:
        return resource in _POD_COUNT or resource in _POD_COMPUTE
    return True


def _go_strings(values: list[str] | None, type_name: str) -> GoText:
    if values is None:
        return GoText(f"[]{type_name}(nil)")
    return GoText(f"[]{type_name}{{" + ", ".join(go_quote(v) for v in values) + "}")


def _go_selector(selector: dict[str, Any]) -> GoText:
    """A scope selector as Go's `%#v` prints a `core.ScopeSelector`."""
    items = ", ".join(
        f"core.ScopedResourceSelectorRequirement{{ScopeName:{go_quote(e.get('scopeName', ''))}, "
        f"Operator:{go_quote(e.get('operator', ''))}, Values:{_go_strings(e.get('values'), 'string')}}}"
        for e in selector.get("matchExpressions") or [])
    expressions = ("[]core.ScopedResourceSelectorRequirement{" + items + "}"
                   if selector.get("matchExpressions") is not None else "[]core.ScopedResourceSelectorRequirement(nil)")
    return GoText(f"core.ScopeSelector{{MatchExpressions:{expressions}}}")


def _hard_errors(resources: dict[str, str], path: str) -> list[FieldError]:
    return [e for name, value in sorted(resources.items())
            for e in quota_resource_name_errors(name, f"{path}[{name}]")
            + quantity_value_errors(name, value, f"{path}[{name}]")]


def _scope_errors(spec: dict[str, Any]) -> list[FieldError]:
    scopes = spec.get("scopes")
    if not scopes:
        return []
    hard = sorted(spec.get("hard") or {})
    shown = _go_strings(scopes, "core.ResourceQuotaScope")
    errs = []
    for scope in scopes:
        if scope not in QUOTA_SCOPES:
            errs.append(invalid("spec.scopes", shown, "unsupported scope"))
        errs += [invalid("spec.scopes", shown, "unsupported scope applied to resource")
                 for name in hard if is_standard_quota_resource(name) and not _scope_fits(scope, name)]
    errs += [invalid("spec.scopes", shown, "conflicting scopes") for pair in _CONFLICTS if set(pair) <= set(scopes)]
    return errs


def _selector_errors(spec: dict[str, Any]) -> list[FieldError]:
    selector = spec.get("scopeSelector")
    if selector is None:
        return []
    path = "spec.scopeSelector.matchExpressions"
    hard = sorted(spec.get("hard") or {})
    errs: list[FieldError] = []
    seen: set[str] = set()
    for expr in selector.get("matchExpressions") or []:
        scope, op, values = expr.get("scopeName", ""), expr.get("operator", ""), expr.get("values") or []
        if scope not in QUOTA_SCOPES:
            errs.append(invalid(f"{path}.scopeName", scope, "unsupported scope"))
        errs += [invalid(path, _go_selector(selector), "unsupported scope applied to resource")
                 for name in hard if is_standard_quota_resource(name) and not _scope_fits(scope, name)]
        if scope in _EXISTS_ONLY and op != "Exists":
            errs.append(invalid(f"{path}.operator", op, _EXISTS_MSG))
        if op in ("In", "NotIn"):
            if not values:
                errs.append(required(f"{path}.values", "must be at least one value when `operator` is 'In' or "
                                                       "'NotIn' for scope selector"))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                errs.append(invalid(f"{path}.values", values,
                                    "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
        else:
            errs.append(invalid(f"{path}.operator", op, "not a valid selector operator"))
        seen.add(scope)
    shown = _go_strings(spec.get("scopes"), "core.ResourceQuotaScope")  # Kubernetes shows `scopes` here
    return errs + [invalid(path, shown, "conflicting scopes") for pair in _CONFLICTS if set(pair) <= seen]


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta, status = obj["metadata"], obj.get("status") or {}
    hard, used = status.get("hard") or {}, status.get("used") or {}
    requests, limits = [], []
    for name in sorted(hard):
        shown = f"{name}: {quantity(used[name]) if name in used else 0}/{quantity(hard[name])}"
        (limits if name.split(".")[0] == "limits" and "." in name else requests).append(shown)
    return [meta.get("name", ""), age(meta.get("creationTimestamp")), ", ".join(requests), ", ".join(limits)]


_COLUMNS = Columns((
    NAME_COLUMN,
    AGE_COLUMN,
    column("Request", "Request represents a minimum amount of cpu/memory that a container may consume."),
    column("Limit", "Limits control the maximum amount of cpu/memory that a container may use independent of "
                    "contention on the node."),
), _cells)


class ResourceQuotaStrategy(ClusterStrategy):
    """See the module doc."""

    name_rule = "dns-subdomain"
    allow_create_on_update = False
    subresources = {"status": StatusSubresource()}
    resource_maps = ("spec.hard", "status.hard", "status.used")
    initial_status: dict[str, Any] = {}
    columns = _COLUMNS

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        errs = _hard_errors(spec.get("hard") or {}, "spec.hard")
        errs += _scope_errors(spec) + _selector_errors(spec)
        errs += _hard_errors(status.get("hard") or {}, "status.hard")
        return errs + _hard_errors(status.get("used") or {}, "status.used")

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        errs = self.validate(new)
        scopes = (new.get("spec") or {}).get("scopes")
        if set(scopes or ()) != set((old.get("spec") or {}).get("scopes") or ()):
            errs.append(invalid("spec.scopes", _go_strings(scopes, "core.ResourceQuotaScope"), "field is immutable"))
        return errs
