"""`lint(source, namespaces)`: what is wrong or risky in a policy, ranked.

Each `Finding` has a `severity` (KubiScan's priorities plus Info), a `kind`,
the `object` it is about, a `path` inside it and a `message`. Kinds:

| kind | severity | what |
|---|---|---|
| `RiskyGrant` | per `runtime.server.rbac.insight.risk` | a rule granting escalate, bind, impersonate, `*`, secrets read, create on RBAC kinds, nodes/proxy... |
| `RoleRefNotFound` | Medium | a binding whose roleRef does not resolve: whoever creates that role grants its rules at once |
| `SubjectNamespaceNotFound` | Medium | a ServiceAccount subject in a namespace not in `namespaces`: whoever creates it gets the grant |
| `ServiceAccountNamespaceMissing` | Low | a ServiceAccount subject of a ClusterRoleBinding without namespace: matches nobody |
| `NamespaceNotFound` | Low | a Role or RoleBinding in a namespace not in `namespaces` (left over) |
| `InvalidSubject` | Low | a subject of unknown kind, or a User/Group with a namespace: matches nobody, errors every decision |
| `UnknownVerb` | Low | a verb no request ever has (Kubernetes' verbs, HTTP methods for URLs, `*`, escalate, bind, impersonate, use, approve, sign, attest, unsafe-delete-ignore-read-errors) |
| `RuleNeverMatches` | Low | a rule with no verbs, no resources nor URLs, resources but no apiGroups, or only unknown verbs |
| `NonResourceURLInRole` | Low | nonResourceURLs in a Role: non-resource requests have no namespace |
| `ResourceNamesNeverMatch` | Low | resourceNames with create or deletecollection, whose requests carry no name |
| `AggregationSelectorInvalid` | Low | an aggregationRule selector that does not parse: the role is never aggregated |
| `AggregatedRuleWithoutSource` | Low | a rule of an aggregated ClusterRole no selected role holds: the controller removes it |
| `AggregatedRule` | Info | a rule of an aggregated ClusterRole, traced to the ClusterRoles it came from |

Findings come sorted by severity (highest first), then object and path
(`finding_sort_key`).
Pure: reads the `PolicySource`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Set
from typing import Any

from runtime.models.insight import InsightObjectRef, LintFinding, Severity
from runtime.server.rbac.aggregation import aggregation_selectors
from runtime.server.rbac.insight.aggregate import aggregation_sources
from runtime.server.rbac.insight.refs import binding_namespace, object_ref, role_ref
from runtime.server.rbac.insight.risk import rule_risks
from runtime.server.rbac.resolver import resolve_role_ref
from runtime.server.rbac.source import PolicySource
from runtime.server.rbac.subjects import SERVICE_ACCOUNT_KIND, subject_problem
from runtime.machinery.selectors import SelectorError

__all__ = ["lint", "finding_sort_key", "RESOURCE_VERBS", "NON_RESOURCE_VERBS", "SPECIAL_VERBS"]

#: The verbs of Kubernetes' resource requests.
RESOURCE_VERBS = frozenset({"get", "list", "watch", "create", "update", "patch", "delete",
                            "deletecollection", "proxy"})
#: The verbs of non-resource requests: lower-cased HTTP methods.
NON_RESOURCE_VERBS = frozenset({"get", "post", "put", "patch", "delete", "head", "options"})
#: Verbs only authorization checks ask, and the wildcard.
SPECIAL_VERBS = frozenset({"*", "escalate", "bind", "impersonate", "use", "approve", "sign",
                           "attest", "unsafe-delete-ignore-read-errors"})


def _bindings(source: PolicySource) -> Iterator[Mapping[str, Any]]:
    yield from source.list_cluster_role_bindings()
    yield from source.list_role_bindings()


def _orphan(ref: InsightObjectRef) -> LintFinding:
    return LintFinding.of(Severity.LOW, "NamespaceNotFound", ref,
                   f"{ref} is in namespace {ref.namespace!r}, which does not exist", "metadata.namespace")


def _binding_findings(source: PolicySource, namespaces: Set[str]) -> Iterator[LintFinding]:
    for binding in _bindings(source):
        ref, namespace = object_ref(binding), binding_namespace(binding)
        if namespace and namespace not in namespaces:
            yield _orphan(ref)
        _, error = resolve_role_ref(binding.get("roleRef") or {}, namespace, source)
        if error:
            yield LintFinding.of(Severity.MEDIUM, "RoleRefNotFound", ref,
                          f"roleRef of {ref} does not resolve ({error}); creating "
                          f"{role_ref(binding)} grants its rules to the subjects at once", "roleRef")
        for i, subject in enumerate(binding.get("subjects") or ()):
            path = f"subjects[{i}]"
            problem = subject_problem(subject)
            if problem:
                yield LintFinding.of(Severity.LOW, "InvalidSubject", ref, f"{problem}: it matches nobody",
                              path)
                continue
            if subject.get("kind") != SERVICE_ACCOUNT_KIND:
                continue
            sa_namespace = subject.get("namespace") or namespace
            name = subject.get("name") or ""
            if not sa_namespace:
                yield LintFinding.of(Severity.LOW, "ServiceAccountNamespaceMissing", ref,
                              f"ServiceAccount {name!r} has no namespace, which a "
                              f"ClusterRoleBinding cannot default: it matches nobody", path)
            elif sa_namespace not in namespaces:
                yield LintFinding.of(Severity.MEDIUM, "SubjectNamespaceNotFound", ref,
                              f"ServiceAccount {name!r} is in namespace {sa_namespace!r}, which "
                              f"does not exist: whoever creates it gets this grant", path)


def _unknown_verbs(rule: Mapping[str, Any]) -> list[str]:
    known = set(SPECIAL_VERBS)
    if rule.get("resources"):
        known |= RESOURCE_VERBS
    if rule.get("nonResourceURLs"):
        known |= NON_RESOURCE_VERBS
    return [v for v in rule.get("verbs") or () if v not in known]


def _never_matches(rule: Mapping[str, Any], unknown: list[str]) -> str:
    verbs = rule.get("verbs") or ()
    if not verbs:
        return "it has no verbs"
    if len(unknown) == len(verbs):
        return "none of its verbs is ever requested"
    if not rule.get("resources") and not rule.get("nonResourceURLs"):
        return "it has neither resources nor nonResourceURLs"
    if rule.get("resources") and not rule.get("apiGroups"):
        return "it has resources but no apiGroups"
    return ""


def _rule_findings(role: Mapping[str, Any]) -> Iterator[LintFinding]:
    ref = object_ref(role)
    for i, rule in enumerate(role.get("rules") or ()):
        path = f"rules[{i}]"
        unknown = _unknown_verbs(rule)
        if unknown:
            yield LintFinding.of(Severity.LOW, "UnknownVerb", ref,
                          f"{path} has verbs no request ever has: {', '.join(unknown)}",
                          f"{path}.verbs")
        why = _never_matches(rule, unknown)
        if why:
            yield LintFinding.of(Severity.LOW, "RuleNeverMatches", ref, f"{path} never matches: {why}",
                          path)
        if ref.kind == "Role" and rule.get("nonResourceURLs"):
            yield LintFinding.of(Severity.LOW, "NonResourceURLInRole", ref,
                          f"{path} names nonResourceURLs, which a Role never grants: "
                          f"non-resource requests have no namespace", f"{path}.nonResourceURLs")
        collection = [v for v in ("create", "deletecollection") if v in (rule.get("verbs") or ())]
        if rule.get("resourceNames") and collection:
            yield LintFinding.of(Severity.LOW, "ResourceNamesNeverMatch", ref,
                          f"{path} limits {', '.join(collection)} to resourceNames, but those "
                          f"requests carry no name, so it never allows them", f"{path}.resourceNames")
        risks = rule_risks(rule)
        if risks:
            titles = "; ".join(f"{title} ({severity.value})" for severity, title in risks)
            yield LintFinding.of(risks[0][0], "RiskyGrant", ref, f"{path} grants: {titles}", path)


def _aggregation_findings(role: Mapping[str, Any],
                          cluster_roles: list[Mapping[str, Any]]) -> Iterator[LintFinding]:
    if not role.get("aggregationRule"):
        return
    ref = object_ref(role)
    try:
        aggregation_selectors(role)
    except SelectorError as exc:
        yield LintFinding.of(Severity.LOW, "AggregationSelectorInvalid", ref,
                      f"aggregationRule does not parse, so the role is never aggregated: {exc}",
                      "aggregationRule")
        return
    for i, origins in enumerate(aggregation_sources(role, cluster_roles)):
        path = f"rules[{i}]"
        if origins:
            yield LintFinding.of(Severity.INFO, "AggregatedRule", ref,
                          f"{path} comes from ClusterRole {', '.join(origins)}", path)
        else:
            yield LintFinding.of(Severity.LOW, "AggregatedRuleWithoutSource", ref,
                          f"{path} is in no ClusterRole the aggregationRule selects: the "
                          f"aggregation controller removes it", path)


def _natural(text: str) -> tuple[Any, ...]:
    """`rules[2]` before `rules[10]`: digits compare as numbers."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))


def finding_sort_key(finding: LintFinding) -> tuple[Any, ...]:
    """Severity (highest first), then object, path (`rules[2]` before `rules[10]`), kind and message."""
    return (-finding.level.rank, finding.object.sort_key(), _natural(finding.path), finding.kind, finding.message)


def lint(source: PolicySource, namespaces: Iterable[str]) -> tuple[LintFinding, ...]:
    """Return every `Finding` about `source`, given the namespaces that exist, sorted (highest first)."""
    existing = frozenset(namespaces)
    cluster_roles = list(source.list_cluster_roles())
    findings = list(_binding_findings(source, existing))
    for role in [*cluster_roles, *source.list_roles()]:
        ref = object_ref(role)
        if ref.namespace and ref.namespace not in existing:
            findings.append(_orphan(ref))
        findings.extend(_rule_findings(role))
        findings.extend(_aggregation_findings(role, cluster_roles))
    return tuple(sorted(findings, key=finding_sort_key))
