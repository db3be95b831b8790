"""The generated built-in models (runtime.models.k8s) on realistic objects, and the typed client reaching them.

An object read by a model and written back gives the same JSON (what a typed controller reads it may send
again unchanged); the typed client finds a generated kind's resource from the generated `KINDS` table, with
no `bind_kind`.
"""

from __future__ import annotations

import json

import httpx
import pytest
from pydantic import ValidationError

from runtime.client.http import HTTPClient
from runtime.client.kubeconfig import KubeConfig
from runtime.client.typed import bound_kind, bound_kind_of, kind_of_model
from runtime.controller.controllerutil import set_controller_reference
from runtime.machinery.patch.schema import ListNode, schema_for
from runtime.machinery.scheme import ResourceType, Scheme
from runtime.models.k8s.apps_v1 import Deployment
from runtime.models.k8s.batch_v1 import CronJob, Job
from runtime.models.k8s.core_v1 import Node, Pod, Service
from runtime.models.k8s.networking_v1 import Ingress

META = {"name": "web", "namespace": "shop", "labels": {"app": "web"}, "uid": "0b1c", "resourceVersion": "12",
        "creationTimestamp": "2024-05-01T12:00:00Z"}
CONTAINER = {
    "name": "web", "image": "nginx:1.25", "imagePullPolicy": "IfNotPresent", "args": ["-g", "daemon off;"],
    "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP"}],
    "env": [{"name": "MODE", "value": "prod"},
            {"name": "POD_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}}},
            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "web", "key": "token", "optional": True}}}],
    "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": 0.25, "memory": 67108864}},
    "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"}, "periodSeconds": 5},
    "livenessProbe": {"tcpSocket": {"port": 80}, "initialDelaySeconds": 3},
    "volumeMounts": [{"name": "config", "mountPath": "/etc/nginx/conf.d", "readOnly": True}],
    "securityContext": {"runAsNonRoot": True, "capabilities": {"drop": ["ALL"]},
                        "seccompProfile": {"type": "RuntimeDefault"}},
}
POD_SPEC = {
    "containers": [CONTAINER], "restartPolicy": "Always", "serviceAccountName": "web", "nodeSelector": {"disk": "ssd"},
    "volumes": [{"name": "config", "configMap": {"name": "web", "defaultMode": 420}},
                {"name": "cache", "emptyDir": {"sizeLimit": "1Gi"}}],
    "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"}],
    "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                            "labelSelector": {"matchLabels": {"app": "web"}}}}]}},
}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": META, "spec": {**POD_SPEC, "nodeName": "node-1"},
       "status": {"phase": "Running", "podIP": "10.0.0.7", "podIPs": [{"ip": "10.0.0.7"}], "hostIP": "192.168.1.2",
                  "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2024-05-01T12:00:05Z"}],
                  "containerStatuses": [{"name": "web", "ready": True, "restartCount": 0, "image": "nginx:1.25",
                                         "imageID": "docker.io/library/nginx@sha256:ab", "started": True,
                                         "state": {"running": {"startedAt": "2024-05-01T12:00:03Z"}}}]}}
DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {**META, "generation": 3},
    "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "revisionHistoryLimit": 10,
             "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
             "template": {"metadata": {"labels": {"app": "web"}}, "spec": POD_SPEC}},
    "status": {"observedGeneration": 3, "replicas": 3, "readyReplicas": 3, "availableReplicas": 3,
               "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"}]},
}
JOB_TEMPLATE = {"spec": {"backoffLimit": 4, "completions": 1, "parallelism": 1, "ttlSecondsAfterFinished": 600,
                         "template": {"spec": {"restartPolicy": "Never",
                                               "containers": [{"name": "pi", "image": "perl:5.34",
                                                               "command": ["perl", "-Mbignum=bpi", "-wle"]}]}}}}
JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": META, **JOB_TEMPLATE,
       "status": {"active": 1, "startTime": "2024-05-01T12:00:00Z", "uncountedTerminatedPods": {"succeeded": []}}}
CRONJOB = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": META,
           "spec": {"schedule": "*/5 * * * *", "timeZone": "Etc/UTC", "concurrencyPolicy": "Forbid",
                    "successfulJobsHistoryLimit": 3, "suspend": False, "jobTemplate": JOB_TEMPLATE},
           "status": {"lastScheduleTime": "2024-05-01T12:00:00Z", "active": [{"kind": "Job", "name": "web-1"}]}}
INGRESS = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": META,
           "spec": {"ingressClassName": "nginx", "tls": [{"hosts": ["shop.example.com"], "secretName": "shop-tls"}],
                    "rules": [{"host": "shop.example.com", "http": {"paths": [
                        {"path": "/", "pathType": "Prefix",
                         "backend": {"service": {"name": "web", "port": {"number": 80}}}},
                        {"path": "/api", "pathType": "Exact",
                         "backend": {"service": {"name": "api", "port": {"name": "http"}}}}]}}]},
           "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.9", "ports": [{"port": 443, "protocol": "TCP"}]}]}}}
SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": META,
           "spec": {"type": "NodePort", "selector": {"app": "web"}, "clusterIP": "10.96.0.12",
                    "clusterIPs": ["10.96.0.12"], "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
                    "sessionAffinity": "None", "externalTrafficPolicy": "Cluster",
                    "ports": [{"name": "http", "port": 80, "targetPort": "http", "nodePort": 30080, "protocol": "TCP"},
                              {"name": "metrics", "port": 9090, "targetPort": 9090, "protocol": "TCP"}]},
           "status": {"loadBalancer": {}}}


@pytest.mark.parametrize("model, obj", [(Deployment, DEPLOYMENT), (Pod, POD), (Job, JOB), (CronJob, CRONJOB),
                                        (Ingress, INGRESS), (Service, SERVICE)],
                         ids=["Deployment", "Pod", "Job", "CronJob", "Ingress", "Service"])
def test_a_realistic_object_read_and_written_back_is_the_same_json(model, obj):
    parsed = model.model_validate(obj)
    assert parsed.to_dict() == obj
    assert json.loads(parsed.model_dump_json(by_alias=True, exclude_none=True)) == obj


def test_fields_are_typed_python_names_of_kubernetes_json():
    pod = Pod.model_validate(POD)
    container = pod.spec.containers[0]
    assert container.ports[0].container_port == 80
    assert container.resources.limits["cpu"] == "500m" and container.resources.requests["memory"] == 67108864
    assert container.readiness_probe.http_get.port == "http" and container.liveness_probe.tcp_socket.port == 80
    assert pod.status.pod_ips[0].ip == "10.0.0.7"
    deployment = Deployment.model_validate(DEPLOYMENT)
    assert deployment.spec.template.spec.containers[0].name == "web"
    assert deployment.spec.strategy.rolling_update.max_surge == "25%"


@pytest.mark.parametrize("bad", [{"spec": {"replicas": "3"}}, {"spec": {"paused": "yes"}},
                                 {"spec": {"template": {"spec": {"containers": {"name": "web"}}}}},
                                 {"spec": {"replicas": 1 << 31}}])
def test_a_wrong_type_is_a_decode_error_as_kubernetes_decoder_says(bad):
    with pytest.raises(ValidationError):
        Deployment.model_validate(bad)


def test_the_patch_engines_read_the_generated_list_semantics():
    pod = schema_for(Pod)
    containers = pod.child("spec").node.child("containers")
    assert containers.patch_merge_key == "name" and containers.patch_strategies == {"merge"}
    ports = containers.node.item.child("ports").node
    assert isinstance(ports, ListNode) and ports.list_type == "map"
    assert ports.map_keys == ("containerPort", "protocol")


def _client(seen: list[httpx.Request]) -> HTTPClient:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        body = json.loads(request.content) if request.content else {**DEPLOYMENT, "metadata": {"name": "web"}}
        return httpx.Response(200, json=body)

    return HTTPClient(KubeConfig("http://miniplane.test"), scheme=Scheme(), transport=httpx.MockTransport(handler))


async def test_the_typed_client_reaches_a_generated_kind_without_bind_kind():
    seen: list[httpx.Request] = []
    async with _client(seen) as client:
        rt = client.resource(Deployment)
        assert (rt.api_version, rt.kind, rt.plural, rt.namespaced, rt.model) == (
            "apps/v1", "Deployment", "deployments", True, Deployment)
        got = await client.get(Deployment, "web", namespace="shop")
        assert isinstance(got, Deployment) and got.spec.replicas == 3
        created = await client.create(Node.model_validate({"metadata": {"name": "node-1"}}))
        assert isinstance(created, Node) and created.kind == "Node"
    assert [r.url.path for r in seen] == ["/apis/apps/v1/namespaces/shop/deployments/web", "/api/v1/nodes"]
    assert json.loads(seen[1].content)["apiVersion"] == "v1"


def test_a_dict_of_a_generated_kind_finds_the_same_kind():
    assert bound_kind_of("batch/v1", "Job") == bound_kind(Job)
    assert bound_kind_of("batch/v1", "Job").model is Job
    assert bound_kind_of("batch/v1", "NoSuchKind") is None


class _ServingDeployments(Scheme):
    """A scheme that serves the generated Deployment model under its own domain (as issue 38's will)."""

    def __init__(self) -> None:
        super().__init__("svc.io")
        self.served = ResourceType.of("apps.svc.io/v1", "Deployment", "deployments", namespaced=True,
                                      model=Deployment)

    def by_model(self, model):
        return self.served if model is Deployment else super().by_model(model)


def test_a_scheme_that_serves_a_generated_model_names_its_kind_before_the_kubernetes_facts():
    # Before: the facts (apps/v1) won over the scheme's kind, so requests, informers and owner references
    # named a group the scheme does not serve.
    scheme = _ServingDeployments()
    assert kind_of_model(Deployment, scheme) is scheme.served
    assert kind_of_model(Job, scheme).api_version == "batch/v1"  # not served: the Kubernetes facts
    owner = Deployment.model_validate({"metadata": {"name": "web", "namespace": "shop", "uid": "u-1"}})
    dependent = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "shop"}}
    set_controller_reference(owner, dependent, scheme)
    assert dependent["metadata"]["ownerReferences"][0]["apiVersion"] == "apps.svc.io/v1"
