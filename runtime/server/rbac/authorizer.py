"""The RBAC authorizer: `RBACAuthorizer(source).authorize(attrs) -> Decision`.

Order, as kube-apiserver evaluates it:

1. a member of `system:masters` is allowed everything, reason "" (the
   apiserver's privileged-group authorizer, which runs before RBAC);
2. rules from ClusterRoleBindings that apply to the user;
3. rules from RoleBindings of the request's namespace (only when the
   namespace is not "").

The first rule that allows wins; the reason names it:
`RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "r" to User "u"`.

RBAC never denies: a request no rule allows gets "no opinion"
(`allowed=False`). Errors met on the way (unresolvable roleRef, subject of
unknown kind) do not stop evaluation; when nothing allowed, they are joined as
`utilerrors.NewAggregate` does and given both as `reason` (`RBAC: <errors>`,
exactly Kubernetes' reason) and as `evaluation_error` (the bare aggregate,
for the insight tools; an access review's status carries the errors in its
reason only, as Kubernetes' RBAC authorizer returns them). When allowed,
errors met earlier are dropped, as Kubernetes does.

Decisions are cached when the source says when it changes (a `generation`
attribute that grows with every change, as `RBACIndex`'s): keyed by what RBAC
reads of a request (user name and groups, verb, group, resource, subresource,
namespace, name; the path of a non-resource request), dropped as a whole once
the source's generation moves, and at most `cache_size` of them (all dropped
when full). A GET served from the watch cache then asks RBAC a dict lookup,
not a walk of the user's bindings (issue 41). RBAC reads neither the uid, the
extra attributes, the API version nor the selectors of a request, so they are
not in the key.
"""

from __future__ import annotations

from dataclasses import dataclass

from runtime.machinery.validation.gofmt import aggregate_message
from runtime.server.rbac.attributes import Attributes
from runtime.server.rbac.resolver import visit_rules_for
from runtime.server.rbac.rules import rule_allows
from runtime.server.rbac.source import RoleSource
from runtime.server.rbac.user import SYSTEM_MASTERS

__all__ = ["Decision", "RBACAuthorizer"]


@dataclass(frozen=True)
class Decision:
    """The outcome: allowed, or no opinion (RBAC never denies).

    `reason` is Kubernetes' reason text; `evaluation_error` the aggregated
    errors met while evaluating ("" when none, always "" when allowed).
    """

    allowed: bool
    reason: str = ""
    evaluation_error: str = ""


_ALLOWED = Decision(allowed=True)


class RBACAuthorizer:
    """Authorizes requests from the roles and bindings a `RoleSource` holds.

    Synchronous and pure apart from reading the source; cost grows with the
    bindings that may apply to the user (as the source indexes them), not with
    all bindings.
    """

    def __init__(self, source: RoleSource, *, cache_size: int = 4096) -> None:
        self._source = source
        self._cached = isinstance(getattr(source, "generation", None), int) and cache_size > 0
        self._cache_size = cache_size
        self._generation = -1  # of the source, when the cached decisions were made
        self._decisions: dict[tuple, Decision] = {}

    @property
    def source(self) -> RoleSource:
        """The `RoleSource` rules are read from."""
        return self._source

    def authorize(self, attrs: Attributes) -> Decision:
        """Return the `Decision` for `attrs`; never raises for bad policy data."""
        user = attrs.user
        if SYSTEM_MASTERS in user.groups:
            return _ALLOWED
        if not self._cached:
            return self._decide(attrs)
        decisions = self._decisions
        generation = self._source.generation  # type: ignore[attr-defined]
        if generation != self._generation:  # the policy changed: every decision may have
            decisions.clear()
            self._generation = generation
        key = (user.name, user.groups, attrs.verb, attrs.api_group, attrs.resource, attrs.subresource,
               attrs.namespace, attrs.name, attrs.resource_request, attrs.path)
        decision = decisions.get(key)
        if decision is None:
            decision = self._decide(attrs)
            if len(decisions) >= self._cache_size:
                decisions.clear()
            decisions[key] = decision
        return decision

    def _decide(self, attrs: Attributes) -> Decision:
        errors: list[str] = []
        for source, rule, error in visit_rules_for(attrs.user, attrs.namespace, self._source):
            if rule is not None and rule_allows(attrs, rule):
                return Decision(allowed=True, reason=f"RBAC: allowed by {source}")
            if error:
                errors.append(error)
        if not errors:
            return Decision(allowed=False)
        message = aggregate_message(errors)
        return Decision(allowed=False, reason=f"RBAC: {message}", evaluation_error=message)
