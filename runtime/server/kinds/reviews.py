"""The access reviews and SelfSubjectReview: virtual kinds, evaluated on create and never stored.

Who may create a review: RBAC decides, as Kubernetes' bootstrap policy grants
it, except that SelfSubjectAccessReview and SelfSubjectRulesReview are always
allowed (`anyone_may_create`), anonymous callers included (the spec: "a user
can always check themselves").

Validation (each strategy's `evaluate`, as Kubernetes' authorization validation; 422):

- exactly one of `resourceAttributes` and `nonResourceAttributes`;
- SubjectAccessReview / LocalSubjectAccessReview: `user` or `groups`;
- metadata empty (LocalSubjectAccessReview: except its namespace);
- LocalSubjectAccessReview: `resourceAttributes.namespace` defaulted to the
  path namespace, and must match it; no `nonResourceAttributes`;
- field/label selectors: `rawSelector` and `requirements` not both
  (neither set is an unrestricted request, as the spec's table says:
  Kubernetes' own validation refuses it); requirement keys required (label
  keys must be qualified names, label values valid ones);
  `values` required for In/NotIn, forbidden for Exists/DoesNotExist; the
  operator is required and one of In, NotIn, Exists, DoesNotExist (the
  spec's rule: 422 otherwise).

The answer: `status.allowed` always written, false included; RBAC only
allows or has no opinion, so `denied` stays unset. A `user` given without
`groups` belongs to no group. An empty namespace for a namespaced resource
means all namespaces, so only ClusterRoleBindings can allow it. A
`rawSelector` that does not parse, or requirements that cannot be used, are
ignored (selectors can only restrict) and reported in `evaluationError`, as
Kubernetes' `BuildEvaluationError` does; RBAC's own errors (a binding's
missing role) are in `reason` only (`RBAC: ...`), as Kubernetes' RBAC
authorizer returns them. SelfSubjectRulesReview needs
`spec.namespace` (400 `no namespace on request`) and answers its status
only (no metadata, an empty spec), as Kubernetes. A 422 names the group
and no kind (Kubernetes validates the internal object, whose kind is empty).
"""

from __future__ import annotations

from typing import Any

from runtime.machinery import errors
from runtime.machinery.kindinfo import KindInfo
from runtime.models import catalog
from runtime.server.kinds.base import PolicyContext, VirtualStrategy
from runtime.server.rbac import (
    Attributes, SelectorRequirement, non_resource_attributes, resource_attributes, rules_for,
)
from runtime.server.rbac.user import UserInfo
from runtime.machinery.selectors import (
    SelectorError, field_requirements_from_review, label_key_errors, parse_field_selector,
    parse_label_selector, requirements_from_review,
)
from runtime.machinery.validation.fielderrors import FieldError, forbidden, invalid, not_supported, required
from runtime.machinery.validation.labels import label_value_errors

__all__ = ["REVIEW_STRATEGIES", "attributes_choice_errors",
           "SubjectAccessReviewStrategy", "LocalSubjectAccessReviewStrategy",
           "SelfSubjectAccessReviewStrategy", "SelfSubjectRulesReviewStrategy", "SelfSubjectReviewStrategy"]

_RES = "spec.resourceAttributes"
_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


# ---- validation -------------------------------------------------------------------------------

def attributes_choice_errors(spec: dict[str, Any]) -> list[FieldError]:
    """A review's rule (kept by the insight kinds too): exactly one of resourceAttributes and nonResourceAttributes."""
    res, non = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if res is not None and non is not None:
        return [invalid("spec.nonResourceAttributes", non,
                        "cannot be specified in combination with resourceAttributes")]
    if res is None and non is None:
        return [invalid("spec.resourceAttributes", None,
                        "exactly one of nonResourceAttributes or resourceAttributes must be specified")]
    return []


def _validate_spec(spec: dict[str, Any], *, needs_subject: bool) -> list[FieldError]:
    errs = attributes_choice_errors(spec)
    res = spec.get("resourceAttributes")
    if needs_subject and not spec.get("user") and not spec.get("groups"):
        errs.append(invalid("spec.user", spec.get("user") or "", "at least one of user or group must be specified"))
    if res is not None:
        errs += _validate_selector(res.get("fieldSelector"), f"{_RES}.fieldSelector", label=False)
        errs += _validate_selector(res.get("labelSelector"), f"{_RES}.labelSelector", label=True)
    return errs


def _validate_selector(sel: dict[str, Any] | None, path: str, *, label: bool) -> list[FieldError]:
    if sel is None:
        return []
    errs: list[FieldError] = []
    raw, reqs = sel.get("rawSelector") or "", sel.get("requirements") or []
    if raw and reqs:
        errs.append(invalid(f"{path}.rawSelector", raw, "may not specified at the same time as requirements"))
    # Neither set is no restriction (the spec's rawSelector/requirements table), not an error.
    for i, req in enumerate(reqs):
        at = f"{path}.requirements[{i}]"
        key, op, values = req.get("key") or "", req.get("operator") or "", req.get("values") or []
        if not label and not key:
            errs.append(required(f"{at}.key", "must be specified"))
        if op in ("In", "NotIn"):
            if not values:
                errs.append(required(f"{at}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                errs.append(forbidden(f"{at}.values", "may not be specified when `operator` is 'Exists' or "
                                                      "'DoesNotExist'"))
        elif label:  # the spec: required, one of the four (apimachinery's words per selector kind)
            errs.append(invalid(f"{at}.operator", op, "not a valid selector operator"))
        else:
            errs.append(not_supported(f"{at}.operator", op, list(_OPERATORS)))
        if label:
            errs += [invalid(f"{at}.key", key, e) for e in label_key_errors(key)]
            errs += [invalid(f"{at}.values[{j}]", v, e) for j, v in enumerate(values) for e in label_value_errors(v)]
    return errs


def _validate_metadata(meta: dict[str, Any], *, keep_namespace: bool) -> list[FieldError]:
    # Kubernetes: ObjectMeta must be empty (managedFields aside; a LocalSubjectAccessReview's namespace too).
    ignored = {"managedFields", "namespace"} if keep_namespace else {"managedFields"}
    rest = {k: v for k, v in meta.items() if k not in ignored and v not in (None, "", {}, [])}
    if not rest:
        return []
    return [invalid("metadata", meta, "must be empty except for namespace" if keep_namespace else "must be empty")]


# ---- selectors --------------------------------------------------------------------------------

def _selector(sel: dict[str, Any] | None, *, label: bool) -> tuple[tuple[SelectorRequirement, ...], str]:
    """The requirements a (validated) selector restricts to, and the evaluation error if it was ignored."""
    if not sel:
        return (), ""
    which = f"{_RES}.{'labelSelector' if label else 'fieldSelector'}"
    raw = sel.get("rawSelector") or ""
    parsed: list[Any] = []
    failed = False
    # Requirements can only restrict: one that cannot be used is dropped, which authorizes the
    # broader request, and reported (Kubernetes keeps the usable ones: "partially ignored").
    if raw:
        try:
            parsed = list((parse_label_selector(raw) if label else parse_field_selector(raw)).requirements)
        except SelectorError:
            failed = True
    else:
        convert = requirements_from_review if label else field_requirements_from_review
        for req in sel.get("requirements") or ():
            try:
                parsed += convert([req]).requirements
            except SelectorError:
                failed = True
    out = []
    for r in parsed:
        if label:
            out.append(SelectorRequirement(r.key, str(r.operator), tuple(r.values)))
        else:
            out.append(SelectorRequirement(r.field, str(r.operator), (r.value,)))
    if not failed:
        return tuple(out), ""
    return tuple(out), f"{which} {'partially ' if out else ''}ignored due to parse error"


def _attributes(subject: UserInfo, spec: dict[str, Any]) -> tuple[Attributes, list[str]]:
    non = spec.get("nonResourceAttributes")
    if non is not None:
        return non_resource_attributes(subject, non.get("verb") or "", non.get("path") or ""), []
    res = spec["resourceAttributes"]
    fields, field_error = _selector(res.get("fieldSelector"), label=False)
    labels, label_error = _selector(res.get("labelSelector"), label=True)
    attrs = resource_attributes(
        subject, res.get("verb") or "", res.get("resource") or "", api_group=res.get("group") or "",
        api_version=res.get("version") or "*", subresource=res.get("subresource") or "",
        namespace=res.get("namespace") or "", name=res.get("name") or "",
        field_selector=fields, label_selector=labels)
    return attrs, [e for e in (field_error, label_error) if e]


# ---- evaluation -------------------------------------------------------------------------------

def _decide(policy: PolicyContext, attrs: Attributes, selector_errors: list[str]) -> dict[str, Any]:
    decision = policy.decide(attrs)
    status: dict[str, Any] = {"allowed": bool(decision.allowed)}
    if decision.reason:
        status["reason"] = decision.reason
    # RBAC's errors (a missing role) are in the reason only: Kubernetes' RBAC authorizer returns them
    # as its reason and no error, so kubectl auth can-i prints them once.
    if selector_errors:
        status["evaluationError"] = "; ".join(selector_errors)
    return status


class _Review(VirtualStrategy):
    """A virtual kind: `evaluate` answers a create; nothing is stored."""

    def invalid(self, errs: list[FieldError]) -> errors.Invalid:
        """Kubernetes' `NewInvalid(authorization.Kind(review.Kind), "", errs)`: the review was decoded into
        an internal object whose kind is empty, so the Status names the group only."""
        group = self.rt.group
        joined = str(errs[0]) if len(errs) == 1 else "[" + ", ".join(str(e) for e in errs) + "]"
        return errors.Invalid(f'.{group} "" is invalid: {joined}', group=group,
                              causes=[errors.Cause(e.type, e.message, e.field) for e in errs])


class SubjectAccessReviewStrategy(_Review):
    """May `spec.user`/`spec.groups` do this? (cluster-wide)"""

    #: A LocalSubjectAccessReview: namespaced, resource attributes only.
    local = False
    #: The subject is the caller (SelfSubjectAccessReview), not `spec.user`.
    self_review = False

    def evaluate(self, policy: PolicyContext, user: UserInfo, namespace: str, obj: dict[str, Any]) -> dict[str, Any]:
        spec = obj.get("spec") or {}
        meta = obj.get("metadata") or {}
        local = self.local
        res = spec.get("resourceAttributes")
        if local and res is not None and not res.get("namespace"):
            res["namespace"] = namespace  # the spec: defaulted when empty
        errs = _validate_spec(spec, needs_subject=not self.self_review)
        errs += _validate_metadata(meta, keep_namespace=local)
        if local:
            if res is not None and res.get("namespace") != namespace:
                errs.append(invalid(f"{_RES}.namespace", res.get("namespace"), "must match metadata.namespace"))
            if spec.get("nonResourceAttributes") is not None:
                errs.append(invalid("spec.nonResourceAttributes", spec["nonResourceAttributes"],
                                    "disallowed on this kind of request"))
        if errs:
            raise self.invalid(errs)
        if self.self_review:
            subject = user
        else:
            # As given: a user without groups belongs to no group; nothing is added.
            subject = UserInfo(spec.get("user") or "", uid=spec.get("uid") or "",
                               groups=tuple(spec.get("groups") or ()),
                               extra={k: tuple(v or ()) for k, v in (spec.get("extra") or {}).items()})
        attrs, selector_errors = _attributes(subject, spec)
        obj["status"] = _decide(policy, attrs, selector_errors)
        return obj


class LocalSubjectAccessReviewStrategy(SubjectAccessReviewStrategy):
    """A SubjectAccessReview about one namespace (the path's)."""

    local = True


class SelfSubjectAccessReviewStrategy(SubjectAccessReviewStrategy):
    """May I do this?"""

    self_review = True
    anyone_may_create = True


class SelfSubjectRulesReviewStrategy(_Review):
    """What may I do in `spec.namespace`? (400 without one)"""

    anyone_may_create = True

    def evaluate(self, policy: PolicyContext, user: UserInfo, namespace: str, obj: dict[str, Any]) -> dict[str, Any]:
        spec = obj.get("spec") or {}
        if not spec.get("namespace"):
            raise errors.BadRequest("no namespace on request")
        resource_rules, non_resource_rules, incomplete, error = rules_for(user, spec["namespace"], policy.rbac)
        status: dict[str, Any] = {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules,
                                  "incomplete": incomplete}
        if error:
            status["evaluationError"] = error
        # Kubernetes answers a new review holding only the status: no metadata, an empty spec.
        return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": {}, "spec": {}, "status": status}


class SelfSubjectReviewStrategy(_Review):
    """Who am I? (authentication group)"""

    def evaluate(self, policy: PolicyContext, user: UserInfo, namespace: str, obj: dict[str, Any]) -> dict[str, Any]:
        obj["status"] = {"userInfo": user.as_json()}
        return obj


#: The strategy of each review kind (`runtime.models.catalog.REVIEW_KINDS`).
REVIEW_STRATEGIES: dict[KindInfo, type[VirtualStrategy]] = {
    catalog.SUBJECT_ACCESS_REVIEW: SubjectAccessReviewStrategy,
    catalog.LOCAL_SUBJECT_ACCESS_REVIEW: LocalSubjectAccessReviewStrategy,
    catalog.SELF_SUBJECT_ACCESS_REVIEW: SelfSubjectAccessReviewStrategy,
    catalog.SELF_SUBJECT_RULES_REVIEW: SelfSubjectRulesReviewStrategy,
    catalog.SELF_SUBJECT_REVIEW: SelfSubjectReviewStrategy,
}
