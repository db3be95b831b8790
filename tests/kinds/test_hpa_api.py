"""The HorizontalPodAutoscaler through the in-process env: one object stored as autoscaling/v2 and served as v1
too (writes in either version, reads, lists and watches in both), kube's 422s, the status subresource, the
Table. Memory store only."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import trio

from runtime.controller.testing import open_test_env
from runtime.machinery import errors
from tests.support.server import start_in_process

pytestmark = pytest.mark.stores("memory")
TABLE = {"Accept": "application/json;as=Table;g=meta.k8s.io;v=v1"}
REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
MEMORY = {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}}}


def hpa(api_version: str, name: str = "web", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"scaleTargetRef": dict(REF), "maxReplicas": 4, **spec}}


def kinds(env: Any) -> tuple[Any, Any]:
    return (env.scheme.by_api_version_kind("autoscaling/v2", "HorizontalPodAutoscaler"),
            env.scheme.by_api_version_kind("autoscaling/v1", "HorizontalPodAutoscaler"))


async def test_v1_create_reads_back_as_v2_with_the_cpu_metric(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        v2, v1 = kinds(env)
        made = await env.client.create(hpa("autoscaling/v1", targetCPUUtilizationPercentage=65))
        assert made["apiVersion"] == "autoscaling/v1" and made["spec"]["targetCPUUtilizationPercentage"] == 65
        assert made["spec"]["minReplicas"] == 1
        stored = await env.client.get(v2, "web", namespace="default")
        assert stored["apiVersion"] == "autoscaling/v2"
        assert stored["spec"]["metrics"] == [{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": 65}}}]
        assert stored["metadata"]["resourceVersion"] == made["metadata"]["resourceVersion"]


async def test_v2_create_reads_as_v1_with_kubes_annotations(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        v2, v1 = kinds(env)
        await env.client.create(hpa("autoscaling/v2", metrics=[MEMORY]))
        shown = await env.client.get(v1, "web", namespace="default")
        assert "targetCPUUtilizationPercentage" not in shown["spec"]
        assert json.loads(shown["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/metrics"]) == [
            {"type": "Resource", "resource": {"name": "memory", "targetAverageValue": "1Gi"}}]


async def test_v1_read_sent_back_unchanged_is_a_no_op(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        v2, v1 = kinds(env)
        await env.client.create(hpa("autoscaling/v2", metrics=[MEMORY], behavior={"scaleUp": {"selectPolicy": "Min"}}))
        shown = await env.client.get(v1, "web", namespace="default")
        again = await env.client.update(copy.deepcopy(shown))
        assert again["metadata"]["resourceVersion"] == shown["metadata"]["resourceVersion"]
        stored = await env.client.get(v2, "web", namespace="default")
        assert stored["spec"]["metrics"] == [MEMORY] and "annotations" not in stored["metadata"]


async def test_v1_patch_changes_the_stored_cpu_target(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        v2, v1 = kinds(env)
        await env.client.create(hpa("autoscaling/v2"))
        patched = await env.client.patch(v1, "web", {"spec": {"targetCPUUtilizationPercentage": 50}},
                                         namespace="default")
        assert patched["apiVersion"] == "autoscaling/v1" and patched["spec"]["targetCPUUtilizationPercentage"] == 50
        stored = await env.client.get(v2, "web", namespace="default")
        assert stored["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 50


async def test_both_versions_list_and_watch_the_same_objects(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        v2, v1 = kinds(env)
        await env.client.create(hpa("autoscaling/v1", "a"))
        listed = await env.client.list(v1, namespace="default")
        async with env.client.watch(v1, namespace="default",
                                    resource_version=listed.resource_version) as events:
            await env.client.create(hpa("autoscaling/v2", "b"))
            with trio.fail_after(5):
                async for event in events:
                    assert event.type == "ADDED" and event.object["apiVersion"] == "autoscaling/v1"
                    assert event.object["metadata"]["name"] == "b"
                    break
        names = {v: sorted(o["metadata"]["name"] for o in (await env.client.list(rt, namespace="default")).items)
                 for v, rt in (("v2", v2), ("v1", v1))}
        assert names == {"v2": ["a", "b"], "v1": ["a", "b"]}
        assert all(o["apiVersion"] == "autoscaling/v1" for o in (await env.client.list(v1, namespace="default")).items)


async def test_hpa_rules_are_422_in_kubes_words(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        with pytest.raises(errors.Invalid) as caught:
            await env.client.create(hpa("autoscaling/v2", minReplicas=5))
        assert str(caught.value) == ('HorizontalPodAutoscaler.autoscaling "web" is invalid: spec.maxReplicas: '
                                     'Invalid value: 4: must be greater than or equal to `minReplicas`')
        body = hpa("autoscaling/v1")
        body["spec"]["scaleTargetRef"] = {"kind": "Deployment"}
        with pytest.raises(errors.Invalid) as caught:
            await env.client.create(body)
        assert str(caught.value).endswith("spec.scaleTargetRef.name: Required value")


async def test_status_written_by_its_subresource_in_v1(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        v2, v1 = kinds(env)
        made = await env.client.create(hpa("autoscaling/v1"))
        made["status"] = {"currentReplicas": 2, "desiredReplicas": 3, "currentCPUUtilizationPercentage": 41}
        written = await env.client.update(copy.deepcopy(made), subresource="status")
        assert written["status"]["currentCPUUtilizationPercentage"] == 41
        stored = await env.client.get(v2, "web", namespace="default")
        assert stored["status"]["currentMetrics"] == [{"type": "Resource", "resource": {"name": "cpu", "current": {
            "averageUtilization": 41}}}]
        stored["status"] = {"desiredReplicas": 9}
        kept = await env.client.update(stored)
        assert kept["status"]["desiredReplicas"] == 3


async def test_hpa_table_in_both_versions(nursery: Any, tmp_path: Any, autojump_clock: Any) -> None:
    srv = await start_in_process(nursery, tmp_path, api_domain="k8s.io")
    async with srv.client() as c:
        made = await c.post("/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers",
                            json=hpa("autoscaling/v1", targetCPUUtilizationPercentage=70))
        assert made.status_code == 201
        for version in ("v1", "v2"):
            table = (await c.get(f"/apis/autoscaling/{version}/namespaces/default/horizontalpodautoscalers",
                                 headers=TABLE)).json()
            assert [d["name"] for d in table["columnDefinitions"]] == [
                "Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"]
            assert table["rows"][0]["cells"][:6] == ["web", "Deployment/web", "<unknown>/70%", "1", 4, 0]


async def test_a_v1_writer_owns_its_versions_fields(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        v2, v1 = kinds(env)
        await env.client.create(hpa("autoscaling/v1"), field_manager="creator")
        patched = await env.client.patch(v1, "web", {"spec": {"targetCPUUtilizationPercentage": 55}},
                                         namespace="default", field_manager="tuner")
        tuner = next(m for m in patched["metadata"]["managedFields"] if m["manager"] == "tuner")
        assert (tuner["apiVersion"], tuner["fieldsV1"]) == (
            "autoscaling/v1", {"f:spec": {"f:targetCPUUtilizationPercentage": {}}})
