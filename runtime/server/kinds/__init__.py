"""Kinds as data: each kind is a `KindInfo` (facts) and a `Strategy` (behaviour), registered on the `Scheme`.

Contract: everything kind-specific lives here (a strategy is composed of
small parts, `parts`; subresources that are objects of their own,
`subresources`), one module per kind family
(`namespace`, `serviceaccount`, `rbac`, `coordination`, `reviews`, `tokenreview`, `events`, `crd`,
`insight*`; `customresource` builds
the kinds a CRD defines, while the server runs). The registry, the HTTP
layer and the controllers read a kind's facts and call its strategy's hooks;
nothing outside this package compares kind names. Adding a kind means adding
a model and a strategy, and registering them (`Scheme.register`).

`BUILTIN_KINDS` is what every `Scheme` serves, in discovery order. Also here,
as the kinds' own constants: the namespace finalizer and name label, the
garbage collector's finalizers, the aggregation controller's field manager.
"""

from runtime.server.kinds.base import (
    STATUS_VERBS, STORED_VERBS, AdmissionRequest, KindInfo, PolicyContext, Strategy, VirtualStrategy, spec_of,
)
from runtime.server.kinds.parts import KindStrategy, SchemeObserver, TokenIssuer
from runtime.server.kinds.subresources import (
    ActionSubresource, ObjectSubresource, StatusSubresource, Subresource, ViewSubresource,
)
from runtime.server.kinds.columns import AGE_COLUMN, DEFAULT_COLUMNS, NAME_COLUMN, Columns, age, column
from runtime.server.kinds.coordination import LEASE, LeaseStrategy
from runtime.server.kinds.events import CORE_EVENT, EVENTS_EVENT, CoreEventStrategy, EventsV1EventStrategy
from runtime.server.kinds.namespace import (
    NAMESPACE, NAMESPACE_FINALIZER, NAMESPACE_NAME_LABEL, PROTECTED_NAMESPACES, NamespaceStrategy,
)
from runtime.server.kinds.deletion_propagation import (
    FOREGROUND_FINALIZER, GC_FINALIZERS, ORPHAN_FINALIZER, deletion_finalizers, namespace_deletion_finalizers,
)
from runtime.server.kinds.rbac import (
    AGGREGATION_MANAGER, CLUSTER_ROLE, CLUSTER_ROLE_BINDING, ROLE, ROLE_BINDING, ClusterRoleBindingStrategy,
    ClusterRoleStrategy, RoleBindingStrategy, RoleStrategy,
)
from runtime.server.kinds.crd import CLEANUP_FINALIZER, CRD, CustomResourceDefinitionStrategy
from runtime.server.kinds.reviews import REVIEW_KINDS
from runtime.server.kinds.insight.strategies import INSIGHT_KINDS
from runtime.server.kinds.serviceaccount import SERVICE_ACCOUNT, ServiceAccountStrategy
from runtime.server.kinds.tokenreview import TOKEN_REVIEW, TokenReviewStrategy

__all__ = [
    "KindInfo", "Strategy", "VirtualStrategy", "KindStrategy", "SchemeObserver", "TokenIssuer",
    "Subresource", "ViewSubresource", "ActionSubresource", "ObjectSubresource", "StatusSubresource", "PolicyContext",
    "AdmissionRequest", "STORED_VERBS", "STATUS_VERBS", "spec_of",
    "Columns", "column", "age", "NAME_COLUMN", "AGE_COLUMN", "DEFAULT_COLUMNS", "BUILTIN_KINDS",
    "NAMESPACE_FINALIZER", "NAMESPACE_NAME_LABEL", "PROTECTED_NAMESPACES", "AGGREGATION_MANAGER",
    "ORPHAN_FINALIZER", "FOREGROUND_FINALIZER", "GC_FINALIZERS", "deletion_finalizers",
    "namespace_deletion_finalizers", "CLEANUP_FINALIZER",
]

#: Every built-in kind and its strategy, in discovery order (core first).
BUILTIN_KINDS: tuple[tuple[KindInfo, type[Strategy | VirtualStrategy]], ...] = (
    (NAMESPACE, NamespaceStrategy),
    (CORE_EVENT, CoreEventStrategy),
    (SERVICE_ACCOUNT, ServiceAccountStrategy),
    (CLUSTER_ROLE, ClusterRoleStrategy),
    (CLUSTER_ROLE_BINDING, ClusterRoleBindingStrategy),
    (ROLE, RoleStrategy),
    (ROLE_BINDING, RoleBindingStrategy),
    *REVIEW_KINDS,
    (TOKEN_REVIEW, TokenReviewStrategy),
    (LEASE, LeaseStrategy),
    (EVENTS_EVENT, EventsV1EventStrategy),
    (CRD, CustomResourceDefinitionStrategy),
    *INSIGHT_KINDS,
)
