"""The RBAC kinds: Role, ClusterRole, RoleBinding, ClusterRoleBinding (Kubernetes' `pkg/registry/rbac`).

- Validation (`pkg/apis/rbac/validation`): rules need verbs, and apiGroups
  with resources unless they name non-resource URLs (which namespaced rules
  cannot); an aggregationRule needs selectors; a binding's roleRef is in the
  RBAC group, a Role or ClusterRole (only ClusterRole for a
  ClusterRoleBinding), and never changes; subjects are User, Group (RBAC
  group) or ServiceAccount (core group, with a namespace in a
  ClusterRoleBinding).
- Defaulting: a subject's empty apiGroup is the RBAC group for User and
  Group, "" for ServiceAccount; a roleRef's empty apiGroup the RBAC group.
- Admission: escalation prevention (Kubernetes' policy-based RBAC storage),
  on create and update; members of `system:masters` skip it, and so does an
  update that changes only what garbage collection changes (ownerReferences,
  finalizers; Kubernetes' `IsOnlyMutatingGCFields`). A label change is
  checked: it can pull a ClusterRole into an aggregated one.

  - Role / ClusterRole: allowed with `escalate` on roles/clusterroles (this
    name, this namespace); else the caller must already hold every rule in it;
    a ClusterRole with an `aggregationRule` also needs full authority (`*` on
    `*.*` and on every non-resource URL).
  - RoleBinding / ClusterRoleBinding: allowed with `bind` on the referenced
    role; else the roleRef must resolve and the caller must hold every rule
    of the referenced role, in the binding's namespace.

  A refusal is 403 Forbidden, `<resource>.<group> "<name>" is forbidden: user
  "u" (groups=[...]) is attempting to grant RBAC permissions not currently
  held:` followed by the missing rules, one per line.
- The rules of an aggregated ClusterRole belong to the aggregation
  controller: other writers that change them get a Warning.
- Every RBAC object feeds the authorizer's index.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery import errors
from runtime.server.kinds.base import AdmissionRequest, PolicyContext, Strategy
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column
from runtime.server.kinds.subresources import Subresource
from runtime.server.rbac import (
    AGGREGATION_RULE_FORBIDDEN, FULL_AUTHORITY_RULES, bind_attributes, confirm_no_escalation,
    escalate_attributes, escalation_allowed,
)
from runtime.machinery.validation import FieldError, is_dns1123_subdomain, label_selector_errors
from runtime.machinery.validation.fielderrors import invalid, not_supported, required
from runtime.machinery.validation.gofmt import GoText, go_quote
from runtime.machinery.validation.names import DNS1123_SUBDOMAIN_MSG, path_segment_errors
from runtime.machinery.wellknown import AGGREGATION_MANAGER

__all__ = ["RoleStrategy", "ClusterRoleStrategy", "RoleBindingStrategy", "ClusterRoleBindingStrategy",
           "AGGREGATION_MANAGER", "validate_policy_rules"]

#: Metadata a garbage collector writes, or the server sets: changing only these is not an escalation.
_GC_OR_SERVER_FIELDS = ("ownerReferences", "finalizers", "selfLink", "managedFields", "resourceVersion",
                        "generation")


def validate_policy_rules(rules: list[dict[str, Any]] | None, *, namespaced: bool,
                          path: str = "rules") -> list[FieldError]:
    """Kubernetes' ValidatePolicyRule for each rule of a Role or ClusterRole."""
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
            if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
                errs.append(invalid(f"{at}.nonResourceURLs", urls,
                                    "rules cannot apply to both regular resources and non-resource URLs"))
            continue
        if not rule.get("apiGroups"):
            errs.append(required(f"{at}.apiGroups", "resource rules must supply at least one api group"))
        if not rule.get("resources"):
            errs.append(required(f"{at}.resources", "resource rules must supply at least one resource"))
    return errs


def _only_gc_fields_change(new: dict[str, Any], old: dict[str, Any]) -> bool:
    def strip(obj: dict[str, Any]) -> dict[str, Any]:
        meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _GC_OR_SERVER_FIELDS}
        return dict(obj, metadata=meta)
    return strip(new) == strip(old)


class _RBACStrategy(Strategy):
    """What the four RBAC kinds share: the authorizer follows them, and writes are checked for escalation."""

    feeds_authorizer = True

    async def admit(self, policy: PolicyContext, request: AdmissionRequest) -> None:
        if request.operation not in ("create", "update") or escalation_allowed(request.user):
            return
        if request.old is not None and _only_gc_fields_change(request.obj, request.old):
            return
        self.check_escalation(policy, request)

    def check_escalation(self, policy: PolicyContext, request: AdmissionRequest) -> None:
        """Raise Forbidden when the write would grant the caller more than it holds."""

    def forbid(self, name: str, message: str) -> errors.Forbidden:
        rt = self.rt
        return errors.Forbidden(f'{rt.group_resource} "{name}" is forbidden: {message}', name=name,
                                group=rt.group, kind=rt.plural)

    def scope_of(self, obj: dict[str, Any]) -> tuple[str, str]:
        meta = obj["metadata"]
        return meta.get("name", ""), meta.get("namespace", "") if self.rt.namespaced else ""


class RoleStrategy(_RBACStrategy):
    """Role: namespaced rules."""

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        return validate_policy_rules(obj.get("rules"), namespaced=self.rt.namespaced)

    def check_escalation(self, policy: PolicyContext, request: AdmissionRequest) -> None:
        obj, user, rt = request.obj, request.user, self.rt
        name, namespace = self.scope_of(obj)
        if policy.decide(escalate_attributes(user, api_group=rt.group, resource=rt.plural, namespace=namespace,
                                             name=name)).allowed:
            return
        message = confirm_no_escalation(user, namespace, obj.get("rules") or [], policy.rbac)
        if message:
            raise self.forbid(name, message)
        self.check_aggregation(policy, request, name)

    def check_aggregation(self, policy: PolicyContext, request: AdmissionRequest, name: str) -> None:
        """Roles have no aggregation rule."""


class ClusterRoleStrategy(RoleStrategy):
    """ClusterRole: cluster-wide rules, or rules aggregated from the ClusterRoles its selectors pick."""

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        errs = super().validate_spec(obj)
        agg = obj.get("aggregationRule")
        if agg is not None:
            selectors = agg.get("clusterRoleSelectors") or []
            if not selectors:
                errs.append(required("aggregationRule.clusterRoleSelectors",
                                     "at least one clusterRoleSelector required if aggregationRule is non-nil"))
            for i, sel in enumerate(selectors):
                at = f"aggregationRule.clusterRoleSelectors[{i}]"
                selector_errs = label_selector_errors(sel, at)
                errs.extend(selector_errs)
                if selector_errs:  # metav1.LabelSelectorAsSelector refuses it too
                    errs.append(invalid(at, None, "invalid label selector."))
        return errs

    def check_aggregation(self, policy: PolicyContext, request: AdmissionRequest, name: str) -> None:
        # An aggregationRule can gather anything, so it takes * on *.* (as Kubernetes).
        if request.obj.get("aggregationRule") is not None \
                and confirm_no_escalation(request.user, "", FULL_AUTHORITY_RULES, policy.rbac):
            raise self.forbid(name, AGGREGATION_RULE_FORBIDDEN)

    def warnings(self, old: dict[str, Any] | None, new: dict[str, Any], manager: str) -> list[str]:
        if not new.get("aggregationRule") or manager == AGGREGATION_MANAGER:
            return []
        if old is not None and (old.get("rules") or []) == (new.get("rules") or []):
            return []
        if old is None and not new.get("rules"):
            return []
        return [f"the rules of an aggregated ClusterRole are managed by the {AGGREGATION_MANAGER} "
                "and will be overwritten"]


def _subjects(obj: dict[str, Any], kind: str) -> str:
    names = []
    for s in obj.get("subjects") or []:
        if s.get("kind") == kind:
            names.append(f"{s.get('namespace', '')}/{s.get('name', '')}" if kind == "ServiceAccount"
                         else s.get("name", ""))
    return ", ".join(names)


def _binding_cells(obj: dict[str, Any]) -> list[Any]:
    ref = obj.get("roleRef") or {}
    meta = obj["metadata"]
    return [meta.get("name", ""), f"{ref.get('kind', '')}/{ref.get('name', '')}", age(meta.get("creationTimestamp")),
            _subjects(obj, "User"), _subjects(obj, "Group"), _subjects(obj, "ServiceAccount")]


def _binding_columns(role_ref_doc: str, what: str) -> Columns:
    return Columns((NAME_COLUMN, column("Role", role_ref_doc), AGE_COLUMN,
                    column("Users", f"Users in the {what}", priority=1),
                    column("Groups", f"Groups in the {what}", priority=1),
                    column("ServiceAccounts", f"ServiceAccounts in the {what}", priority=1)), _binding_cells)


class RoleBindingStrategy(_RBACStrategy):
    """RoleBinding: grants a Role or ClusterRole to subjects in one namespace."""

    #: The kinds its roleRef may name.
    role_kinds: tuple[str, ...] = ("Role", "ClusterRole")
    columns = _binding_columns("RoleRef can reference a Role in the current namespace or a ClusterRole in the "
                               "global namespace. If the RoleRef cannot be resolved, the Authorizer must return "
                               "an error.", "roleBinding")

    def default(self, obj: dict[str, Any]) -> None:
        self._default_subjects(obj)  # SetDefaults_Subject (and the roleRef's group)

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        super().prepare_for_create(obj)
        self._default_subjects(obj)

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any],
                           subresource: Subresource | None = None) -> None:
        super().prepare_for_update(new, old, subresource)
        self._default_subjects(new)

    def _default_subjects(self, obj: dict[str, Any]) -> None:
        rbac_group = self.scheme.rbac_group
        for subject in obj.get("subjects") or []:
            # Go's defaulting sees "" as unset (len == 0), so an explicit "" is defaulted too.
            if not subject.get("apiGroup") and subject.get("kind") in ("User", "Group", "ServiceAccount"):
                subject["apiGroup"] = "" if subject.get("kind") == "ServiceAccount" else rbac_group
        ref = obj.get("roleRef")
        if ref is not None and not ref.get("apiGroup"):
            ref["apiGroup"] = rbac_group

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        errs: list[FieldError] = []
        rbac_group = self.scheme.rbac_group
        ref = obj.get("roleRef") or {}
        if not ref:
            errs.append(required("roleRef"))
        else:
            if ref.get("apiGroup") != rbac_group:
                errs.append(not_supported("roleRef.apiGroup", ref.get("apiGroup", ""), [rbac_group]))
            if ref.get("kind") not in self.role_kinds:
                errs.append(not_supported("roleRef.kind", ref.get("kind", ""), list(self.role_kinds)))
            name = ref.get("name") or ""
            if not name:
                errs.append(required("roleRef.name"))
            else:
                errs.extend(invalid("roleRef.name", name, p) for p in path_segment_errors(name))
        for i, subject in enumerate(obj.get("subjects") or []):
            errs.extend(self._subject_errors(subject, f"subjects[{i}]"))
        return errs

    def _subject_errors(self, subject: dict[str, Any], at: str) -> list[FieldError]:
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
            if not self.rt.namespaced and not subject.get("namespace"):
                errs.append(required(f"{at}.namespace"))
        elif kind in ("User", "Group"):
            if group != self.scheme.rbac_group:
                errs.append(not_supported(f"{at}.apiGroup", group, [self.scheme.rbac_group]))
        else:
            errs.append(not_supported(f"{at}.kind", kind, ["ServiceAccount", "User", "Group"]))
        return errs

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        errs = self.validate(new)
        if new.get("roleRef") != old.get("roleRef"):
            ref = new.get("roleRef") or {}
            shown = GoText(f'rbac.RoleRef{{APIGroup:{go_quote(ref.get("apiGroup") or "")}, '
                           f'Kind:{go_quote(ref.get("kind") or "")}, Name:{go_quote(ref.get("name") or "")}}}')
            errs.append(invalid("roleRef", shown, "cannot change roleRef"))
        return errs

    def check_escalation(self, policy: PolicyContext, request: AdmissionRequest) -> None:
        obj, user = request.obj, request.user
        name, namespace = self.scope_of(obj)
        ref = obj.get("roleRef") or {}
        check = bind_attributes(user, ref, namespace)
        if check is not None and policy.decide(check).allowed:
            return
        rules = self._referenced_rules(policy, ref, namespace)
        message = confirm_no_escalation(user, namespace, rules, policy.rbac)
        if message:
            raise self.forbid(name, message)


    def _referenced_rules(self, policy: PolicyContext, ref: dict[str, Any], namespace: str) -> list[dict[str, Any]]:
        """The rules of the referenced role, as Kubernetes' GetRoleReferenceRules reads them: a missing
        role is its 404 NotFound, a kind it does not know a 500."""
        kind, name, group = ref.get("kind") or "", ref.get("name") or "", self.scheme.rbac_group
        if kind == "ClusterRole":
            role = policy.rbac.get_cluster_role(name)
        elif kind == "Role":
            role = policy.rbac.get_role(namespace, name) if namespace else None
        else:
            detail = f"unsupported role reference kind: {go_quote(kind)}"
            raise errors.InternalError(f"Internal error occurred: {detail}", causes=[errors.Cause("", detail)])
        if role is None:
            plural = "clusterroles" if kind == "ClusterRole" else "roles"
            raise errors.NotFound(f'{plural}.{group} "{name}" not found', name=name, group=group, kind=plural)
        return list(role.get("rules") or [])


class ClusterRoleBindingStrategy(RoleBindingStrategy):
    """ClusterRoleBinding: grants a ClusterRole to subjects everywhere."""

    role_kinds = ("ClusterRole",)
    columns = _binding_columns("RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef "
                               "cannot be resolved, the Authorizer must return an error.", "clusterRoleBinding")
