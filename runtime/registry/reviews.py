"""The access reviews and SelfSubjectReview: evaluated by the RBAC authorizer, never stored.

status.allowed is always written (false included); RBAC only allows or has
no opinion, so `denied` stays unset. A `user` given without `groups` belongs
to no group. An empty namespace for a namespaced resource means all
namespaces, so only ClusterRoleBindings can allow it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from runtime import errors
from runtime.rbac import SelectorRequirement, non_resource_attributes, resource_attributes, rules_for
from runtime.rbac.user import UserInfo
from runtime.scheme import ResourceType
from runtime.selectors import SelectorError, parse_field_selector, parse_label_selector
from runtime.validation.fielderrors import FieldError, invalid, invalid_error, required

if TYPE_CHECKING:
    from runtime.registry.registry import Registry

__all__ = ["evaluate_review"]


def _selector_requirements(attrs: dict[str, Any], which: str, path: str,
                           errs: list[FieldError]) -> tuple[SelectorRequirement, ...]:
    sel = attrs.get(which)
    if not sel:
        return ()
    raw, reqs = sel.get("rawSelector") or "", sel.get("requirements") or []
    if raw and reqs:
        errs.append(invalid(f"{path}.{which}.rawSelector", raw,
                            "may not specified at the same time as requirements"))
        return ()
    out: list[SelectorRequirement] = []
    if raw:
        try:
            parsed = parse_label_selector(raw) if which == "labelSelector" else parse_field_selector(raw)
        except SelectorError as exc:
            errs.append(invalid(f"{path}.{which}.rawSelector", raw, str(exc)))
            return ()
        for r in parsed.requirements:
            key = getattr(r, "key", None) or getattr(r, "field", "")
            values = getattr(r, "values", None)
            if values is None:
                values = (getattr(r, "value", ""),)
            out.append(SelectorRequirement(key, str(r.operator), tuple(values)))
        return tuple(out)
    for i, req in enumerate(reqs):
        at = f"{path}.{which}.requirements[{i}]"
        op, values = req.get("operator") or "", req.get("values") or []
        if not req.get("key"):
            errs.append(required(f"{at}.key"))
        if op in ("In", "NotIn"):
            if not values:
                errs.append(required(f"{at}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                errs.append(invalid(f"{at}.values", values,
                                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        else:
            errs.append(invalid(f"{at}.operator", op, "not a valid selector operator"))
        out.append(SelectorRequirement(req.get("key") or "", op, tuple(values)))
    return tuple(out)


def _attributes(subject: UserInfo, spec: dict[str, Any], errs: list[FieldError]):
    res, non = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if (res is None) == (non is None):
        errs.append(invalid("spec.resourceAttributes", res,
                            "exactly one of nonResourceAttributes or resourceAttributes must be specified"))
        return None
    if non is not None:
        return non_resource_attributes(subject, non.get("verb") or "", non.get("path") or "")
    fields = _selector_requirements(res, "fieldSelector", "spec.resourceAttributes", errs)
    labels = _selector_requirements(res, "labelSelector", "spec.resourceAttributes", errs)
    return resource_attributes(
        subject, res.get("verb") or "", res.get("resource") or "", api_group=res.get("group") or "",
        api_version=res.get("version") or "", subresource=res.get("subresource") or "",
        namespace=res.get("namespace") or "", name=res.get("name") or "",
        field_selector=fields, label_selector=labels)


def _decide(registry: "Registry", attrs) -> dict[str, Any]:
    decision = registry.authorizer.authorize(attrs)
    status: dict[str, Any] = {"allowed": bool(decision.allowed)}
    if decision.reason:
        status["reason"] = decision.reason
    if decision.evaluation_error:
        status["evaluationError"] = decision.evaluation_error
    return status


def evaluate_review(registry: "Registry", user: UserInfo, rt: ResourceType, namespace: str,
                    obj: dict[str, Any]) -> dict[str, Any]:
    """Fill `status` of a review object (a dict of kind `rt.kind`); 422 for an invalid spec."""
    errs: list[FieldError] = []
    spec = obj.get("spec") or {}
    kind = rt.kind
    if kind == "SelfSubjectReview":
        info: dict[str, Any] = {"username": user.name, "groups": list(user.groups)}
        if user.uid:
            info["uid"] = user.uid
        if user.extra:
            info["extra"] = {k: list(v) for k, v in user.extra.items()}
        obj["status"] = {"userInfo": info}
        return obj
    if kind == "SelfSubjectRulesReview":
        if not spec.get("namespace"):
            raise errors.BadRequest("no namespace on request")
        resource_rules, non_resource_rules, incomplete, error = rules_for(user, spec["namespace"], registry.rbac)
        status: dict[str, Any] = {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules,
                                  "incomplete": incomplete}
        if error:
            status["evaluationError"] = error
        obj["status"] = status
        return obj
    if kind in ("SubjectAccessReview", "LocalSubjectAccessReview"):
        if not spec.get("user") and not spec.get("groups"):
            errs.append(invalid("spec.user", "", "at least one of user or group must be specified"))
        subject = UserInfo(spec.get("user") or "", uid=spec.get("uid") or "", groups=tuple(spec.get("groups") or ()),
                           extra={k: tuple(v) for k, v in (spec.get("extra") or {}).items()})
    else:  # SelfSubjectAccessReview: the caller's own identity
        subject = user
    if kind == "LocalSubjectAccessReview":
        res = spec.get("resourceAttributes")
        if spec.get("nonResourceAttributes") is not None:
            errs.append(invalid("spec.nonResourceAttributes", spec["nonResourceAttributes"],
                                "disallowed on this kind of request"))
        if res is not None:
            if not res.get("namespace"):
                res["namespace"] = namespace
            elif res["namespace"] != namespace:
                raise errors.BadRequest(f"spec.resourceAttributes.namespace must match namespace: {namespace}")
    attrs = _attributes(subject, spec, errs)
    if errs:
        raise invalid_error(kind, f"{kind}.{rt.group}", obj["metadata"].get("name", ""), errs)
    obj["status"] = _decide(registry, attrs)
    return obj
