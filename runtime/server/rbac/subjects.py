"""Does a binding subject apply to a user? (Kubernetes' `appliesToUser`.)

- `User`: the user's name equals the subject's name.
- `Group`: the subject's name is one of the user's groups.
- `ServiceAccount`: the user is `system:serviceaccount:<ns>:<name>`, where
  `<ns>` is the subject's namespace or, when empty, the RoleBinding's
  namespace. In a ClusterRoleBinding there is no namespace to default to, so
  such a subject never matches (as Kubernetes).

Beyond Kubernetes, which silently skips them, a subject of unknown kind or a
User/Group subject with a namespace is a *problem*: it never matches, and the
authorizer reports it as an evaluation error (the spec asks for an error).

Internal to `runtime.server.rbac`: imported by its modules only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runtime.machinery.validation.gofmt import go_quote
from runtime.server.rbac.user import UserInfo, service_account_username

__all__ = [
    "USER_KIND", "GROUP_KIND", "SERVICE_ACCOUNT_KIND",
    "subject_problem", "applies_to_user", "subject_index_key", "describe_subject",
]

USER_KIND = "User"
GROUP_KIND = "Group"
SERVICE_ACCOUNT_KIND = "ServiceAccount"

#: A binding subject as Kubernetes serialises it (`kind`, `name`, `namespace`), as the matchers read it.
SubjectDict = Mapping[str, Any]


def subject_problem(subject: SubjectDict) -> str:
    """Return why `subject` cannot be evaluated, or "" when it can."""
    kind = subject.get("kind") or ""
    if kind in (USER_KIND, GROUP_KIND):
        namespace = subject.get("namespace") or ""
        if namespace:
            return (f"{kind} subject {go_quote(subject.get('name') or '')} "
                    f"must not set a namespace (got {go_quote(namespace)})")
        return ""
    if kind == SERVICE_ACCOUNT_KIND:
        return ""
    return f"unsupported subject kind {go_quote(kind)}"


def applies_to_user(user: UserInfo, subject: SubjectDict, binding_namespace: str) -> bool:
    """Return whether `subject` names `user`; `binding_namespace` is "" for a ClusterRoleBinding.

    A subject with a problem (see `subject_problem`) never applies.
    """
    kind = subject.get("kind")
    if kind == USER_KIND:
        return not subject.get("namespace") and user.name == subject.get("name")
    if kind == GROUP_KIND:
        return not subject.get("namespace") and subject.get("name") in user.groups
    if kind == SERVICE_ACCOUNT_KIND:
        namespace = subject.get("namespace") or binding_namespace
        if not namespace:
            return False
        return user.name == service_account_username(namespace, subject.get("name") or "")
    return False


def subject_index_key(subject: SubjectDict, binding_namespace: str) -> tuple[str, str] | None:
    """Return `("user", name)` or `("group", name)` under which `subject` can match, else None.

    A ServiceAccount subject is keyed by its user name. None for a subject
    that never matches (problem, or service account without any namespace).
    """
    if subject_problem(subject):
        return None
    kind = subject.get("kind")
    name = subject.get("name") or ""
    if kind == USER_KIND:
        return ("user", name)
    if kind == GROUP_KIND:
        return ("group", name)
    namespace = subject.get("namespace") or binding_namespace
    if not namespace:
        return None
    return ("user", service_account_username(namespace, name))


def describe_subject(subject: SubjectDict, binding_namespace: str) -> str:
    """Return the subject as Kubernetes' `describeSubject`: `User "alice"`, `ServiceAccount "name/ns"`."""
    kind = subject.get("kind") or ""
    name = subject.get("name") or ""
    if kind == SERVICE_ACCOUNT_KIND:
        namespace = subject.get("namespace") or binding_namespace
        return f"{kind} {go_quote(name + '/' + namespace)}"
    return f"{kind} {go_quote(name)}"
