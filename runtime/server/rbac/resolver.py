"""Which rules apply to a user in a namespace? (Kubernetes' `DefaultRuleResolver`.)

`visit_rules_for` walks, in Kubernetes' order, the ClusterRoleBindings that
apply to the user, then (only when `namespace != ""`) the RoleBindings of that
namespace, yielding each rule of each bound role with the binding that granted
it, and each error met on the way (unresolvable roleRef, unjudgeable subject).
Errors never stop the walk: rules are additive, so whatever was found still
counts. `policy_rules_for` collects everything (Kubernetes' `RulesFor`).

Role references resolve as `GetRoleReferenceRules`: kind `Role` is looked up
in the binding's namespace, kind `ClusterRole` cluster-wide, any other kind is
`unsupported role reference kind: "X"`. A missing role reads like the lister's
NotFound: `clusterrole.rbac.authorization.<domain> "name" not found` (the group
is taken from the roleRef).

Internal to `runtime.server.rbac`: imported by its modules only.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runtime.machinery.validation.gofmt import aggregate_message, go_quote
from runtime.server.rbac.rules import RuleDict
from runtime.server.rbac.source import RoleSource
from runtime.server.rbac.subjects import applies_to_user, describe_subject, subject_problem
from runtime.server.rbac.user import UserInfo

__all__ = [
    "BindingSource", "RuleVisit", "resolve_role_ref", "visit_rules_for", "policy_rules_for",
]


@dataclass(frozen=True)
class BindingSource:
    """The binding and subject that granted a rule; `str()` is Kubernetes' describer text.

    `ClusterRoleBinding "b" of ClusterRole "r" to User "u"` or
    `RoleBinding "b/ns" of Role "r" to ServiceAccount "sa/ns"`.
    """

    binding: Mapping[str, Any]
    subject_index: int

    def __str__(self) -> str:
        meta = self.binding.get("metadata") or {}
        ref = self.binding.get("roleRef") or {}
        subject = (self.binding.get("subjects") or [])[self.subject_index]
        namespace = meta.get("namespace") or ""
        ref_text = f"{ref.get('kind') or ''} {go_quote(ref.get('name') or '')}"
        if self.binding.get("kind") == "ClusterRoleBinding" or not namespace:
            return (f"ClusterRoleBinding {go_quote(meta.get('name') or '')} of {ref_text} "
                    f"to {describe_subject(subject, '')}")
        return (f"RoleBinding {go_quote((meta.get('name') or '') + '/' + namespace)} of {ref_text} "
                f"to {describe_subject(subject, namespace)}")


#: One step of the walk: (source, rule, "") for a rule, (None, None, error) for an error.
RuleVisit = tuple[BindingSource | None, RuleDict | None, str]


def _group_resource(resource: str, group: str) -> str:
    return f"{resource}.{group}" if group else resource


def resolve_role_ref(role_ref: Mapping[str, Any], binding_namespace: str,
                     source: RoleSource) -> tuple[Sequence[RuleDict], str]:
    """Return `(rules, error)` for a binding's roleRef; error is "" when resolved.

    `binding_namespace` is the RoleBinding's namespace, "" for a ClusterRoleBinding
    (where a `Role` reference can never resolve).
    """
    kind = role_ref.get("kind") or ""
    name = role_ref.get("name") or ""
    group = role_ref.get("apiGroup") or ""
    if kind == "ClusterRole":
        role = source.get_cluster_role(name)
        if role is None:
            return (), f"{_group_resource('clusterrole', group)} {go_quote(name)} not found"
        return role.get("rules") or (), ""
    if kind == "Role":
        role = source.get_role(binding_namespace, name) if binding_namespace else None
        if role is None:
            return (), f"{_group_resource('role', group)} {go_quote(name)} not found"
        return role.get("rules") or (), ""
    return (), f"unsupported role reference kind: {go_quote(kind)}"


def _visit_binding(user: UserInfo, binding: Mapping[str, Any], namespace: str,
                   source: RoleSource) -> Iterator[RuleVisit]:
    subjects = binding.get("subjects") or ()
    matched = -1
    for i, subject in enumerate(subjects):
        problem = subject_problem(subject)
        if problem:
            meta = binding.get("metadata") or {}
            label = (f"RoleBinding {go_quote((meta.get('name') or '') + '/' + namespace)}"
                     if namespace else f"ClusterRoleBinding {go_quote(meta.get('name') or '')}")
            yield None, None, f"{label} subjects[{i}]: {problem}"
        elif matched < 0 and applies_to_user(user, subject, namespace):
            matched = i
    if matched < 0:
        return
    rules, error = resolve_role_ref(binding.get("roleRef") or {}, namespace, source)
    if error:
        yield None, None, error
        return
    described = BindingSource(binding, matched)
    for rule in rules:
        yield described, rule, ""


def visit_rules_for(user: UserInfo, namespace: str, source: RoleSource) -> Iterator[RuleVisit]:
    """Yield every rule (with its source) and every error for `user` in `namespace`.

    ClusterRoleBindings first, then RoleBindings of `namespace` when it is not
    "". Stop iterating to short-circuit (the authorizer does on first allow).
    """
    for binding in source.cluster_role_bindings_for(user):
        yield from _visit_binding(user, binding, "", source)
    if namespace:
        for binding in source.role_bindings_for(namespace, user):
            yield from _visit_binding(user, binding, namespace, source)


def policy_rules_for(user: UserInfo, namespace: str,
                     source: RoleSource) -> tuple[list[RuleDict], str]:
    """Return `(rules, error)`: every rule that applies, and the aggregated errors ("" if none).

    The rules are complete up to the errors: what was found is still held.
    """
    rules: list[RuleDict] = []
    errors: list[str] = []
    for _, rule, error in visit_rules_for(user, namespace, source):
        if rule is not None:
            rules.append(rule)
        if error:
            errors.append(error)
    return rules, aggregate_message(errors)
