"""One rule against one request, attribute by attribute: `check_rule` and `with_attribute`.

`check_rule(attrs, rule)` returns an `AttributeCheck` per request attribute,
each decided by the matchers of `runtime.server.rbac.rules` (never re-implemented):

- resource request: `verb`, `apiGroup`, `resource`, `subresource`,
  `resourceName`;
- non-resource request: `verb`, `nonResourceURL`.

All checks match exactly when `rule_allows(attrs, rule)` (the property tests
hold this). A failed check carries a `suggestion` when changing that one
attribute of the request would make it match: a value taken from the rule
and confirmed by the same matcher, or None when no value would do (a rule
with no verbs, a non-resource rule for a resource request).

`resource` and `subresource` are matched together by Kubernetes
(`resources: ["pods/log"]`), so when the pair fails the blame goes to the
part whose change alone fixes it, the subresource first ("right resource,
wrong subresource"); to both when neither alone would.

The `namespace` attribute is not the rule's business but the binding's:
`explain` adds that check per binding.

Internal to `runtime.server.rbac.insight`: imported by its modules only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

from runtime.models.insight import AttributeCheck
from runtime.server.rbac.attributes import Attributes
from runtime.server.rbac.rules import (
    RuleDict, api_group_matches, non_resource_url_matches, resource_matches,
    resource_name_matches, verb_matches,
)

__all__ = [
    "VERB", "API_GROUP", "RESOURCE", "SUBRESOURCE", "RESOURCE_NAME", "NON_RESOURCE_URL",
    "NAMESPACE", "REQUEST_ATTRIBUTES", "check_rule", "failed_checks",
    "with_attribute",
]

VERB = "verb"
API_GROUP = "apiGroup"
RESOURCE = "resource"
SUBRESOURCE = "subresource"
RESOURCE_NAME = "resourceName"
NON_RESOURCE_URL = "nonResourceURL"
NAMESPACE = "namespace"

#: The attributes `with_attribute` can change, mapped to their `Attributes` field.
REQUEST_ATTRIBUTES = {
    VERB: "verb", API_GROUP: "api_group", RESOURCE: "resource", SUBRESOURCE: "subresource",
    RESOURCE_NAME: "name", NON_RESOURCE_URL: "path", NAMESPACE: "namespace",
}


def _combined(resource: str, subresource: str) -> str:
    return f"{resource}/{subresource}" if subresource else resource


def _first(candidates: Iterator[str], accepts: Callable[[str], bool]) -> str | None:
    for value in candidates:
        if accepts(value):
            return value
    return None


def _subresource_candidates(rule: RuleDict, resource: str) -> Iterator[str]:
    for entry in rule.get("resources") or ():
        head, slash, tail = entry.partition("/")
        if not slash:
            if entry == resource:
                yield ""
        elif head in ("*", resource) and tail:
            yield tail


def _resource_candidates(rule: RuleDict, subresource: str) -> Iterator[str]:
    for entry in rule.get("resources") or ():
        head, slash, tail = entry.partition("/")
        if subresource and slash and tail == subresource and head != "*":
            yield head
        elif not subresource and not slash and entry != "*":
            yield entry


def _resource_checks(attrs: Attributes, rule: RuleDict) -> tuple[AttributeCheck, AttributeCheck]:
    res, sub = attrs.resource, attrs.subresource
    allowed = tuple(rule.get("resources") or ())
    if resource_matches(rule, _combined(res, sub), sub):
        return (AttributeCheck(RESOURCE, True, res, allowed),
                AttributeCheck(SUBRESOURCE, True, sub, allowed))
    sub_fix = _first(_subresource_candidates(rule, res),
                     lambda s: resource_matches(rule, _combined(res, s), s))
    if sub_fix is not None:
        return (AttributeCheck(RESOURCE, True, res, allowed),
                AttributeCheck(SUBRESOURCE, False, sub, allowed, sub_fix))
    res_fix = _first(_resource_candidates(rule, sub),
                     lambda r: resource_matches(rule, _combined(r, sub), sub))
    if res_fix is not None:
        return (AttributeCheck(RESOURCE, False, res, allowed, res_fix),
                AttributeCheck(SUBRESOURCE, True, sub, allowed))
    return (AttributeCheck(RESOURCE, False, res, allowed),
            AttributeCheck(SUBRESOURCE, False, sub, allowed))


def _simple(attribute: str, requested: str, values: tuple[str, ...],
            matches: Callable[[str], bool]) -> AttributeCheck:
    if matches(requested):
        return AttributeCheck(attribute, True, requested, values)
    return AttributeCheck(attribute, False, requested, values, _first(iter(values), matches))


def _url_candidates(rule: RuleDict) -> Iterator[str]:
    for url in rule.get("nonResourceURLs") or ():
        yield url[:-1] if url.endswith("*") else url


def check_rule(attrs: Attributes, rule: RuleDict) -> tuple[AttributeCheck, ...]:
    """Return the checks of every request attribute of `attrs` against `rule` (see the module doc)."""
    verb = _simple(VERB, attrs.verb, tuple(rule.get("verbs") or ()),
                   lambda v: verb_matches(rule, v))
    if not attrs.resource_request:
        urls = tuple(rule.get("nonResourceURLs") or ())
        if non_resource_url_matches(rule, attrs.path):
            return verb, AttributeCheck(NON_RESOURCE_URL, True, attrs.path, urls)
        url_fix = _first(_url_candidates(rule), lambda p: non_resource_url_matches(rule, p))
        return verb, AttributeCheck(NON_RESOURCE_URL, False, attrs.path, urls, url_fix)
    group = _simple(API_GROUP, attrs.api_group, tuple(rule.get("apiGroups") or ()),
                    lambda g: api_group_matches(rule, g))
    resource, subresource = _resource_checks(attrs, rule)
    name = _simple(RESOURCE_NAME, attrs.name, tuple(rule.get("resourceNames") or ()),
                   lambda n: resource_name_matches(rule, n))
    return verb, group, resource, subresource, name


def failed_checks(checks: tuple[AttributeCheck, ...]) -> tuple[AttributeCheck, ...]:
    """Return the checks that did not match."""
    return tuple(c for c in checks if not c.matched)


def with_attribute(attrs: Attributes, attribute: str, value: str) -> Attributes:
    """Return `attrs` with one attribute (a name of `REQUEST_ATTRIBUTES`) set to `value`.

    Raises KeyError for another attribute name.
    """
    return dataclasses.replace(attrs, **{REQUEST_ATTRIBUTES[attribute]: value})
