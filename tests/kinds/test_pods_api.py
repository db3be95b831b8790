"""Pods and PodDisruptionBudgets through the in-process env, as kube-apiserver serves them with no scheduler and
no kubelet: create, status writes, binding, eviction (201 and 429), graceful deletion, field selectors; and over
HTTP (in process): the eviction's 429 with Retry-After, a binding's 201, the pods' Table."""

from __future__ import annotations

from typing import Any, AsyncIterator

import pytest

from runtime.client.interface import MERGE_PATCH
from runtime.controller.testing import ADMIN, TestEnv, open_test_env
from runtime.machinery import errors
from runtime.machinery.options import Body
from runtime.machinery.scheme import ResourceType
from tests.support.rbac import ok
from tests.support.server import start_in_process

pytestmark = pytest.mark.stores("memory")


def pod(name: str = "web", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                            "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}], **spec}}


def budget(name: str = "web", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec}}


@pytest.fixture
async def env(autojump_clock) -> AsyncIterator[TestEnv]:
    async with open_test_env(domain="k8s.io") as env:
        yield env


def pods(env: TestEnv) -> ResourceType:
    return env.scheme.by_kind("Pod", "")


def pdbs(env: TestEnv) -> ResourceType:
    return env.scheme.by_kind("PodDisruptionBudget", "policy")


async def post(env: TestEnv, name: str, subresource: str, body: dict[str, Any]) -> dict[str, Any]:
    result = await env.registry.create(ADMIN, pods(env), "default", Body(body), name=name, subresource=subresource)
    return result.obj.obj


def binding(name: str, node: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name}, "target": {"kind": "Node", "name": node}}


def eviction(name: str, **options: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}}
    if options:
        body["deleteOptions"] = options
    return body


async def running(env: TestEnv, name: str = "web", *, ready: bool = True) -> dict[str, Any]:
    """A Pod bound to node-1 whose status says it runs (as a kubelet would write it)."""
    await env.client.create(pod(name))
    await post(env, name, "binding", binding(name, "node-1"))
    status = {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}
    return await env.client.patch(pods(env), name, status, namespace="default", patch_type=MERGE_PATCH,
                                  subresource="status")


async def test_pod_create_is_pending_with_defaults_and_qos(env):
    made = await env.client.create(pod())
    assert made["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    assert made["spec"]["restartPolicy"] == "Always" and made["spec"]["terminationGracePeriodSeconds"] == 30
    assert "generation" not in made["metadata"]


async def test_pod_spec_write_keeps_status_and_status_write_keeps_spec(env):
    await running(env)
    patched = await env.client.patch(pods(env), "web", {"spec": {"containers": [{"name": "c", "image": "nginx:1.26"}]},
                                                    "status": {"phase": "Failed"}}, namespace="default")
    assert patched["spec"]["containers"][0]["image"] == "nginx:1.26" and patched["status"]["phase"] == "Running"
    written = await env.client.patch(pods(env), "web", {"spec": {"nodeName": "other"}, "status": {"podIP": "10.0.0.1"}},
                                     namespace="default", subresource="status")
    assert written["spec"]["nodeName"] == "node-1" and written["status"]["podIP"] == "10.0.0.1"


async def test_pod_update_of_an_immutable_field_is_422(env):
    await env.client.create(pod())
    with pytest.raises(errors.Invalid) as caught:
        await env.client.patch(pods(env), "web", {"spec": {"restartPolicy": "Never"}}, namespace="default")
    assert "pod updates may not change fields other than `spec.containers[*].image`" in caught.value.message


async def test_binding_sets_node_name_and_scheduled_condition(env):
    await env.client.create(pod())
    answer = await post(env, "web", "binding", binding("web", "node-1"))
    assert answer["status"] == "Success"
    got = await env.client.get(pods(env), "web", namespace="default")
    assert got["spec"]["nodeName"] == "node-1"
    assert [c["type"] for c in got["status"]["conditions"]] == ["PodScheduled"]


async def test_binding_an_assigned_pod_is_409(env):
    await env.client.create(pod(nodeName="node-1"))
    with pytest.raises(errors.Conflict) as caught:
        await post(env, "web", "binding", binding("web", "node-2"))
    assert caught.value.message == ('Operation cannot be fulfilled on pods/binding "web": pod web is already '
                                    'assigned to node "node-1"')


async def test_pod_on_no_node_is_deleted_at_once(env):
    await env.client.create(pod())
    await env.client.delete(pods(env), "web", namespace="default")
    with pytest.raises(errors.NotFound):
        await env.client.get(pods(env), "web", namespace="default")


async def test_pod_on_a_node_is_deleted_gracefully_and_a_shorter_grace_shortens_it(env):
    await env.client.create(pod(nodeName="node-1"))
    answer = await env.client.delete(pods(env), "web", namespace="default")
    assert answer["kind"] == "Pod" and answer["metadata"]["deletionGracePeriodSeconds"] == 30
    first = answer["metadata"]["deletionTimestamp"]
    got = await env.client.get(pods(env), "web", namespace="default")
    assert got["metadata"]["deletionTimestamp"] == first
    longer = await env.client.delete(pods(env), "web", namespace="default", grace_period_seconds=60)
    assert longer["metadata"]["deletionGracePeriodSeconds"] == 30  # only a shorter one is taken
    shorter = await env.client.delete(pods(env), "web", namespace="default", grace_period_seconds=10)
    assert shorter["metadata"]["deletionGracePeriodSeconds"] == 10 and shorter["metadata"]["deletionTimestamp"] < first
    await env.client.delete(pods(env), "web", namespace="default", grace_period_seconds=0)
    with pytest.raises(errors.NotFound):
        await env.client.get(pods(env), "web", namespace="default")


async def test_eviction_without_a_budget_deletes_the_pod(env):
    await running(env)
    answer = await post(env, "web", "eviction", eviction("web", gracePeriodSeconds=0))
    assert answer["status"] == "Success" and answer["code"] == 201
    with pytest.raises(errors.NotFound):
        await env.client.get(pods(env), "web", namespace="default")


async def test_eviction_a_budget_forbids_is_429(env):
    await running(env)
    await env.client.create(budget(minAvailable=1))
    with pytest.raises(errors.TooManyRequests) as caught:  # no controller: the budget's status is not observed
        await post(env, "web", "eviction", eviction("web"))
    assert caught.value.message == "Cannot evict pod as it would violate the pod's disruption budget."
    assert caught.value.causes[0].reason == "DisruptionBudget"
    assert caught.value.causes[0].message == "The disruption budget web is still being processed by the server."
    status = {"status": {"observedGeneration": 1, "disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1,
                         "expectedPods": 1}}
    await env.client.patch(pdbs(env), "web", status, namespace="default", subresource="status")
    with pytest.raises(errors.TooManyRequests) as caught:
        await post(env, "web", "eviction", eviction("web"))
    assert caught.value.causes[0].message == "The disruption budget web needs 1 healthy pods and has 1 currently"
    assert (await env.client.get(pods(env), "web", namespace="default"))["metadata"].get("deletionTimestamp") is None


async def test_eviction_a_budget_allows_takes_a_disruption_and_deletes_gracefully(env):
    await running(env)
    await env.client.create(budget(maxUnavailable=1))
    status = {"status": {"observedGeneration": 1, "disruptionsAllowed": 1, "currentHealthy": 1, "desiredHealthy": 0,
                         "expectedPods": 1}}
    await env.client.patch(pdbs(env), "web", status, namespace="default", subresource="status")
    assert (await post(env, "web", "eviction", eviction("web")))["status"] == "Success"
    got = await env.client.get(pods(env), "web", namespace="default")
    assert got["metadata"]["deletionGracePeriodSeconds"] == 30  # on a node: graceful, and no kubelet ends it
    assert any(c["type"] == "DisruptionTarget" for c in got["status"]["conditions"])
    after = await env.client.get(pdbs(env), "web", namespace="default")
    assert after["status"]["disruptionsAllowed"] == 0 and "web" in after["status"]["disruptedPods"]


async def test_pod_field_selectors_node_name_phase_and_spec_host(env):
    await env.client.create(pod("a", nodeName="node-1"))
    await env.client.create(pod("b"))
    listed = await env.client.list(pods(env), namespace="default", field_selector="spec.nodeName=node-1")
    assert [p["metadata"]["name"] for p in listed.items] == ["a"]
    pending = await env.client.list(pods(env), namespace="default", field_selector="status.phase=Pending,spec.host=")
    assert [p["metadata"]["name"] for p in pending.items] == ["b"]


async def test_pdb_requires_one_bound_only(env):
    with pytest.raises(errors.Invalid) as caught:
        await env.client.create(budget(minAvailable=1, maxUnavailable="50%"))
    assert "minAvailable and maxUnavailable cannot be both set" in caught.value.message
    made = await env.client.create(budget(minAvailable="50%"))
    assert made["metadata"]["generation"] == 1 and made["status"]["disruptionsAllowed"] == 0


async def test_eviction_of_a_pending_pod_ignores_the_budget(env):
    await env.client.create(pod())
    await env.client.create(budget(minAvailable=1))
    assert (await post(env, "web", "eviction", eviction("web")))["status"] == "Success"
    with pytest.raises(errors.NotFound):
        await env.client.get(pods(env), "web", namespace="default")


async def test_eviction_of_an_unready_pod_with_always_allow_deletes_it(env):
    await running(env, ready=False)
    await env.client.create(budget(minAvailable=1, unhealthyPodEvictionPolicy="AlwaysAllow"))
    assert (await post(env, "web", "eviction", eviction("web", gracePeriodSeconds=0)))["status"] == "Success"
    with pytest.raises(errors.NotFound):
        await env.client.get(pods(env), "web", namespace="default")


async def test_eviction_with_two_budgets_is_a_failure_status(env):
    await running(env)
    await env.client.create(budget("one", minAvailable=1))
    await env.client.create(budget("two", minAvailable=1))
    answer = await post(env, "web", "eviction", eviction("web"))
    assert (answer["status"], answer["code"]) == ("Failure", 500)
    assert answer["message"] == ("This pod has more than one PodDisruptionBudget, which the eviction subresource does "
                                 "not support.")


async def test_ephemeral_containers_subresource_adds_one(env):
    await env.client.create(pod())
    debug = {"spec": {"ephemeralContainers": [{"name": "debug", "image": "busybox"}]}}
    written = await env.client.patch(pods(env), "web", debug, namespace="default", subresource="ephemeralcontainers")
    assert [(c["name"], c["imagePullPolicy"]) for c in written["spec"]["ephemeralContainers"]] == [
        ("debug", "Always")]


PODS = "/api/v1/namespaces/default/pods"
TABLE = {"Accept": "application/json;as=Table;g=meta.k8s.io;v=v1"}


async def test_http_binding_eviction_429_and_table(nursery, tmp_path, autojump_clock):
    srv = await start_in_process(nursery, tmp_path, api_domain="k8s.io")
    async with srv.client() as c:
        await ok(await c.post(PODS, json=pod()), 201)
        bound = await ok(await c.post(f"{PODS}/web/binding", json=binding("web", "node-1")), 201)
        assert (bound["kind"], bound["status"]) == ("Status", "Success")
        await ok(await c.patch(f"{PODS}/web/status", json={"status": {"phase": "Running"}},
                               headers={"Content-Type": "application/merge-patch+json"}))
        await ok(await c.post("/apis/policy/v1/namespaces/default/poddisruptionbudgets", json=budget(minAvailable=1)),
                 201)
        refused = await c.post(f"{PODS}/web/eviction", json=eviction("web"))
        assert refused.status_code == 429 and refused.headers["Retry-After"] == "10"
        assert refused.json()["details"]["causes"][0]["reason"] == "DisruptionBudget"
        table = await ok(await c.get(PODS, headers=TABLE))
        assert [col["name"] for col in table["columnDefinitions"]][:5] == ["Name", "Ready", "Status", "Restarts", "Age"]
        assert table["rows"][0]["cells"][:4] == ["web", "0/1", "Running", "0"]
        assert table["rows"][0]["cells"][6] == "node-1"


async def test_finalizers_removed_from_a_pod_in_its_grace_period_leave_it_terminating(env):
    made = pod(nodeName="node-1")
    made["metadata"]["finalizers"] = ["example.com/hold"]
    await env.client.create(made)
    await env.client.delete(pods(env), "web", namespace="default")
    released = await env.client.patch(pods(env), "web", {"metadata": {"finalizers": None}}, namespace="default")
    assert released["metadata"]["deletionGracePeriodSeconds"] == 30 and "finalizers" not in released["metadata"]
    await env.client.delete(pods(env), "web", namespace="default", grace_period_seconds=0)
    with pytest.raises(errors.NotFound):
        await env.client.get(pods(env), "web", namespace="default")


async def test_binding_with_a_stale_uid_is_409(env):
    await env.client.create(pod())
    stale = binding("web", "node-1")
    stale["metadata"]["uid"] = "not-the-pods"
    with pytest.raises(errors.Conflict) as caught:
        await post(env, "web", "binding", stale)
    assert "Precondition failed: UID in precondition: not-the-pods, UID in object meta: " in caught.value.message
    assert "nodeName" not in (await env.client.get(pods(env), "web", namespace="default"))["spec"]


async def test_binding_named_for_another_pod_is_400(env):
    await env.client.create(pod())
    with pytest.raises(errors.BadRequest) as caught:
        await post(env, "web", "binding", binding("other", "node-1"))
    assert caught.value.message == "name in URL does not match name in Binding object"


async def test_eviction_in_policy_v1beta1_is_accepted(env):
    await env.client.create(pod())
    answer = await post(env, "web", "eviction", dict(eviction("web"), apiVersion="policy/v1beta1"))
    assert answer["status"] == "Success"
