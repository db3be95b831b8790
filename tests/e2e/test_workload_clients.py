"""Public Python clients, unmodified, create, read, patch, list and delete a Pod, a Service and a Deployment
(issue 38's acceptance) against one `miniplane serve --api-domain k8s.io` for the module; and kopf's own
`02-children` example operator (from kopf's sdist, unmodified, with pykube) makes its child Pod.

- the official `kubernetes` client (`CoreV1Api`, `AppsV1Api`; a dict patch is a strategic merge patch, which
  merges a container into the Pod's list by its name),
- `lightkube` (its typed `Pod`, `Service`, `Deployment` resources; a strategic merge patch, then a JSON patch).

Each client runs in a thread of its own, as a user's program would. They are the test extra's
(pyproject.toml): a missing one fails its test at import.
"""

from __future__ import annotations

import ipaddress
from typing import Any, Iterator

import lightkube
import pytest
import trio
from kubernetes import client as kube_client, config as kube_config
from kubernetes.client.rest import ApiException
from lightkube.models.apps_v1 import DeploymentSpec
from lightkube.models.core_v1 import Container, PodSpec, PodTemplateSpec, ServicePort, ServiceSpec
from lightkube.models.meta_v1 import LabelSelector, ObjectMeta
from lightkube.resources.apps_v1 import Deployment as LightDeployment
from lightkube.resources.core_v1 import Namespace as LightNamespace, Pod as LightPod, Service as LightService

from tests.support.server import Server
from tests.support.served import served


@pytest.fixture(scope="module")
def module_server(tmp_path_factory) -> Iterator[Server]:
    with served(tmp_path_factory.mktemp("workload-clients") / "data", "--api-domain", "k8s.io") as server:
        yield server


def expect_session(out: dict[str, Any]) -> None:
    """What every client's session must have seen (each records the same steps)."""
    assert out["pod_phase"] == "Pending" and out["pod_policy"] == "IfNotPresent"
    assert out["pod_patched"] == {"app": "web", "tier": "front"}
    assert ipaddress.ip_address(out["cluster_ip"]) in ipaddress.ip_network("10.96.0.0/12")
    assert out["target_port"] == 8080
    assert out["deploy_defaults"] == (1, 10, 600, "RollingUpdate")
    assert out["deploy_patched"] == 4
    assert out["listed"] == (["web"], ["web"], ["web"])
    assert out["gone"] == [404, 404, 404]


# ---- the official kubernetes client ------------------------------------------------------------------

def kubernetes_session(kubeconfig: str, ns: str = "default") -> dict[str, Any]:
    api_client = kube_config.new_client_from_config(config_file=kubeconfig)
    v1, apps, out = kube_client.CoreV1Api(api_client), kube_client.AppsV1Api(api_client), {}
    v1.create_namespace(kube_client.V1Namespace(metadata=kube_client.V1ObjectMeta(name=ns)))
    labels = {"app": "web"}
    container = kube_client.V1Container(name="web", image="nginx:1.25")
    pod = v1.create_namespaced_pod(ns, kube_client.V1Pod(metadata=kube_client.V1ObjectMeta(name="web", labels=labels),
                                                         spec=kube_client.V1PodSpec(containers=[container])))
    out["pod_phase"], out["pod_policy"] = pod.status.phase, pod.spec.containers[0].image_pull_policy
    out["pod_patched"] = v1.patch_namespaced_pod("web", ns, {"metadata": {"labels": {"tier": "front"}}}).metadata.labels
    port = kube_client.V1ServicePort(port=80, target_port=8080)
    svc = v1.create_namespaced_service(ns, kube_client.V1Service(
        metadata=kube_client.V1ObjectMeta(name="web"), spec=kube_client.V1ServiceSpec(selector=labels, ports=[port])))
    out["cluster_ip"], out["target_port"] = svc.spec.cluster_ip, svc.spec.ports[0].target_port
    template = kube_client.V1PodTemplateSpec(metadata=kube_client.V1ObjectMeta(labels=labels),
                                             spec=kube_client.V1PodSpec(containers=[container]))
    deploy = apps.create_namespaced_deployment(ns, kube_client.V1Deployment(
        metadata=kube_client.V1ObjectMeta(name="web"),
        spec=kube_client.V1DeploymentSpec(selector=kube_client.V1LabelSelector(match_labels=labels),
                                          template=template)))
    out["deploy_defaults"] = (deploy.spec.replicas, deploy.spec.revision_history_limit,
                              deploy.spec.progress_deadline_seconds, deploy.spec.strategy.type)
    out["deploy_patched"] = apps.patch_namespaced_deployment("web", ns, {"spec": {"replicas": 4}}).spec.replicas
    out["listed"] = ([p.metadata.name for p in v1.list_namespaced_pod(ns, label_selector="app=web").items],
                     [s.metadata.name for s in v1.list_namespaced_service(ns).items],
                     [d.metadata.name for d in apps.list_namespaced_deployment(ns).items])
    v1.delete_namespaced_pod("web", ns)
    v1.delete_namespaced_service("web", ns)
    apps.delete_namespaced_deployment("web", ns)
    out["gone"] = []
    for read_gone in (v1.read_namespaced_pod, v1.read_namespaced_service, apps.read_namespaced_deployment):
        try:
            read_gone("web", ns)
        except ApiException as e:
            out["gone"].append(e.status)
    api_client.close()
    return out


async def test_the_kubernetes_client_creates_reads_patches_lists_and_deletes_a_pod_a_service_and_a_deployment(
        module_server):
    expect_session(await trio.to_thread.run_sync(kubernetes_session, str(module_server.kubeconfig), "official"))


# ---- lightkube -----------------------------------------------------------------------------------------

def lightkube_session(kubeconfig: str, ns: str = "default") -> dict[str, Any]:
    client = lightkube.Client(config=lightkube.KubeConfig.from_file(kubeconfig), namespace=ns)
    out: dict[str, Any] = {}
    client.create(LightNamespace(metadata=ObjectMeta(name=ns)))
    labels = {"app": "web"}
    container = Container(name="web", image="nginx:1.25")
    pod = client.create(LightPod(metadata=ObjectMeta(name="web", labels=labels),
                                 spec=PodSpec(containers=[container])))
    out["pod_phase"], out["pod_policy"] = pod.status.phase, pod.spec.containers[0].imagePullPolicy
    out["pod_patched"] = client.patch(LightPod, "web", {"metadata": {"labels": {"tier": "front"}}}).metadata.labels
    svc = client.create(LightService(metadata=ObjectMeta(name="web"),
                                     spec=ServiceSpec(selector=labels, ports=[ServicePort(port=80, targetPort=8080)])))
    out["cluster_ip"], out["target_port"] = svc.spec.clusterIP, svc.spec.ports[0].targetPort
    deploy = client.create(LightDeployment(metadata=ObjectMeta(name="web"), spec=DeploymentSpec(
        selector=LabelSelector(matchLabels=labels),
        template=PodTemplateSpec(metadata=ObjectMeta(labels=labels), spec=PodSpec(containers=[container])))))
    out["deploy_defaults"] = (deploy.spec.replicas, deploy.spec.revisionHistoryLimit,
                              deploy.spec.progressDeadlineSeconds, deploy.spec.strategy.type)
    patched = client.patch(LightDeployment, "web", [{"op": "replace", "path": "/spec/replicas", "value": 4}],
                           patch_type=lightkube.types.PatchType.JSON)
    out["deploy_patched"] = patched.spec.replicas
    out["listed"] = ([p.metadata.name for p in client.list(LightPod, labels={"app": "web"})],
                     [s.metadata.name for s in client.list(LightService)],
                     [d.metadata.name for d in client.list(LightDeployment)])
    out["gone"] = []
    for kind in (LightPod, LightService, LightDeployment):
        client.delete(kind, "web")
    for kind in (LightPod, LightService, LightDeployment):
        try:
            client.get(kind, "web")
        except lightkube.ApiError as e:
            out["gone"].append(e.status.code)
    client.close()
    return out


async def test_lightkube_creates_reads_patches_lists_and_deletes_a_pod_a_service_and_a_deployment(module_server):
    out = await trio.to_thread.run_sync(lightkube_session, str(module_server.kubeconfig), "light")
    expect_session(out)
