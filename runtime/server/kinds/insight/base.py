"""What the insight kinds share: their context, the read checks, the subject and request of a spec.

Each insight kind (`insight.<domain>/v1`) is virtual like the access
reviews: a create is answered by the strategy's `evaluate`, nothing is
stored. Every caller may create one (`anyone_may_create`); what decides is
whether the caller may read what the answer shows, asked of the authorizer
as the caller (`require_reads`): a 403 names the resource and scope the
caller lacks and why the kind needs it.

Answers come from `runtime.server.rbac.insight` over the authorizer's own index
(`policy.rbac`, the `RBACIndex` every request is decided with), never a
second copy of the policy.

Validation errors are 422s naming the kind (`WhoCan.insight.svc.io "" is
invalid: spec.resourceAttributes.verb: Required value`), as Kubernetes
validates a custom kind.

Internal to `runtime.server.kinds.insight`: imported by its modules only.
"""

from __future__ import annotations

from typing import Any, Protocol

from runtime.machinery import errors
from runtime.server.kinds.base import PolicyContext, VirtualStrategy
from runtime.server.kinds.reviews import attributes_choice_errors
from runtime.server.rbac import non_resource_attributes, resource_attributes
from runtime.server.rbac.attributes import Attributes
from runtime.server.rbac.describe import describe_forbidden
from runtime.server.rbac.user import UserInfo
from runtime.machinery.validation.fielderrors import FieldError, forbidden as forbidden_field, invalid, invalid_error, required

__all__ = ["InsightContext", "InsightStrategy", "spec_subject", "spec_request", "validate_request",
           "RBAC_PLURALS"]

#: The RBAC resources, cluster-scoped first: what an answer about the whole policy reads.
RBAC_PLURALS = ("clusterroles", "clusterrolebindings", "roles", "rolebindings")


class InsightContext(PolicyContext, Protocol):
    """What an insight kind reads: decisions, the RBAC index, and the watch cache of a kind.

    `kind_cache(rt).list(prefix)` returns the cached objects under a key
    prefix (`RegistryCore` is one).
    """

    def kind_cache(self, rt: Any) -> Any: ...


class InsightStrategy(VirtualStrategy):
    """A virtual insight kind: `evaluate` answers a create; the caller's reads are checked first."""

    anyone_may_create = True
    supports_strategic_merge = False
    #: Why the kind reads what it reads, for the 403 message.
    reads_why = "the answer shows the RBAC policy it reads"

    def invalid(self, errs: list[FieldError]) -> errors.Invalid:
        """The 422 of a bad spec: `Kind.group "" is invalid: ...`."""
        return invalid_error(self.rt.kind, self.rt.group_kind, "", errs)

    def forbidden(self, attrs: Attributes) -> errors.Forbidden:
        """The 403 when the caller may not make the read `attrs` describes."""
        return errors.Forbidden(f"{self.rt.group_resource} is forbidden: {describe_forbidden(attrs)}: "
                                f"{self.reads_why}", group=self.rt.group, kind=self.rt.plural)

    def require(self, policy: PolicyContext, attrs: Attributes) -> None:
        """Raise Forbidden unless the authorizer allows `attrs` (the caller's own read)."""
        if not policy.decide(attrs).allowed:
            raise self.forbidden(attrs)

    def require_reads(self, policy: PolicyContext, user: UserInfo, plurals: tuple[str, ...],
                      namespace: str = "", group: str | None = None) -> None:
        """Raise Forbidden unless `user` may list each of `plurals` (RBAC group by default) in `namespace`."""
        api_group = self.scheme.rbac_group if group is None else group
        for plural in plurals:
            self.require(policy, resource_attributes(user, "list", plural, api_group=api_group,
                                                     namespace=namespace))

    def cluster_scoped(self, api_group: str, resource: str) -> bool:
        """Whether the server serves `resource` cluster-scoped, so RoleBindings never grant it.

        A Namespace is not: it is authorized in its own namespace. Unknown
        (unserved) resources are not.
        """
        for t in self.scheme.types:
            if t.group == api_group and t.plural == resource:
                return not t.namespaced and not t.strategy.namespace_kind
        return False

    def request_namespace(self, api_group: str, resource: str, namespace: str, name: str) -> str:
        """The namespace a real request for a served resource is authorized in (as the registry does).

        Cluster-scoped kinds: ""; a Namespace: its own name; namespaced and
        unserved resources: `namespace` as given.
        """
        for t in self.scheme.types:
            if t.group == api_group and t.plural == resource:
                if t.namespaced:
                    return namespace
                return t.strategy.authorization_namespace(namespace, name)
        return namespace


def spec_subject(spec: dict[str, Any], caller: UserInfo) -> tuple[UserInfo, bool]:
    """Return the subject a spec names (`user`, `groups`, `extra`, `uid`), or the caller; and whether it is another.

    As a SubjectAccessReview: a user given without groups belongs to no group.
    """
    if not spec.get("user") and not spec.get("groups"):
        return caller, False
    return UserInfo(spec.get("user") or "", uid=spec.get("uid") or "",
                    groups=tuple(spec.get("groups") or ()),
                    extra={k: tuple(v or ()) for k, v in (spec.get("extra") or {}).items()}), True


def validate_request(spec: dict[str, Any], *, selectors: bool = True) -> list[FieldError]:
    """The rules of a request spec: exactly one of resourceAttributes and nonResourceAttributes, a verb,
    a resource or a path (`/...`); `selectors=False` refuses field and label selectors."""
    errs = attributes_choice_errors(spec)
    res, non = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if res is not None:
        if not res.get("verb"):
            errs.append(required("spec.resourceAttributes.verb"))
        if not res.get("resource"):
            errs.append(required("spec.resourceAttributes.resource"))
        elif "/" in res["resource"] or "*" in res["resource"]:
            errs.append(invalid("spec.resourceAttributes.resource", res["resource"],
                                "must be one resource, without '/' or '*' (use subresource)"))
        if not selectors:
            for field in ("fieldSelector", "labelSelector"):
                if res.get(field) is not None:
                    errs.append(forbidden_field(f"spec.resourceAttributes.{field}",
                                                "RBAC does not read selectors"))
    if non is not None:
        if not non.get("verb"):
            errs.append(required("spec.nonResourceAttributes.verb"))
        path = non.get("path") or ""
        if not path:
            errs.append(required("spec.nonResourceAttributes.path"))
        elif not path.startswith("/"):
            errs.append(invalid("spec.nonResourceAttributes.path", path, "must start with '/'"))
    return errs


def spec_request(spec: dict[str, Any], user: UserInfo) -> Attributes:
    """Return the `Attributes` of a validated request spec, made by `user` (selectors are not read)."""
    non = spec.get("nonResourceAttributes")
    if non is not None:
        return non_resource_attributes(user, non.get("verb") or "", non.get("path") or "")
    res = spec["resourceAttributes"]
    return resource_attributes(user, res.get("verb") or "", res.get("resource") or "",
                               api_group=res.get("group") or "", api_version=res.get("version") or "*",
                               subresource=res.get("subresource") or "",
                               namespace=res.get("namespace") or "", name=res.get("name") or "")
