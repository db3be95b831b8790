"""LimitRanger and ResourceQuota admission and the quota controller through the API (in-process env, memory
store): defaults applied to a Pod, bounds and quota refused with 403 in Kubernetes' words, usage in status,
dry run counting nothing, concurrent creates that cannot both pass."""

from __future__ import annotations

from typing import Any, AsyncIterator

import pytest
import trio

from runtime.controller.testing import TestEnv, open_test_env, wait_for_object
from runtime.machinery import errors


@pytest.fixture
async def env(autojump_clock: Any) -> AsyncIterator[TestEnv]:
    async with open_test_env(domain="k8s.io") as env:
        await env.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
        yield env


def _pod(name: str, requests: dict[str, str] | None = None, limits: dict[str, str] | None = None) -> dict[str, Any]:
    res = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns"},
            "spec": {"containers": [{"name": "app", "image": "nginx", **({"resources": res} if res else {})}]}}


async def _limit_range(env: TestEnv, *items: dict[str, Any]) -> None:
    await env.client.create({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr", "namespace": "ns"},
                             "spec": {"limits": list(items)}})


async def _quota(env: TestEnv, hard: dict[str, str], name: str = "q") -> dict[str, Any]:
    """Create a quota; return it once the controller has counted it."""
    await env.client.create({"apiVersion": "v1", "kind": "ResourceQuota",
                             "metadata": {"name": name, "namespace": "ns"}, "spec": {"hard": hard}})
    return await _used(env, lambda used: used is not None, name)


async def _used(env: TestEnv, condition: Any, name: str = "q") -> dict[str, Any]:
    quotas = env.client.scheme.by_kind("ResourceQuota")
    found = await wait_for_object(env.client, quotas, name, lambda o: o is not None and condition(
        (o.get("status") or {}).get("used")), namespace="ns")
    assert found is not None
    return found


async def _refused(env: TestEnv, obj: dict[str, Any], **options: Any) -> str:
    with pytest.raises(errors.Forbidden) as caught:
        await env.client.create(obj, **options)
    return str(caught.value)


async def test_limit_range_defaults_are_applied_to_a_pod(env: TestEnv):
    await _limit_range(env, {"type": "Container", "default": {"cpu": "500m"}, "defaultRequest": {"cpu": "100m"}})
    pod = await env.client.create(_pod("web"))
    assert pod["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "500m"}, "requests": {"cpu": "100m"}}
    assert pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == \
        "LimitRanger plugin set: cpu request for container app; cpu limit for container app"


async def test_a_pod_outside_the_limit_range_is_forbidden_in_kubes_words(env: TestEnv):
    await _limit_range(env, {"type": "Container", "min": {"cpu": "100m", "memory": "64Mi"}})
    assert await _refused(env, _pod("web", {"cpu": "50m", "memory": "1Mi"}, {"cpu": "50m", "memory": "1Mi"})) == (
        'pods "web" is forbidden: [minimum cpu usage per Container is 100m, but request is 50m, '
        "minimum memory usage per Container is 64Mi, but request is 1Mi]")


async def test_a_claim_over_the_limit_range_maximum_is_forbidden(env: TestEnv):
    await _limit_range(env, {"type": "PersistentVolumeClaim", "max": {"storage": "1Gi"}})
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "ns"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}}}}
    assert await _refused(env, claim) == \
        'persistentvolumeclaims "data" is forbidden: maximum storage usage per PersistentVolumeClaim is 1Gi, ' \
        'but request is 5Gi'


async def test_the_quota_controller_sets_status_hard_and_used(env: TestEnv):
    for name in ("a", "b"):
        await env.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                 "metadata": {"name": name, "namespace": "ns"}})
    quota = await _quota(env, {"count/configmaps": "5", "pods": "3", "requests.memory": "1Gi"})
    assert quota["status"] == {"hard": {"count/configmaps": "5", "pods": "3", "requests.memory": "1Gi"},
                               "used": {"count/configmaps": "2", "pods": "0", "requests.memory": "0"}}


async def test_a_create_charges_the_quota_and_one_over_it_is_forbidden(env: TestEnv):
    await _quota(env, {"pods": "2", "requests.cpu": "1"})
    for name in ("a", "b"):
        await env.client.create(_pod(name, {"cpu": "200m"}))
    quota = await _used(env, lambda used: used == {"pods": "2", "requests.cpu": "400m"})
    assert quota["status"]["hard"] == {"pods": "2", "requests.cpu": "1"}
    assert await _refused(env, _pod("c", {"cpu": "200m"})) == \
        'pods "c" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2'


async def test_a_cpu_quota_refuses_a_pod_without_a_cpu_request(env: TestEnv):
    await _quota(env, {"requests.cpu": "1"})
    assert await _refused(env, _pod("web")) == \
        'pods "web" is forbidden: failed quota: q: must specify requests.cpu for: app'


async def test_a_dry_run_is_checked_but_counts_nothing(env: TestEnv):
    await _quota(env, {"pods": "1"})
    await env.client.create(_pod("a"), dry_run=True)
    quotas = env.client.scheme.by_kind("ResourceQuota")
    assert (await env.client.get(quotas, "q", namespace="ns"))["status"]["used"] == {"pods": "0"}
    await env.client.create(_pod("a"))
    assert "exceeded quota: q" in await _refused(env, _pod("b"), dry_run=True)


async def test_concurrent_creates_cannot_both_pass(env: TestEnv):
    await _quota(env, {"pods": "3"})
    outcomes: list[str] = []

    async def create(name: str) -> None:
        try:
            await env.client.create(_pod(name))
            outcomes.append("created")
        except errors.Forbidden:
            outcomes.append("forbidden")
    async with trio.open_nursery() as nursery:
        for i in range(8):
            nursery.start_soon(create, f"p{i}")
    assert sorted(outcomes) == ["created"] * 3 + ["forbidden"] * 5
    await _used(env, lambda used: used == {"pods": "3"})


async def test_a_deleted_pod_is_counted_out_by_the_controller(env: TestEnv):
    await _quota(env, {"pods": "1"})
    await env.client.create(_pod("a"))
    await env.client.delete(env.client.scheme.by_kind("Pod"), "a", namespace="ns")
    await _used(env, lambda used: used == {"pods": "0"})
    await env.client.create(_pod("b"))


async def test_a_finished_pod_is_counted_out_but_still_counts_as_an_object(env: TestEnv):
    await _quota(env, {"pods": "1", "count/pods": "5"})
    pod = await env.client.create(_pod("a"))
    await _used(env, lambda used: used == {"count/pods": "1", "pods": "1"})
    await env.client.update({**pod, "status": {"phase": "Succeeded"}}, subresource="status")
    await _used(env, lambda used: used == {"count/pods": "1", "pods": "0"})


async def test_a_change_of_spec_hard_is_reflected_in_status_hard(env: TestEnv):
    quota = await _quota(env, {"pods": "1"})
    await env.client.update({**quota, "spec": {"hard": {"pods": "4", "count/deployments.apps": "2"}}})
    found = await _used(env, lambda used: used == {"pods": "0", "count/deployments.apps": "0"})
    assert found["status"]["hard"] == {"count/deployments.apps": "2", "pods": "4"}


async def test_limit_range_defaults_come_before_the_quota_check(env: TestEnv):
    await _limit_range(env, {"type": "Container", "default": {"cpu": "200m"}, "defaultRequest": {"cpu": "200m"}})
    await _quota(env, {"requests.cpu": "300m"})
    await env.client.create(_pod("a"))
    await _used(env, lambda used: used == {"requests.cpu": "200m"})
    assert await _refused(env, _pod("b")) == ('pods "b" is forbidden: exceeded quota: q, requested: requests.cpu=200m, '
                                              "used: requests.cpu=200m, limited: requests.cpu=300m")


async def test_any_kind_is_counted_by_its_resource_and_group(env: TestEnv):
    await _quota(env, {"count/deployments.apps": "1"})
    labels = {"app": "web"}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "ns"},
                  "spec": {"selector": {"matchLabels": labels}, "template": {
                      "metadata": {"labels": labels}, "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}}
    await env.client.create(deployment)
    assert await _refused(env, {**deployment, "metadata": {"name": "api", "namespace": "ns"}}) == (
        'deployments.apps "api" is forbidden: exceeded quota: q, requested: count/deployments.apps=1, '
        "used: count/deployments.apps=1, limited: count/deployments.apps=1")


async def test_claims_are_charged_their_storage_per_storage_class(env: TestEnv):
    await _quota(env, {"requests.storage": "20Gi", "gold.storageclass.storage.k8s.io/requests.storage": "5Gi"})
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "ns"},
             "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "gold",
                      "resources": {"requests": {"storage": "10Gi"}}}}
    assert await _refused(env, claim) == (
        'persistentvolumeclaims "data" is forbidden: exceeded quota: q, requested: '
        "gold.storageclass.storage.k8s.io/requests.storage=10Gi, used: gold.storageclass.storage.k8s.io/"
        "requests.storage=0, limited: gold.storageclass.storage.k8s.io/requests.storage=5Gi")
    await env.client.create({**claim, "spec": {**claim["spec"], "storageClassName": "silver"}})
    await _used(env, lambda used: used == {"requests.storage": "10Gi",
                                           "gold.storageclass.storage.k8s.io/requests.storage": "0"})
