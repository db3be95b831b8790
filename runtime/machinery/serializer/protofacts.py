"""The Protobuf codec's tables: which message a kind travels as, and the Go facts of each message's fields.

Internal to `runtime.machinery.serializer` (`protobuf` reads it). Data, no behaviour:

- `KINDS`: a kind's candidate messages, each with the group it belongs to (`""` the core group, a name
  ending in `.` the domain-free start of a group whose domain is configurable, `rbac.authorization.`;
  any other name that group exactly, `apps`) and, where one group serves a kind in two versions with two
  messages (autoscaling's HorizontalPodAutoscaler), the version. The first candidate that matches wins.
- What Kubernetes' JSON encoder writes for a decoded Go struct, which Protobuf cannot say:
  `ALWAYS_FIELDS` (no `omitempty` in the field's JSON tag: written even when zero), `NULLABLE_FIELDS`
  (pointer fields: written when set, zero or not; a pointer wins over a missing `omitempty`, as Go writes
  `null` for it), `INLINE_FIELDS` (embedded structs, `json:",inline"`: their fields are the parent's in JSON),
  `JSON_NAMES` (a Protobuf field named unlike its JSON key). The tables of the workload kinds are keyed by
  package, then message, then the field names in one string; the older ones (`ALWAYS`, `NULLABLE`) by
  `Message.field` for the RBAC, review, meta and config kinds.

How they were derived: `ALWAYS_FIELDS` from the `required` lists of the v1.28 OpenAPI document
(`shared/kubernetes/openapi-v1.28/swagger.json`; a field without `omitempty` and without `+optional` is
required there), the required fields of an inlined struct found through its parent's list, and the few
`+optional` scalars without `omitempty` read in types.go (a StatefulSet's `status.availableReplicas`); `INLINE_FIELDS`
from the message fields that have no property of their name in the OpenAPI definition; `NULLABLE_FIELDS`
from the Go types of k8s.io/api v1.28 (`*T` fields of `types.go`), written by hand and read again against
a core/v1 `types.go` for the volumes, PV and PVC, containers, probes, the pod's spec and status and the Service.
The admissionregistration/v1 tables (issue 39) are read from its v1.30 `types.go`: its JSON tags (no `omitempty`:
always written; `*T`: nullable) and its embedded `Rule` and `RuleWithOperations`.
"""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf.message import Message

from runtime.machinery.serializer.proto import admissionregistration_v1_pb2 as admission
from runtime.machinery.serializer.proto import apps_v1_pb2 as apps
from runtime.machinery.serializer.proto import authentication_v1_pb2 as authn
from runtime.machinery.serializer.proto import authorization_v1_pb2 as authz
from runtime.machinery.serializer.proto import autoscaling_v1_pb2 as autoscaling1
from runtime.machinery.serializer.proto import autoscaling_v2_pb2 as autoscaling2
from runtime.machinery.serializer.proto import batch_v1_pb2 as batch
from runtime.machinery.serializer.proto import core_v1_pb2 as core
from runtime.machinery.serializer.proto import discovery_v1_pb2 as discovery
from runtime.machinery.serializer.proto import events_v1_pb2 as events
from runtime.machinery.serializer.proto import meta_v1_pb2 as meta
from runtime.machinery.serializer.proto import networking_v1_pb2 as networking
from runtime.machinery.serializer.proto import policy_v1_pb2 as policy
from runtime.machinery.serializer.proto import rbac_v1_pb2 as rbac
from runtime.machinery.serializer.proto import scheduling_v1_pb2 as scheduling
from runtime.machinery.serializer.proto import storage_v1_pb2 as storage

__all__ = ["ALWAYS", "ALWAYS_FIELDS", "ANY_GROUP", "INLINE_FIELDS", "JSON_NAMES", "KINDS", "Kind", "NULLABLE",
           "NULLABLE_FIELDS"]


@dataclass(frozen=True)
class Kind:
    message: type[Message]
    group: str | None
    """The kind's API group: "" the core group, "x." any group starting so, "x" exactly x, None any group."""
    version: str | None = None
    """The API version the message is for, when the group serves the kind in two."""


ANY_GROUP = None
_CORE, _RBAC, _AUTHZ, _AUTHN, _EVENTS = "", "rbac.authorization.", "authorization.", "authentication.", "events."
_NETWORKING, _DISCOVERY, _SCHEDULING, _STORAGE = "networking.", "discovery.", "scheduling.", "storage."
_ADMISSION = "admissionregistration."


def _with_lists(group: str, module, *names: str) -> dict[str, tuple[Kind, ...]]:
    """`name` and `nameList` of `module` in `group`."""
    out = {}
    for name in names:
        out[name] = (Kind(getattr(module, name), group),)
        out[f"{name}List"] = (Kind(getattr(module, f"{name}List"), group),)
    return out


KINDS: dict[str, tuple[Kind, ...]] = {
    **_with_lists(_RBAC, rbac, "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"),
    **{name: (Kind(getattr(authz, name), _AUTHZ),) for name in (
        "SubjectAccessReview", "LocalSubjectAccessReview", "SelfSubjectAccessReview", "SelfSubjectRulesReview")},
    **{name: (Kind(getattr(authn, name), _AUTHN),) for name in ("SelfSubjectReview", "TokenRequest", "TokenReview")},
    **_with_lists(_CORE, core, "Namespace", "ConfigMap", "Secret", "ServiceAccount", "Pod", "Service", "Endpoints",
                  "PersistentVolumeClaim", "PersistentVolume", "Node", "LimitRange", "ResourceQuota"),
    # events.k8s.io's Event is not core's.
    "Event": (Kind(events.Event, _EVENTS), Kind(core.Event, _CORE)),
    "EventList": (Kind(events.EventList, _EVENTS), Kind(core.EventList, _CORE)),
    "Binding": (Kind(core.Binding, _CORE),),
    **_with_lists("apps", apps, "Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "ControllerRevision"),
    **_with_lists("batch", batch, "Job", "CronJob"),
    **_with_lists("policy", policy, "PodDisruptionBudget"),
    "Eviction": (Kind(policy.Eviction, "policy"),),
    # One stored HorizontalPodAutoscaler served as autoscaling/v1 and v2, each version its own message.
    "HorizontalPodAutoscaler": (Kind(autoscaling2.HorizontalPodAutoscaler, "autoscaling", "v2"),
                                Kind(autoscaling1.HorizontalPodAutoscaler, "autoscaling", "v1")),
    "HorizontalPodAutoscalerList": (Kind(autoscaling2.HorizontalPodAutoscalerList, "autoscaling", "v2"),
                                    Kind(autoscaling1.HorizontalPodAutoscalerList, "autoscaling", "v1")),
    "Scale": (Kind(autoscaling1.Scale, "autoscaling", "v1"),),
    **_with_lists(_NETWORKING, networking, "Ingress", "IngressClass", "NetworkPolicy"),
    **_with_lists(_DISCOVERY, discovery, "EndpointSlice"),
    **_with_lists(_SCHEDULING, scheduling, "PriorityClass"),
    **_with_lists(_STORAGE, storage, "StorageClass"),
    # MutatingAdmissionPolicy and its binding (v1 since Kubernetes 1.36) have no message here: JSON only.
    **_with_lists(_ADMISSION, admission, "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
                  "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"),
    # meta.v1 kinds travel in every group (Status as "v1", DeleteOptions in the
    # resource's group, PartialObjectMetadata in meta.<domain>).
    "Status": (Kind(meta.Status, ANY_GROUP),),
    "DeleteOptions": (Kind(meta.DeleteOptions, ANY_GROUP),),
    "PartialObjectMetadata": (Kind(meta.PartialObjectMetadata, ANY_GROUP),),
    "PartialObjectMetadataList": (Kind(meta.PartialObjectMetadataList, ANY_GROUP),),
}

# The RBAC, review, meta and config kinds' facts, by `Message.field`.
ALWAYS = frozenset({
    "PolicyRule.verbs", "ClusterRole.rules", "Role.rules",
    "RoleRef.apiGroup", "RoleRef.kind", "RoleRef.name", "Subject.kind", "Subject.name",
    "SubjectAccessReviewStatus.allowed", "SubjectRulesReviewStatus.incomplete",
    "SubjectRulesReviewStatus.resourceRules", "SubjectRulesReviewStatus.nonResourceRules",
    "ResourceRule.verbs", "NonResourceRule.verbs",
    "FieldSelectorRequirement.key", "FieldSelectorRequirement.operator",
    "LabelSelectorRequirement.key", "LabelSelectorRequirement.operator",
    "OwnerReference.apiVersion", "OwnerReference.kind", "OwnerReference.name", "OwnerReference.uid",
    "NamespaceCondition.type", "NamespaceCondition.status",
    # core/v1 Event's (events.k8s.io/v1's messages share the name: its reportingInstance is written too)
    "Event.reportingComponent", "Event.reportingInstance",
    "TokenRequestStatus.token",
    *(f"{kind}.items" for kind in KINDS if kind.endswith("List")),
})

NULLABLE = frozenset({
    "ObjectMeta.deletionGracePeriodSeconds", "ListMeta.remainingItemCount",
    "OwnerReference.controller", "OwnerReference.blockOwnerDeletion",
    "DeleteOptions.gracePeriodSeconds", "DeleteOptions.preconditions",
    "DeleteOptions.orphanDependents", "DeleteOptions.propagationPolicy",
    "Preconditions.uid", "Preconditions.resourceVersion", "Status.details",
    "ClusterRole.aggregationRule", "Event.series", "Event.related",
    "SubjectAccessReviewSpec.resourceAttributes", "SubjectAccessReviewSpec.nonResourceAttributes",
    "SelfSubjectAccessReviewSpec.resourceAttributes", "SelfSubjectAccessReviewSpec.nonResourceAttributes",
    "ResourceAttributes.fieldSelector", "ResourceAttributes.labelSelector",
    "ServiceAccount.automountServiceAccountToken", "TokenRequestSpec.expirationSeconds",
    "TokenRequestSpec.boundObjectRef", "ConfigMap.immutable", "Secret.immutable",
})

JSON_NAMES: dict[str, str] = {
    "k8s.io.api.networking.v1.IngressClassParametersReference.aPIGroup": "apiGroup",
    "k8s.io.api.admissionregistration.v1.ValidatingWebhookConfiguration.Webhooks": "webhooks",
    "k8s.io.api.admissionregistration.v1.MutatingWebhookConfiguration.Webhooks": "webhooks",
    "k8s.io.api.admissionregistration.v1.Validation.Expression": "expression",
    "k8s.io.api.admissionregistration.v1.Variable.Name": "name",
    "k8s.io.api.admissionregistration.v1.Variable.Expression": "expression",
}

INLINE_FIELDS: dict[str, dict[str, str]] = {
    "k8s.io.api.core.v1": {
        "ConfigMapEnvSource": "localObjectReference",
        "ConfigMapKeySelector": "localObjectReference",
        "ConfigMapProjection": "localObjectReference",
        "ConfigMapVolumeSource": "localObjectReference",
        "EphemeralContainer": "ephemeralContainerCommon",
        "PersistentVolumeSpec": "persistentVolumeSource",
        "Probe": "handler",
        "SecretEnvSource": "localObjectReference",
        "SecretKeySelector": "localObjectReference",
        "SecretProjection": "localObjectReference",
        "Volume": "volumeSource",
    },
    "k8s.io.api.networking.v1": {
        "IngressRule": "ingressRuleValue",
    },
    "k8s.io.api.admissionregistration.v1": {
        "NamedRuleWithOperations": "ruleWithOperations",
        "RuleWithOperations": "rule",
    },
}


ALWAYS_FIELDS: dict[str, dict[str, str]] = {
    "k8s.io.apimachinery.pkg.apis.meta.v1": {
        "Condition": "message reason status type",  # lastTransitionTime: a zero Time is left out
    },
    "k8s.io.api.core.v1": {
        "AWSElasticBlockStoreVolumeSource": "volumeID",
        "AttachedVolume": "devicePath name",
        "AzureDiskVolumeSource": "diskName diskURI",
        "AzureFilePersistentVolumeSource": "secretName shareName",
        "AzureFileVolumeSource": "secretName shareName",
        "Binding": "target",
        "CSIPersistentVolumeSource": "driver volumeHandle",
        "CSIVolumeSource": "driver",
        "CephFSPersistentVolumeSource": "monitors",
        "CephFSVolumeSource": "monitors",
        "CinderPersistentVolumeSource": "volumeID",
        "CinderVolumeSource": "volumeID",
        "ConfigMapKeySelector": "key",
        "ConfigMapList": "items",
        "ConfigMapNodeConfigSource": "kubeletConfigKey name namespace",
        "Container": "name",
        "ContainerPort": "containerPort",
        "ContainerResizePolicy": "resourceName restartPolicy",
        "ContainerStateTerminated": "exitCode",
        "ContainerStatus": "image imageID name ready restartCount",
        "DaemonEndpoint": "Port",
        "DownwardAPIVolumeFile": "path",
        "EndpointAddress": "ip",
        "EndpointPort": "port",
        "EndpointsList": "items",
        "EnvVar": "name",
        "EphemeralContainerCommon": "name",
        "Event": "involvedObject",
        "EventList": "items",
        "FlexPersistentVolumeSource": "driver",
        "FlexVolumeSource": "driver",
        "GCEPersistentDiskVolumeSource": "pdName",
        "GRPCAction": "port",
        "GitRepoVolumeSource": "repository",
        "GlusterfsPersistentVolumeSource": "endpoints path",
        "GlusterfsVolumeSource": "endpoints path",
        "HTTPGetAction": "port",
        "HTTPHeader": "name value",
        "HostPathVolumeSource": "path",
        "ISCSIPersistentVolumeSource": "iqn lun targetPortal",
        "ISCSIVolumeSource": "iqn lun targetPortal",
        "KeyToPath": "key path",
        "LimitRangeItem": "type",
        "LimitRangeList": "items",
        "LimitRangeSpec": "limits",
        "LocalVolumeSource": "path",
        "NFSVolumeSource": "path server",
        "NamespaceCondition": "status type",
        "NamespaceList": "items",
        "NodeAddress": "address type",
        "NodeCondition": "status type",
        "NodeList": "items",
        "NodeSelector": "nodeSelectorTerms",
        "NodeSelectorRequirement": "key operator",
        "NodeSystemInfo": "architecture bootID containerRuntimeVersion kernelVersion kubeProxyVersion kubeletVersion machineID operatingSystem osImage systemUUID",
        "ObjectFieldSelector": "fieldPath",
        "PersistentVolumeClaimCondition": "status type",
        "PersistentVolumeClaimList": "items",
        "PersistentVolumeClaimTemplate": "spec",
        "PersistentVolumeClaimVolumeSource": "claimName",
        "PersistentVolumeList": "items",
        "PhotonPersistentDiskVolumeSource": "pdID",
        "PodAffinityTerm": "topologyKey",
        "PodCondition": "status type",
        "PodList": "items",
        "PodOS": "name",
        "PodReadinessGate": "conditionType",
        "PodResourceClaim": "name",
        "PodResourceClaimStatus": "name",
        "PodSchedulingGate": "name",
        "PodSpec": "containers",
        "PortStatus": "port protocol",
        "PortworxVolumeSource": "volumeID",
        "PreferredSchedulingTerm": "preference weight",
        "QuobyteVolumeSource": "registry volume",
        "RBDPersistentVolumeSource": "image monitors",
        "RBDVolumeSource": "image monitors",
        "ResourceClaim": "name",
        "ResourceFieldSelector": "resource",
        "ResourceQuotaList": "items",
        "ScaleIOPersistentVolumeSource": "gateway secretRef system",
        "ScaleIOVolumeSource": "gateway secretRef system",
        "ScopedResourceSelectorRequirement": "operator scopeName",
        "SeccompProfile": "type",
        "SecretKeySelector": "key",
        "SecretList": "items",
        "ServiceAccountList": "items",
        "ServiceAccountTokenProjection": "path",
        "ServiceList": "items",
        "ServicePort": "port",
        "Sysctl": "name value",
        "TCPSocketAction": "port",
        "Taint": "effect key",
        "TopologySelectorLabelRequirement": "key values",
        "TopologySpreadConstraint": "maxSkew topologyKey whenUnsatisfiable",
        "TypedLocalObjectReference": "kind name",
        "TypedObjectReference": "kind name",
        "Volume": "name",
        "VolumeDevice": "devicePath name",
        "VolumeMount": "mountPath name",
        "VsphereVirtualDiskVolumeSource": "volumePath",
        "WeightedPodAffinityTerm": "podAffinityTerm weight",
    },
    "k8s.io.api.apps.v1": {
        "ControllerRevision": "revision",
        "ControllerRevisionList": "items",
        "DaemonSetCondition": "status type",
        "DaemonSetList": "items",
        "DaemonSetSpec": "selector template",
        "DaemonSetStatus": "currentNumberScheduled desiredNumberScheduled numberMisscheduled numberReady",
        "DeploymentCondition": "status type",
        "DeploymentList": "items",
        "DeploymentSpec": "selector template",
        "ReplicaSetCondition": "status type",
        "ReplicaSetList": "items",
        "ReplicaSetSpec": "selector",
        "ReplicaSetStatus": "replicas",
        "StatefulSetCondition": "status type",
        "StatefulSetList": "items",
        "StatefulSetSpec": "selector serviceName template",
        # availableReplicas and start: +optional but without omitempty in types.go (so not in the required lists)
        "StatefulSetOrdinals": "start",
        "StatefulSetStatus": "availableReplicas replicas",
    },
    "k8s.io.api.batch.v1": {
        "CronJobList": "items",
        "CronJobSpec": "jobTemplate schedule",
        "JobCondition": "status type",
        "JobList": "items",
        "JobSpec": "template",
        "PodFailurePolicy": "rules",
        "PodFailurePolicyOnExitCodesRequirement": "operator values",
        "PodFailurePolicyOnPodConditionsPattern": "status type",
        "PodFailurePolicyRule": "action onPodConditions",
    },
    "k8s.io.api.policy.v1": {
        "PodDisruptionBudgetList": "items",
        "PodDisruptionBudgetStatus": "currentHealthy desiredHealthy disruptionsAllowed expectedPods",
    },
    "k8s.io.api.autoscaling.v1": {
        "CrossVersionObjectReference": "kind name",
        "HorizontalPodAutoscalerList": "items",
        "HorizontalPodAutoscalerSpec": "maxReplicas scaleTargetRef",
        "HorizontalPodAutoscalerStatus": "currentReplicas desiredReplicas",
        "ScaleStatus": "replicas",
    },
    "k8s.io.api.autoscaling.v2": {
        "ContainerResourceMetricSource": "container name target",
        "ContainerResourceMetricStatus": "container current name",
        "CrossVersionObjectReference": "kind name",
        "ExternalMetricSource": "metric target",
        "ExternalMetricStatus": "current metric",
        "HPAScalingPolicy": "periodSeconds type value",
        "HorizontalPodAutoscalerCondition": "status type",
        "HorizontalPodAutoscalerList": "items",
        "HorizontalPodAutoscalerSpec": "maxReplicas scaleTargetRef",
        "HorizontalPodAutoscalerStatus": "desiredReplicas",
        "MetricIdentifier": "name",
        "MetricSpec": "type",
        "MetricStatus": "type",
        "MetricTarget": "type",
        "ObjectMetricSource": "describedObject metric target",
        "ObjectMetricStatus": "current describedObject metric",
        "PodsMetricSource": "metric target",
        "PodsMetricStatus": "current metric",
        "ResourceMetricSource": "name target",
        "ResourceMetricStatus": "current name",
    },
    "k8s.io.api.networking.v1": {
        "HTTPIngressPath": "backend pathType",
        "HTTPIngressRuleValue": "paths",
        "IPBlock": "cidr",
        "IngressClassList": "items",
        "IngressClassParametersReference": "kind name",
        "IngressList": "items",
        "IngressPortStatus": "port protocol",
        "IngressServiceBackend": "name",
        "NetworkPolicyList": "items",
        "NetworkPolicySpec": "podSelector",
    },
    "k8s.io.api.discovery.v1": {
        "Endpoint": "addresses",
        "EndpointSlice": "addressType endpoints",
        "EndpointSliceList": "items",
        "ForZone": "name",
    },
    "k8s.io.api.scheduling.v1": {
        "PriorityClass": "value",
        "PriorityClassList": "items",
    },
    "k8s.io.api.storage.v1": {
        "StorageClass": "provisioner",
        "StorageClassList": "items",
    },
    "k8s.io.api.admissionregistration.v1": {
        "AuditAnnotation": "key valueExpression",
        "ExpressionWarning": "fieldRef warning",
        "MatchCondition": "name expression",
        "MutatingWebhook": "name admissionReviewVersions",
        "ServiceReference": "namespace name",
        "Validation": "Expression",
        "Variable": "Name Expression",
        "ValidatingWebhook": "name admissionReviewVersions",
    },
}

NULLABLE_FIELDS: dict[str, dict[str, str]] = {
    "k8s.io.api.core.v1": {
        "AzureDiskVolumeSource": "cachingMode fsType readOnly kind",
        "AzureFilePersistentVolumeSource": "secretNamespace",
        "CSIPersistentVolumeSource": "controllerPublishSecretRef nodeStageSecretRef nodePublishSecretRef"
                                     " controllerExpandSecretRef nodeExpandSecretRef",
        "CSIVolumeSource": "readOnly fsType nodePublishSecretRef",
        "CephFSPersistentVolumeSource": "secretRef",
        "CephFSVolumeSource": "secretRef",
        "CinderPersistentVolumeSource": "secretRef",
        "CinderVolumeSource": "secretRef",
        "ClaimSource": "resourceClaimName resourceClaimTemplateName",
        "ClientIPConfig": "timeoutSeconds",
        "ConfigMapEnvSource": "optional",
        "ConfigMapKeySelector": "optional",
        "ConfigMapProjection": "optional",
        "ConfigMapVolumeSource": "defaultMode optional",
        "Container": "restartPolicy livenessProbe readinessProbe startupProbe lifecycle securityContext",
        "ContainerState": "waiting running terminated",
        "ContainerStatus": "started resources",
        "DownwardAPIVolumeFile": "fieldRef resourceFieldRef mode",
        "DownwardAPIVolumeSource": "defaultMode",
        "EmptyDirVolumeSource": "sizeLimit",
        "EndpointAddress": "nodeName targetRef",
        "EndpointPort": "appProtocol",
        "EnvFromSource": "configMapRef secretRef",
        "EnvVar": "valueFrom",
        "EnvVarSource": "fieldRef resourceFieldRef configMapKeyRef secretKeyRef",
        "EphemeralContainerCommon": "restartPolicy livenessProbe readinessProbe startupProbe lifecycle"
                                    " securityContext",
        "EphemeralVolumeSource": "volumeClaimTemplate",
        "FCVolumeSource": "lun",
        "FlexPersistentVolumeSource": "secretRef",
        "FlexVolumeSource": "secretRef",
        "GRPCAction": "service",
        "GlusterfsPersistentVolumeSource": "endpointsNamespace",
        "HostPathVolumeSource": "type",
        "ISCSIPersistentVolumeSource": "secretRef initiatorName",
        "ISCSIVolumeSource": "secretRef initiatorName",
        "KeyToPath": "mode",
        "Lifecycle": "postStart preStop",
        "LifecycleHandler": "exec httpGet tcpSocket",
        "LoadBalancerIngress": "ipMode",
        "LocalVolumeSource": "fsType",
        "NodeAffinity": "requiredDuringSchedulingIgnoredDuringExecution",
        "NodeConfigSource": "configMap",
        "NodeConfigStatus": "assigned active lastKnownGood",
        "NodeSpec": "configSource",
        "NodeStatus": "config",
        "Affinity": "nodeAffinity podAffinity podAntiAffinity",
        "PersistentVolumeClaimSpec": "selector storageClassName volumeMode dataSource dataSourceRef",
        "PersistentVolumeSource": "gcePersistentDisk awsElasticBlockStore hostPath glusterfs nfs rbd iscsi cinder"
                                  " cephfs fc flocker flexVolume azureFile vsphereVolume quobyte azureDisk"
                                  " photonPersistentDisk portworxVolume scaleIO local storageos csi",
        "PersistentVolumeSpec": "claimRef volumeMode nodeAffinity",
        "PersistentVolumeStatus": "lastPhaseTransitionTime",
        "PodAffinityTerm": "labelSelector namespaceSelector",
        "PodDNSConfigOption": "value",
        "PodResourceClaimStatus": "resourceClaimName",
        "PodSecurityContext": "seLinuxOptions windowsOptions runAsUser runAsGroup runAsNonRoot fsGroup"
                              " fsGroupChangePolicy seccompProfile",
        "PodSpec": "terminationGracePeriodSeconds activeDeadlineSeconds automountServiceAccountToken"
                   " shareProcessNamespace securityContext affinity priority dnsConfig runtimeClassName"
                   " enableServiceLinks preemptionPolicy setHostnameAsFQDN os hostUsers",
        "PodStatus": "startTime",
        "Probe": "terminationGracePeriodSeconds",
        "ProbeHandler": "exec httpGet tcpSocket grpc",
        "ProjectedVolumeSource": "defaultMode",
        "RBDPersistentVolumeSource": "secretRef",
        "RBDVolumeSource": "secretRef",
        # A non-pointer Quantity, which Go writes as "0" when zero; kept only when sent.
        "ResourceFieldSelector": "divisor",
        "ResourceQuotaSpec": "scopeSelector",
        "ScaleIOPersistentVolumeSource": "secretRef",
        "ScaleIOVolumeSource": "secretRef",
        "SeccompProfile": "localhostProfile",
        "SecretEnvSource": "optional",
        "SecretKeySelector": "optional",
        "SecretProjection": "optional",
        "SecretVolumeSource": "defaultMode optional",
        "SecurityContext": "capabilities privileged seLinuxOptions windowsOptions runAsUser runAsGroup runAsNonRoot"
                           " readOnlyRootFilesystem allowPrivilegeEscalation procMount seccompProfile",
        "ServiceAccountTokenProjection": "expirationSeconds",
        "ServicePort": "appProtocol",
        "ServiceSpec": "sessionAffinityConfig ipFamilyPolicy allocateLoadBalancerNodePorts loadBalancerClass"
                       " internalTrafficPolicy",
        "SessionAffinityConfig": "clientIP",
        "StorageOSPersistentVolumeSource": "secretRef",
        "StorageOSVolumeSource": "secretRef",
        "Taint": "timeAdded",
        "Toleration": "tolerationSeconds",
        "TopologySpreadConstraint": "labelSelector minDomains nodeAffinityPolicy nodeTaintsPolicy",
        "TypedLocalObjectReference": "apiGroup",
        "TypedObjectReference": "apiGroup namespace",
        "VolumeMount": "mountPropagation",
        "VolumeNodeAffinity": "required",
        "VolumeProjection": "secret downwardAPI configMap serviceAccountToken",
        "VolumeSource": "hostPath emptyDir gcePersistentDisk awsElasticBlockStore gitRepo secret nfs iscsi glusterfs"
                        " persistentVolumeClaim rbd flexVolume cinder cephfs flocker downwardAPI fc azureFile"
                        " configMap vsphereVolume quobyte azureDisk photonPersistentDisk projected portworxVolume"
                        " scaleIO storageos csi ephemeral",
        "WindowsSecurityContextOptions": "gmsaCredentialSpecName gmsaCredentialSpec runAsUserName hostProcess",
    },
    "k8s.io.api.apps.v1": {
        "DaemonSetSpec": "selector revisionHistoryLimit",
        "DaemonSetStatus": "collisionCount",
        "DaemonSetUpdateStrategy": "rollingUpdate",
        "DeploymentSpec": "replicas selector revisionHistoryLimit progressDeadlineSeconds",
        "DeploymentStatus": "collisionCount",
        "DeploymentStrategy": "rollingUpdate",
        "ReplicaSetSpec": "replicas selector",
        "RollingUpdateDaemonSet": "maxUnavailable maxSurge",
        "RollingUpdateDeployment": "maxUnavailable maxSurge",
        "RollingUpdateStatefulSetStrategy": "partition maxUnavailable",
        "StatefulSetSpec": "replicas selector revisionHistoryLimit persistentVolumeClaimRetentionPolicy ordinals",
        "StatefulSetStatus": "collisionCount",
        "StatefulSetUpdateStrategy": "rollingUpdate",
    },
    "k8s.io.api.batch.v1": {
        "CronJobSpec": "timeZone startingDeadlineSeconds suspend successfulJobsHistoryLimit failedJobsHistoryLimit",
        "CronJobStatus": "lastScheduleTime lastSuccessfulTime",
        "JobSpec": "parallelism completions activeDeadlineSeconds podFailurePolicy backoffLimit backoffLimitPerIndex"
                   " maxFailedIndexes selector manualSelector ttlSecondsAfterFinished completionMode suspend"
                   " podReplacementPolicy",
        "JobStatus": "startTime completionTime terminating failedIndexes uncountedTerminatedPods ready",
        "PodFailurePolicyOnExitCodesRequirement": "containerName",
        "PodFailurePolicyRule": "onExitCodes",
    },
    "k8s.io.api.policy.v1": {
        "Eviction": "deleteOptions",
        "PodDisruptionBudgetSpec": "minAvailable selector maxUnavailable unhealthyPodEvictionPolicy",
    },
    "k8s.io.api.autoscaling.v1": {
        "HorizontalPodAutoscalerSpec": "minReplicas targetCPUUtilizationPercentage",
        "HorizontalPodAutoscalerStatus": "observedGeneration lastScaleTime currentCPUUtilizationPercentage",
    },
    "k8s.io.api.autoscaling.v2": {
        "HPAScalingRules": "stabilizationWindowSeconds selectPolicy",
        "HorizontalPodAutoscalerBehavior": "scaleUp scaleDown",
        "HorizontalPodAutoscalerSpec": "minReplicas behavior",
        "HorizontalPodAutoscalerStatus": "observedGeneration lastScaleTime",
        "MetricIdentifier": "selector",
        "MetricSpec": "object pods resource containerResource external",
        "MetricStatus": "object pods resource containerResource external",
        "MetricTarget": "value averageValue averageUtilization",
        "MetricValueStatus": "value averageValue averageUtilization",
    },
    "k8s.io.api.networking.v1": {
        "HTTPIngressPath": "pathType",
        "IngressBackend": "service resource",
        "IngressClassParametersReference": "aPIGroup scope namespace",
        "IngressClassSpec": "parameters",
        "IngressPortStatus": "error",
        "IngressRuleValue": "http",
        "IngressSpec": "ingressClassName defaultBackend",
        "NetworkPolicyPeer": "podSelector namespaceSelector ipBlock",
        "NetworkPolicyPort": "protocol port endPort",
    },
    "k8s.io.api.discovery.v1": {
        "Endpoint": "hostname targetRef nodeName zone hints",
        "EndpointConditions": "ready serving terminating",
        "EndpointPort": "name protocol port appProtocol",
    },
    "k8s.io.api.scheduling.v1": {
        "PriorityClass": "preemptionPolicy",
    },
    "k8s.io.api.storage.v1": {
        "StorageClass": "reclaimPolicy allowVolumeExpansion volumeBindingMode",
    },
    "k8s.io.api.admissionregistration.v1": {
        "MatchResources": "namespaceSelector objectSelector matchPolicy",
        "MutatingWebhook": "failurePolicy matchPolicy namespaceSelector objectSelector sideEffects timeoutSeconds"
                           " reinvocationPolicy",
        "ParamRef": "selector parameterNotFoundAction",
        "Rule": "scope",
        "ServiceReference": "path port",
        "ValidatingAdmissionPolicyBindingSpec": "paramRef matchResources",
        "ValidatingAdmissionPolicySpec": "paramKind matchConstraints failurePolicy",
        "ValidatingAdmissionPolicyStatus": "typeChecking",
        "ValidatingWebhook": "failurePolicy matchPolicy namespaceSelector objectSelector sideEffects timeoutSeconds",
        "Validation": "reason",
        "WebhookClientConfig": "url service",
    },
}
