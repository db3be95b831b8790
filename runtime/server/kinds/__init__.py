"""Kinds as data: each kind is a `KindInfo` (facts) and a `Strategy` (behaviour), registered on the `Scheme`.

Contract: every kind's behaviour lives here (a strategy is composed of
small parts, `parts`; subresources that are objects of their own,
`subresources`), one module per kind family
(`namespace`, `serviceaccount`, `configmap`, `secret` (with `configdata`, what
they share), `rbac`, `coordination`, `reviews`, `tokenreview`, `events`, `crd`,
`insight*`; the workload kinds by family, one package each: `pods`, `services`,
`apps`, `batch`, `cluster`; the admission kinds: `admissionregistration`); `customresource` builds
the kinds a CRD defines, while the server runs). The registry, the HTTP
layer and the controllers read a kind's facts and call its strategy's hooks;
nothing outside this package compares kind names. A kind's facts are data
(`runtime.machinery.kindinfo.KindInfo`; the built-in kinds' are
`runtime.models.catalog`, which clients read without loading this package).
Adding a kind means adding a model and a strategy, and registering them
(`Scheme.register`); a built-in one has its facts in the catalog and its
strategy in `STRATEGIES`, which the scheme binds when the kind's strategy is
first asked for. Also here, as the kinds' own constants: the namespace
finalizer and name label, the garbage collector's finalizers, the
aggregation controller's field manager.
"""

from runtime.models import catalog
from runtime.machinery.kindinfo import KindInfo
from runtime.server.kinds.base import (
    AUDIT_ANNOTATIONS, AUDIT_LEVEL, AdmissionRequest, PolicyContext, Strategy, VirtualStrategy, spec_of,
)
from runtime.server.kinds.parts import KindStrategy, SchemeObserver, TokenIssuer
from runtime.server.kinds.subresources import (
    ActionSubresource, ObjectSubresource, StatusSubresource, Subresource, ViewSubresource,
)
from runtime.server.kinds.columns import AGE_COLUMN, DEFAULT_COLUMNS, NAME_COLUMN, Columns, age, column
from runtime.server.kinds.configmap import ConfigMapStrategy
from runtime.server.kinds.coordination import LeaseStrategy
from runtime.server.kinds.events import CoreEventStrategy, EventsV1EventStrategy
from runtime.server.kinds.namespace import (
    NAMESPACE_FINALIZER, NAMESPACE_NAME_LABEL, PROTECTED_NAMESPACES, NamespaceStrategy,
)
from runtime.server.kinds.deletion_propagation import (
    FOREGROUND_FINALIZER, GC_FINALIZERS, ORPHAN_FINALIZER, deletion_finalizers, namespace_deletion_finalizers,
)
from runtime.server.kinds.rbac import (
    AGGREGATION_MANAGER, ClusterRoleBindingStrategy, ClusterRoleStrategy, RoleBindingStrategy, RoleStrategy,
)
from runtime.server.kinds.crd import CLEANUP_FINALIZER, CustomResourceDefinitionStrategy
from runtime.server.kinds.reviews import REVIEW_STRATEGIES
from runtime.server.kinds.insight.strategies import INSIGHT_STRATEGIES
from runtime.server.kinds.secret import SecretStrategy
from runtime.server.kinds.serviceaccount import ServiceAccountStrategy
from runtime.server.kinds.tokenreview import TokenReviewStrategy
from runtime.server.kinds import admissionregistration, apps, batch, cluster, pods, services

__all__ = [
    "Strategy", "VirtualStrategy", "KindStrategy", "SchemeObserver", "TokenIssuer",
    "Subresource", "ViewSubresource", "ActionSubresource", "ObjectSubresource", "StatusSubresource", "PolicyContext",
    "AdmissionRequest", "AUDIT_ANNOTATIONS", "AUDIT_LEVEL", "spec_of",
    "Columns", "column", "age", "NAME_COLUMN", "AGE_COLUMN", "DEFAULT_COLUMNS", "STRATEGIES",
    "NAMESPACE_FINALIZER", "NAMESPACE_NAME_LABEL", "PROTECTED_NAMESPACES", "AGGREGATION_MANAGER",
    "ORPHAN_FINALIZER", "FOREGROUND_FINALIZER", "GC_FINALIZERS", "deletion_finalizers",
    "namespace_deletion_finalizers", "CLEANUP_FINALIZER",
]

#: The strategy of every built-in kind, keyed by its facts (`runtime.models.catalog.BUILTIN_KINDS`).
STRATEGIES: dict[KindInfo, type[Strategy | VirtualStrategy]] = {
    catalog.NAMESPACE: NamespaceStrategy,
    catalog.CORE_EVENT: CoreEventStrategy,
    catalog.CONFIG_MAP: ConfigMapStrategy,
    catalog.SECRET: SecretStrategy,
    catalog.SERVICE_ACCOUNT: ServiceAccountStrategy,
    catalog.CLUSTER_ROLE: ClusterRoleStrategy,
    catalog.CLUSTER_ROLE_BINDING: ClusterRoleBindingStrategy,
    catalog.ROLE: RoleStrategy,
    catalog.ROLE_BINDING: RoleBindingStrategy,
    **REVIEW_STRATEGIES,
    catalog.TOKEN_REVIEW: TokenReviewStrategy,
    catalog.LEASE: LeaseStrategy,
    catalog.EVENTS_EVENT: EventsV1EventStrategy,
    catalog.CRD: CustomResourceDefinitionStrategy,
    **INSIGHT_STRATEGIES,
    catalog.POD: pods.PodStrategy,
    catalog.SERVICE: services.ServiceStrategy,
    catalog.ENDPOINTS: services.EndpointsStrategy,
    catalog.PERSISTENT_VOLUME_CLAIM: cluster.PersistentVolumeClaimStrategy,
    catalog.PERSISTENT_VOLUME: cluster.PersistentVolumeStrategy,
    catalog.NODE: cluster.NodeStrategy,
    catalog.LIMIT_RANGE: cluster.LimitRangeStrategy,
    catalog.RESOURCE_QUOTA: cluster.ResourceQuotaStrategy,
    catalog.DEPLOYMENT: apps.DeploymentStrategy,
    catalog.STATEFUL_SET: apps.StatefulSetStrategy,
    catalog.REPLICA_SET: apps.ReplicaSetStrategy,
    catalog.DAEMON_SET: apps.DaemonSetStrategy,
    catalog.CONTROLLER_REVISION: apps.ControllerRevisionStrategy,
    catalog.HORIZONTAL_POD_AUTOSCALER: batch.HorizontalPodAutoscalerStrategy,
    catalog.HORIZONTAL_POD_AUTOSCALER_V1: batch.HorizontalPodAutoscalerV1Strategy,
    catalog.JOB: batch.JobStrategy,
    catalog.CRON_JOB: batch.CronJobStrategy,
    catalog.INGRESS: cluster.IngressStrategy,
    catalog.INGRESS_CLASS: cluster.IngressClassStrategy,
    catalog.NETWORK_POLICY: cluster.NetworkPolicyStrategy,
    catalog.POD_DISRUPTION_BUDGET: pods.PodDisruptionBudgetStrategy,
    catalog.ENDPOINT_SLICE: services.EndpointSliceStrategy,
    catalog.PRIORITY_CLASS: cluster.PriorityClassStrategy,
    catalog.STORAGE_CLASS: cluster.StorageClassStrategy,
    catalog.VALIDATING_WEBHOOK_CONFIGURATION: admissionregistration.ValidatingWebhookConfigurationStrategy,
    catalog.MUTATING_WEBHOOK_CONFIGURATION: admissionregistration.MutatingWebhookConfigurationStrategy,
    catalog.VALIDATING_ADMISSION_POLICY: admissionregistration.ValidatingAdmissionPolicyStrategy,
    catalog.VALIDATING_ADMISSION_POLICY_BINDING: admissionregistration.ValidatingAdmissionPolicyBindingStrategy,
    catalog.MUTATING_ADMISSION_POLICY: admissionregistration.MutatingAdmissionPolicyStrategy,
    catalog.MUTATING_ADMISSION_POLICY_BINDING: admissionregistration.MutatingAdmissionPolicyBindingStrategy,
}
