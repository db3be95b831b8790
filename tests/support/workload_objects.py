"""Realistic workload objects in Kubernetes' canonical JSON form (as kube-apiserver v1.28 writes them, defaults applied).

Canonical means what Go's encoder writes for the decoded struct: non-pointer structs present (`resources: {}`,
`lastState: {}`, `status: {loadBalancer: {}}`), zero-valued `omitempty` fields absent, pointer fields present when
set (`priority: 0`, `suspend: false`), required fields present. `WORKLOAD_OBJECTS` holds one per kind the Protobuf
codec serves for issue 38 (HorizontalPodAutoscaler as autoscaling/v2) and one List per listed kind;
`HPA_V1` is the autoscaling/v1 form.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["DEPLOYMENT", "HPA_V1", "HPA_V2", "POD", "SERVICE", "WORKLOAD_OBJECTS", "list_of"]

T0, T1 = "2024-02-03T04:05:06Z", "2024-02-03T04:06:07Z"
LABELS = {"app": "web", "tier": "frontend"}


def _meta(name: str, namespace: str | None = "shop", **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "uid": f"uid-{name}", "resourceVersion": "41", "generation": 2,
                            "creationTimestamp": T0, "labels": dict(LABELS)}
    if namespace:
        meta["namespace"] = namespace
    return {**meta, **extra}


def _container(name: str, image: str) -> dict[str, Any]:
    return {
        "name": name, "image": image, "command": ["/bin/web"], "args": ["--port=8080"], "workingDir": "/srv",
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"},
                  {"name": "metrics", "hostPort": 9090, "containerPort": 9090, "protocol": "TCP", "hostIP": "0.0.0.0"}],
        "envFrom": [{"prefix": "CFG_", "configMapRef": {"name": "web-config", "optional": True}},
                    {"secretRef": {"name": "web-secret"}}],
        "env": [{"name": "MODE", "value": "production"},
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "web-secret", "key": "token", "optional": False}}},
                {"name": "CPU", "valueFrom": {"resourceFieldRef": {"containerName": name, "resource": "limits.cpu",
                                                                   "divisor": "1m"}}}],
        "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "250m", "memory": "128Mi"}},
        "volumeMounts": [{"name": "config", "readOnly": True, "mountPath": "/etc/web"},
                         {"name": "data", "mountPath": "/var/lib/web", "subPath": "v1"},
                         {"name": "cache", "mountPath": "/cache", "mountPropagation": "None"}],
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP",
                                      "httpHeaders": [{"name": "X-Probe", "value": "1"}]},
                          "initialDelaySeconds": 5, "timeoutSeconds": 1, "periodSeconds": 10,
                          "successThreshold": 1, "failureThreshold": 3},
        "readinessProbe": {"tcpSocket": {"port": "http"}, "timeoutSeconds": 1, "periodSeconds": 5,
                           "successThreshold": 1, "failureThreshold": 3},
        "startupProbe": {"exec": {"command": ["cat", "/tmp/ready"]}, "timeoutSeconds": 1, "periodSeconds": 10,
                         "successThreshold": 1, "failureThreshold": 30, "terminationGracePeriodSeconds": 0},
        "lifecycle": {"preStop": {"exec": {"command": ["sleep", "5"]}},
                      "postStart": {"httpGet": {"path": "/started", "port": "http", "scheme": "HTTP"}}},
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent",
        "securityContext": {"capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]}, "privileged": False,
                            "runAsUser": 1000, "runAsNonRoot": True, "readOnlyRootFilesystem": True,
                            "allowPrivilegeEscalation": False, "seccompProfile": {"type": "RuntimeDefault"}},
    }


POD_SPEC: dict[str, Any] = {
    "volumes": [
        {"name": "config", "configMap": {"name": "web-config", "items": [{"key": "app.yaml", "path": "app.yaml"}],
                                         "defaultMode": 420}},
        {"name": "secret", "secret": {"secretName": "web-secret", "defaultMode": 256, "optional": True}},
        {"name": "cache", "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}},
        {"name": "data", "persistentVolumeClaim": {"claimName": "web-data"}},
        {"name": "token", "projected": {"sources": [
            {"serviceAccountToken": {"audience": "vault", "expirationSeconds": 3607, "path": "token"}},
            {"downwardAPI": {"items": [{"path": "labels", "fieldRef": {"apiVersion": "v1",
                                                                       "fieldPath": "metadata.labels"}}]}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}],
            "defaultMode": 420}},
        {"name": "host", "hostPath": {"path": "/var/log", "type": ""}},
    ],
    "initContainers": [{"name": "migrate", "image": "registry.example/web:1.2.3", "command": ["/bin/migrate"],
                        "resources": {}, "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}],
    "containers": [_container("web", "registry.example/web:1.2.3")],
    "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "activeDeadlineSeconds": 3600,
    "dnsPolicy": "ClusterFirst", "nodeSelector": {"kubernetes.io/os": "linux"},
    "serviceAccountName": "web", "serviceAccount": "web", "automountServiceAccountToken": False,
    "nodeName": "node-1", "hostNetwork": True, "shareProcessNamespace": False,
    "securityContext": {"runAsUser": 1000, "runAsGroup": 3000, "runAsNonRoot": True, "fsGroup": 2000,
                        "supplementalGroups": [4000], "sysctls": [{"name": "net.core.somaxconn", "value": "1024"}],
                        "fsGroupChangePolicy": "OnRootMismatch", "seccompProfile": {"type": "RuntimeDefault"}},
    "imagePullSecrets": [{"name": "regcred"}], "hostname": "web-0", "subdomain": "web",
    "affinity": {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]},
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "preference": {"matchExpressions": [{"key": "ssd", "operator": "Exists"}]}}]},
        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": {
            "labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}}]}},
    "schedulerName": "default-scheduler",
    "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                     "tolerationSeconds": 300}, {"key": "dedicated", "operator": "Equal", "value": "web",
                                                 "effect": "NoSchedule"}],
    "hostAliases": [{"ip": "10.0.0.9", "hostnames": ["db.local"]}],
    "priorityClassName": "high", "priority": 0,
    "dnsConfig": {"nameservers": ["1.1.1.1"], "options": [{"name": "ndots", "value": "2"}, {"name": "edns0"}]},
    "readinessGates": [{"conditionType": "example.com/ready"}],
    "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority",
    "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                   "labelSelector": {"matchLabels": {"app": "web"}}, "minDomains": 2}],
    "os": {"name": "linux"},
}

POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": _meta("web-0", generateName="web-", ownerReferences=[
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "uid-web", "controller": True,
         "blockOwnerDeletion": True}]),
    "spec": POD_SPEC,
    "status": {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": T1},
                       {"type": "PodScheduled", "status": "True", "lastTransitionTime": T0}],
        "hostIP": "192.168.0.10", "hostIPs": [{"ip": "192.168.0.10"}], "podIP": "10.244.0.7",
        "podIPs": [{"ip": "10.244.0.7"}], "startTime": T0,
        "initContainerStatuses": [{"name": "migrate", "state": {"terminated": {
            "exitCode": 0, "reason": "Completed", "startedAt": T0, "finishedAt": T1, "containerID": "containerd://a"}},
            "lastState": {}, "ready": True, "restartCount": 0, "image": "registry.example/web:1.2.3",
            "imageID": "registry.example/web@sha256:aa", "containerID": "containerd://a", "started": False}],
        "containerStatuses": [{"name": "web", "state": {"running": {"startedAt": T1}},
                               "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled",
                                                            "startedAt": T0, "finishedAt": T0}},
                               "ready": True, "restartCount": 1, "image": "registry.example/web:1.2.3",
                               "imageID": "registry.example/web@sha256:aa", "containerID": "containerd://b",
                               "started": True}],
        "qosClass": "Burstable",
    },
}

TEMPLATE = {"metadata": {"labels": dict(LABELS)}, "spec": {
    "containers": [{"name": "web", "image": "nginx:1.25", "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "resources": {}, "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}],
    "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
    "securityContext": {}, "schedulerName": "default-scheduler"}}

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": _meta("web", annotations={"deployment.kubernetes.io/revision": "1"}),
    "spec": {"replicas": 3, "selector": {"matchLabels": dict(LABELS)}, "template": TEMPLATE,
             "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 1}},
             "minReadySeconds": 5, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600},
    "status": {"observedGeneration": 2, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 2,
               "availableReplicas": 2, "unavailableReplicas": 1,
               "conditions": [{"type": "Available", "status": "False", "lastUpdateTime": T0,
                               "lastTransitionTime": T0, "reason": "MinimumReplicasUnavailable",
                               "message": "Deployment does not have minimum availability."}]},
}

SERVICE: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Service", "metadata": _meta("web"),
    "spec": {"ports": [{"name": "http", "protocol": "TCP", "appProtocol": "http", "port": 80, "targetPort": "http"},
                       {"name": "https", "protocol": "TCP", "port": 443, "targetPort": 8443, "nodePort": 30443}],
             "selector": dict(LABELS), "clusterIP": "10.96.0.20", "clusterIPs": ["10.96.0.20"], "type": "NodePort",
             "sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 10800}},
             "externalTrafficPolicy": "Cluster", "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
             "internalTrafficPolicy": "Cluster"},
    "status": {"loadBalancer": {}},
}

HPA_V2: dict[str, Any] = {
    "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": _meta("web"),
    "spec": {
        "scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
        "minReplicas": 1, "maxReplicas": 10,
        "metrics": [
            {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                        "averageUtilization": 80}}},
            {"type": "Pods", "pods": {"metric": {"name": "requests_per_second"},
                                      "target": {"type": "AverageValue", "averageValue": "1k"}}},
            {"type": "Object", "object": {"describedObject": {"kind": "Ingress", "name": "web",
                                                              "apiVersion": "networking.k8s.io/v1"},
                                          "metric": {"name": "hits", "selector": {"matchLabels": {"path": "/"}}},
                                          "target": {"type": "Value", "value": "10k"}}},
            {"type": "External", "external": {"metric": {"name": "queue_length"},
                                              "target": {"type": "AverageValue", "averageValue": "30"}}},
            {"type": "ContainerResource", "containerResource": {
                "name": "memory", "container": "web", "target": {"type": "Utilization", "averageUtilization": 60}}}],
        "behavior": {"scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                                 "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                                              {"type": "Percent", "value": 100, "periodSeconds": 15}]},
                     "scaleDown": {"stabilizationWindowSeconds": 300, "selectPolicy": "Max",
                                   "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}},
    },
    "status": {"observedGeneration": 2, "lastScaleTime": T1, "currentReplicas": 3, "desiredReplicas": 4,
               "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {
                   "averageValue": "412m", "averageUtilization": 82}}}],
               "conditions": [{"type": "AbleToScale", "status": "True", "lastTransitionTime": T0,
                               "reason": "ReadyForNewScale", "message": "recommended size matches current size"}]},
}

HPA_V1: dict[str, Any] = {
    "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": _meta("web"),
    "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
             "minReplicas": 1, "maxReplicas": 10, "targetCPUUtilizationPercentage": 80},
    "status": {"currentReplicas": 0, "desiredReplicas": 0},
}

CLAIM_SPEC = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
              "storageClassName": "standard", "volumeMode": "Filesystem"}

JOB_SPEC = {"parallelism": 2, "completions": 4, "activeDeadlineSeconds": 600, "backoffLimit": 6,
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "uid-job"}}, "manualSelector": False,
            "template": {"metadata": {"labels": {"batch.kubernetes.io/controller-uid": "uid-job", "job-name": "pi"}},
                         "spec": {**TEMPLATE["spec"], "restartPolicy": "Never"}},
            "ttlSecondsAfterFinished": 0, "completionMode": "NonIndexed", "suspend": False,
            "podReplacementPolicy": "TerminatingOrFailed",
            "podFailurePolicy": {"rules": [
                {"action": "FailJob", "onExitCodes": {"containerName": "web", "operator": "In", "values": [42]},
                 "onPodConditions": []},
                {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]}}

_OBJECTS: list[dict[str, Any]] = [
    POD, DEPLOYMENT, SERVICE, HPA_V2,
    {"apiVersion": "v1", "kind": "Endpoints", "metadata": _meta("web"), "subsets": [{
        "addresses": [{"ip": "10.244.0.7", "nodeName": "node-1",
                       "targetRef": {"kind": "Pod", "namespace": "shop", "name": "web-0", "uid": "uid-web-0"}}],
        "notReadyAddresses": [{"ip": "10.244.0.8", "hostname": "web-1"}],
        "ports": [{"name": "http", "port": 8080, "protocol": "TCP", "appProtocol": "http"}]}]},
    {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": _meta("web-data"),
     "spec": {**CLAIM_SPEC, "volumeName": "pv-1",
              "selector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gold"]}]},
              "dataSourceRef": {"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "snap"}},
     "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}},
    {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": _meta("pv-1", None),
     "spec": {"capacity": {"storage": "1Gi"}, "csi": {"driver": "csi.example.com", "volumeHandle": "vol-1",
                                                      "fsType": "ext4", "volumeAttributes": {"tier": "gold"},
                                                      "nodePublishSecretRef": {"name": "csi", "namespace": "kube"}},
              "accessModes": ["ReadWriteOnce"],
              "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "shop", "name": "web-data"},
              "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "standard",
              "mountOptions": ["noatime"], "volumeMode": "Filesystem",
              "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchFields": [
                  {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}}},
     "status": {"phase": "Bound", "lastPhaseTransitionTime": T0}},
    {"apiVersion": "v1", "kind": "Node", "metadata": _meta("node-1", None),
     "spec": {"podCIDR": "10.244.0.0/24", "podCIDRs": ["10.244.0.0/24"], "providerID": "kind://node-1",
              "unschedulable": True, "taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule",
                                                 "timeAdded": T1}]},
     "status": {"capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"},
                "allocatable": {"cpu": "7800m", "memory": "15Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": T1,
                                "lastTransitionTime": T0, "reason": "KubeletReady",
                                "message": "kubelet is posting ready status"}],
                "addresses": [{"type": "InternalIP", "address": "192.168.0.10"},
                              {"type": "Hostname", "address": "node-1"}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "nodeInfo": {"machineID": "m", "systemUUID": "s", "bootID": "b", "kernelVersion": "6.1.0",
                             "osImage": "Debian", "containerRuntimeVersion": "containerd://1.7.0",
                             "kubeletVersion": "v1.28.0", "kubeProxyVersion": "v1.28.0",
                             "operatingSystem": "linux", "architecture": "amd64"},
                "images": [{"names": ["nginx:1.25"], "sizeBytes": 70000000}],
                "volumesAttached": [{"name": "kubernetes.io/csi/vol-1", "devicePath": ""}]}},
    {"apiVersion": "v1", "kind": "LimitRange", "metadata": _meta("limits"), "spec": {"limits": [
        {"type": "Container", "max": {"cpu": "2"}, "min": {"cpu": "10m"}, "default": {"cpu": "500m"},
         "defaultRequest": {"cpu": "100m"}, "maxLimitRequestRatio": {"cpu": "10"}}]}},
    {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": _meta("quota"),
     "spec": {"hard": {"pods": "10", "requests.cpu": "4"}, "scopeSelector": {"matchExpressions": [
         {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}},
     "status": {"hard": {"pods": "10", "requests.cpu": "4"}, "used": {"pods": "3", "requests.cpu": "750m"}}},
    {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "web-0", "namespace": "shop"},
     "target": {"kind": "Node", "name": "node-1", "apiVersion": "v1"}},
    {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": _meta("web"),
     "spec": {"replicas": 0, "selector": {"matchLabels": dict(LABELS)}, "template": TEMPLATE,
              "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": CLAIM_SPEC,
                                        "status": {"phase": "Pending"}}],
              "serviceName": "web", "podManagementPolicy": "OrderedReady",
              "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
              "revisionHistoryLimit": 10,
              "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Delete"},
              "ordinals": {"start": 1}},
     "status": {"observedGeneration": 2, "replicas": 0, "currentRevision": "web-5d8f", "updateRevision": "web-5d8f",
                "collisionCount": 0, "availableReplicas": 0}},
    {"apiVersion": "apps/v1", "kind": "ReplicaSet",
     "metadata": _meta("web-5d8f", ownerReferences=[{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                                                     "uid": "uid-web", "controller": True,
                                                     "blockOwnerDeletion": True}]),
     "spec": {"replicas": 3, "minReadySeconds": 5, "selector": {"matchLabels": dict(LABELS)}, "template": TEMPLATE},
     "status": {"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 3, "availableReplicas": 3,
                "observedGeneration": 2}},
    {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": _meta("agent"),
     "spec": {"selector": {"matchLabels": dict(LABELS)}, "template": TEMPLATE,
              "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
              "revisionHistoryLimit": 10},
     "status": {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0,
                "numberReady": 0, "observedGeneration": 2}},
    {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": _meta("web-5d8f"),
     "data": {"spec": {"template": {"$patch": "replace", "spec": {"containers": [{"name": "web"}]}}}},
     "revision": 3},
    {"apiVersion": "batch/v1", "kind": "Job", "metadata": _meta("pi"), "spec": JOB_SPEC,
     "status": {"conditions": [{"type": "Suspended", "status": "False", "lastProbeTime": T1,
                                "lastTransitionTime": T1, "reason": "JobResumed", "message": "Job resumed"}],
                "startTime": T0, "active": 2, "terminating": 0, "uncountedTerminatedPods": {"succeeded": ["u1"]},
                "ready": 0}},
    {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": _meta("nightly"),
     "spec": {"schedule": "0 3 * * *", "timeZone": "Etc/UTC", "startingDeadlineSeconds": 200,
              "concurrencyPolicy": "Forbid", "suspend": False,
              "jobTemplate": {"metadata": {}, "spec": {k: v for k, v in JOB_SPEC.items() if k != "selector"}},
              "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1},
     "status": {"active": [{"kind": "Job", "namespace": "shop", "name": "nightly-1", "uid": "uid-n1",
                            "apiVersion": "batch/v1", "resourceVersion": "40"}],
                "lastScheduleTime": T0, "lastSuccessfulTime": T1}},
    {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": _meta("web"),
     "spec": {"ingressClassName": "nginx",
              "defaultBackend": {"resource": {"apiGroup": "k8s.example.com", "kind": "Bucket", "name": "static"}},
              "tls": [{"hosts": ["shop.example.com"], "secretName": "shop-tls"}],
              "rules": [{"host": "shop.example.com", "http": {"paths": [
                  {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}},
                  {"path": "/api", "pathType": "Exact",
                   "backend": {"service": {"name": "api", "port": {"name": "http"}}}}]}}]},
     "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.5", "ports": [
         {"port": 443, "protocol": "TCP", "error": "Pending"}]}]}}},
    {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": _meta("nginx", None),
     "spec": {"controller": "k8s.io/ingress-nginx", "parameters": {
         "apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "external", "scope": "Namespace",
         "namespace": "ingress"}}},
    {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": _meta("web"),
     "spec": {"podSelector": {"matchLabels": {"app": "web"}},
              "ingress": [{"ports": [{"protocol": "TCP", "port": 8080}, {"protocol": "TCP", "port": "http"},
                                     {"protocol": "UDP", "port": 30000, "endPort": 32767}],
                           "from": [{"podSelector": {}}, {"namespaceSelector": {"matchLabels": {"team": "a"}}},
                                    {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}]}],
              "egress": [{"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}]}], "policyTypes": ["Ingress", "Egress"]}},
    {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": _meta("web"),
     "spec": {"minAvailable": "50%", "selector": {"matchLabels": dict(LABELS)},
              "unhealthyPodEvictionPolicy": "AlwaysAllow"},
     "status": {"observedGeneration": 2, "disruptedPods": {"web-1": T1}, "disruptionsAllowed": 0,
                "currentHealthy": 1, "desiredHealthy": 2, "expectedPods": 3,
                "conditions": [{"type": "DisruptionAllowed", "status": "False", "observedGeneration": 2,
                                "lastTransitionTime": T0, "reason": "InsufficientPods", "message": ""}]}},
    {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web-0", "namespace": "shop"},
     "deleteOptions": {"gracePeriodSeconds": 0, "preconditions": {"uid": "uid-web-0"}}},
    {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": _meta("web"),
     "spec": {"replicas": 3}, "status": {"replicas": 3, "selector": "app=web,tier=frontend"}},
    {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
     "metadata": _meta("web-abc12", labels={"kubernetes.io/service-name": "web"}),
     "addressType": "IPv4",
     "endpoints": [{"addresses": ["10.244.0.7"], "conditions": {"ready": True, "serving": True, "terminating": False},
                    "hostname": "web-0", "targetRef": {"kind": "Pod", "namespace": "shop", "name": "web-0"},
                    "nodeName": "node-1", "zone": "a", "hints": {"forZones": [{"name": "a"}]}},
                   {"addresses": ["10.244.0.8"], "conditions": {}}],
     "ports": [{"name": "http", "protocol": "TCP", "port": 8080, "appProtocol": "http"}, {"name": ""}]},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": _meta("high", None),
     "value": 1000000, "globalDefault": True, "description": "latency-critical", "preemptionPolicy": "Never"},
    {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": _meta("standard", None),
     "provisioner": "csi.example.com", "parameters": {"type": "ssd"}, "reclaimPolicy": "Delete",
     "mountOptions": ["noatime"], "allowVolumeExpansion": False, "volumeBindingMode": "WaitForFirstConsumer",
     "allowedTopologies": [{"matchLabelExpressions": [{"key": "zone", "values": ["a", "b"]}]}]},
]


def list_of(obj: dict[str, Any], resource_version: str = "42") -> dict[str, Any]:
    """The List of one `obj`, as a list response carries it (items without apiVersion and kind)."""
    item = {k: v for k, v in copy.deepcopy(obj).items() if k not in ("apiVersion", "kind")}
    return {"apiVersion": obj["apiVersion"], "kind": f"{obj['kind']}List",
            "metadata": {"resourceVersion": resource_version}, "items": [item]}


_UNLISTED = {"Binding", "Eviction", "Scale"}
WORKLOAD_OBJECTS: dict[str, dict[str, Any]] = {obj["kind"]: obj for obj in _OBJECTS}
WORKLOAD_OBJECTS.update({f"{kind}List": list_of(obj) for kind, obj in list(WORKLOAD_OBJECTS.items())
                         if kind not in _UNLISTED})
