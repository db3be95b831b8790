"""The insight kinds about one request or one subject: AccessExplanation, WhoCan, AccessMatrix.

| kind | answers | the caller must be allowed to |
|---|---|---|
| `AccessExplanation` | the whole evaluation of one request (`explain`): bindings, rules checked attribute by attribute, the granting rule, near misses | list clusterroles, clusterrolebindings, roles and rolebindings in every namespace (near misses read them all) |
| `WhoCan` | every subject allowed a request, with the grants (`who_can`) | list clusterroles and clusterrolebindings; for a namespaced request also roles and rolebindings there |
| `AccessMatrix` | allowed / denied / allowedByWildcard per resource and verb (`access_matrix`) | nothing for the caller's own matrix (as SelfSubjectAccessReview); create subjectaccessreviews for another subject's (the matrix is a batch of them) |

Why `AccessExplanation` is a kind of its own rather than an option of the
reviews: SubjectAccessReview is Kubernetes' schema, decoded by real clients
(kubectl, client-go) that know its fields; an explanation is much larger
(every binding, rule and near miss) and reads the whole policy, so it has its
own permission. The reviews stay exactly Kubernetes' (their `status.reason`
already names the binding, role and rule).

Spec and subject: `AccessExplanation` and `AccessMatrix` take `user`,
`groups`, `extra`, `uid` as a SubjectAccessReview (none: the caller).
`WhoCan` and `AccessExplanation` take `resourceAttributes` or
`nonResourceAttributes` as a SubjectAccessReview; WhoCan refuses selectors
(RBAC never reads them). WhoCan answers for a real request: a served
cluster-scoped resource is authorized with no namespace (only
ClusterRoleBindings grant it), a Namespace in its own namespace;
`status.namespace` is the scope used.

Internal to `runtime.server.kinds.insight`: imported by its modules only.
"""

from __future__ import annotations

from typing import Any

from runtime.server.kinds.base import PolicyContext
from runtime.server.kinds.insight.base import (
    RBAC_PLURALS, InsightStrategy, spec_request, spec_subject, validate_request,
)
from runtime.server.rbac import resource_attributes
from runtime.server.rbac.insight import MATRIX_VERBS, access_matrix, resources_named_in_rules, who_can_non_resource
from runtime.server.rbac.insight import explain
from runtime.server.rbac.insight import who_can
from runtime.server.rbac.user import UserInfo
from runtime.machinery.validation.fielderrors import FieldError, invalid, required

__all__ = ["AccessExplanationStrategy", "WhoCanStrategy", "AccessMatrixStrategy"]


class AccessExplanationStrategy(InsightStrategy):
    """Why is this request allowed or denied, and what nearly allows it?"""

    reads_why = "an AccessExplanation shows the bindings and roles of every namespace"

    def evaluate(self, policy: PolicyContext, user: UserInfo, namespace: str,
                 obj: dict[str, Any]) -> dict[str, Any]:
        spec = obj.get("spec") or {}
        errs = validate_request(spec)
        if errs:
            raise self.invalid(errs)
        self.require_reads(policy, user, RBAC_PLURALS)
        subject, _ = spec_subject(spec, user)
        attrs = spec_request(spec, subject)
        obj["status"] = explain(attrs, policy.rbac, cluster_scoped=self.cluster_scoped).to_dict()
        return obj


class WhoCanStrategy(InsightStrategy):
    """Who may make this request, and through which bindings and rules?"""

    reads_why = "a WhoCan answer shows the bindings and roles it reads"

    def evaluate(self, policy: PolicyContext, user: UserInfo, namespace: str,
                 obj: dict[str, Any]) -> dict[str, Any]:
        spec = obj.get("spec") or {}
        errs = validate_request(spec, selectors=False)
        if errs:
            raise self.invalid(errs)
        res, non = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
        if non is not None:
            self.require_reads(policy, user, RBAC_PLURALS[:2])
            found = who_can_non_resource(non["verb"], non["path"], source=policy.rbac)
            scope = ""
        else:
            group, resource = res.get("group") or "", res["resource"]
            scope = self.request_namespace(group, resource, res.get("namespace") or "",
                                           res.get("name") or "")
            self.require_reads(policy, user, RBAC_PLURALS[:2])
            if scope:
                self.require_reads(policy, user, RBAC_PLURALS[2:], namespace=scope)
            found = who_can(res["verb"], resource, group=group, subresource=res.get("subresource") or "",
                            namespace=scope, name=res.get("name") or "", source=policy.rbac)
        status: dict[str, Any] = {"subjects": [s.to_dict() for s in found]}
        if scope:
            status["namespace"] = scope
        obj["status"] = status
        return obj


class AccessMatrixStrategy(InsightStrategy):
    """What may this subject do to each resource, verb by verb?"""

    reads_why = "another subject's AccessMatrix answers what its SubjectAccessReviews would"

    def _validate(self, spec: dict[str, Any]) -> list[FieldError]:
        errs: list[FieldError] = []
        for i, verb in enumerate(spec.get("verbs") or ()):
            if not verb or "*" in verb:
                errs.append(invalid(f"spec.verbs[{i}]", verb, "must be one verb, not empty nor '*'"))
        for i, res in enumerate(spec.get("resources") or ()):
            name = res.get("resource") or ""
            if not name:
                errs.append(required(f"spec.resources[{i}].resource"))
            elif "*" in name or name.count("/") > 1:
                errs.append(invalid(f"spec.resources[{i}].resource", name,
                                    "must be a resource or resource/subresource, without '*'"))
        return errs

    def default_resources(self, policy: PolicyContext, namespace: str) -> list[tuple[str, str]]:
        """What the server serves (namespaced ones only for a namespace) and what rules name, sorted."""
        served = {(t.group, t.plural) for t in self.scheme.stored_types()
                  if t.namespaced or not namespace}
        named = {(g, r) for g, r in resources_named_in_rules(policy.rbac)
                 if not (namespace and self.cluster_scoped(g, r.partition("/")[0]))}
        return sorted(served | named, key=lambda gr: (gr[1], gr[0]))

    def evaluate(self, policy: PolicyContext, user: UserInfo, namespace: str,
                 obj: dict[str, Any]) -> dict[str, Any]:
        spec = obj.get("spec") or {}
        errs = self._validate(spec)
        if errs:
            raise self.invalid(errs)
        subject, other = spec_subject(spec, user)
        if other:
            reviews = self.scheme.by_kind("SubjectAccessReview", self.scheme.authz_group)
            self.require(policy, resource_attributes(user, "create", reviews.plural,
                                                     api_group=reviews.group))
        where = spec.get("namespace") or ""
        resources = [(r.get("group") or "", r["resource"]) for r in spec.get("resources") or ()]
        verbs = tuple(spec.get("verbs") or MATRIX_VERBS)
        matrix = access_matrix(subject, where, resources or self.default_resources(policy, where),
                               policy.rbac, verbs=verbs)
        obj["status"] = matrix.to_dict()
        return obj
