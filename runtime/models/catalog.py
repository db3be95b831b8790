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
the subresource, never on its own).
"""

from __future__ import annotations

from runtime import models
from runtime.machinery.kindinfo import STATUS_VERBS, KindInfo, ModelRef

__all__ = [
    "BUILTIN_KINDS", "NAMESPACE", "CORE_EVENT", "CONFIG_MAP", "SECRET", "SERVICE_ACCOUNT", "CLUSTER_ROLE",
    "CLUSTER_ROLE_BINDING", "ROLE", "ROLE_BINDING", "REVIEW_KINDS", "SUBJECT_ACCESS_REVIEW",
    "LOCAL_SUBJECT_ACCESS_REVIEW", "SELF_SUBJECT_ACCESS_REVIEW", "SELF_SUBJECT_RULES_REVIEW", "SELF_SUBJECT_REVIEW",
    "TOKEN_REVIEW", "TOKEN_REQUEST", "LEASE", "EVENTS_EVENT", "CRD", "INSIGHT_KINDS", "ACCESS_EXPLANATION",
    "WHO_CAN", "ACCESS_MATRIX", "RBAC_LINT", "AGGREGATION_GRAPH", "RBAC_DIFF",
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

#: Every built-in kind, in discovery order (core first): what a `Scheme` serves unless told otherwise.
BUILTIN_KINDS: tuple[KindInfo, ...] = (
    NAMESPACE, CORE_EVENT, CONFIG_MAP, SECRET, SERVICE_ACCOUNT, CLUSTER_ROLE, CLUSTER_ROLE_BINDING, ROLE,
    ROLE_BINDING, *REVIEW_KINDS, TOKEN_REVIEW, LEASE, EVENTS_EVENT, CRD, *INSIGHT_KINDS,
)
