"""The workload kinds through the real kubectl (issue 38's acceptance), one server for the module.

`create deployment|job|cronjob`, `expose deployment` (a Service with an allocated ClusterIP), `scale` (the
scale subresource), `set image`, `get pods,svc,deploy -o wide` and `get all` (kube's printer columns and the
`all` category), `describe`, `edit` (KUBE_EDITOR a script), `apply` of a multi-document manifest with every
workload kind, client side and `--server-side`, and `delete -f`. `rollout status` does not finish: no
controller makes the Deployment's ReplicaSets and Pods, as with Kubernetes' envtest.
"""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path
from typing import Iterator

import pytest
import yaml

from tests.support.kubectl import Kubectl
from tests.support.server import Server
from tests.support.served import served
from tests.support.workloads import SAMPLE_KINDS, sample


@pytest.fixture(scope="module")
def module_server(tmp_path_factory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("workloads")
    with served(folder / "data", "--api-domain", "k8s.io") as server:
        yield server


@pytest.fixture
def kubectl(module_server, tmp_path_factory) -> Kubectl:
    return Kubectl(module_server, str(tmp_path_factory.getbasetemp() / "kube-cache"))


async def get_json(kubectl: Kubectl, *what: str) -> dict:
    return json.loads((await kubectl("get", *what, "-o", "json")).out)


def rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.strip().splitlines()]


def header(out: str) -> list[str]:
    """The header row's column names (kube's headers hold single spaces: `NOMINATED NODE`)."""
    return [name.strip() for name in out.splitlines()[0].split("  ") if name.strip()]


async def test_create_deployment_is_stored_with_kubes_defaults(kubectl):
    made = await kubectl("create", "deployment", "web", "--image=nginx:1.25", "--replicas=2")
    assert made.out.strip() == "deployment.apps/web created"
    deploy = await get_json(kubectl, "deployment", "web")
    spec = deploy["spec"]
    assert spec["replicas"] == 2 and spec["revisionHistoryLimit"] == 10 and spec["progressDeadlineSeconds"] == 600
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}
    assert spec["selector"] == {"matchLabels": {"app": "web"}}
    pod = spec["template"]["spec"]
    assert (pod["restartPolicy"], pod["dnsPolicy"], pod["schedulerName"], pod["terminationGracePeriodSeconds"]) == (
        "Always", "ClusterFirst", "default-scheduler", 30)
    container = pod["containers"][0]
    assert (container["imagePullPolicy"], container["terminationMessagePath"]) == ("IfNotPresent",
                                                                                   "/dev/termination-log")
    assert deploy["metadata"]["generation"] == 1


async def test_create_job_and_cronjob(kubectl):
    made = await kubectl("create", "job", "hello", "--image=busybox:1.36", "--", "echo", "hi")
    assert made.out.strip() == "job.batch/hello created"
    job = await get_json(kubectl, "job", "hello")
    uid = job["metadata"]["uid"]
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    labels = job["spec"]["template"]["metadata"]["labels"]
    assert labels["controller-uid"] == uid and labels["job-name"] == "hello"
    assert (job["spec"]["backoffLimit"], job["spec"]["completions"], job["spec"]["parallelism"]) == (6, 1, 1)
    made = await kubectl("create", "cronjob", "tick", "--image=busybox:1.36", "--schedule=*/5 * * * *")
    assert made.out.strip() == "cronjob.batch/tick created"
    cron = await get_json(kubectl, "cronjob", "tick")
    assert (cron["spec"]["concurrencyPolicy"], cron["spec"]["successfulJobsHistoryLimit"]) == ("Allow", 3)
    bad = await kubectl("create", "cronjob", "bad", "--image=busybox", "--schedule=every minute", check=False)
    assert bad.code != 0 and "spec.schedule" in bad.err


async def test_expose_deployment_allocates_a_cluster_ip(kubectl):
    await kubectl("create", "deployment", "api", "--image=nginx:1.25")
    made = await kubectl("expose", "deployment", "api", "--port=80", "--target-port=8080")
    assert made.out.strip() == "service/api exposed"
    svc = await get_json(kubectl, "service", "api")
    ip = ipaddress.ip_address(svc["spec"]["clusterIP"])
    assert ip in ipaddress.ip_network("10.96.0.0/12") and svc["spec"]["clusterIPs"] == [str(ip)]
    assert svc["spec"]["selector"] == {"app": "api"} and svc["spec"]["type"] == "ClusterIP"
    assert svc["spec"]["ports"][0]["targetPort"] == 8080 and svc["spec"]["ports"][0]["protocol"] == "TCP"
    table = await kubectl("get", "svc", "api", "-o", "wide")
    assert header(table.out) == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"]
    assert rows(table.out)[1][:5] == ["api", "ClusterIP", str(ip), "<none>", "80/TCP"]


async def test_scale_and_set_image(kubectl):
    await kubectl("create", "deployment", "scaled", "--image=nginx:1.25")
    assert (await kubectl("scale", "deployment", "scaled", "--replicas=5")).out.strip() == (
        "deployment.apps/scaled scaled")
    assert (await get_json(kubectl, "deployment", "scaled"))["spec"]["replicas"] == 5
    raw = await kubectl("get", "--raw", "/apis/apps/v1/namespaces/default/deployments/scaled/scale")
    scale = json.loads(raw.out)
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 5 and scale["status"]["selector"] == "app=scaled"
    done = await kubectl("set", "image", "deployment/scaled", "nginx=nginx:1.26")
    assert done.out.strip() == "deployment.apps/scaled image updated"
    deploy = await get_json(kubectl, "deployment", "scaled")
    assert deploy["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26"
    assert deploy["metadata"]["generation"] == 3  # the scale and the image each changed the spec


async def test_get_wide_and_get_all_show_kubes_columns(kubectl):
    await kubectl("apply", "-f", "-", stdin=yaml.safe_dump(sample("v1", "Pod", "lone")).encode())
    pods = await kubectl("get", "pods", "lone", "-o", "wide")
    assert header(pods.out) == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE",
                                "READINESS GATES"]
    assert rows(pods.out)[1][:4] == ["lone", "0/1", "Pending", "0"]
    deploys = await kubectl("get", "deploy", "web", "-o", "wide")
    assert header(deploys.out) == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES",
                                   "SELECTOR"]
    assert rows(deploys.out)[1][:4] == ["web", "0/2", "0", "0"]
    everything = (await kubectl("get", "all")).out
    for shown in ("pod/lone", "service/api", "deployment.apps/web", "job.batch/hello", "cronjob.batch/tick"):
        assert shown in everything


async def test_describe_deployment(kubectl):
    out = (await kubectl("describe", "deployment", "web")).out
    assert "Name:" in out and "web" in out and "Replicas:" in out and "StrategyType:" in out
    assert "RollingUpdate" in out


async def test_edit_deployment_with_kube_editor(kubectl, tmp_path):
    script = tmp_path / "editor.sh"
    script.write_text("#!/bin/sh\nsed -i 's/replicas: 2/replicas: 3/' \"$1\"\n")
    script.chmod(0o755)
    done = await kubectl("edit", "deployment", "web", env={"KUBE_EDITOR": str(script), "TMPDIR": str(tmp_path)})
    assert done.out.strip() == "deployment.apps/web edited"
    assert (await get_json(kubectl, "deployment", "web"))["spec"]["replicas"] == 3


def _manifest(tmp_path: Path, prefix: str) -> Path:
    docs = [sample(api_version, kind, f"{prefix}-{kind.lower()}") for api_version, kind in SAMPLE_KINDS
            if api_version != "autoscaling/v1"]  # one HorizontalPodAutoscaler: v2, the stored version
    for doc in docs:
        if doc["kind"] == "CronJob":
            doc["metadata"]["name"] = f"{prefix}-cron"  # a CronJob's name is at most 52 characters
    path = tmp_path / f"{prefix}.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


@pytest.mark.parametrize("side", ["client", "server"])
async def test_apply_a_manifest_of_every_kind_then_delete_it(kubectl, tmp_path, side):
    manifest = _manifest(tmp_path, side)
    args = ["apply", "-f", str(manifest)] + (["--server-side"] if side == "server" else [])
    out = (await kubectl(*args)).out
    assert out.count("\n") == len(SAMPLE_KINDS) - 1
    assert "created" in out or "serverside-applied" in out
    again = (await kubectl(*args)).out.strip().splitlines()  # a second apply of the same manifest changes nothing
    if side == "client":
        # but a PodDisruptionBudget's selector, whose patch strategy is replace, makes kubectl send it again
        # (as against kube-apiserver): "configured"
        assert {line for line in again if not line.endswith("unchanged")} == {
            f"poddisruptionbudget.policy/{side}-poddisruptionbudget configured"}
    else:
        assert all(line.endswith("serverside-applied") for line in again)
    gone = (await kubectl("delete", "-f", str(manifest))).out
    assert gone.count("deleted") == len(SAMPLE_KINDS) - 1


async def test_rollout_status_does_not_finish_without_a_controller(kubectl):
    waited = await kubectl("rollout", "status", "deployment/web", "--timeout=1s", check=False)
    assert waited.code != 0 and "Waiting for deployment" in waited.out + waited.err
