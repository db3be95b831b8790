"""`access_matrix`: what one user may do to each resource, verb by verb, as rakkess prints it.

For each `(api_group, resource)` the caller lists (what the server serves,
plus `resources_named_in_rules(source)`), and each verb (by default get,
list, watch, create, update, patch, delete, deletecollection), a request
without a name in `namespace` ("" = cluster-wide) is asked of the
authorizer:

- `denied` when it does not allow it;
- `allowedByWildcard` when it does, but only rules using `*` (in verbs,
  apiGroups or resources, `*/sub` included) allow it: the rule without its
  wildcard entries would not;
- `allowed` otherwise (also for `system:masters`).

A resource may be `res/sub` (a subresource). Rules limited by
resourceNames never allow a request without a name, so they count as not
granting, as in rakkess.

Internal to `runtime.server.rbac.insight`: imported by its modules only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from runtime.models.insight import Access, AccessMatrixRow, AccessMatrixStatus
from runtime.server.rbac.attributes import resource_attributes
from runtime.server.rbac.authorizer import RBACAuthorizer
from runtime.server.rbac.resolver import policy_rules_for
from runtime.server.rbac.rules import RuleDict, rule_allows
from runtime.server.rbac.source import PolicySource
from runtime.server.rbac.user import SYSTEM_MASTERS, UserInfo

__all__ = [
    "MATRIX_VERBS", "access_matrix",
    "resources_named_in_rules", "without_wildcards",
]

MATRIX_VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")


def without_wildcards(rule: RuleDict) -> dict[str, list[str]]:
    """Return `rule` without its `*` entries (verbs, apiGroups, resources, `*/sub` resources)."""
    return {"verbs": [v for v in rule.get("verbs") or () if v != "*"],
            "apiGroups": [g for g in rule.get("apiGroups") or () if g != "*"],
            "resources": [r for r in rule.get("resources") or ()
                          if r != "*" and not r.startswith("*/")],
            "resourceNames": list(rule.get("resourceNames") or ())}


def _split(resource: str) -> tuple[str, str]:
    head, _, tail = resource.partition("/")
    return head, tail


def access_matrix(user: UserInfo, namespace: str, resources: Iterable[tuple[str, str]],
                  source: PolicySource, *, verbs: Sequence[str] = MATRIX_VERBS) -> AccessMatrixStatus:
    """Return the `AccessMatrixStatus` of `user` in `namespace` over `resources` ((group, resource) pairs)."""
    authorizer = RBACAuthorizer(source)
    rules, _ = policy_rules_for(user, namespace, source)
    privileged = SYSTEM_MASTERS in user.groups
    rows = []
    for group, combined in resources:
        resource, subresource = _split(combined)
        cells = []
        for verb in verbs:
            attrs = resource_attributes(user, verb, resource, api_group=group,
                                        subresource=subresource, namespace=namespace)
            if not authorizer.authorize(attrs).allowed:
                cells.append((verb, Access.DENIED))
                continue
            granting = [r for r in rules if rule_allows(attrs, r)]
            if privileged or any(rule_allows(attrs, without_wildcards(r)) for r in granting):
                cells.append((verb, Access.ALLOWED))
            else:
                cells.append((verb, Access.ALLOWED_BY_WILDCARD))
        rows.append(AccessMatrixRow(group, combined, dict(cells)))
    return AccessMatrixStatus(user.name, user.groups, namespace, tuple(verbs), tuple(rows))


def _rules_of(roles: Iterable[Mapping[str, Any]]) -> Iterable[RuleDict]:
    for role in roles:
        yield from role.get("rules") or ()


def resources_named_in_rules(source: PolicySource) -> tuple[tuple[str, str], ...]:
    """Return every (api_group, resource) some rule names exactly (no `*`), sorted.

    Subresource entries stay as written (`pods/log`).
    """
    found: set[tuple[str, str]] = set()
    for rule in _rules_of([*source.list_cluster_roles(), *source.list_roles()]):
        for group in rule.get("apiGroups") or ():
            if group == "*":
                continue
            for resource in rule.get("resources") or ():
                if "*" not in resource:
                    found.add((group, resource))
    return tuple(sorted(found))
