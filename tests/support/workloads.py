"""One valid object of each workload kind (issue 38), as a user would write it: for the property tests, the
kubectl session and the benchmarks.

`sample(kind, name, namespace)` returns a fresh dict (what the server defaults inside an atomic list, a port's
protocol, is written out, so that a second `kubectl apply` of it is "unchanged"); `SAMPLE_KINDS` names every kind sampled, in the order a
manifest applies them (what others refer to first). `realistic_pod(name, namespace, index)` is a Pod as a Deployment's
would be (containers, probes, volumes, env, resources), as the scale benchmark stores 100,000 of.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

__all__ = ["SAMPLE_KINDS", "sample", "realistic_pod", "api_version_of"]

_LABELS = {"app": "web"}
_TEMPLATE = {"metadata": {"labels": dict(_LABELS)},
             "spec": {"containers": [{"name": "web", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}]}}


def _pod_template(restart_policy: str | None = None) -> dict[str, Any]:
    template = copy.deepcopy(_TEMPLATE)
    if restart_policy:
        template["spec"]["restartPolicy"] = restart_policy
    return template


def _job_spec() -> dict[str, Any]:
    return {"template": {"spec": {"restartPolicy": "Never",
                                  "containers": [{"name": "work", "image": "busybox:1.36",
                                                  "command": ["sh", "-c", "echo done"]}]}}}


_BODIES: dict[tuple[str, str], Callable[[], dict[str, Any]]] = {
    ("v1", "Pod"): lambda: {"spec": copy.deepcopy(_TEMPLATE["spec"]), "metadata": {"labels": dict(_LABELS)}},
    ("v1", "Service"): lambda: {"spec": {"selector": dict(_LABELS),
                                         "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}},
    ("v1", "Endpoints"): lambda: {"subsets": [{"addresses": [{"ip": "10.0.0.7"}],
                                               "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}]},
    ("v1", "PersistentVolumeClaim"): lambda: {"spec": {"accessModes": ["ReadWriteOnce"],
                                                       "resources": {"requests": {"storage": "1Gi"}}}},
    ("v1", "PersistentVolume"): lambda: {"spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"],
                                                  "hostPath": {"path": "/data/pv"}}},
    ("v1", "Node"): lambda: {"spec": {"podCIDR": "10.244.0.0/24"}},
    ("v1", "LimitRange"): lambda: {"spec": {"limits": [{"type": "Container", "default": {"cpu": "500m"},
                                                        "defaultRequest": {"cpu": "100m"}}]}},
    ("v1", "ResourceQuota"): lambda: {"spec": {"hard": {"pods": "10", "requests.cpu": "4"}}},
    ("apps/v1", "Deployment"): lambda: {"spec": {"replicas": 2, "selector": {"matchLabels": dict(_LABELS)},
                                                 "template": _pod_template()}},
    ("apps/v1", "StatefulSet"): lambda: {"spec": {"serviceName": "web", "replicas": 1,
                                                  "selector": {"matchLabels": dict(_LABELS)},
                                                  "template": _pod_template()}},
    ("apps/v1", "ReplicaSet"): lambda: {"spec": {"replicas": 1, "selector": {"matchLabels": dict(_LABELS)},
                                                 "template": _pod_template()}},
    ("apps/v1", "DaemonSet"): lambda: {"spec": {"selector": {"matchLabels": dict(_LABELS)},
                                                "template": _pod_template()}},
    ("apps/v1", "ControllerRevision"): lambda: {"revision": 1, "data": {"spec": {"template": {}}}},
    ("batch/v1", "Job"): lambda: {"spec": _job_spec()},
    ("batch/v1", "CronJob"): lambda: {"spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": _job_spec()}}},
    ("autoscaling/v2", "HorizontalPodAutoscaler"): lambda: {"spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 1, "maxReplicas": 5,
        "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                                                      "target": {"type": "Utilization", "averageUtilization": 80}}}]}},
    ("autoscaling/v1", "HorizontalPodAutoscaler"): lambda: {"spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 1, "maxReplicas": 5, "targetCPUUtilizationPercentage": 80}},
    ("networking.k8s.io/v1", "Ingress"): lambda: {"spec": {"rules": [{"host": "web.example.com", "http": {"paths": [
        {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}},
    ("networking.k8s.io/v1", "IngressClass"): lambda: {"spec": {"controller": "example.com/ingress-controller"}},
    ("networking.k8s.io/v1", "NetworkPolicy"): lambda: {"spec": {"podSelector": {"matchLabels": dict(_LABELS)},
                                                                 "ingress": [{"ports": [{"port": 80,
                                                                                         "protocol": "TCP"}]}]}},
    ("policy/v1", "PodDisruptionBudget"): lambda: {"spec": {"minAvailable": 1,
                                                            "selector": {"matchLabels": dict(_LABELS)}}},
    ("discovery.k8s.io/v1", "EndpointSlice"): lambda: {"addressType": "IPv4", "endpoints": [
        {"addresses": ["10.0.0.7"]}], "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]},
    ("scheduling.k8s.io/v1", "PriorityClass"): lambda: {"value": 1000, "description": "batch work"},
    ("storage.k8s.io/v1", "StorageClass"): lambda: {"provisioner": "example.com/disk"},
}
_CLUSTER_SCOPED = {"PersistentVolume", "Node", "IngressClass", "PriorityClass", "StorageClass"}

#: (apiVersion, kind) of every sampled kind, in an order a manifest can apply them in.
SAMPLE_KINDS: tuple[tuple[str, str], ...] = tuple(_BODIES)


def api_version_of(kind: str) -> str:
    """The apiVersion a sample of `kind` is written in (the first sampled)."""
    return next(v for v, k in SAMPLE_KINDS if k == kind)


def sample(api_version: str, kind: str, name: str = "web", namespace: str = "default") -> dict[str, Any]:
    """A fresh valid object of `kind` in `api_version` (see the module doc); cluster-scoped kinds get no namespace."""
    body = _BODIES[(api_version, kind)]()
    meta = {"name": name, **({} if kind in _CLUSTER_SCOPED else {"namespace": namespace}), **body.pop("metadata", {})}
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **body}


def realistic_pod(name: str, namespace: str = "default", index: int = 0) -> dict[str, Any]:
    """A Pod of about 2 KiB as JSON as written, as a Deployment's would be: about 4 KiB with a kubelet's status,
    6 KiB stored with its defaults and managed fields (see the module doc)."""
    labels = {"app": "web", "tier": "backend", "pod-template-hash": "7d9f8c6b5", "instance": f"i{index % 97}"}
    probe = {"httpGet": {"path": "/healthz", "port": 8080}, "initialDelaySeconds": 5, "periodSeconds": 10}
    env = [{"name": f"SETTING_{i}", "value": f"value-{i}-{index}"} for i in range(4)]
    env.append({"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}})
    container = {
        "name": "app", "image": "registry.example.com/shop/backend:1.42.7",
        "args": ["--port=8080", "--log-level=info", "--metrics-port=9090"],
        "ports": [{"name": "http", "containerPort": 8080}, {"name": "metrics", "containerPort": 9090}],
        "env": env,
        "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"cpu": "1", "memory": "512Mi"}},
        "livenessProbe": probe, "readinessProbe": dict(probe, periodSeconds=5),
        "volumeMounts": [{"name": "config", "mountPath": "/etc/shop"}, {"name": "cache", "mountPath": "/cache"}],
    }
    sidecar = {"name": "proxy", "image": "registry.example.com/mesh/proxy:2.3.1", "args": ["--upstream=8080"],
               "ports": [{"name": "mesh", "containerPort": 15001}],
               "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}}}
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels,
                     "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "shop-7d9f8c6b5",
                                          "uid": "5f0c1e9a-1111-4c2b-9a3e-0123456789ab", "controller": True,
                                          "blockOwnerDeletion": True}]},
        "spec": {"containers": [container, sidecar], "serviceAccountName": "shop",
                 "nodeName": f"node-{index % 50}",
                 "volumes": [{"name": "config", "configMap": {"name": "shop-config"}}, {"name": "cache",
                                                                                       "emptyDir": {}}],
                 "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "shop", "effect": "NoSchedule"}],
                 "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                     {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "shop"}},
                                                         "topologyKey": "kubernetes.io/hostname"}}]}}},
    }
