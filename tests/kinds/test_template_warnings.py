"""A pod template's warnings (Kubernetes' GetWarningsForPodTemplate) reach the writer of every kind that holds
one, at the template's path: a Deployment's `spec.template`, a Job's, a CronJob's `spec.jobTemplate.spec.template`;
on create, and on an update that changes the spec."""

from __future__ import annotations

from typing import Any

from runtime.machinery.scheme import Scheme
from tests.support.workloads import sample

SCHEME = Scheme("k8s.io")
# A deprecated node label in a template's nodeSelector earns a warning (warningsForPodSpecAndMeta).
DEPRECATED = {"beta.kubernetes.io/os": "linux"}


def _with_selector(obj: dict[str, Any], holder: dict[str, Any]) -> dict[str, Any]:
    holder["spec"]["nodeSelector"] = dict(DEPRECATED)
    return obj


def _warnings(obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    rt = SCHEME.by_api_version_kind(obj["apiVersion"], obj["kind"])
    return rt.strategy.warnings(old, obj, "test")


def test_a_templates_warnings_are_given_at_its_path_on_create() -> None:
    deploy = sample("apps/v1", "Deployment")
    job = sample("batch/v1", "Job")
    cron = sample("batch/v1", "CronJob")
    _with_selector(deploy, deploy["spec"]["template"])
    _with_selector(job, job["spec"]["template"])
    _with_selector(cron, cron["spec"]["jobTemplate"]["spec"]["template"])
    assert any(w.startswith("spec.template.spec.nodeSelector[beta.kubernetes.io/os]") for w in _warnings(deploy))
    assert any(w.startswith("spec.template.spec.nodeSelector[beta.kubernetes.io/os]") for w in _warnings(job))
    assert any(w.startswith("spec.jobTemplate.spec.template.spec.nodeSelector[beta.kubernetes.io/os]")
               for w in _warnings(cron))


def test_a_templates_warnings_are_given_on_an_update_only_when_the_spec_changed() -> None:
    deploy = _with_selector(sample("apps/v1", "Deployment"), sample("apps/v1", "Deployment")["spec"]["template"])
    deploy["spec"]["template"]["spec"]["nodeSelector"] = dict(DEPRECATED)
    old = {**deploy, "metadata": {**deploy["metadata"], "generation": 1}}
    same = {**deploy, "metadata": {**deploy["metadata"], "generation": 1}}
    changed = {**deploy, "metadata": {**deploy["metadata"], "generation": 2}}
    assert _warnings(same, old) == []
    assert any("beta.kubernetes.io/os" in w for w in _warnings(changed, old))
