"""Does one PolicyRule allow one request? (Kubernetes' `RuleAllows`.)

Rules are PolicyRule JSON dicts (`verbs`, `apiGroups`, `resources`,
`resourceNames`, `nonResourceURLs`). The matching is exactly
`pkg/apis/rbac/v1/evaluation_helpers.go`:

- verbs: `*` or equal;
- apiGroups: `*` or equal (`""` is the core group);
- resources: `*`, equal to `resource` or `resource/subresource`, or
  `*/subresource` for any resource's subresource;
- resourceNames: empty matches every name; otherwise the request's name must
  be listed, so a non-empty list never matches a request without a name
  (create, list, watch, deletecollection);
- nonResourceURLs: `*`, equal, or a trailing `*` prefix (`/apis/*` matches
  `/apis/foo` and `/apis/`).

A rule with no resources never matches a resource request, and a rule with no
nonResourceURLs never matches a non-resource request.

Internal to `runtime.server.rbac`: imported by its modules only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from runtime.server.rbac.attributes import Attributes

__all__ = [
    "RuleDict", "VERB_ALL", "API_GROUP_ALL", "RESOURCE_ALL", "NON_RESOURCE_ALL",
    "verb_matches", "api_group_matches", "resource_matches", "resource_name_matches",
    "non_resource_url_matches", "rule_allows", "rules_allow",
]

#: A PolicyRule as Kubernetes serialises it (camelCase keys), as the matchers read it.
RuleDict = Mapping[str, Any]

VERB_ALL = "*"
API_GROUP_ALL = "*"
RESOURCE_ALL = "*"
NON_RESOURCE_ALL = "*"


def verb_matches(rule: RuleDict, verb: str) -> bool:
    """Return whether the rule's verbs include `verb` or `*`."""
    for v in rule.get("verbs") or ():
        if v == VERB_ALL or v == verb:
            return True
    return False


def api_group_matches(rule: RuleDict, group: str) -> bool:
    """Return whether the rule's apiGroups include `group` or `*`."""
    for g in rule.get("apiGroups") or ():
        if g == API_GROUP_ALL or g == group:
            return True
    return False


def resource_matches(rule: RuleDict, combined_resource: str, subresource: str) -> bool:
    """Return whether the rule's resources cover `combined_resource` (`res` or `res/sub`).

    `*` covers everything; `*/sub` covers `sub` of any resource.
    """
    for r in rule.get("resources") or ():
        if r == RESOURCE_ALL or r == combined_resource:
            return True
        if subresource and len(r) == len(subresource) + 2 and r.startswith("*/") \
                and r.endswith(subresource):
            return True
    return False


def resource_name_matches(rule: RuleDict, name: str) -> bool:
    """Return whether `name` is allowed: an empty resourceNames list allows all."""
    names = rule.get("resourceNames")
    if not names:
        return True
    return name in names


def non_resource_url_matches(rule: RuleDict, path: str) -> bool:
    """Return whether the rule's nonResourceURLs cover `path` (exact, `*`, or `prefix*`)."""
    for u in rule.get("nonResourceURLs") or ():
        if u == NON_RESOURCE_ALL or u == path:
            return True
        if u.endswith("*") and path.startswith(u.rstrip("*")):
            return True
    return False


def rule_allows(attrs: Attributes, rule: RuleDict) -> bool:
    """Return whether `rule` allows the request described by `attrs`."""
    if attrs.resource_request:
        combined = attrs.resource
        if attrs.subresource:
            combined = f"{attrs.resource}/{attrs.subresource}"
        return (verb_matches(rule, attrs.verb)
                and api_group_matches(rule, attrs.api_group)
                and resource_matches(rule, combined, attrs.subresource)
                and resource_name_matches(rule, attrs.name))
    return verb_matches(rule, attrs.verb) and non_resource_url_matches(rule, attrs.path)


def rules_allow(attrs: Attributes, rules: Iterable[RuleDict]) -> bool:
    """Return whether any of `rules` allows the request."""
    return any(rule_allows(attrs, r) for r in rules)
