"""Risky grants, ranked as KubiScan ranks its risky roles: `Severity`, `Risk`, `rule_risks`.

A rule is risky when it allows one of the requests of `RISKS` (matched with
`rule_allows`, a rule limited by resourceNames still counting for those
names: impersonating one user is as risky). The table, highest first:

- CRITICAL: every verb on every resource; `escalate` or `bind` on
  roles/clusterroles (writing roles past escalation checks); `impersonate`
  users, groups or serviceaccounts; reading secrets (get, list, watch);
  every verb on workloads or RBAC kinds; get, list, create, delete,
  deletecollection or impersonate on every resource;
- HIGH: creating pods, `pods/exec`, `pods/attach`; `nodes/proxy` (the
  kubelet's API); creating or updating workloads; creating roles or bindings;
- MEDIUM: `*` in verbs, or in resources, not already ranked above;
- LOW: updating or patching rolebindings (adding subjects to them).

Groups are matched by kind, whatever the API domain: core is "", RBAC any
`rbac.authorization.*`, workloads `apps`/`batch`; a rule's `*` group
matches them all.

Internal to `runtime.server.rbac.insight`: imported by its modules only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from runtime.models.insight import Severity
from runtime.server.rbac.attributes import resource_attributes
from runtime.server.rbac.rules import RuleDict, rule_allows
from runtime.server.rbac.user import UserInfo

__all__ = ["Risk", "RISKS", "rule_risks"]


@dataclass(frozen=True)
class _Groups:
    representative: str
    accepts: Callable[[str], bool]


_CORE = _Groups("", lambda g: g == "")
_RBAC = _Groups("rbac.authorization.k8s.io", lambda g: g.startswith("rbac.authorization."))
_APPS = _Groups("apps", lambda g: g == "apps")
_BATCH = _Groups("batch", lambda g: g == "batch")
_ANY = _Groups("*", lambda g: True)


@dataclass(frozen=True)
class Risk:
    """One risky request: `verbs` on `resource[/subresource]` of a kind of group, with its `severity`."""

    severity: Severity
    title: str
    verbs: tuple[str, ...]
    resource: str
    subresource: str = ""
    groups: _Groups = _CORE


_WORKLOADS = ((_CORE, "pods"), (_CORE, "replicationcontrollers"), (_APPS, "deployments"),
              (_APPS, "daemonsets"), (_APPS, "statefulsets"), (_APPS, "replicasets"),
              (_BATCH, "jobs"), (_BATCH, "cronjobs"))
_RBAC_KINDS = ("roles", "clusterroles", "rolebindings", "clusterrolebindings")

RISKS: tuple[Risk, ...] = (
    Risk(Severity.CRITICAL, "every verb on every resource", ("*",), "*", groups=_ANY),
    *(Risk(Severity.CRITICAL, f"escalate {r}", ("escalate",), r, groups=_RBAC)
      for r in ("roles", "clusterroles")),
    *(Risk(Severity.CRITICAL, f"bind {r}", ("bind",), r, groups=_RBAC)
      for r in ("roles", "clusterroles")),
    *(Risk(Severity.CRITICAL, f"impersonate {r}", ("impersonate",), r)
      for r in ("users", "groups", "serviceaccounts")),
    Risk(Severity.CRITICAL, "read secrets", ("get", "list", "watch"), "secrets"),
    *(Risk(Severity.CRITICAL, f"every verb on {r}", ("*",), r, groups=g) for g, r in _WORKLOADS),
    *(Risk(Severity.CRITICAL, f"every verb on {r}", ("*",), r, groups=_RBAC) for r in _RBAC_KINDS),
    Risk(Severity.CRITICAL, "read, create or delete every resource",
         ("get", "list", "create", "delete", "deletecollection", "impersonate"), "*", groups=_ANY),
    Risk(Severity.HIGH, "create pods", ("create",), "pods"),
    Risk(Severity.HIGH, "exec into pods", ("create", "get"), "pods", "exec"),
    Risk(Severity.HIGH, "attach to pods", ("create", "get"), "pods", "attach"),
    Risk(Severity.HIGH, "use the kubelet API (nodes/proxy)", ("get", "create"), "nodes", "proxy"),
    *(Risk(Severity.HIGH, f"create or update {r}", ("create", "update", "patch"), r, groups=g)
      for g, r in _WORKLOADS[1:]),
    *(Risk(Severity.HIGH, f"create {r}", ("create",), r, groups=_RBAC) for r in _RBAC_KINDS),
    Risk(Severity.LOW, "update rolebindings", ("update", "patch"), "rolebindings", groups=_RBAC),
)

_NOBODY = UserInfo("")


def _allows(rule: RuleDict, risk: Risk) -> bool:
    rule_groups = rule.get("apiGroups") or ()
    groups = [g for g in rule_groups if g != "*" and risk.groups.accepts(g)]
    if "*" in rule_groups:
        groups.append(risk.groups.representative)
    name = (rule.get("resourceNames") or ("",))[0]
    return any(rule_allows(resource_attributes(_NOBODY, verb, risk.resource, api_group=group,
                                               subresource=risk.subresource, name=name), rule)
               for group in groups for verb in risk.verbs)


def rule_risks(rule: RuleDict) -> list[tuple[Severity, str]]:
    """Return the (severity, title) of every risk `rule` grants, highest first; [] when none."""
    found = [(r.severity, r.title) for r in RISKS if _allows(rule, r)]
    top = max((s.rank for s, _ in found), default=-1)
    if top < Severity.CRITICAL.rank and rule.get("resources"):
        if "*" in (rule.get("verbs") or ()):
            found.append((Severity.MEDIUM, "every verb (*)"))
        if "*" in (rule.get("resources") or ()):
            found.append((Severity.MEDIUM, "every resource (*)"))
    unique = list(dict.fromkeys(found))
    return sorted(unique, key=lambda f: -f[0].rank)
