"""Value types that name policy objects in insight results: `ObjectRef`, `Subject`, `Rule`, `Grant`.

All frozen and hashable; `to_dict()` gives their JSON. Helpers convert from
the Kubernetes JSON dicts the `PolicySource` holds:

- `object_ref(obj)`: kind, namespace and name of a role or binding;
- `role_ref(binding)`: what a binding's roleRef names (a `Role` lives in the
  binding's namespace, a `ClusterRole` has none);
- `subject_of(subject, binding_namespace)`: a binding subject, a
  ServiceAccount's namespace defaulted to the RoleBinding's; None for a
  subject that can never match anyone (see `runtime.rbac.subjects`);
- `probe_user(subject)`: the `UserInfo` that is exactly that subject for the
  authorizer: a User or ServiceAccount by user name with no groups, a Group
  as a nameless user in only that group.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from runtime.validation.gofmt import go_quote
from runtime.rbac.insight._json import JSONValue
from runtime.rbac.subjects import (
    GROUP_KIND, SERVICE_ACCOUNT_KIND, USER_KIND, subject_problem,
)
from runtime.rbac.user import UserInfo, service_account_username

__all__ = [
    "ObjectRef", "Subject", "Rule", "Grant",
    "object_ref", "role_ref", "subject_of", "probe_user", "binding_namespace",
]


@dataclass(frozen=True, order=True)
class ObjectRef(JSONValue):
    """A policy object by kind, namespace ("" when cluster-scoped) and name; `str()` is `Kind ns/name`."""

    kind: str
    name: str
    namespace: str = ""

    def __str__(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {go_quote(where)}"


@dataclass(frozen=True, order=True)
class Subject(JSONValue):
    """A binding subject: `User`, `Group` or `ServiceAccount` (namespace set only for the last)."""

    kind: str
    name: str
    namespace: str = ""

    @property
    def user_name(self) -> str:
        """The user name the subject authenticates as ("" for a Group)."""
        if self.kind == SERVICE_ACCOUNT_KIND:
            return service_account_username(self.namespace, self.name)
        return self.name if self.kind == USER_KIND else ""

    def __str__(self) -> str:
        if self.kind == SERVICE_ACCOUNT_KIND:
            return f"{self.kind} {go_quote(self.namespace + '/' + self.name)}"
        return f"{self.kind} {go_quote(self.name)}"


@dataclass(frozen=True)
class Rule(JSONValue):
    """A PolicyRule as immutable tuples; `to_dict()` is its JSON (empty lists left out)."""

    verbs: tuple[str, ...] = ()
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    @classmethod
    def of(cls, rule: Mapping[str, Any]) -> Rule:
        """Return the `Rule` of a PolicyRule JSON dict."""
        return cls(tuple(rule.get("verbs") or ()), tuple(rule.get("apiGroups") or ()),
                   tuple(rule.get("resources") or ()), tuple(rule.get("resourceNames") or ()),
                   tuple(rule.get("nonResourceURLs") or ()))

    def as_policy_rule(self) -> dict[str, list[str]]:
        """Return the PolicyRule JSON dict, for the matchers of `runtime.rbac.rules`."""
        return self.to_dict()


@dataclass(frozen=True)
class Grant(JSONValue):
    """One rule that grants: the binding, the role its roleRef names, and the rule's index there."""

    binding: ObjectRef
    role: ObjectRef
    rule_index: int
    rule: Rule


def binding_namespace(binding: Mapping[str, Any]) -> str:
    """Return the namespace a binding grants in: the RoleBinding's, "" for a ClusterRoleBinding."""
    if binding.get("kind") == "ClusterRoleBinding":
        return ""
    return (binding.get("metadata") or {}).get("namespace") or ""


def object_ref(obj: Mapping[str, Any]) -> ObjectRef:
    """Return the `ObjectRef` of a role or binding dict."""
    meta = obj.get("metadata") or {}
    kind = obj.get("kind") or ""
    namespace = "" if kind in ("ClusterRole", "ClusterRoleBinding") else meta.get("namespace") or ""
    return ObjectRef(kind, meta.get("name") or "", namespace)


def role_ref(binding: Mapping[str, Any]) -> ObjectRef:
    """Return what the binding's roleRef names (a Role in the binding's namespace)."""
    ref = binding.get("roleRef") or {}
    kind = ref.get("kind") or ""
    return ObjectRef(kind, ref.get("name") or "", binding_namespace(binding) if kind == "Role" else "")


def subject_of(subject: Mapping[str, Any], binding_ns: str) -> Subject | None:
    """Return the `Subject`, or None when it never matches (a problem, or a ServiceAccount with no namespace)."""
    if subject_problem(subject):
        return None
    kind = subject.get("kind") or ""
    name = subject.get("name") or ""
    if kind == SERVICE_ACCOUNT_KIND:
        namespace = subject.get("namespace") or binding_ns
        return Subject(kind, name, namespace) if namespace else None
    return Subject(kind, name)


def probe_user(subject: Subject) -> UserInfo:
    """Return the `UserInfo` the authorizer sees as exactly `subject` (no implicit groups)."""
    if subject.kind == GROUP_KIND:
        return UserInfo("", groups=(subject.name,))
    return UserInfo(subject.user_name)
