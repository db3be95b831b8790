"""The pod spec through the in-process env, on the kinds that carry one (a Pod, a Deployment's and a Job's
templates): the defaults a controller reads back, and the 422 a wrong manifest gets, in Kubernetes' words.
"""

from __future__ import annotations

from typing import Any, AsyncIterator

import pytest

from runtime.controller.testing import TestEnv, open_test_env
from runtime.machinery import errors

pytestmark = pytest.mark.stores("memory")


def container(**fields: Any) -> dict[str, Any]:
    return {"name": "app", "image": "nginx", **fields}


def deployment(*containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": list(containers) or [container()], **spec}}}}


@pytest.fixture
async def env(autojump_clock) -> AsyncIterator[TestEnv]:
    async with open_test_env(domain="k8s.io", controllers=False) as env:
        yield env


async def test_a_deployment_template_reads_back_with_the_pod_spec_defaults(env):
    probe = {"httpGet": {"port": 80}}
    made = await env.client.create(deployment(container(ports=[{"containerPort": 80}], readinessProbe=probe,
                                                        resources={"limits": {"cpu": "1000m"}})))
    spec = made["spec"]["template"]["spec"]
    assert (spec["dnsPolicy"], spec["restartPolicy"], spec["terminationGracePeriodSeconds"], spec["schedulerName"],
            spec["securityContext"]) == ("ClusterFirst", "Always", 30, "default-scheduler", {})
    app = spec["containers"][0]
    assert (app["imagePullPolicy"], app["terminationMessagePath"], app["terminationMessagePolicy"]) == (
        "Always", "/dev/termination-log", "File")
    assert app["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert app["readinessProbe"] == {"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
                                     "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
    assert app["resources"] == {"limits": {"cpu": "1"}}  # a template's requests are not copied from its limits
    assert "enableServiceLinks" not in spec


async def test_a_pod_reads_back_with_requests_from_limits_and_service_links(env):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [container(image="nginx:1.25", resources={"limits": {"memory": "1Gi"}})]}}
    made = await env.client.create(pod)
    assert made["spec"]["enableServiceLinks"] is True
    assert made["spec"]["containers"][0]["resources"]["requests"] == {"memory": "1Gi"}
    assert made["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent"


async def test_a_template_with_duplicate_container_names_is_422(env):
    with pytest.raises(errors.Invalid) as caught:
        await env.client.create(deployment(container(), container()))
    assert str(caught.value) == ('Deployment.apps "web" is invalid: spec.template.spec.containers[1].name: '
                                 'Duplicate value: "app"')


async def test_a_template_with_a_bad_restart_policy_is_422(env):
    with pytest.raises(errors.Invalid) as caught:
        await env.client.create(deployment(restartPolicy="Sometimes"))
    assert 'spec.template.spec.restartPolicy: Unsupported value: "Sometimes"' in str(caught.value)


async def test_a_job_template_mount_of_a_missing_volume_is_422(env):
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
           "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
               container(volumeMounts=[{"name": "data", "mountPath": "/data"}])]}}}}
    with pytest.raises(errors.Invalid) as caught:
        await env.client.create(job)
    assert str(caught.value) == ('Job.batch "j" is invalid: spec.template.spec.containers[0].volumeMounts[0].name: '
                                 'Not found: "data"')


async def test_a_pod_with_a_bad_quantity_is_422(env):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [container(resources={"requests": {"cpu": "two"}})]}}
    with pytest.raises(errors.Invalid) as caught:
        await env.client.create(pod)
    assert ('spec.containers[0].resources.requests[cpu]: Invalid value: "two": quantities must match the regular '
            "expression") in str(caught.value)
