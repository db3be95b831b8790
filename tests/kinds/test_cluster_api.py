"""The cluster kinds through the in-process env, as kube-apiserver serves them: Nodes (status, field selector),
PersistentVolumes and claims (defaults, immutability, the default StorageClass), quotas' status, Ingress generation,
PriorityClasses (the built-ins at start, one global default), and their Tables over HTTP."""

from __future__ import annotations

from typing import Any, AsyncIterator

import pytest

from runtime.client.interface import MERGE_PATCH
from runtime.controller.testing import TestEnv, open_test_env
from runtime.machinery import errors
from runtime.machinery.scheme import ResourceType
from tests.support.rbac import ok
from tests.support.server import start_in_process

pytestmark = pytest.mark.stores("memory")


@pytest.fixture
async def env(autojump_clock) -> AsyncIterator[TestEnv]:
    async with open_test_env(domain="k8s.io") as env:
        yield env


def kind(env: TestEnv, name: str, group: str = "") -> ResourceType:
    rt = env.scheme.by_kind(name, group)
    assert rt is not None
    return rt


def node(name: str = "node-1", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": spec}


def claim(name: str = "data", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, **spec}}


async def test_node_create_keeps_status_and_spec_writes_keep_it(env):
    made = await env.client.create({**node(), "status": {"capacity": {"cpu": "4000m"}}})
    assert made["status"] == {"capacity": {"cpu": "4"}, "allocatable": {"cpu": "4"}}
    patched = await env.client.patch(kind(env, "Node"), "node-1", {"spec": {"unschedulable": True},
                                                                   "status": {"capacity": {"cpu": "8"}}})
    assert patched["spec"]["unschedulable"] is True and patched["status"]["capacity"] == {"cpu": "4"}
    written = await env.client.patch(kind(env, "Node"), "node-1", {"status": {"capacity": {"cpu": "8"}}},
                                     patch_type=MERGE_PATCH, subresource="status")
    assert written["status"]["capacity"] == {"cpu": "8"}


async def test_node_field_selector_spec_unschedulable(env):
    await env.client.create(node("a", unschedulable=True))
    await env.client.create(node("b"))
    listed = await env.client.list(kind(env, "Node"), field_selector="spec.unschedulable=false")
    assert [n["metadata"]["name"] for n in listed.items] == ["b"]


async def test_node_provider_id_is_immutable_once_set(env):
    await env.client.create(node(providerID="aws://a"))
    with pytest.raises(errors.Invalid) as caught:
        await env.client.patch(kind(env, "Node"), "node-1", {"spec": {"providerID": "aws://b"}})
    assert 'node updates may not change providerID except from "" to valid' in caught.value.message


async def test_persistent_volume_defaults_and_immutable_source(env):
    made = await env.client.create({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
                                    "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                                             "hostPath": {"path": "/data"}}})
    assert made["spec"]["persistentVolumeReclaimPolicy"] == "Retain" and made["status"] == {"phase": "Pending"}
    bound = await env.client.patch(kind(env, "PersistentVolume"), "pv1",
                                   {"spec": {"claimRef": {"namespace": "default", "name": "data"}}})
    assert bound["spec"]["claimRef"] == {"namespace": "default", "name": "data"}
    with pytest.raises(errors.Invalid) as caught:
        await env.client.patch(kind(env, "PersistentVolume"), "pv1", {"spec": {"hostPath": {"path": "/other"}}})
    assert "spec.persistentvolumesource is immutable after creation" in caught.value.message


async def test_claim_gets_the_default_storage_class_and_its_spec_is_immutable(env):
    await env.client.create({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                             "metadata": {"name": "standard",
                                          "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
                             "provisioner": "example.com/disk"})
    await env.registry.cache.wait_fresh()
    made = await env.client.create(claim())
    assert (made["spec"]["storageClassName"], made["spec"]["volumeMode"]) == ("standard", "Filesystem")
    assert made["status"] == {"phase": "Pending"}
    with pytest.raises(errors.Invalid) as caught:
        await env.client.patch(kind(env, "PersistentVolumeClaim"), "data",
                               {"spec": {"accessModes": ["ReadWriteMany"]}}, namespace="default")
    assert "spec is immutable after creation except resources.requests for bound claims" in caught.value.message
    bound = await env.client.patch(kind(env, "PersistentVolumeClaim"), "data", {"spec": {"volumeName": "pv1"}},
                                   namespace="default")
    assert bound["spec"]["volumeName"] == "pv1"


async def test_claim_without_a_storage_request_is_422_in_kubes_words(env):
    body = claim()
    del body["spec"]["resources"]
    with pytest.raises(errors.Invalid) as caught:
        await env.client.create(body)
    assert caught.value.message == ('PersistentVolumeClaim "data" is invalid: spec.resources[storage]: Required value')


async def test_storage_class_parameters_are_immutable(env):
    await env.client.create({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"},
                             "provisioner": "example.com/disk", "parameters": {"type": "ssd"}})
    with pytest.raises(errors.Invalid) as caught:
        await env.client.patch(kind(env, "StorageClass", "storage.k8s.io"), "fast", {"parameters": {"type": "hdd"}})
    assert "parameters: Forbidden: updates to parameters are forbidden." in caught.value.message


async def test_resource_quota_status_is_written_apart(env):
    made = await env.client.create({"apiVersion": "v1", "kind": "ResourceQuota",
                                    "metadata": {"name": "q", "namespace": "default"},
                                    "spec": {"hard": {"pods": "10"}}, "status": {"hard": {"pods": "1"}}})
    assert "used" not in (made.get("status") or {})
    written = await env.client.patch(kind(env, "ResourceQuota"), "q", {"status": {"hard": {"pods": "10"},
                                                                                  "used": {"pods": "2"}}},
                                     namespace="default", patch_type=MERGE_PATCH, subresource="status")
    assert written["status"]["used"] == {"pods": "2"}


async def test_ingress_counts_generation_on_spec_changes_only(env):
    rt = kind(env, "Ingress", "networking.k8s.io")
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    made = await env.client.create({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                                    "metadata": {"name": "web", "namespace": "default"},
                                    "spec": {"defaultBackend": backend}})
    assert made["metadata"]["generation"] == 1
    changed = await env.client.patch(rt, "web", {"spec": {"ingressClassName": "nginx"}}, namespace="default")
    assert changed["metadata"]["generation"] == 2
    status = await env.client.patch(rt, "web", {"status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}]}}},
                                    namespace="default", patch_type=MERGE_PATCH, subresource="status")
    assert status["metadata"]["generation"] == 2


async def test_ingress_path_without_path_type_is_422(env):
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    body = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"rules": [{"http": {"paths": [{"path": "/", "backend": backend}]}}]}}
    with pytest.raises(errors.Invalid) as caught:
        await env.client.create(body)
    assert caught.value.message == ('Ingress.networking.k8s.io "web" is invalid: '
                                    "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified")


async def test_built_in_priority_classes_exist_and_one_global_default(env):
    rt = kind(env, "PriorityClass", "scheduling.k8s.io")
    critical = await env.client.get(rt, "system-node-critical")
    assert (critical["value"], critical["preemptionPolicy"]) == (2000001000, "PreemptLowerPriority")
    await env.client.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                             "metadata": {"name": "default"}, "value": 100, "globalDefault": True})
    await env.registry.cache.wait_fresh()
    with pytest.raises(errors.Forbidden) as caught:
        await env.client.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                 "metadata": {"name": "other"}, "value": 5, "globalDefault": True})
    assert caught.value.message.endswith("PriorityClass default is already marked as default. "
                                         "Only one default can exist")
    with pytest.raises(errors.Invalid):
        await env.client.patch(rt, "default", {"value": 101})
    with pytest.raises(errors.Forbidden):
        await env.client.delete(rt, "system-cluster-critical")


TABLE = {"Accept": "application/json;as=Table;g=meta.k8s.io;v=v1"}


async def test_http_tables_of_nodes_and_claims(nursery, tmp_path, autojump_clock):
    srv = await start_in_process(nursery, tmp_path, api_domain="k8s.io")
    async with srv.client() as c:
        await ok(await c.post("/api/v1/nodes", json={**node(), "status": {
            "conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": {"kubeletVersion": "v1.28.0"}}}), 201)
        table = await ok(await c.get("/api/v1/nodes", headers=TABLE))
        assert [col["name"] for col in table["columnDefinitions"]][:5] == ["Name", "Status", "Roles", "Age", "Version"]
        assert table["rows"][0]["cells"][:3] == ["node-1", "Ready", "<none>"]
        await ok(await c.post("/api/v1/namespaces/default/persistentvolumeclaims", json=claim()), 201)
        claims = await ok(await c.get("/api/v1/namespaces/default/persistentvolumeclaims", headers=TABLE))
        assert claims["rows"][0]["cells"][:2] == ["data", "Pending"]
        classes = await ok(await c.get("/apis/scheduling.k8s.io/v1/priorityclasses", headers=TABLE))
        assert [row["cells"][:3] for row in classes["rows"]] == [["system-cluster-critical", 2000000000, False],
                                                                ["system-node-critical", 2000001000, False]]


async def test_a_bound_claim_grows_only_when_its_class_allows_expansion(env):
    for name, expands in (("fast", True), ("slow", False)):
        await env.client.create({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
                                 "provisioner": "example.com/disk", "allowVolumeExpansion": expands})
    await env.registry.cache.wait_fresh()
    rt = kind(env, "PersistentVolumeClaim")
    for name in ("fast", "slow"):
        await env.client.create(claim(name, storageClassName=name, volumeName=f"pv-{name}"))
        await env.client.patch(rt, name, {"status": {"phase": "Bound"}}, namespace="default", patch_type=MERGE_PATCH,
                               subresource="status")
    grown = await env.client.patch(rt, "fast", {"spec": {"resources": {"requests": {"storage": "2Gi"}}}},
                                   namespace="default")
    assert grown["spec"]["resources"]["requests"]["storage"] == "2Gi"
    with pytest.raises(errors.Forbidden) as caught:
        await env.client.patch(rt, "slow", {"spec": {"resources": {"requests": {"storage": "2Gi"}}}},
                               namespace="default")
    assert "the storageclass that provisions the pvc must support resize" in caught.value.message
