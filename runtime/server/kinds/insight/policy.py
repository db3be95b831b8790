"""The insight kinds about the whole policy: RBACLint, AggregationGraph, RBACDiff.

| kind | answers | the caller must be allowed to |
|---|---|---|
| `RBACLint` | `lint` findings (dangling roleRefs, subjects in missing namespaces, rules that never match, risky grants ranked as KubiScan does, aggregated rules traced) and every terminating namespace's blockers: which objects, which finalizers | list the four RBAC resources in every namespace and list namespaces; a terminating namespace's content is read for the kinds the caller may list there (the others are named `unchecked`) |
| `AggregationGraph` | which ClusterRoles aggregate which (`aggregation_graph`) | list clusterroles |
| `RBACDiff` | per subject, the permissions that applying (or deleting, `spec.delete`) `spec.objects` grants and revokes, through aggregation | list the four RBAC resources in every namespace |

`RBACDiff` compares the policy as the aggregation controller leaves it
(`aggregate`) before and after the change, so a label that makes a role
aggregated, or a rule added to an aggregated-from role, shows as the
permissions it moves. `spec.objects` are objects as a server-side dry run
answers them (`miniplane rbac diff` sends them so): each RBAC object is
checked by its kind's own validation (422 with paths under
`spec.objects[i]`); objects of other served kinds are listed in
`status.ignored`; unknown kinds are a 422.

The namespaces and a terminating namespace's content are read from the
watch cache, as lists are served.

Internal to `runtime.server.kinds.insight`: imported by its modules only.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from runtime.server.kinds.base import PolicyContext
from runtime.server.kinds.insight.base import RBAC_PLURALS, InsightContext, InsightStrategy
from runtime.server.rbac import RBACIndex, resource_attributes
from runtime.models.insight import InsightObjectRef, LintFinding, Severity
from runtime.server.rbac.insight import aggregation_graph, blocker_findings, finding_sort_key, is_terminating, policy_objects, terminating_namespace
from runtime.server.rbac.insight import aggregate
from runtime.server.rbac.insight import diff
from runtime.server.rbac.insight import lint
from runtime.server.rbac.user import UserInfo
from runtime.machinery.validation.fielderrors import FieldError, invalid, not_supported, required

__all__ = ["RBACLintStrategy", "AggregationGraphStrategy", "RBACDiffStrategy", "sort_findings"]

_SEVERITIES = [s.value for s in Severity]


def sort_findings(findings: list[LintFinding]) -> list[LintFinding]:
    """Findings sorted as `lint` sorts them (highest severity first)."""
    return sorted(findings, key=finding_sort_key)


class RBACLintStrategy(InsightStrategy):
    """What is wrong or risky in the policy, and what keeps terminating namespaces?"""

    reads_why = "an RBACLint reads the whole policy and the namespaces"

    def evaluate(self, policy: InsightContext, user: UserInfo, namespace: str,
                 obj: dict[str, Any]) -> dict[str, Any]:
        spec = obj.get("spec") or {}
        floor = spec.get("minSeverity") or Severity.INFO.value
        if floor not in _SEVERITIES:
            raise self.invalid([not_supported("spec.minSeverity", floor, _SEVERITIES)])
        self.require_reads(policy, user, RBAC_PLURALS)
        namespaces_rt = self.scheme.namespace_type
        self.require_reads(policy, user, (namespaces_rt.plural,), group=namespaces_rt.group)
        namespaces = [o.obj for o in policy.kind_cache(namespaces_rt).list()]
        findings = list(lint(policy.rbac, [n["metadata"]["name"] for n in namespaces]))
        terminating = []
        for ns in namespaces:
            if is_terminating(ns):
                t = self._terminating(policy, user, ns)
                terminating.append(t.to_dict())
                findings.extend(blocker_findings(t))
        rank = Severity(floor).rank
        status: dict[str, Any] = {
            "findings": [f.to_dict() for f in sort_findings(findings) if f.level.rank >= rank]}
        if terminating:
            status["terminatingNamespaces"] = terminating
        obj["status"] = status
        return obj

    def _terminating(self, policy: InsightContext, user: UserInfo, ns: dict[str, Any]) -> Any:
        name = ns["metadata"]["name"]
        remaining: list[dict[str, Any]] = []
        unchecked: list[str] = []
        for t in self.scheme.namespaced_types():
            attrs = resource_attributes(user, "list", t.plural, api_group=t.group, namespace=name)
            if not policy.decide(attrs).allowed:
                unchecked.append(t.group_resource)
                continue
            remaining += [o.obj for o in policy.kind_cache(t).list(t.namespace_prefix(name))]
        return terminating_namespace(ns, remaining, unchecked)


class AggregationGraphStrategy(InsightStrategy):
    """Which ClusterRoles aggregate which?"""

    reads_why = "an AggregationGraph shows the ClusterRoles"

    def evaluate(self, policy: PolicyContext, user: UserInfo, namespace: str,
                 obj: dict[str, Any]) -> dict[str, Any]:
        self.require_reads(policy, user, RBAC_PLURALS[:1])
        obj["status"] = aggregation_graph(policy.rbac).to_dict()
        return obj


class RBACDiffStrategy(InsightStrategy):
    """What would applying (or deleting) these objects grant and revoke, per subject?"""

    reads_why = "an RBACDiff compares the whole policy before and after"

    def _policy_objects(self, objects: list[Any]) -> tuple[list[dict[str, Any]], list[InsightObjectRef]]:
        """The RBAC objects (validated, 422 otherwise) and the refs of the other served kinds."""
        errs: list[FieldError] = []
        policy: list[dict[str, Any]] = []
        ignored: list[InsightObjectRef] = []
        for i, raw in enumerate(objects):
            at = f"spec.objects[{i}]"
            if not isinstance(raw, dict):
                errs.append(invalid(at, raw, "must be an object"))
                continue
            meta = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
            rt = self.scheme.by_api_version_kind(str(raw.get("apiVersion") or ""), str(raw.get("kind") or ""))
            if rt is None:
                errs.append(invalid(f"{at}.kind", raw.get("kind") or "",
                                    f"no kind {raw.get('kind')!r} is served in {raw.get('apiVersion')!r}"))
                continue
            if not rt.strategy.feeds_authorizer:
                ignored.append(InsightObjectRef(rt.kind, meta.get("name") or "", meta.get("namespace") or ""))
                continue
            if rt.namespaced and not meta.get("namespace"):
                errs.append(required(f"{at}.metadata.namespace"))
                continue
            obj = copy.deepcopy(raw)
            obj["metadata"] = dict(meta)
            rt.strategy.default(obj)
            errs += [dataclasses.replace(e, field=f"{at}.{e.field}") for e in rt.strategy.validate(obj)]
            policy.append(obj)
        if errs:
            raise self.invalid(errs)
        return policy, ignored

    def evaluate(self, policy: PolicyContext, user: UserInfo, namespace: str,
                 obj: dict[str, Any]) -> dict[str, Any]:
        spec = obj.get("spec") or {}
        objects, ignored = self._policy_objects(list(spec.get("objects") or ()))
        self.require_reads(policy, user, RBAC_PLURALS)
        before = policy_objects(policy.rbac)
        after = RBACIndex(before)
        for changed in objects:
            if spec.get("delete"):
                after.remove(changed)
            else:
                after.upsert(changed)
        changes = diff(aggregate(RBACIndex(before)), aggregate(after))
        status: dict[str, Any] = {"subjects": [c.to_dict() for c in changes]}
        if ignored:
            status["ignored"] = [r.to_dict() for r in ignored]
        obj["status"] = status
        return obj
