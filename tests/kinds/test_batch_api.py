"""batch/v1 Job and CronJob through the in-process env, as kube-apiserver v1.28 serves them with no controller:
defaults read back, the generated selector, kube's 422s, immutable fields, status writes, generation, the
Table columns. Memory store only (the rules do not depend on the store)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from runtime.controller.testing import open_test_env
from runtime.machinery import errors
from tests.support.server import start_in_process

pytestmark = pytest.mark.stores("memory")
TABLE = {"Accept": "application/json;as=Table;g=meta.k8s.io;v=v1"}


def job(name: str = "pi", restart: str = "Never") -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"},
            "spec": {"template": {"spec": {"restartPolicy": restart,
                                           "containers": [{"name": "pi", "image": "perl:5.34"}]}}}}


def cronjob(name: str = "nightly", schedule: str = "0 3 * * *") -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedule": schedule, "jobTemplate": {"spec": job()["spec"]}}}


async def test_job_create_answers_defaults_and_the_generated_selector(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        made = await env.client.create(job())
        uid = made["metadata"]["uid"]
        assert made["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
        assert made["spec"]["template"]["metadata"]["labels"]["job-name"] == "pi"
        assert made["metadata"]["labels"]["batch.kubernetes.io/controller-uid"] == uid
        assert (made["spec"]["backoffLimit"], made["spec"]["completions"], made["metadata"]["generation"]) == (6, 1, 1)
        jobs = env.scheme.by_api_version_kind("batch/v1", "Job")
        assert await env.client.get(jobs, "pi", namespace="default") == made


async def test_job_restart_policy_always_is_422_in_kubes_words(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        with pytest.raises(errors.Invalid) as caught:
            await env.client.create(job(restart="Always"))
        assert str(caught.value) == ('Job.batch "pi" is invalid: spec.template.spec.restartPolicy: Required value: '
                                     'valid values: "OnFailure", "Never"')


async def test_job_template_change_is_refused_and_suspend_counts_generation(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        jobs = env.scheme.by_api_version_kind("batch/v1", "Job")
        made = await env.client.create(job())
        changed = copy.deepcopy(made)
        changed["spec"]["template"]["spec"]["containers"][0]["image"] = "perl:5.36"
        with pytest.raises(errors.Invalid) as caught:
            await env.client.update(changed)
        assert str(caught.value).endswith("field is immutable")
        suspended = await env.client.patch(jobs, "pi", {"spec": {"suspend": True}}, namespace="default")
        assert suspended["metadata"]["generation"] == 2


async def test_job_status_is_written_by_its_subresource_only(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        jobs = env.scheme.by_api_version_kind("batch/v1", "Job")
        made = await env.client.create(job())
        made["status"] = {"active": 1, "startTime": "2026-01-01T00:00:00Z"}
        written = await env.client.update(copy.deepcopy(made), subresource="status")
        assert written["status"]["active"] == 1 and written["metadata"]["generation"] == 1
        written["status"] = {"active": 9}
        kept = await env.client.update(written)
        assert kept["status"]["active"] == 1
        got = await env.client.get(jobs, "pi", namespace="default")
        assert got["status"]["active"] == 1


async def test_jobs_select_by_status_successful(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        jobs = env.scheme.by_api_version_kind("batch/v1", "Job")
        done = await env.client.create(job("done"))
        await env.client.create(job("pending"))
        done["status"] = {"succeeded": 1}
        await env.client.update(done, subresource="status")
        listed = await env.client.list(jobs, namespace="default", field_selector="status.successful=1")
        assert [o["metadata"]["name"] for o in listed.items] == ["done"]


async def test_a_job_read_back_and_sent_unchanged_is_a_no_op(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        made = await env.client.create(job())
        again = await env.client.update(copy.deepcopy(made))
        assert again["metadata"]["resourceVersion"] == made["metadata"]["resourceVersion"]


async def test_cronjob_defaults_and_bad_schedule(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        made = await env.client.create(cronjob())
        assert (made["spec"]["concurrencyPolicy"], made["spec"]["successfulJobsHistoryLimit"],
                made["spec"]["failedJobsHistoryLimit"], made["spec"]["suspend"]) == ("Allow", 3, 1, False)
        with pytest.raises(errors.Invalid) as caught:
            await env.client.create(cronjob("bad", "61 * * * *"))
        assert str(caught.value) == ('CronJob.batch "bad" is invalid: spec.schedule: Invalid value: "61 * * * *": '
                                     'end of range (61) above maximum (59): 61')


async def test_cronjob_time_zone_must_be_known(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        body = cronjob()
        body["spec"]["timeZone"] = "Atlantis/Capital"
        with pytest.raises(errors.Invalid) as caught:
            await env.client.create(body)
        assert str(caught.value).endswith('spec.timeZone: Invalid value: "Atlantis/Capital": unknown time zone '
                                          'Atlantis/Capital')
        body["spec"]["timeZone"] = "America/New_York"
        assert (await env.client.create(body))["spec"]["timeZone"] == "America/New_York"


async def test_job_and_cronjob_tables(nursery: Any, tmp_path: Any, autojump_clock: Any) -> None:
    srv = await start_in_process(nursery, tmp_path, api_domain="k8s.io")
    async with srv.client() as c:
        assert (await c.post("/apis/batch/v1/namespaces/default/jobs", json=job())).status_code == 201
        assert (await c.post("/apis/batch/v1/namespaces/default/cronjobs", json=cronjob())).status_code == 201
        jobs = (await c.get("/apis/batch/v1/namespaces/default/jobs", headers=TABLE)).json()
        assert [d["name"] for d in jobs["columnDefinitions"]] == [
            "Name", "Completions", "Duration", "Age", "Containers", "Images", "Selector"]
        assert jobs["rows"][0]["cells"][:3] == ["pi", "0/1", ""]
        crons = (await c.get("/apis/batch/v1/namespaces/default/cronjobs", headers=TABLE)).json()
        assert crons["rows"][0]["cells"][:6] == ["nightly", "0 3 * * *", "<none>", "False", 0, "<none>"]
