"""Helpers that name policy objects in insight results, from the Kubernetes JSON dicts a `PolicySource` holds.

The values are `runtime.models.insight`'s (`InsightObjectRef`,
`InsightSubject`, `InsightGrant`) and `runtime.models.rbac.PolicyRule`:

- `object_ref(obj)`: kind, namespace and name of a role or binding;
- `role_ref(binding)`: what a binding's roleRef names (a `Role` lives in the
  binding's namespace, a `ClusterRole` has none);
- `subject_of(subject, binding_namespace)`: a binding subject, a
  ServiceAccount's namespace defaulted to the RoleBinding's; None for a
  subject that can never match anyone (see `runtime.server.rbac.subjects`);
- `rule_of(rule)`: a PolicyRule dict as the model (empty lists left out);
- `user_name(subject)`: the user name a subject authenticates as;
- `probe_user(subject)`: the `UserInfo` that is exactly that subject for the
  authorizer: a User or ServiceAccount by user name with no groups, a Group
  as a nameless user in only that group.

Internal to `runtime.server.rbac.insight`: imported by its modules only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runtime.models.insight import InsightObjectRef, InsightSubject
from runtime.models.rbac import PolicyRule
from runtime.server.rbac.subjects import (
    GROUP_KIND, SERVICE_ACCOUNT_KIND, USER_KIND, subject_problem,
)
from runtime.server.rbac.user import UserInfo, service_account_username

__all__ = [
    "object_ref", "role_ref", "object_key", "role_key", "subject_of", "rule_of", "user_name", "probe_user",
    "binding_namespace",
]

_RULE_FIELDS = {"verbs": "verbs", "apiGroups": "api_groups", "resources": "resources",
                "resourceNames": "resource_names", "nonResourceURLs": "non_resource_urls"}


def rule_of(rule: Mapping[str, Any]) -> PolicyRule:
    """Return the `PolicyRule` of a PolicyRule JSON dict; its empty lists are left out of the JSON."""
    return PolicyRule(**{name: list(rule[key]) for key, name in _RULE_FIELDS.items() if rule.get(key)})


def user_name(subject: InsightSubject) -> str:
    """The user name the subject authenticates as ("" for a Group)."""
    if subject.kind == SERVICE_ACCOUNT_KIND:
        return service_account_username(subject.namespace or "", subject.name or "")
    return (subject.name or "") if subject.kind == USER_KIND else ""


def binding_namespace(binding: Mapping[str, Any]) -> str:
    """Return the namespace a binding grants in: the RoleBinding's, "" for a ClusterRoleBinding."""
    if binding.get("kind") == "ClusterRoleBinding":
        return ""
    return (binding.get("metadata") or {}).get("namespace") or ""


def object_key(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    """The (kind, name, namespace) of a role or binding dict: `object_ref`'s fields, cheap to hash."""
    meta = obj.get("metadata") or {}
    kind = obj.get("kind") or ""
    namespace = "" if kind in ("ClusterRole", "ClusterRoleBinding") else meta.get("namespace") or ""
    return kind, meta.get("name") or "", namespace


def role_key(binding: Mapping[str, Any]) -> tuple[str, str, str]:
    """The (kind, name, namespace) the binding's roleRef names (a Role in the binding's namespace)."""
    ref = binding.get("roleRef") or {}
    kind = ref.get("kind") or ""
    return kind, ref.get("name") or "", binding_namespace(binding) if kind == "Role" else ""


def object_ref(obj: Mapping[str, Any]) -> InsightObjectRef:
    """Return the `InsightObjectRef` of a role or binding dict."""
    return InsightObjectRef.of(*object_key(obj))


def role_ref(binding: Mapping[str, Any]) -> InsightObjectRef:
    """Return what the binding's roleRef names (a Role in the binding's namespace)."""
    return InsightObjectRef.of(*role_key(binding))


def subject_of(subject: Mapping[str, Any], binding_ns: str) -> InsightSubject | None:
    """Return the `InsightSubject`, or None when it never matches (a problem, or a ServiceAccount with no namespace)."""
    if subject_problem(subject):
        return None
    kind = subject.get("kind") or ""
    name = subject.get("name") or ""
    if kind == SERVICE_ACCOUNT_KIND:
        namespace = subject.get("namespace") or binding_ns
        return InsightSubject.of(kind, name, namespace) if namespace else None
    return InsightSubject.of(kind, name)


def probe_user(subject: InsightSubject) -> UserInfo:
    """Return the `UserInfo` the authorizer sees as exactly `subject` (no implicit groups)."""
    if subject.kind == GROUP_KIND:
        return UserInfo("", groups=(subject.name or "",))
    return UserInfo(user_name(subject))
