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
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runtime.rbac.attributes import resource_attributes
from runtime.rbac.authorizer import RBACAuthorizer
from runtime.rbac.insight._json import JSONValue
from runtime.rbac.resolver import policy_rules_for
from runtime.rbac.rules import PolicyRule, rule_allows
from runtime.rbac.source import PolicySource
from runtime.rbac.user import SYSTEM_MASTERS, UserInfo

__all__ = [
    "Access", "MatrixRow", "AccessMatrix", "MATRIX_VERBS", "access_matrix",
    "resources_named_in_rules", "without_wildcards",
]

MATRIX_VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")


class Access(enum.Enum):
    """One cell of the matrix."""

    ALLOWED = "allowed"
    DENIED = "denied"
    ALLOWED_BY_WILDCARD = "allowedByWildcard"


@dataclass(frozen=True)
class MatrixRow(JSONValue):
    """One resource and its (verb, `Access`) cells, in the matrix's verb order."""

    api_group: str
    resource: str
    access: tuple[tuple[str, Access], ...]

    def get(self, verb: str) -> Access:
        """Return the cell of `verb`; KeyError when it is not a column."""
        for column, access in self.access:
            if column == verb:
                return access
        raise KeyError(verb)

    def to_dict(self) -> dict[str, Any]:
        """Return `{apiGroup, resource, access: {verb: allowed|denied|allowedByWildcard}}`."""
        return {"apiGroup": self.api_group, "resource": self.resource,
                "access": {verb: access.value for verb, access in self.access}}


@dataclass(frozen=True)
class AccessMatrix(JSONValue):
    """The matrix of `user` in `namespace` ("" = cluster-wide): `rows` in the order given."""

    user: str
    groups: tuple[str, ...]
    namespace: str
    verbs: tuple[str, ...]
    rows: tuple[MatrixRow, ...]

    def cell(self, api_group: str, resource: str, verb: str) -> Access:
        """Return the cell of (`api_group`, `resource`) and `verb`; KeyError when absent."""
        for row in self.rows:
            if (row.api_group, row.resource) == (api_group, resource):
                return row.get(verb)
        raise KeyError((api_group, resource))


def without_wildcards(rule: PolicyRule) -> dict[str, list[str]]:
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
                  source: PolicySource, *, verbs: Sequence[str] = MATRIX_VERBS) -> AccessMatrix:
    """Return the `AccessMatrix` of `user` in `namespace` over `resources` ((group, resource) pairs)."""
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
        rows.append(MatrixRow(group, combined, tuple(cells)))
    return AccessMatrix(user.name, user.groups, namespace, tuple(verbs), tuple(rows))


def _rules_of(roles: Iterable[Mapping[str, Any]]) -> Iterable[PolicyRule]:
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
