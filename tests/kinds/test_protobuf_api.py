"""The workload kinds over HTTP in Kubernetes' Protobuf (issue 38 point 3), as a client of k8s.io/api reads them:
a Pod sent and read in Protobuf, a Deployment read in Protobuf, lists and watches in Protobuf, the scale subresource
as autoscaling/v1 Scale, and one HorizontalPodAutoscaler read as v1 and as v2, each version its own message.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from runtime.machinery.serializer import protobuf
from runtime.machinery.serializer.proto import runtime_pb2
from tests.support.server import Server, start_in_process

PB = "application/vnd.kubernetes.protobuf"
PODS = "/api/v1/namespaces/default/pods"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "default", "labels": {"app": "web"}},
       "spec": {"containers": [{"name": "web", "image": "nginx:1.25", "ports": [{"containerPort": 80}],
                                "resources": {"requests": {"cpu": "100m"}},
                                "readinessProbe": {"httpGet": {"path": "/", "port": "http"}}}]}}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
              "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                       "template": {"metadata": {"labels": {"app": "web"}},
                                    "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}}}


def _fields(data: bytes) -> dict[int, list[int | bytes]]:
    """A message's wire fields by number (varints as ints, length-delimited as bytes)."""
    out: dict[int, list[int | bytes]] = {}
    pos = 0

    def varint() -> int:
        nonlocal pos
        shift = value = 0
        while True:
            b = data[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            if b < 0x80:
                return value
            shift += 7

    while pos < len(data):
        key = varint()
        if key & 7 == 0:
            out.setdefault(key >> 3, []).append(varint())
        else:
            size = varint()
            out.setdefault(key >> 3, []).append(data[pos:pos + size])
            pos += size
    return out


def typed(data: bytes) -> tuple[str, str, bytes]:
    """apiVersion, kind and the typed message of an enveloped body."""
    assert data[:4] == b"k8s\x00"
    envelope = runtime_pb2.Unknown()
    envelope.ParseFromString(data[4:])
    return envelope.typeMeta.apiVersion, envelope.typeMeta.kind, envelope.raw


def pod_image(raw: bytes) -> bytes:
    """Pod.spec (2) > PodSpec.containers (2) > Container.image (2), by Kubernetes' field numbers."""
    return _fields(_fields(_fields(raw)[2][0])[2][0])[2][0]


@pytest.fixture
async def srv(nursery, tmp_path, autojump_clock) -> Server:
    return await start_in_process(nursery, tmp_path, api_domain="k8s.io")


async def test_a_pod_created_in_protobuf_and_read_in_protobuf_is_kubernetes_pod_message(srv):
    async with srv.client() as c:
        created = await c.post(PODS, content=protobuf.encode(POD),
                               headers={"Content-Type": PB, "Accept": PB})
        assert created.status_code == 201, created.text
        got = await c.get(f"{PODS}/web-0", headers={"Accept": PB})
        plain = (await c.get(f"{PODS}/web-0")).json()
    assert got.headers["content-type"] == PB
    api_version, kind, raw = typed(got.content)
    assert (api_version, kind) == ("v1", "Pod") and pod_image(raw) == b"nginx:1.25"
    decoded = protobuf.decode(got.content)
    assert decoded == protobuf.decode(protobuf.encode(plain))
    assert decoded["spec"]["containers"][0]["readinessProbe"]["httpGet"]["port"] == "http"
    assert decoded["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "100m"}}
    assert decoded["metadata"]["uid"] == plain["metadata"]["uid"]
    assert protobuf.decode(created.content)["metadata"]["name"] == "web-0"


async def test_a_deployment_reads_in_protobuf_with_its_defaults_and_replicas_field_1(srv):
    async with srv.client() as c:
        assert (await c.post(DEPLOYMENTS, json=DEPLOYMENT)).status_code == 201
        got = await c.get(f"{DEPLOYMENTS}/web", headers={"Accept": PB})
        plain = (await c.get(f"{DEPLOYMENTS}/web")).json()
    api_version, kind, raw = typed(got.content)
    assert (api_version, kind) == ("apps/v1", "Deployment")
    assert _fields(_fields(raw)[2][0])[1] == [2]  # DeploymentSpec.replicas
    decoded = protobuf.decode(got.content)
    assert decoded == protobuf.decode(protobuf.encode(plain))
    assert decoded["spec"]["strategy"] == plain["spec"]["strategy"]
    assert decoded["spec"]["revisionHistoryLimit"] == plain["spec"]["revisionHistoryLimit"]


async def test_lists_of_pods_and_deployments_are_kubernetes_lists_in_protobuf(srv):
    async with srv.client() as c:
        for i in range(3):
            body = copy.deepcopy(POD)
            body["metadata"]["name"] = f"web-{i}"
            assert (await c.post(PODS, json=body)).status_code == 201
        assert (await c.post(DEPLOYMENTS, json=DEPLOYMENT)).status_code == 201
        pods = await c.get(PODS, headers={"Accept": PB})
        deployments = await c.get("/apis/apps/v1/deployments", headers={"Accept": PB})
        plain = (await c.get(PODS)).json()
    api_version, kind, raw = typed(pods.content)
    assert (api_version, kind) == ("v1", "PodList")
    items = _fields(raw)[2]  # PodList.items
    assert [pod_image(item) for item in items] == [b"nginx:1.25"] * 3
    decoded = protobuf.decode(pods.content)
    assert [i["metadata"]["name"] for i in decoded["items"]] == [i["metadata"]["name"] for i in plain["items"]]
    assert decoded["metadata"]["resourceVersion"] == plain["metadata"]["resourceVersion"]
    listed = protobuf.decode(deployments.content)
    assert listed["kind"] == "DeploymentList" and [i["metadata"]["name"] for i in listed["items"]] == ["web"]


async def test_a_watch_of_pods_in_protobuf_streams_watch_events_of_pod_messages(srv):
    async with srv.client() as c:
        assert (await c.post(PODS, json=POD)).status_code == 201
        async with c.stream("GET", PODS, params={"watch": "1", "timeoutSeconds": "1"},
                            headers={"Accept": f"{PB};stream=watch"}) as r:
            assert r.headers["content-type"] == f"{PB};stream=watch"
            data = await r.aread()
    events = protobuf.decode_watch_frames(data)
    assert [(kind, obj["kind"], obj["metadata"]["name"]) for kind, obj in events] == [("ADDED", "Pod", "web-0")]
    assert events[0][1]["spec"]["containers"][0]["image"] == "nginx:1.25"


async def test_the_scale_subresource_reads_as_autoscaling_v1_scale_in_protobuf(srv):
    async with srv.client() as c:
        assert (await c.post(DEPLOYMENTS, json=DEPLOYMENT)).status_code == 201
        got = await c.get(f"{DEPLOYMENTS}/web/scale", headers={"Accept": PB})
    assert got.status_code == 200, got.text
    api_version, kind, raw = typed(got.content)
    assert (api_version, kind) == ("autoscaling/v1", "Scale")
    assert _fields(_fields(raw)[2][0])[1] == [2]  # ScaleSpec.replicas
    assert protobuf.decode(got.content)["spec"] == {"replicas": 2}


async def test_one_hpa_reads_as_v2_and_as_v1_each_version_its_own_message(srv):
    hpa: dict[str, Any] = {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                 "minReplicas": 1, "maxReplicas": 5,
                 "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                     "type": "Utilization", "averageUtilization": 70}}}]}}
    async with srv.client() as c:
        created = await c.post("/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers",
                               content=protobuf.encode(hpa), headers={"Content-Type": PB})
        assert created.status_code == 201, created.text
        v2 = await c.get("/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/web",
                         headers={"Accept": PB})
        v1 = await c.get("/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/web",
                         headers={"Accept": PB})
    assert typed(v2.content)[:2] == ("autoscaling/v2", "HorizontalPodAutoscaler")
    assert typed(v1.content)[:2] == ("autoscaling/v1", "HorizontalPodAutoscaler")
    spec2 = _fields(_fields(typed(v2.content)[2])[2][0])
    spec1 = _fields(_fields(typed(v1.content)[2])[2][0])
    assert spec1[4] == [70]  # v1's field 4: targetCPUUtilizationPercentage, a varint
    assert len(spec2[4]) == 1 and isinstance(spec2[4][0], bytes)  # v2's field 4: metrics, a message each
    assert protobuf.decode(v2.content)["spec"]["metrics"] == hpa["spec"]["metrics"]
    assert protobuf.decode(v1.content)["spec"]["targetCPUUtilizationPercentage"] == 70


async def test_a_binding_sent_in_protobuf_as_the_scheduler_sends_it_sets_the_node(srv):
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "web-0", "namespace": "default"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}}
    async with srv.client() as c:
        assert (await c.post(PODS, json=POD)).status_code == 201
        bound = await c.post(f"{PODS}/web-0/binding", content=protobuf.encode(binding),
                             headers={"Content-Type": PB, "Accept": PB})
        got = protobuf.decode((await c.get(f"{PODS}/web-0", headers={"Accept": PB})).content)
    assert bound.status_code == 201, bound.text
    assert protobuf.decode(bound.content)["status"] == "Success"
    assert got["spec"]["nodeName"] == "node-1"


async def test_an_eviction_sent_in_protobuf_as_kubectl_drain_sends_it_deletes_the_pod(srv):
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web-0", "namespace": "default"},
                "deleteOptions": {"gracePeriodSeconds": 0}}
    async with srv.client() as c:
        assert (await c.post(PODS, json=POD)).status_code == 201
        evicted = await c.post(f"{PODS}/web-0/eviction", content=protobuf.encode(eviction),
                               headers={"Content-Type": PB})
        gone = await c.get(f"{PODS}/web-0")
    assert evicted.status_code == 201, evicted.text
    assert gone.status_code == 404
