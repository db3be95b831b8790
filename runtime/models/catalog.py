"""The built-in kinds' facts (`KindInfo`s): the kinds every `Scheme` serves, in discovery order.

Data, read by both sides (as Kubernetes' `k8s.io/api/<group>/<version>/register.go`
beside the types): a client looks a built-in kind up by kind, model or
apiVersion without loading its behaviour; the server serves each with the
strategy `runtime.server.kinds.STRATEGIES` names for it. Names its models
by reference (`models.ref`, `_m` here), imported when first asked for: a client that
never decodes a kind never builds its model.

`BUILTIN_KINDS` is every built-in kind in discovery order (core first);
`REVIEW_KINDS` and `INSIGHT_KINDS` the virtual ones of their families;
`TOKEN_REQUEST` the kind of a ServiceAccount's `token` subresource (served as
the subresource, never on its own); `ADMISSION_KINDS` the `admissionregistration.<domain>/v1` kinds (webhook
configurations and admission policies).
"""

from __future__ import annotations

from typing import Any

from runtime import models
from runtime.machinery.kindinfo import STATUS_VERBS, KindInfo, ModelRef

__all__ = [
    "BUILTIN_KINDS", "NAMESPACE", "CORE_EVENT", "CONFIG_MAP", "SECRET", "SERVICE_ACCOUNT", "CLUSTER_ROLE",
    "CLUSTER_ROLE_BINDING", "ROLE", "ROLE_BINDING", "REVIEW_KINDS", "SUBJECT_ACCESS_REVIEW",
    "LOCAL_SUBJECT_ACCESS_REVIEW", "SELF_SUBJECT_ACCESS_REVIEW", "SELF_SUBJECT_RULES_REVIEW", "SELF_SUBJECT_REVIEW",
    "TOKEN_REVIEW", "TOKEN_REQUEST", "LEASE", "EVENTS_EVENT", "CRD", "INSIGHT_KINDS", "ACCESS_EXPLANATION",
    "WHO_CAN", "ACCESS_MATRIX", "RBAC_LINT", "AGGREGATION_GRAPH", "RBAC_DIFF", "WORKLOAD_KINDS", "POD", "SERVICE",
    "ENDPOINTS", "PERSISTENT_VOLUME_CLAIM", "PERSISTENT_VOLUME", "NODE", "LIMIT_RANGE", "RESOURCE_QUOTA", "DEPLOYMENT",
    "STATEFUL_SET", "REPLICA_SET", "DAEMON_SET", "CONTROLLER_REVISION", "JOB", "CRON_JOB", "INGRESS", "INGRESS_CLASS",
    "NETWORK_POLICY", "POD_DISRUPTION_BUDGET", "HORIZONTAL_POD_AUTOSCALER", "HORIZONTAL_POD_AUTOSCALER_V1",
    "ENDPOINT_SLICE", "PRIORITY_CLASS", "STORAGE_CLASS", "ADMISSION_KINDS", "VALIDATING_WEBHOOK_CONFIGURATION",
    "MUTATING_WEBHOOK_CONFIGURATION", "VALIDATING_ADMISSION_POLICY", "VALIDATING_ADMISSION_POLICY_BINDING",
    "MUTATING_ADMISSION_POLICY", "MUTATING_ADMISSION_POLICY_BINDING",
]

_CREATE_ONLY = ("create",)
_m = models.ref  # a model by reference: `"runtime.models.core:Namespace"`
_RBAC = "rbac.authorization"
_AUTHZ = "authorization"
_AUTHN = "authentication"

NAMESPACE = KindInfo("", "Namespace", "namespaces", "namespace", False, _m("Namespace"), _m("NamespaceList"),
                     short_names=("ns",), verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
                     subresources=(("finalize", ("update",)), ("status", STATUS_VERBS)))
CORE_EVENT = KindInfo("", "Event", "events", "event", True, _m("Event"), _m("EventList"), short_names=("ev",))
CONFIG_MAP = KindInfo("", "ConfigMap", "configmaps", "configmap", True, _m("ConfigMap"), _m("ConfigMapList"),
                      short_names=("cm",))
SECRET = KindInfo("", "Secret", "secrets", "secret", True, _m("Secret"), _m("SecretList"))
SERVICE_ACCOUNT = KindInfo("", "ServiceAccount", "serviceaccounts", "serviceaccount", True, _m("ServiceAccount"),
                           _m("ServiceAccountList"), short_names=("sa",), subresources=(("token", ("create",)),))

CLUSTER_ROLE = KindInfo(_RBAC, "ClusterRole", "clusterroles", "clusterrole", False, _m("ClusterRole"),
                        _m("ClusterRoleList"))
CLUSTER_ROLE_BINDING = KindInfo(_RBAC, "ClusterRoleBinding", "clusterrolebindings", "clusterrolebinding", False,
                                _m("ClusterRoleBinding"), _m("ClusterRoleBindingList"))
ROLE = KindInfo(_RBAC, "Role", "roles", "role", True, _m("Role"), _m("RoleList"))
ROLE_BINDING = KindInfo(_RBAC, "RoleBinding", "rolebindings", "rolebinding", True, _m("RoleBinding"),
                        _m("RoleBindingList"))

SUBJECT_ACCESS_REVIEW = KindInfo(_AUTHZ, "SubjectAccessReview", "subjectaccessreviews", "subjectaccessreview",
                                 False, _m("SubjectAccessReview"), verbs=_CREATE_ONLY, virtual=True)
LOCAL_SUBJECT_ACCESS_REVIEW = KindInfo(_AUTHZ, "LocalSubjectAccessReview", "localsubjectaccessreviews",
                                       "localsubjectaccessreview", True, _m("LocalSubjectAccessReview"),
                                       verbs=_CREATE_ONLY, virtual=True)
SELF_SUBJECT_ACCESS_REVIEW = KindInfo(_AUTHZ, "SelfSubjectAccessReview", "selfsubjectaccessreviews",
                                      "selfsubjectaccessreview", False, _m("SelfSubjectAccessReview"),
                                      verbs=_CREATE_ONLY, virtual=True)
SELF_SUBJECT_RULES_REVIEW = KindInfo(_AUTHZ, "SelfSubjectRulesReview", "selfsubjectrulesreviews",
                                     "selfsubjectrulesreview", False, _m("SelfSubjectRulesReview"),
                                     verbs=_CREATE_ONLY, virtual=True)
SELF_SUBJECT_REVIEW = KindInfo(_AUTHN, "SelfSubjectReview", "selfsubjectreviews", "selfsubjectreview", False,
                               _m("SelfSubjectReview"), verbs=_CREATE_ONLY, virtual=True)
#: The review kinds, in discovery order.
REVIEW_KINDS = (SUBJECT_ACCESS_REVIEW, LOCAL_SUBJECT_ACCESS_REVIEW, SELF_SUBJECT_ACCESS_REVIEW,
                SELF_SUBJECT_RULES_REVIEW, SELF_SUBJECT_REVIEW)

TOKEN_REVIEW = KindInfo(_AUTHN, "TokenReview", "tokenreviews", "tokenreview", False, _m("TokenReview"),
                        verbs=_CREATE_ONLY, virtual=True)
TOKEN_REQUEST = KindInfo(_AUTHN, "TokenRequest", "tokenrequests", "tokenrequest", True, _m("TokenRequest"),
                         virtual=True, verbs=_CREATE_ONLY)
LEASE = KindInfo("coordination", "Lease", "leases", "lease", True, _m("Lease"), _m("LeaseList"))
EVENTS_EVENT = KindInfo("events", "Event", "events", "event", True, _m("EventsV1Event"), _m("EventsV1EventList"),
                        short_names=("ev",))
CRD = KindInfo("apiextensions", "CustomResourceDefinition", "customresourcedefinitions", "customresourcedefinition",
               False, _m("CustomResourceDefinition"), _m("CustomResourceDefinitionList"),
               short_names=("crd", "crds"), categories=("api-extensions",), subresources=(("status", STATUS_VERBS),))


def _insight(kind: str, plural: str, model: type[_m("K8sModel")]) -> KindInfo:
    """An insight kind of `insight.<domain>` (`runtime.server.kinds.insight`): asked by a create, never stored."""
    return KindInfo("insight", kind, plural, kind.lower(), False, model, verbs=_CREATE_ONLY,
                    virtual=True, categories=("insight",))


ACCESS_EXPLANATION = _insight("AccessExplanation", "accessexplanations", "runtime.models.insight:AccessExplanation")
WHO_CAN = _insight("WhoCan", "whocans", "runtime.models.insight:WhoCan")
ACCESS_MATRIX = _insight("AccessMatrix", "accessmatrices", "runtime.models.insight:AccessMatrix")
RBAC_LINT = _insight("RBACLint", "rbaclints", "runtime.models.insight:RBACLint")
AGGREGATION_GRAPH = _insight("AggregationGraph", "aggregationgraphs", "runtime.models.insight:AggregationGraph")
RBAC_DIFF = _insight("RBACDiff", "rbacdiffs", "runtime.models.insight:RBACDiff")
#: The insight kinds, in discovery order.
INSIGHT_KINDS = (ACCESS_EXPLANATION, WHO_CAN, ACCESS_MATRIX, RBAC_LINT, AGGREGATION_GRAPH, RBAC_DIFF)

# The workload kinds (issue 38), served as kube-apiserver serves them with no controller behind them. apps,
# batch, policy and autoscaling are Kubernetes' legacy groups, named without a domain (`group`); the others
# take the domain as every other group here.
_K8S = "runtime.models.k8s"


def _k(module: str, kind: str) -> tuple[str, str]:
    """A generated kind's model and list model, by reference."""
    return f"{_K8S}.{module}:{kind}", f"{_K8S}.{module}:{kind}List"


_STATUS = ("status", STATUS_VERBS)
_SCALE = ("scale", STATUS_VERBS)
_ALL = ("all",)
POD = KindInfo("", "Pod", "pods", "pod", True, *_k("core_v1", "Pod"), short_names=("po",), categories=_ALL,
               subresources=(("binding", _CREATE_ONLY), ("ephemeralcontainers", STATUS_VERBS),
                             ("eviction", _CREATE_ONLY), _STATUS))
SERVICE = KindInfo("", "Service", "services", "service", True, *_k("core_v1", "Service"), short_names=("svc",),
                   categories=_ALL, subresources=(_STATUS,))
ENDPOINTS = KindInfo("", "Endpoints", "endpoints", "endpoints", True, *_k("core_v1", "Endpoints"),
                     short_names=("ep",))
PERSISTENT_VOLUME_CLAIM = KindInfo("", "PersistentVolumeClaim", "persistentvolumeclaims", "persistentvolumeclaim",
                                   True, *_k("core_v1", "PersistentVolumeClaim"), short_names=("pvc",),
                                   subresources=(_STATUS,))
PERSISTENT_VOLUME = KindInfo("", "PersistentVolume", "persistentvolumes", "persistentvolume", False,
                             *_k("core_v1", "PersistentVolume"), short_names=("pv",), subresources=(_STATUS,))
NODE = KindInfo("", "Node", "nodes", "node", False, *_k("core_v1", "Node"), short_names=("no",),
                subresources=(_STATUS,))
LIMIT_RANGE = KindInfo("", "LimitRange", "limitranges", "limitrange", True, *_k("core_v1", "LimitRange"),
                       short_names=("limits",))
RESOURCE_QUOTA = KindInfo("", "ResourceQuota", "resourcequotas", "resourcequota", True,
                          *_k("core_v1", "ResourceQuota"), short_names=("quota",), subresources=(_STATUS,))
DEPLOYMENT = KindInfo("", "Deployment", "deployments", "deployment", True, *_k("apps_v1", "Deployment"),
                      short_names=("deploy",), categories=_ALL, subresources=(_SCALE, _STATUS), group="apps")
STATEFUL_SET = KindInfo("", "StatefulSet", "statefulsets", "statefulset", True, *_k("apps_v1", "StatefulSet"),
                        short_names=("sts",), categories=_ALL, subresources=(_SCALE, _STATUS), group="apps")
REPLICA_SET = KindInfo("", "ReplicaSet", "replicasets", "replicaset", True, *_k("apps_v1", "ReplicaSet"),
                       short_names=("rs",), categories=_ALL, subresources=(_SCALE, _STATUS), group="apps")
DAEMON_SET = KindInfo("", "DaemonSet", "daemonsets", "daemonset", True, *_k("apps_v1", "DaemonSet"),
                      short_names=("ds",), categories=_ALL, subresources=(_STATUS,), group="apps")
CONTROLLER_REVISION = KindInfo("", "ControllerRevision", "controllerrevisions", "controllerrevision", True,
                               *_k("apps_v1", "ControllerRevision"), group="apps")
JOB = KindInfo("", "Job", "jobs", "job", True, *_k("batch_v1", "Job"), categories=_ALL, subresources=(_STATUS,),
               group="batch")
CRON_JOB = KindInfo("", "CronJob", "cronjobs", "cronjob", True, *_k("batch_v1", "CronJob"), short_names=("cj",),
                    categories=_ALL, subresources=(_STATUS,), group="batch")
INGRESS = KindInfo("networking", "Ingress", "ingresses", "ingress", True, *_k("networking_v1", "Ingress"),
                   short_names=("ing",), subresources=(_STATUS,))
INGRESS_CLASS = KindInfo("networking", "IngressClass", "ingressclasses", "ingressclass", False,
                         *_k("networking_v1", "IngressClass"))
NETWORK_POLICY = KindInfo("networking", "NetworkPolicy", "networkpolicies", "networkpolicy", True,
                          *_k("networking_v1", "NetworkPolicy"), short_names=("netpol",))
POD_DISRUPTION_BUDGET = KindInfo("", "PodDisruptionBudget", "poddisruptionbudgets", "poddisruptionbudget", True,
                                 *_k("policy_v1", "PodDisruptionBudget"), short_names=("pdb",),
                                 subresources=(_STATUS,), group="policy")
# One stored HorizontalPodAutoscaler served as autoscaling/v2 (the storage version, as kube's) and v1.
HORIZONTAL_POD_AUTOSCALER = KindInfo("", "HorizontalPodAutoscaler", "horizontalpodautoscalers",
                                     "horizontalpodautoscaler", True, *_k("autoscaling_v2", "HorizontalPodAutoscaler"),
                                     short_names=("hpa",), categories=_ALL, subresources=(_STATUS,),
                                     group="autoscaling", version="v2")
HORIZONTAL_POD_AUTOSCALER_V1 = KindInfo("", "HorizontalPodAutoscaler", "horizontalpodautoscalers",
                                        "horizontalpodautoscaler", True,
                                        *_k("autoscaling_v1", "HorizontalPodAutoscaler"), short_names=("hpa",),
                                        categories=_ALL, subresources=(_STATUS,), group="autoscaling")
ENDPOINT_SLICE = KindInfo("discovery", "EndpointSlice", "endpointslices", "endpointslice", True,
                          *_k("discovery_v1", "EndpointSlice"))
PRIORITY_CLASS = KindInfo("scheduling", "PriorityClass", "priorityclasses", "priorityclass", False,
                          *_k("scheduling_v1", "PriorityClass"), short_names=("pc",))
STORAGE_CLASS = KindInfo("storage", "StorageClass", "storageclasses", "storageclass", False,
                         *_k("storage_v1", "StorageClass"), short_names=("sc",))
#: The workload kinds, in discovery order (core's first, then by group as kube-apiserver's discovery).
WORKLOAD_KINDS = (
    POD, SERVICE, ENDPOINTS, PERSISTENT_VOLUME_CLAIM, PERSISTENT_VOLUME, NODE, LIMIT_RANGE, RESOURCE_QUOTA,
    DEPLOYMENT, STATEFUL_SET, REPLICA_SET, DAEMON_SET, CONTROLLER_REVISION,
    HORIZONTAL_POD_AUTOSCALER, HORIZONTAL_POD_AUTOSCALER_V1, JOB, CRON_JOB,
    INGRESS, INGRESS_CLASS, NETWORK_POLICY, POD_DISRUPTION_BUDGET, ENDPOINT_SLICE, PRIORITY_CLASS, STORAGE_CLASS,
)

# The admission kinds (issue 39), cluster-scoped, in `api-extensions` as kube's. The policies are hand-written
# models (`runtime.models.admissionpolicies`: v1.28's OpenAPI has no `v1` policies).
_ADMISSION = "admissionregistration"
_POLICIES = "runtime.models.admissionpolicies"
_EXTENSIONS = ("api-extensions",)


def _admission(kind: str, plural: str, model: str, **facts: Any) -> KindInfo:
    return KindInfo(_ADMISSION, kind, plural, kind.lower(), False, f"{model}:{kind}", f"{model}:{kind}List",
                    categories=_EXTENSIONS, **facts)


VALIDATING_WEBHOOK_CONFIGURATION = _admission("ValidatingWebhookConfiguration", "validatingwebhookconfigurations",
                                              f"{_K8S}.admissionregistration_v1")
MUTATING_WEBHOOK_CONFIGURATION = _admission("MutatingWebhookConfiguration", "mutatingwebhookconfigurations",
                                            f"{_K8S}.admissionregistration_v1")
VALIDATING_ADMISSION_POLICY = _admission("ValidatingAdmissionPolicy", "validatingadmissionpolicies", _POLICIES,
                                         subresources=(_STATUS,))
VALIDATING_ADMISSION_POLICY_BINDING = _admission("ValidatingAdmissionPolicyBinding",
                                                 "validatingadmissionpolicybindings", _POLICIES)
MUTATING_ADMISSION_POLICY = _admission("MutatingAdmissionPolicy", "mutatingadmissionpolicies", _POLICIES)
MUTATING_ADMISSION_POLICY_BINDING = _admission("MutatingAdmissionPolicyBinding", "mutatingadmissionpolicybindings",
                                               _POLICIES)
#: The admission kinds, in discovery order (kube-apiserver's: webhook configurations, then policies).
ADMISSION_KINDS = (
    VALIDATING_WEBHOOK_CONFIGURATION, MUTATING_WEBHOOK_CONFIGURATION, VALIDATING_ADMISSION_POLICY,
    VALIDATING_ADMISSION_POLICY_BINDING, MUTATING_ADMISSION_POLICY, MUTATING_ADMISSION_POLICY_BINDING,
)
#: Every built-in kind, in discovery order (core first): what a `Scheme` serves unless told otherwise.
BUILTIN_KINDS: tuple[KindInfo, ...] = (
    NAMESPACE, CORE_EVENT, CONFIG_MAP, SECRET, SERVICE_ACCOUNT, CLUSTER_ROLE, CLUSTER_ROLE_BINDING, ROLE,
    ROLE_BINDING, *REVIEW_KINDS, TOKEN_REVIEW, LEASE, EVENTS_EVENT, CRD, *INSIGHT_KINDS, *WORKLOAD_KINDS,
    *ADMISSION_KINDS,
)
