"""The authenticated caller: `UserInfo`, and the well-known user and group names.

A `UserInfo` is what the authenticator (or impersonation) hands to
authorization. The authenticator, not RBAC, adds the implicit groups
(`system:authenticated`, and for service accounts `system:serviceaccounts`
and `system:serviceaccounts:<ns>`); `service_account_user` builds such a user
for tests and in-process callers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = [
    "UserInfo",
    "SYSTEM_MASTERS", "ALL_AUTHENTICATED", "ALL_UNAUTHENTICATED", "ANONYMOUS",
    "SERVICE_ACCOUNT_PREFIX", "ALL_SERVICE_ACCOUNTS",
    "service_account_username", "split_service_account_username",
    "service_account_groups", "service_account_user",
]

#: Members may do anything (kube-apiserver's privileged-group authorizer).
SYSTEM_MASTERS = "system:masters"
ALL_AUTHENTICATED = "system:authenticated"
ALL_UNAUTHENTICATED = "system:unauthenticated"
ANONYMOUS = "system:anonymous"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
ALL_SERVICE_ACCOUNTS = "system:serviceaccounts"

_EMPTY_EXTRA: Mapping[str, tuple[str, ...]] = MappingProxyType({})


@dataclass(frozen=True)
class UserInfo:
    """Who is asking: name, uid, groups and extra attributes.

    `groups` is stored as a tuple and `extra` as a read-only mapping of
    tuples, whatever sequences are passed, so a `UserInfo` is immutable and
    hashable (`extra` takes no part in the hash).
    """

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: _EMPTY_EXTRA, hash=False)

    def __post_init__(self) -> None:
        # Accept lists from JSON; store immutable forms.
        if not isinstance(self.groups, tuple):
            object.__setattr__(self, "groups", tuple(self.groups))
        if not isinstance(self.extra, MappingProxyType):
            object.__setattr__(
                self, "extra", MappingProxyType({k: tuple(v) for k, v in self.extra.items()}))

    def in_group(self, group: str) -> bool:
        """Return whether `group` is one of the user's groups."""
        return group in self.groups

    def as_json(self) -> dict[str, Any]:
        """authentication/v1's UserInfo (reviews, TokenReview, audit events): empty fields left out."""
        info: dict[str, Any] = {"username": self.name}
        if self.uid:
            info["uid"] = self.uid
        if self.groups:
            info["groups"] = list(self.groups)
        if self.extra:
            info["extra"] = {k: list(v) for k, v in self.extra.items()}
        return info


def service_account_username(namespace: str, name: str) -> str:
    """Return the user name of a service account: `system:serviceaccount:<ns>:<name>`."""
    return f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"


def split_service_account_username(username: str) -> tuple[str, str] | None:
    """Return `(namespace, name)` for a service-account user name, else None."""
    if not username.startswith(SERVICE_ACCOUNT_PREFIX):
        return None
    namespace, sep, name = username[len(SERVICE_ACCOUNT_PREFIX):].partition(":")
    if not sep or not namespace or not name or ":" in name:
        return None
    return namespace, name


def service_account_groups(namespace: str) -> tuple[str, ...]:
    """Return the groups the authenticator gives a service account of `namespace`.

    `("system:serviceaccounts", "system:serviceaccounts:<ns>")`; add
    `system:authenticated` too when building a full authenticated user.
    """
    return (ALL_SERVICE_ACCOUNTS, f"{ALL_SERVICE_ACCOUNTS}:{namespace}")


def service_account_user(namespace: str, name: str, *, uid: str = "") -> UserInfo:
    """Return the `UserInfo` an authenticator builds for a service account.

    Groups: `system:serviceaccounts`, `system:serviceaccounts:<ns>`,
    `system:authenticated`, in that order (as Kubernetes' token authenticator).
    """
    return UserInfo(
        name=service_account_username(namespace, name),
        uid=uid,
        groups=(*service_account_groups(namespace), ALL_AUTHENTICATED),
    )

