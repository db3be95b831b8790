"""Per-kind rules (Kubernetes' pkg/apis/rbac/validation, core namespace, authorization reviews)."""

from __future__ import annotations

from typing import Any, Callable

from runtime.validation.fielderrors import FieldError, forbidden, invalid, not_supported, required
from runtime.validation.names import (
    is_dns1123_subdomain, path_segment_errors, validate_object_meta,
    DNS1123_SUBDOMAIN_MSG,
)

__all__ = ["validate_object", "validate_update", "validate_policy_rules"]


def validate_policy_rules(rules: list[dict[str, Any]] | None, *, namespaced: bool,
                          path: str = "rules") -> list[FieldError]:
    errs: list[FieldError] = []
    for i, rule in enumerate(rules or []):
        at = f"{path}[{i}]"
        if not rule.get("verbs"):
            errs.append(required(f"{at}.verbs", "verbs must contain at least one value"))
        urls = rule.get("nonResourceURLs") or []
        if urls:
            if namespaced:
                errs.append(invalid(f"{at}.nonResourceURLs", urls,
                                    "namespaced rules cannot apply to non-resource URLs"))
            if rule.get("apiGroups") or rule.get("resources"):
                errs.append(invalid(f"{at}.nonResourceURLs", urls,
                                    "rules cannot apply to both regular resources and non-resource URLs"))
            for j, url in enumerate(urls):
                # `*` is a prefix match only as the whole last segment (`/apis/*`) or alone.
                if "*" in url and url != "*" and not (url.endswith("/*") and url.count("*") == 1):
                    errs.append(invalid(f"{at}.nonResourceURLs[{j}]", url,
                                        "'*' is allowed only as the whole last segment"))
            continue
        if not rule.get("apiGroups"):
            errs.append(required(f"{at}.apiGroups", "resource rules must supply at least one api group"))
        if not rule.get("resources"):
            errs.append(required(f"{at}.resources", "resource rules must supply at least one resource"))
    return errs


def _validate_role(obj: dict, ctx: "Context") -> list[FieldError]:
    return validate_policy_rules(obj.get("rules"), namespaced=ctx.namespaced)


def _validate_cluster_role(obj: dict, ctx: "Context") -> list[FieldError]:
    errs = validate_policy_rules(obj.get("rules"), namespaced=False)
    agg = obj.get("aggregationRule")
    if agg is not None:
        selectors = agg.get("clusterRoleSelectors") or []
        if not selectors:
            errs.append(required("aggregationRule.clusterRoleSelectors",
                                 "at least one clusterRoleSelector required if aggregationRule is non-nil"))
        for i, sel in enumerate(selectors):
            errs.extend(_label_selector_errors(sel, f"aggregationRule.clusterRoleSelectors[{i}]"))
    return errs


def _label_selector_errors(sel: dict, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, expr in enumerate(sel.get("matchExpressions") or []):
        at = f"{path}.matchExpressions[{i}]"
        op = expr.get("operator")
        values = expr.get("values") or []
        if op in ("In", "NotIn"):
            if not values:
                errs.append(required(f"{at}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                errs.append(forbidden(f"{at}.values",
                                      "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        else:
            errs.append(invalid(f"{at}.operator", op, "not a valid selector operator"))
    return errs


def _validate_binding(obj: dict, ctx: "Context") -> list[FieldError]:
    errs: list[FieldError] = []
    ref = obj.get("roleRef") or {}
    if not ref:
        errs.append(required("roleRef"))
    else:
        if ref.get("apiGroup") != ctx.rbac_group:
            errs.append(not_supported("roleRef.apiGroup", ref.get("apiGroup", ""), [ctx.rbac_group]))
        kinds = ["Role", "ClusterRole"] if ctx.namespaced else ["ClusterRole"]
        if ref.get("kind") not in kinds:
            errs.append(not_supported("roleRef.kind", ref.get("kind", ""), kinds))
        name = ref.get("name") or ""
        if not name:
            errs.append(required("roleRef.name"))
        else:
            errs.extend(invalid("roleRef.name", name, p) for p in path_segment_errors(name))
    for i, subject in enumerate(obj.get("subjects") or []):
        errs.extend(_subject_errors(subject, f"subjects[{i}]", ctx))
    return errs


def _subject_errors(subject: dict, at: str, ctx: "Context") -> list[FieldError]:
    errs: list[FieldError] = []
    name = subject.get("name") or ""
    if not name:
        errs.append(required(f"{at}.name"))
    kind = subject.get("kind") or ""
    group = subject.get("apiGroup", "")
    if kind == "ServiceAccount":
        if name and not is_dns1123_subdomain(name):
            errs.append(invalid(f"{at}.name", name, DNS1123_SUBDOMAIN_MSG))
        if group != "":
            errs.append(not_supported(f"{at}.apiGroup", group, [""]))
        if not ctx.namespaced and not subject.get("namespace"):
            errs.append(required(f"{at}.namespace"))
    elif kind in ("User", "Group"):
        if group != ctx.rbac_group:
            errs.append(not_supported(f"{at}.apiGroup", group, [ctx.rbac_group]))
    else:
        errs.append(not_supported(f"{at}.kind", kind, ["ServiceAccount", "User", "Group"]))
    return errs


def _validate_namespace(obj: dict, ctx: "Context") -> list[FieldError]:
    errs: list[FieldError] = []
    for i, fin in enumerate((obj.get("spec") or {}).get("finalizers") or []):
        if "/" not in fin and fin != "kubernetes":
            errs.append(invalid(f"spec.finalizers[{i}]", fin,
                                "name is neither a standard finalizer name nor is it fully qualified"))
    return errs


def _validate_lease(obj: dict, ctx: "Context") -> list[FieldError]:
    """coordination/v1 Lease (Kubernetes' pkg/apis/coordination/validation)."""
    errs: list[FieldError] = []
    spec = obj.get("spec") or {}
    duration = spec.get("leaseDurationSeconds")
    if duration is not None and duration <= 0:
        errs.append(invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if transitions is not None and transitions < 0:
        errs.append(invalid("spec.leaseTransitions", transitions, "must be greater than or equal to 0"))
    return errs


class Context:
    """What rules need beyond the object: scope and the rbac group name of the domain."""

    def __init__(self, *, namespaced: bool, rbac_group: str) -> None:
        self.namespaced = namespaced
        self.rbac_group = rbac_group


_RULES: dict[str, Callable[[dict, Context], list[FieldError]]] = {
    "ClusterRole": _validate_cluster_role,
    "Role": _validate_role,
    "ClusterRoleBinding": _validate_binding,
    "RoleBinding": _validate_binding,
    "Namespace": _validate_namespace,
    "Lease": _validate_lease,
}

_NAME_RULE = {"Namespace": "dns-label", "Lease": "dns-subdomain"}


def validate_object(kind: str, obj: dict, *, namespaced: bool, rbac_group: str) -> list[FieldError]:
    """Every rule for a stored kind on create (metadata first, then the kind's own)."""
    ctx = Context(namespaced=namespaced, rbac_group=rbac_group)
    errs = validate_object_meta(obj.get("metadata") or {}, namespaced=namespaced,
                                name_rule=_NAME_RULE.get(kind, "path-segment"))
    rule = _RULES.get(kind)
    if rule is not None:
        errs.extend(rule(obj, ctx))
    return errs


def validate_update(kind: str, new: dict, old: dict, *, namespaced: bool, rbac_group: str) -> list[FieldError]:
    """Create rules plus the immutable ones: uid, creationTimestamp, roleRef; a Namespace's phase."""
    errs = validate_object(kind, new, namespaced=namespaced, rbac_group=rbac_group)
    if kind in ("RoleBinding", "ClusterRoleBinding") and new.get("roleRef") != old.get("roleRef"):
        errs.append(invalid("roleRef", new.get("roleRef"), "cannot change roleRef"))
    if kind == "Namespace" and new.get("status") != old.get("status"):
        errs.extend(_namespace_phase_errors(new))
    return errs


def _namespace_phase_errors(ns: dict) -> list[FieldError]:
    """Kubernetes' ValidateNamespaceStatusUpdate: the phase follows deletionTimestamp.

    The path is written `status.Phase`, as Kubernetes writes it.
    """
    phase = (ns.get("status") or {}).get("phase", "")
    if not (ns.get("metadata") or {}).get("deletionTimestamp"):
        if phase != "Active":
            return [invalid("status.Phase", phase, "may only be 'Active' if `deletionTimestamp` is empty")]
    elif phase != "Terminating":
        return [invalid("status.Phase", phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")]
    return []
