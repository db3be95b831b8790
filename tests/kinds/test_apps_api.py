"""apps/v1 through the in-process env and the HTTP app, as kube-apiserver v1.28 serves them with no controller:
defaults read back, the selector rules (422 in Kubernetes' words), the immutable selector, `scale` as
`kubectl scale` uses it, status writes and the generation, StatefulSet's fixed spec, field selectors, and
`kubectl get`'s table.
"""

from __future__ import annotations

import copy
from typing import Any, AsyncIterator

import pytest

from runtime.client.interface import MERGE_PATCH
from runtime.controller.testing import TestEnv, open_test_env
from runtime.machinery import errors
from tests.support.rbac import ok
from tests.support.server import Server, start_in_process

TABLE = {"Accept": "application/json;as=Table;g=meta.k8s.io;v=v1"}


def workload(kind: str, name: str = "web", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"selector": {"matchLabels": {"app": name}},
                            "template": {"metadata": {"labels": {"app": name}},
                                         "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}}
    body.update(spec)
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": "default"}, "spec": body}


@pytest.fixture
async def env(autojump_clock) -> AsyncIterator[TestEnv]:
    async with open_test_env(domain="k8s.io", controllers=False) as env:
        yield env


def kind(env: TestEnv, name: str) -> Any:
    return env.scheme.by_api_version_kind("apps/v1", name)


async def test_a_created_deployment_reads_back_with_its_defaults(env):
    await env.client.create(workload("Deployment"))
    got = await env.client.get(kind(env, "Deployment"), "web", namespace="default")
    spec = got["spec"]
    assert spec["replicas"] == 1 and spec["revisionHistoryLimit"] == 10 and spec["progressDeadlineSeconds"] == 600
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert spec["template"]["spec"]["restartPolicy"] == "Always"
    assert got["metadata"]["generation"] == 1 and got["status"] == {}


async def test_a_selector_that_does_not_match_the_template_is_422(env):
    body = workload("Deployment", selector={"matchLabels": {"app": "other"}})
    with pytest.raises(errors.Invalid) as caught:
        await env.client.create(body)
    assert str(caught.value) == ('Deployment.apps "web" is invalid: spec.template.metadata.labels: Invalid value: '
                                 'map[string]string{"app":"web"}: `selector` does not match template `labels`')


async def test_the_selector_cannot_change(env):
    await env.client.create(workload("Deployment"))
    patch = {"spec": {"selector": {"matchLabels": {"app": "web", "v": "2"}},
                      "template": {"metadata": {"labels": {"v": "2"}}}}}
    with pytest.raises(errors.Invalid) as caught:
        await env.client.patch(kind(env, "Deployment"), "web", patch, namespace="default")
    assert str(caught.value).endswith('spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string'
                                      '{"app":"web", "v":"2"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: '
                                      "field is immutable")


async def test_scale_reads_and_merge_patches_replicas_as_kubectl_scale(env):
    await env.client.create(workload("Deployment", replicas=2))
    deploy = kind(env, "Deployment")
    scale = await env.client.get(deploy, "web", namespace="default", subresource="scale")
    assert (scale["kind"], scale["spec"], scale["status"]) == ("Scale", {"replicas": 2},
                                                              {"replicas": 0, "selector": "app=web"})
    scaled = await env.client.patch(deploy, "web", {"spec": {"replicas": 5}}, patch_type=MERGE_PATCH,
                                    namespace="default", subresource="scale")
    assert scaled["spec"] == {"replicas": 5}
    got = await env.client.get(deploy, "web", namespace="default")
    assert got["spec"]["replicas"] == 5 and got["metadata"]["generation"] == 2


async def test_a_negative_scale_is_422(env):
    await env.client.create(workload("StatefulSet"))
    with pytest.raises(errors.Invalid) as caught:
        await env.client.patch(kind(env, "StatefulSet"), "web", {"spec": {"replicas": -1}}, namespace="default",
                               subresource="scale")
    assert str(caught.value) == ('Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: '
                                 "must be greater than or equal to 0")


async def test_a_status_write_keeps_the_spec_and_the_generation(env):
    made = await env.client.create(workload("ReplicaSet", replicas=3))
    made["spec"]["replicas"] = 9
    made["status"] = {"replicas": 3, "readyReplicas": 2}
    written = await env.client.update(made, subresource="status")
    assert written["spec"]["replicas"] == 3 and written["status"] == {"replicas": 3, "readyReplicas": 2}
    assert written["metadata"]["generation"] == 1
    written["status"]["readyReplicas"] = 4
    with pytest.raises(errors.Invalid) as caught:
        await env.client.update(written, subresource="status")
    assert "status.readyReplicas: Invalid value: 4: cannot be greater than status.replicas" in str(caught.value)


async def test_a_spec_write_bumps_the_generation_and_keeps_the_status(env):
    made = await env.client.create(workload("DaemonSet"))
    made["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
    made["status"]["numberReady"] = 5
    written = await env.client.update(made)
    assert written["metadata"]["generation"] == 2 and written["status"]["numberReady"] == 0
    assert written["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "2"


async def test_a_statefulset_update_may_change_only_its_mutable_fields(env):
    await env.client.create(workload("StatefulSet", serviceName="web"))
    sts = kind(env, "StatefulSet")
    await env.client.patch(sts, "web", {"spec": {"replicas": 3}}, namespace="default")
    with pytest.raises(errors.Invalid) as caught:
        await env.client.patch(sts, "web", {"spec": {"serviceName": "other"}}, namespace="default")
    assert "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', " \
           "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are " \
           "forbidden" in str(caught.value)


async def test_a_put_of_a_missing_deployment_is_404(env):
    body = workload("Deployment", name="ghost")
    with pytest.raises(errors.NotFound):
        await env.client.update(body)


async def test_replicasets_take_no_status_replicas_field_selector_in_apps_v1(env):
    await env.client.create(workload("ReplicaSet", name="a"))
    with pytest.raises(errors.BadRequest):
        await env.client.list(kind(env, "ReplicaSet"), namespace="default", field_selector="status.replicas=0")
    found = await env.client.list(kind(env, "ReplicaSet"), namespace="default", field_selector="metadata.name=a")
    assert [o["metadata"]["name"] for o in found.items] == ["a"]


async def test_a_controller_revision_keeps_its_data(env):
    made = await env.client.create({"apiVersion": "apps/v1", "kind": "ControllerRevision",
                                    "metadata": {"name": "web-1", "namespace": "default"},
                                    "data": {"spec": {"replicas": 1}}, "revision": 1})
    changed = copy.deepcopy(made)
    changed["data"] = {"spec": {"replicas": 2}}
    with pytest.raises(errors.Invalid) as caught:
        await env.client.update(changed)
    assert "data: Invalid value: " in str(caught.value) and str(caught.value).endswith("field is immutable")


# ---- over HTTP: kubectl get's table -----------------------------------------------------------------------

@pytest.fixture
async def srv(nursery, tmp_path) -> Server:
    return await start_in_process(nursery, tmp_path, api_domain="k8s.io")


async def test_kubectl_get_deployments_prints_ready_up_to_date_available(srv, autojump_clock):
    async with srv.client() as c:
        await ok(await c.post("/apis/apps/v1/namespaces/default/deployments", json=workload("Deployment")), 201)
        table = await ok(await c.get("/apis/apps/v1/namespaces/default/deployments", headers=TABLE))
        assert [d["name"] for d in table["columnDefinitions"]] == [
            "Name", "Ready", "Up-to-date", "Available", "Age", "Containers", "Images", "Selector"]
        cells = table["rows"][0]["cells"]
        assert cells[:4] == ["web", "0/1", 0, 0] and cells[5:] == ["app", "nginx:1.25", "app=web"]
