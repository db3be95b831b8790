"""The quota controller's rules (controllers.resourcequota; Kubernetes' pkg/controller/resourcequota): status.hard
is spec.hard, status.used is recounted for what spec.hard names, within the quota's scopes, and written only
when it changed."""

from __future__ import annotations

from typing import Any

from controllers.resourcequota import RESYNC, ResourceQuotaController, calculate_usage
from runtime.client.interface import ObjectKey
from runtime.controller.informer import ObjectEvent
from runtime.machinery.quota import evaluator_for
from runtime.machinery.scheme import Scheme
from tests.support.controller_fakes import FakeInformer, UpdateRecorder

SCHEME = Scheme("k8s.io")
PODS, CONFIGMAPS, QUOTAS = (SCHEME.by_kind(k) for k in ("Pod", "ConfigMap", "ResourceQuota"))


def _pod(name: str, cpu: str | None = None, **meta: Any) -> dict[str, Any]:
    res = {"resources": {"requests": {"cpu": cpu}}} if cpu else {}
    return {"metadata": {"name": name, "namespace": "ns", **meta}, "spec": {"containers": [{"name": "c", **res}]}}


def _quota(hard: dict[str, str], status: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "q", "namespace": "ns", "resourceVersion": "7"}, "spec": {"hard": hard, **spec},
            **({"status": status} if status is not None else {})}


def _controller(quota: dict[str, Any], *pods: dict[str, Any]) -> tuple[ResourceQuotaController, UpdateRecorder]:
    client = UpdateRecorder()
    controller = ResourceQuotaController(client, FakeInformer(quota), {PODS: FakeInformer(*pods),  # type: ignore
                                                                        CONFIGMAPS: FakeInformer()})
    return controller, client


def test_usage_is_counted_for_the_limited_names_only_each_at_least_zero():
    counted = {evaluator_for(PODS): [_pod("a", "100m"), _pod("b", "250m")], evaluator_for(CONFIGMAPS): []}
    usage = calculate_usage(_quota({}), ["requests.cpu", "count/configmaps"], counted)
    assert {k: str(v) for k, v in usage.items()} == {"requests.cpu": "350m", "count/configmaps": "0"}


def test_usage_is_counted_within_the_quotas_scopes():
    counted = {evaluator_for(PODS): [_pod("a", "100m"), _pod("b")]}
    usage = calculate_usage(_quota({}, scopes=["BestEffort"]), ["pods"], counted)
    assert {k: str(v) for k, v in usage.items()} == {"pods": "1"}


async def test_the_status_says_spec_hard_and_the_recount_written_through_the_status_subresource():
    controller, client = _controller(_quota({"pods": "2", "cpu": "1000m"}), _pod("a", "100m"))
    assert await controller.reconcile(ObjectKey("ns", "q")) is not None
    [(written, subresource)] = client.updates
    assert subresource == "status" and written["metadata"]["resourceVersion"] == "7"
    assert written["status"] == {"hard": {"cpu": "1", "pods": "2"}, "used": {"cpu": "100m", "pods": "1"}}


async def test_an_unchanged_status_is_not_written_and_the_quota_is_recounted_every_resync():
    status = {"hard": {"pods": "2"}, "used": {"pods": "1"}}
    controller, client = _controller(_quota({"pods": "2"}, status), _pod("a"))
    result = await controller.reconcile(ObjectKey("ns", "q"))
    assert client.updates == [] and result is not None and result.requeue_after == RESYNC


async def test_a_name_nothing_counts_keeps_the_usage_it_had():
    status = {"hard": {"count/widgets.example.com": "2"}, "used": {"count/widgets.example.com": "1"}}
    controller, client = _controller(_quota({"count/widgets.example.com": "2"}, status))
    await controller.reconcile(ObjectKey("ns", "q"))
    assert client.updates == []


def test_only_deletions_and_changes_of_what_an_object_charges_recount():
    controller, _ = _controller(_quota({"pods": "1"}))
    changed = controller.usage_changed(PODS)
    running, done = _pod("a", "1"), {**_pod("a", "1"), "status": {"phase": "Succeeded"}}
    assert not changed(ObjectEvent("ADDED", running))
    assert changed(ObjectEvent("DELETED", running))
    assert changed(ObjectEvent("MODIFIED", done, running))
    assert not changed(ObjectEvent("MODIFIED", {**running, "metadata": {**running["metadata"], "labels": {"x": "y"}}},
                                   running))
