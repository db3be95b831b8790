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


class RBACAuthorizer:
    """Authorizes requests from the roles and bindings a `RoleSource` holds.

    Synchronous and pure apart from reading the source; cost grows with the
    bindings that may apply to the user (as the source indexes them), not with
    all bindings.
    """

    def __init__(self, source: RoleSource) -> None:
        self._source = source

    @property
    def source(self) -> RoleSource:
        """The `RoleSource` rules are read from."""
        return self._source

    def authorize(self, attrs: Attributes) -> Decision:
        """Return the `Decision` for `attrs`; never raises for bad policy data."""
        if SYSTEM_MASTERS in attrs.user.groups:
            return Decision(allowed=True)
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
