"""Where RBAC reads roles and bindings from: the `RoleSource` protocol.

Kubernetes' authorizer reads listers (informer caches); a `RoleSource` is the
same, synchronous and in memory. `RBACIndex` is the implementation kept
current from the watch; tests may pass any object with these four methods.

`PolicySource` adds listing every object, for questions about the whole
policy rather than one user (`runtime.server.rbac.insight`: who can, lint, diff).

Internal to `runtime.server.rbac`: imported by its modules only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable

from runtime.server.rbac.user import UserInfo

__all__ = ["RoleSource", "PolicySource"]


@runtime_checkable
class RoleSource(Protocol):
    """Synchronous reads of ClusterRoles, Roles and the bindings that may apply to a user.

    Objects are Kubernetes JSON dicts; callers never mutate them.

    The binding methods return *candidates*: every binding with a subject that
    could match `user`, plus every binding with a subject that cannot be judged
    (unknown kind, namespace on a User or Group) so its error gets reported.
    They may return more; the authorizer checks each subject again. The order
    returned is the evaluation order ("first match wins").
    """

    def get_cluster_role(self, name: str) -> dict[str, Any] | None:
        """Return the ClusterRole `name`, or None."""
        ...

    def get_role(self, namespace: str, name: str) -> dict[str, Any] | None:
        """Return the Role `namespace/name`, or None."""
        ...

    def cluster_role_bindings_for(self, user: UserInfo) -> Iterable[dict[str, Any]]:
        """Return candidate ClusterRoleBindings for `user`."""
        ...

    def role_bindings_for(self, namespace: str, user: UserInfo) -> Iterable[dict[str, Any]]:
        """Return candidate RoleBindings of `namespace` for `user`."""
        ...


@runtime_checkable
class PolicySource(RoleSource, Protocol):
    """A `RoleSource` that also lists everything it holds.

    Each listing is sorted by (namespace, name); objects are Kubernetes JSON
    dicts that callers never mutate.
    """

    def list_cluster_roles(self) -> Iterable[dict[str, Any]]:
        """Return every ClusterRole."""
        ...

    def list_roles(self) -> Iterable[dict[str, Any]]:
        """Return every Role of every namespace."""
        ...

    def list_cluster_role_bindings(self) -> Iterable[dict[str, Any]]:
        """Return every ClusterRoleBinding."""
        ...

    def list_role_bindings(self) -> Iterable[dict[str, Any]]:
        """Return every RoleBinding of every namespace."""
        ...
