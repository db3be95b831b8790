"""The rules a user holds in a namespace, for SelfSubjectRulesReview (Kubernetes' `RulesFor`).

`rules_for` gathers the rules of the ClusterRoleBindings that apply to the
user, plus those of the RoleBindings of `namespace`, and converts them as
`RBACAuthorizer.RulesFor` does: a PolicyRule with resources gives a
ResourceRule (`verbs`, `apiGroups`, `resources`, `resourceNames`), one with
nonResourceURLs gives a NonResourceRule (`verbs`, `nonResourceURLs`); empty
lists are left out as the JSON `omitempty` tags do (`verbs` is always set).

A member of `system:masters` also gets `{verbs:[*], apiGroups:[*],
resources:[*]}` and `{verbs:[*], nonResourceURLs:[*]}`, the rules Kubernetes
reports for it through the bootstrap `cluster-admin` binding; they are not
repeated when that binding already yields them.

`incomplete` is False, as Kubernetes' RBAC reports; errors met while resolving
come back as `evaluation_error` (the aggregate message), the rules found still
hold.

Internal to `runtime.server.rbac`: imported by its modules only.
"""

from __future__ import annotations

from typing import Any

from runtime.server.rbac.resolver import policy_rules_for
from runtime.server.rbac.rules import RuleDict
from runtime.server.rbac.source import RoleSource
from runtime.server.rbac.user import SYSTEM_MASTERS, UserInfo

__all__ = ["rules_for", "to_resource_rule", "to_non_resource_rule", "FULL_AUTHORITY_RULES"]

#: What a `system:masters` member holds (cluster-admin's rules).
FULL_AUTHORITY_RULES: tuple[dict[str, list[str]], ...] = (
    {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
    {"verbs": ["*"], "nonResourceURLs": ["*"]},
)

_RULE_FIELDS = ("verbs", "apiGroups", "resources", "resourceNames", "nonResourceURLs")


def _normal(rule: RuleDict) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(rule.get(f) or ()) for f in _RULE_FIELDS)


def to_resource_rule(rule: RuleDict) -> dict[str, list[str]]:
    """Return the authorization/v1 ResourceRule JSON of a PolicyRule with resources."""
    out: dict[str, list[str]] = {"verbs": list(rule.get("verbs") or ())}
    for f in ("apiGroups", "resources", "resourceNames"):
        values = rule.get(f)
        if values:
            out[f] = list(values)
    return out


def to_non_resource_rule(rule: RuleDict) -> dict[str, list[str]]:
    """Return the authorization/v1 NonResourceRule JSON of a PolicyRule with nonResourceURLs."""
    return {"verbs": list(rule.get("verbs") or ()),
            "nonResourceURLs": list(rule.get("nonResourceURLs") or ())}


def rules_for(user: UserInfo, namespace: str, source: RoleSource,
              ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], bool, str]:
    """Return `(resource_rules, non_resource_rules, incomplete, evaluation_error)`.

    Rule lists are JSON dicts for `SubjectRulesReviewStatus`; order follows
    evaluation order, duplicates possible (as Kubernetes). `namespace=""`
    gives the cluster-wide rules only.
    """
    rules, error = policy_rules_for(user, namespace, source)
    if SYSTEM_MASTERS in user.groups:
        held = {_normal(r) for r in rules}
        extra = [r for r in FULL_AUTHORITY_RULES if _normal(r) not in held]
        rules = [*extra, *rules]
    resource_rules: list[dict[str, Any]] = []
    non_resource_rules: list[dict[str, Any]] = []
    for rule in rules:
        if rule.get("resources"):
            resource_rules.append(to_resource_rule(rule))
        if rule.get("nonResourceURLs"):
            non_resource_rules.append(to_non_resource_rule(rule))
    return resource_rules, non_resource_rules, False, error
