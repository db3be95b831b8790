"""The scheme: every kind miniplane serves, with its group, version, resource and scope.

Group names derive from one domain (`--api-domain`, default `svc.io`):
`rbac.authorization.<domain>`, `authorization.<domain>`,
`authentication.<domain>`, `coordination.<domain>` (`Lease`); core
(`Namespace`) is the group "". With `k8s.io` every name is the Kubernetes one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pydantic import BaseModel

from runtime import models

__all__ = ["ResourceType", "Scheme", "KINDS", "DEFAULT_DOMAIN"]

DEFAULT_DOMAIN = "svc.io"

_STORED_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class KindInfo:
    """A kind's facts independent of the domain."""

    group_prefix: str  # "" core; else the group name without the domain
    kind: str
    plural: str
    singular: str
    namespaced: bool
    model: type[BaseModel]
    list_model: type[BaseModel] | None = None
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = _STORED_VERBS
    categories: tuple[str, ...] = ()
    virtual: bool = False  # a review: create only, never stored
    subresources: tuple[str, ...] = ()


KINDS: tuple[KindInfo, ...] = (
    KindInfo("", "Namespace", "namespaces", "namespace", False, models.Namespace, models.NamespaceList,
             short_names=("ns",), verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
             subresources=("status", "finalize")),
    KindInfo("rbac.authorization", "ClusterRole", "clusterroles", "clusterrole", False,
             models.ClusterRole, models.ClusterRoleList),
    KindInfo("rbac.authorization", "ClusterRoleBinding", "clusterrolebindings", "clusterrolebinding", False,
             models.ClusterRoleBinding, models.ClusterRoleBindingList),
    KindInfo("rbac.authorization", "Role", "roles", "role", True, models.Role, models.RoleList),
    KindInfo("rbac.authorization", "RoleBinding", "rolebindings", "rolebinding", True,
             models.RoleBinding, models.RoleBindingList),
    KindInfo("authorization", "SubjectAccessReview", "subjectaccessreviews", "subjectaccessreview", False,
             models.SubjectAccessReview, verbs=("create",), virtual=True),
    KindInfo("authorization", "LocalSubjectAccessReview", "localsubjectaccessreviews",
             "localsubjectaccessreview", True, models.LocalSubjectAccessReview, verbs=("create",), virtual=True),
    KindInfo("authorization", "SelfSubjectAccessReview", "selfsubjectaccessreviews",
             "selfsubjectaccessreview", False, models.SelfSubjectAccessReview, verbs=("create",), virtual=True),
    KindInfo("authorization", "SelfSubjectRulesReview", "selfsubjectrulesreviews",
             "selfsubjectrulesreview", False, models.SelfSubjectRulesReview, verbs=("create",), virtual=True),
    KindInfo("authentication", "SelfSubjectReview", "selfsubjectreviews", "selfsubjectreview", False,
             models.SelfSubjectReview, verbs=("create",), virtual=True),
    # Leader election's lock (runtime.leaderelection).
    KindInfo("coordination", "Lease", "leases", "lease", True, models.Lease, models.LeaseList),
)


@dataclass(frozen=True)
class ResourceType:
    """A kind as served under one domain."""

    info: KindInfo
    group: str
    version: str = "v1"

    @property
    def kind(self) -> str:
        return self.info.kind

    @property
    def list_kind(self) -> str:
        return self.info.kind + "List"

    @property
    def plural(self) -> str:
        return self.info.plural

    @property
    def namespaced(self) -> bool:
        return self.info.namespaced

    @property
    def model(self) -> type[BaseModel]:
        return self.info.model

    @property
    def virtual(self) -> bool:
        return self.info.virtual

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """`clusterroles.rbac.authorization.svc.io` / `namespaces`, as Kubernetes names it in messages."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def storage_prefix(self) -> str:
        """Key prefix of every object of this kind: `/<group>/<plural>/`."""
        return f"/{self.info.group_prefix or 'core'}/{self.plural}/"

    def storage_key(self, namespace: str | None, name: str) -> str:
        if self.namespaced:
            return f"{self.storage_prefix}{namespace}/{name}"
        return f"{self.storage_prefix}{name}"

    def namespace_prefix(self, namespace: str | None) -> str:
        """Prefix for a list: one namespace, or all when namespace is empty."""
        if self.namespaced and namespace:
            return f"{self.storage_prefix}{namespace}/"
        return self.storage_prefix


class Scheme:
    """Kinds under one domain, looked up by resource, kind or apiVersion."""

    def __init__(self, domain: str = DEFAULT_DOMAIN) -> None:
        self.domain = domain
        self.types: tuple[ResourceType, ...] = tuple(
            ResourceType(info, self.group_name(info.group_prefix)) for info in KINDS)
        self._by_resource = {(t.group, t.version, t.plural): t for t in self.types}
        self._by_kind = {(t.group, t.kind): t for t in self.types}
        self._by_bare_kind = {t.kind: t for t in self.types}

    def group_name(self, prefix: str) -> str:
        return f"{prefix}.{self.domain}" if prefix else ""

    @property
    def rbac_group(self) -> str:
        return self.group_name("rbac.authorization")

    @property
    def authz_group(self) -> str:
        return self.group_name("authorization")

    @property
    def authn_group(self) -> str:
        return self.group_name("authentication")

    @property
    def coordination_group(self) -> str:
        return self.group_name("coordination")

    @property
    def meta_group(self) -> str:
        return self.group_name("meta")

    def groups(self) -> list[tuple[str, list[ResourceType]]]:
        """Served groups in discovery order (core first), with their types."""
        out: dict[str, list[ResourceType]] = {}
        for t in self.types:
            out.setdefault(t.group, []).append(t)
        return list(out.items())

    def by_resource(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_resource.get((group, version, plural))

    def by_kind(self, kind: str, group: str | None = None) -> ResourceType | None:
        if group is None:
            return self._by_bare_kind.get(kind)
        return self._by_kind.get((group, kind))

    def by_api_version_kind(self, api_version: str, kind: str) -> ResourceType | None:
        group, _, version = api_version.rpartition("/")
        t = self._by_kind.get((group, kind))
        return t if t is not None and t.version == version else None

    def stored_types(self) -> list[ResourceType]:
        return [t for t in self.types if not t.virtual]

    def namespaced_types(self) -> list[ResourceType]:
        """Every stored namespaced kind (namespace deletion discovers them here)."""
        return [t for t in self.types if t.namespaced and not t.virtual]
