"""Who may point a policy at params: kube's `authz.go` of the policy kinds and their bindings.

A policy's `paramKind` lets it read every object of that kind, and a
binding's `paramRef` names which; so kube-apiserver asks the writer for read
access to what they name, and refuses the write with a `Forbidden` field
error when they lack it (`spec.paramKind`, `spec.paramRef`: a 422 Invalid,
as the strategies' Validate returns it):

- a policy with a paramKind: `get` on the kind's resource, every name in
  every namespace (`*`); the resource is `*` when the kind does not resolve,
  the group and version too when the apiVersion does not parse;
- a binding with a paramRef: `get` on the referenced name (`list` for a
  selector) in the paramRef's namespace, of the bound policy's paramKind
  (`*` when the policy is not found or has none).

Members of `system:masters` skip the check, and an update that leaves the
paramKind (a binding: the paramRef and the policy) as it was is not checked
again, as kube. The check runs only on a well-formed object (kube checks
after validation succeeds), so a malformed one gets its validation errors.
The messages are kube's, its `%v` of the user (`&{name uid [groups] map[]}`)
and, in the binding's, the user and the verb in the order kube prints them.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery import errors
from runtime.machinery.scheme import Scheme
from runtime.machinery.validation import FieldError, invalid_error
from runtime.machinery.validation.fielderrors import forbidden
from runtime.server.kinds.base import AdmissionRequest, PolicyContext
from runtime.server.rbac.attributes import resource_attributes
from runtime.server.rbac import escalation_allowed
from runtime.server.rbac.user import UserInfo

__all__ = ["authorize_param_kind", "authorize_param_ref", "go_user"]


def go_user(user: UserInfo) -> str:
    """Go's `%v` of a `*user.DefaultInfo`: `&{name uid [group ...] map[key:[value ...] ...]}`."""
    extra = " ".join(f"{key}:[{' '.join(values)}]" for key, values in sorted(user.extra.items()))
    return f"&{{{user.name} {user.uid} [{' '.join(user.groups)}] map[{extra}]}}"


def _param_resource(scheme: Scheme, param_kind: dict[str, Any] | None) -> tuple[str, str, str]:
    """(group, version, resource) to authorize for `param_kind`, `*` for what does not parse or resolve."""
    if not param_kind:
        return "*", "*", "*"
    api_version = param_kind.get("apiVersion") or ""
    if api_version.count("/") > 1 or not api_version:
        return "*", "*", "*"
    group, _, version = api_version.rpartition("/")
    rt = scheme.by_api_version_kind(api_version, param_kind.get("kind") or "")
    return group, version, rt.plural if rt is not None else "*"


def _refuse(request: AdmissionRequest, group_kind: str, error: FieldError) -> errors.Invalid:
    return invalid_error(request.resource.kind, group_kind, request.name, [error])


def authorize_param_kind(scheme: Scheme, policy: PolicyContext, request: AdmissionRequest,
                         group_kind: str) -> None:
    """Raise Invalid (spec.paramKind Forbidden) unless the writer may get every object of the paramKind."""
    param_kind = (request.obj.get("spec") or {}).get("paramKind")
    if not param_kind or escalation_allowed(request.user):
        return
    if request.old is not None and (request.old.get("spec") or {}).get("paramKind") == param_kind:
        return
    group, version, resource = _param_resource(scheme, param_kind)
    attrs = resource_attributes(request.user, "get", resource, api_group=group, api_version=version,
                                namespace="*", name="*")
    if not policy.decide(attrs).allowed:
        raise _refuse(request, group_kind, forbidden(
            "spec.paramKind", f'user {go_user(request.user)} must have "get" permission on all objects of the '
                              f'referenced paramKind (kind={param_kind.get("kind") or ""}, '
                              f'apiVersion={param_kind.get("apiVersion") or ""})'))


async def authorize_param_ref(scheme: Scheme, policy: PolicyContext, request: AdmissionRequest, group_kind: str,
                              policy_kind: str) -> None:
    """Raise Invalid (spec.paramRef Forbidden) unless the writer may get (list, for a selector) what the
    binding's paramRef names, of its policy's (`policy_kind`) paramKind."""
    spec = request.obj.get("spec") or {}
    param_ref = spec.get("paramRef")
    if not param_ref or escalation_allowed(request.user):
        return
    old_spec = (request.old or {}).get("spec") or {}
    if request.old is not None and old_spec.get("paramRef") == param_ref and \
            old_spec.get("policyName") == spec.get("policyName"):
        return
    param_kind = None
    policy_rt = scheme.by_kind(policy_kind, group=request.resource.group)
    if policy_rt is not None and spec.get("policyName"):
        stored = await policy.read_current(policy_rt, policy_rt.storage_key(None, spec["policyName"]),
                                           spec["policyName"])
        param_kind = None if stored is None else (stored.obj.get("spec") or {}).get("paramKind")
    group, version, resource = _param_resource(scheme, param_kind)
    name = param_ref.get("name") or ""
    verb = "get" if name else "list"
    attrs = resource_attributes(request.user, verb, resource, api_group=group, api_version=version,
                                namespace=param_ref.get("namespace") or "", name=name)
    if not policy.decide(attrs).allowed:
        # kube prints the verb where the user goes and the user where the verb goes (authz.go), kept as clients
        # see it.
        raise _refuse(request, group_kind, forbidden(
            "spec.paramRef", f'user {verb} does not have "{go_user(request.user)}" permission on the object '
                             "referenced by paramRef"))
