"""The workload kinds with everything the other kinds have (issue 38, point 3), through the in-process env:
the typed client on the generated models, garbage collection among them (a ReplicaSet owned by a Deployment
goes with it; a Pod owned by a ReplicaSet), namespace cascade deletion, the bootstrap policy's aggregated roles
(`edit` may write Deployments, `view` may not), field and label selectors, and the RBAC insight views."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from runtime.controller import Forbidden
from runtime.controller.testing import open_test_env, wait_for_object
from runtime.models.k8s.apps_v1 import Deployment
from runtime.models.k8s.core_v1 import Pod
from runtime.server.rbac.user import UserInfo
from tests.support.workloads import sample


def _owned_by(obj: dict[str, Any], owner: dict[str, Any]) -> dict[str, Any]:
    obj["metadata"]["ownerReferences"] = [{"apiVersion": owner["apiVersion"], "kind": owner["kind"],
                                           "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
                                           "controller": True, "blockOwnerDeletion": True}]
    return obj


async def test_the_typed_client_reads_and_writes_the_generated_models(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        await env.client.create(sample("apps/v1", "Deployment", "web"))
        deploy = await env.client.get(Deployment, "web", namespace="default")
        assert isinstance(deploy, Deployment) and deploy.spec.replicas == 2
        assert deploy.spec.strategy.type == "RollingUpdate" and deploy.spec.revision_history_limit == 10
        pods = await env.client.list(Pod, namespace="default")
        assert pods.items == []


async def test_a_replicaset_owned_by_a_deployment_goes_with_it_and_its_pods_with_it(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        deploy = await env.client.create(sample("apps/v1", "Deployment", "web"))
        rs = await env.client.create(_owned_by(sample("apps/v1", "ReplicaSet", "web-7d9f"), deploy))
        pod = await env.client.create(_owned_by(sample("v1", "Pod", "web-7d9f-abcde"), rs))
        await env.client.delete(env.scheme.by_kind("Deployment"), "web", namespace="default")
        with trio.fail_after(30):
            for kind, name in (("ReplicaSet", rs["metadata"]["name"]), ("Pod", pod["metadata"]["name"])):
                await wait_for_object(env.client, env.scheme.by_kind(kind), name, lambda o: o is None,
                                      namespace="default")


async def test_a_deleted_namespace_takes_its_workloads_with_it(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        namespaces = env.scheme.by_kind("Namespace")
        await env.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}})
        for api_version, kind in (("v1", "Pod"), ("v1", "Service"), ("apps/v1", "Deployment"), ("batch/v1", "Job"),
                                  ("batch/v1", "CronJob"), ("policy/v1", "PodDisruptionBudget")):
            await env.client.create(sample(api_version, kind, "web", namespace="shop"))
        await env.client.delete(namespaces, "shop")
        with trio.fail_after(60):
            await wait_for_object(env.client, namespaces, "shop", lambda o: o is None)


async def test_edit_may_write_deployments_and_view_may_only_read_them(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        rbac = "rbac.authorization.k8s.io"
        for role in ("edit", "view"):
            await env.client.create({
                "apiVersion": f"{rbac}/v1", "kind": "RoleBinding",
                "metadata": {"name": role, "namespace": "default"},
                "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": role},
                "subjects": [{"apiGroup": rbac, "kind": "User", "name": f"{role}-user"}]})
        deployments = env.scheme.by_kind("Deployment")
        editor = env.client_as(UserInfo("edit-user"))
        viewer = env.client_as(UserInfo("view-user"))
        await editor.create(sample("apps/v1", "Deployment", "by-editor"))
        assert (await viewer.get(deployments, "by-editor", namespace="default"))["metadata"]["name"] == "by-editor"
        with pytest.raises(Forbidden):
            await viewer.create(sample("apps/v1", "Deployment", "by-viewer"))
        answer = await env.client.create({
            "apiVersion": "insight.k8s.io/v1", "kind": "WhoCan",
            "spec": {"resourceAttributes": {"verb": "create", "group": "apps", "resource": "deployments",
                                            "namespace": "default"}}})
        names = {s["subject"]["name"] for s in answer["status"]["subjects"]}
        assert "edit-user" in names and "view-user" not in names


async def test_pods_are_selected_by_node_phase_and_labels(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        pods = env.scheme.by_kind("Pod")
        for name, node in (("a", "node-1"), ("b", "node-2"), ("c", "")):
            pod = sample("v1", "Pod", name)
            if node:
                pod["spec"]["nodeName"] = node
            await env.client.create(pod)
        on_one = await env.client.list(pods, namespace="default", field_selector="spec.nodeName=node-1")
        assert [p["metadata"]["name"] for p in on_one.items] == ["a"]
        pending = await env.client.list(pods, namespace="default", field_selector="status.phase=Pending",
                                        label_selector="app=web")
        assert sorted(p["metadata"]["name"] for p in pending.items) == ["a", "b", "c"]
