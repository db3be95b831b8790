"""batch/v1 Job rules on the strategy (Kubernetes v1.28: `SetDefaults_Job`, the job strategy's generated selector,
`ValidateJob`, `ValidateJobUpdate`, `printJob`), in kube-apiserver's words and field paths."""

from __future__ import annotations

import copy
from typing import Any

from runtime.machinery.options import Body, ParsedDeleteOptions
from runtime.machinery.scheme import Scheme
from runtime.machinery.wellknown import ORPHAN_FINALIZER

SCHEME = Scheme("k8s.io")
JOB = SCHEME.by_api_version_kind("batch/v1", "Job")
UID = "8f6c2d0e-1b3a-4c5d-9e7f-0a1b2c3d4e5f"


def job(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"template": {"spec": {"restartPolicy": "Never",
                                                  "containers": [{"name": "work", "image": "busybox:1.36"}]}}}
    base.update(spec)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi", "namespace": "ci"}, "spec": base}


def created(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` as a create makes it: decoded, defaulted, its uid set, prepared."""
    out, _ = JOB.strategy.decode(Body(obj), "Strict")
    JOB.strategy.default(out)
    out["metadata"]["uid"] = UID
    out["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    JOB.strategy.prepare_for_create(out)
    return out


def errors_of(obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in JOB.strategy.validate(obj)]


def update_errors(new: dict[str, Any], old: dict[str, Any]) -> list[str]:
    new = copy.deepcopy(new)
    JOB.strategy.default(new)  # as the registry does first
    JOB.strategy.prepare_for_update(new, old)
    return [str(e) for e in JOB.strategy.validate_update(new, old)]


def test_defaults_completions_parallelism_backoff_mode_suspend_manual_selector() -> None:
    spec = created(job())["spec"]
    assert (spec["completions"], spec["parallelism"], spec["backoffLimit"], spec["completionMode"],
            spec["suspend"], spec["manualSelector"]) == (1, 1, 6, "NonIndexed", False, False)
    assert "podReplacementPolicy" not in spec  # JobPodReplacementPolicy is off in 1.28


def test_parallelism_alone_leaves_completions_unset() -> None:
    spec = created(job(parallelism=3))["spec"]
    assert "completions" not in spec and spec["parallelism"] == 3


def test_completions_alone_defaults_parallelism_to_one() -> None:
    spec = created(job(completions=5))["spec"]
    assert (spec["completions"], spec["parallelism"]) == (5, 1)


def test_defaulting_twice_equals_once() -> None:
    out, _ = JOB.strategy.decode(Body(job()), "Strict")
    JOB.strategy.default(out)
    once = copy.deepcopy(out)
    JOB.strategy.default(out)
    assert out == once


def test_generated_selector_and_template_labels_after_the_uid() -> None:
    obj = created(job())
    assert obj["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": UID}}
    assert obj["spec"]["template"]["metadata"]["labels"] == {
        "batch.kubernetes.io/controller-uid": UID, "controller-uid": UID,
        "batch.kubernetes.io/job-name": "pi", "job-name": "pi"}
    assert errors_of(obj) == []


def test_a_job_without_labels_has_its_templates() -> None:
    obj = created(job())
    assert obj["metadata"]["labels"] == obj["spec"]["template"]["metadata"]["labels"]
    own = job()
    own["metadata"]["labels"] = {"team": "a"}
    assert created(own)["metadata"]["labels"] == {"team": "a"}


def test_manual_selector_is_kept_and_must_match_the_template() -> None:
    obj = job(manualSelector=True, selector={"matchLabels": {"app": "x"}})
    obj["spec"]["template"]["metadata"] = {"labels": {"app": "y"}}
    out = created(obj)
    assert out["spec"]["selector"] == {"matchLabels": {"app": "x"}}
    assert errors_of(out) == ['spec.template.metadata.labels: Invalid value: map[string]string{"app":"y"}: '
                              '`selector` does not match template `labels`']


def test_manual_selector_without_a_selector_is_required() -> None:
    out = created(job(manualSelector=True))
    assert "spec.selector: Required value" in errors_of(out)


def test_a_selector_not_generated_is_refused() -> None:
    obj = job(selector={"matchLabels": {"batch.kubernetes.io/controller-uid": "other"}})
    assert ('spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{'
            '"batch.kubernetes.io/controller-uid":"other"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: '
            '`selector` not auto-generated') in errors_of(created(obj))


def test_a_conflicting_generated_label_is_refused() -> None:
    obj = job()
    obj["spec"]["template"]["metadata"] = {"labels": {"job-name": "other"}}
    errs = errors_of(created(obj))
    assert any(e.startswith("spec.template.metadata.labels[job-name]: Invalid value: map[string]string{")
               and e.endswith(": must be 'pi'") for e in errs)


def test_restart_policy_always_is_required_on_failure_or_never() -> None:
    obj = job()
    obj["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    assert errors_of(created(obj)) == ['spec.template.spec.restartPolicy: Required value: valid values: '
                                       '"OnFailure", "Never"']


def test_restart_policy_unset_is_required() -> None:
    obj = job()
    del obj["spec"]["template"]["spec"]["restartPolicy"]
    assert 'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"' in \
        errors_of(created(obj))


def test_counts_must_not_be_negative() -> None:
    out = created(job(parallelism=-1, completions=-2, activeDeadlineSeconds=-3, backoffLimit=-4))
    assert errors_of(out) == [
        "spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
        "spec.completions: Invalid value: -2: must be greater than or equal to 0",
        "spec.activeDeadlineSeconds: Invalid value: -3: must be greater than or equal to 0",
        "spec.backoffLimit: Invalid value: -4: must be greater than or equal to 0"]


def test_completion_mode_values() -> None:
    assert errors_of(created(job(completionMode="Sometimes"))) == [
        'spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"']


def test_indexed_needs_completions_and_bounded_parallelism() -> None:
    errs = errors_of(created(job(completionMode="Indexed", parallelism=100001)))
    assert errs == ["spec.completions: Required value: when completion mode is Indexed",
                    "spec.parallelism: Invalid value: 100001: must be less than or equal to 100000 when completion "
                    "mode is Indexed"]


def test_indexed_name_with_its_last_index_is_a_dns_label() -> None:
    obj = job(completionMode="Indexed", completions=10)
    obj["metadata"]["name"] = "a" * 62
    assert f'metadata.name: Invalid value: "{"a" * 62}": will not able to create pod with invalid DNS label: ' \
           f'{"a" * 62}-9' in errors_of(created(obj))


def test_pod_failure_policy_needs_restart_policy_never() -> None:
    obj = job(podFailurePolicy={"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1]}}]})
    obj["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    assert errors_of(created(obj)) == ['spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" '
                                       'is supported when podFailurePolicy is specified']


def test_pod_failure_policy_rules() -> None:
    obj = job(podFailurePolicy={"rules": [{"action": "Explode", "onExitCodes": {"operator": "In", "values": [0, 2, 1]}},
                                          {"action": "Ignore"}]})
    assert errors_of(created(obj)) == [
        'spec.podFailurePolicy.rules[0].action: Unsupported value: "Explode": supported values: "Count", '
        '"FailIndex", "FailJob", "Ignore"',
        "spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator",
        "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []int32{0, 2, 1}: must be ordered",
        "spec.podFailurePolicy.rules[1]: Invalid value: specifying one of OnExitCodes and OnPodConditions is "
        "required"]


def test_on_pod_conditions_status_defaults_to_true() -> None:
    obj = job(podFailurePolicy={"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]})
    assert created(obj)["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"] == "True"


def test_backoff_limit_per_index_is_dropped_while_its_gate_is_off() -> None:
    out = created(job(completionMode="Indexed", completions=2, backoffLimitPerIndex=1, maxFailedIndexes=1))
    assert "backoffLimitPerIndex" not in out["spec"] and "maxFailedIndexes" not in out["spec"]


def test_status_counts_must_not_be_negative() -> None:
    out = created(job())
    out["status"] = {"active": -1}
    assert errors_of(out) == ["status.active: Invalid value: -1: must be greater than or equal to 0"]


def test_create_clears_the_status() -> None:
    obj = job()
    obj["status"] = {"succeeded": 1}
    assert "status" not in created(obj)


def test_selector_is_immutable() -> None:
    old = created(job())
    new = copy.deepcopy(old)
    new["spec"]["selector"]["matchLabels"]["extra"] = "x"
    new["spec"]["template"]["metadata"]["labels"]["extra"] = "x"
    errs = update_errors(new, old)
    assert any(e.startswith("spec.selector: Invalid value: v1.LabelSelector{") and e.endswith("field is immutable")
               for e in errs)


def test_completions_are_immutable() -> None:
    old = created(job())
    new = copy.deepcopy(old)
    new["spec"]["completions"] = 3
    assert update_errors(new, old) == ["spec.completions: Invalid value: 3: field is immutable"]


def test_indexed_completions_change_with_parallelism_only() -> None:
    old = created(job(completionMode="Indexed", completions=2, parallelism=2))
    new = copy.deepcopy(old)
    new["spec"]["completions"] = 3
    assert update_errors(new, old) == ["spec.completions: Invalid value: 3: can only be modified in tandem with "
                                       "spec.parallelism"]
    new["spec"]["parallelism"] = 3
    assert update_errors(new, old) == []


def test_template_is_immutable() -> None:
    old = created(job())
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox:1.37"
    errs = update_errors(new, old)
    assert len(errs) == 1 and errs[0].startswith("spec.template: Invalid value: ") and \
        errs[0].endswith(": field is immutable")


def test_suspended_job_never_started_may_change_its_scheduling_directives() -> None:
    old = created(job(suspend=True))
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["nodeSelector"] = {"disk": "ssd"}
    new["spec"]["template"]["spec"]["tolerations"] = [{"key": "k", "operator": "Exists"}]
    new["spec"]["template"]["metadata"]["annotations"] = {"a": "b"}
    assert update_errors(new, old) == []
    started = copy.deepcopy(old)
    started["status"] = {"startTime": "2026-01-01T00:00:00Z"}
    assert update_errors(new, started)[0].endswith("field is immutable")


def test_a_running_job_may_not_change_its_node_selector() -> None:
    old = created(job())
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["nodeSelector"] = {"disk": "ssd"}
    assert update_errors(new, old)[0].endswith("field is immutable")


def test_suspend_may_change() -> None:
    old = created(job())
    new = copy.deepcopy(old)
    new["spec"]["suspend"] = True
    assert update_errors(new, old) == []


def test_completion_mode_is_immutable() -> None:
    old = created(job(completions=2))
    new = copy.deepcopy(old)
    new["spec"]["completionMode"] = "Indexed"
    assert 'spec.completionMode: Invalid value: "Indexed": field is immutable' in update_errors(new, old)


def test_generation_counts_spec_changes_not_status() -> None:
    assert JOB.strategy.counts_generation and JOB.strategy.status_subresource
    old = created(job())
    old["metadata"]["generation"] = 1
    new = copy.deepcopy(old)
    new["spec"]["suspend"] = True
    JOB.strategy.default(new)  # as the registry does first
    JOB.strategy.prepare_for_update(new, old)
    assert new["metadata"]["generation"] == 2
    status = copy.deepcopy(old)
    status["status"] = {"active": 1}
    JOB.strategy.default(status)  # as the registry does first
    JOB.strategy.prepare_for_update(status, old, JOB.strategy.subresources["status"])
    assert status["metadata"]["generation"] == 1 and status["status"] == {"active": 1}


def test_main_resource_write_keeps_the_status() -> None:
    old = created(job())
    old["status"] = {"succeeded": 1}
    new = copy.deepcopy(old)
    new["status"] = {"succeeded": 5}
    JOB.strategy.default(new)  # as the registry does first
    JOB.strategy.prepare_for_update(new, old)
    assert new["status"] == {"succeeded": 1}


def test_put_of_a_missing_job_does_not_create() -> None:
    assert JOB.strategy.allow_create_on_update is False


def test_name_not_a_dns_label_warns() -> None:
    obj = created(job())
    obj["metadata"]["name"] = "pi.v2"
    assert JOB.strategy.warnings(None, obj, "m") == [
        "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS "
        "label is recommended: [a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
        "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')]"]


def test_delete_without_propagation_orphans_the_pods() -> None:
    assert JOB.strategy.deletion_finalizers([], ParsedDeleteOptions()) == [ORPHAN_FINALIZER]
    assert JOB.strategy.deletion_finalizers([], ParsedDeleteOptions(propagation_policy="Background")) == []


def test_printer_columns_and_cells() -> None:
    names = [c["name"] for c in JOB.strategy.columns.definitions]
    wide = [c["name"] for c in JOB.strategy.columns.definitions if c["priority"] == 1]
    assert names == ["Name", "Completions", "Duration", "Age", "Containers", "Images", "Selector"]
    assert wide == ["Containers", "Images", "Selector"]
    obj = created(job(parallelism=3))
    obj["status"] = {"succeeded": 1, "startTime": "2026-01-01T00:00:00Z", "completionTime": "2026-01-01T00:01:05Z"}
    cells = JOB.strategy.columns.cells(obj)
    assert cells[1:3] == ["1/1 of 3", "65s"]
    assert cells[4:] == ["work", "busybox:1.36", f"batch.kubernetes.io/controller-uid={UID}"]
    assert JOB.strategy.columns.cells(created(job()))[1:3] == ["0/1", ""]


def test_field_selector_status_successful() -> None:
    assert "status.successful" in JOB.strategy.field_labels
    obj = created(job())
    assert JOB.strategy.selectable_fields(obj)["status.successful"] == "0"
    obj["status"] = {"succeeded": 2}
    assert JOB.strategy.selectable_fields(obj) == {"metadata.name": "pi", "metadata.namespace": "ci",
                                                   "status.successful": "2"}


def test_indexed_job_too_big_to_track_warns() -> None:
    obj = created(job(completionMode="Indexed", completions=100001, parallelism=10001))
    assert JOB.strategy.warnings(None, obj, "m") == [
        "spec: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, "
        "Kubernetes might not be able to track completedIndexes when a big number of indexes fail"]


def test_an_empty_map_in_the_template_is_no_change() -> None:
    old = created(job())
    new = copy.deepcopy(old)
    new["spec"]["template"]["metadata"]["annotations"] = {}
    new["spec"]["template"]["spec"]["containers"][0]["env"] = []
    assert update_errors(new, old) == []


def test_pod_failure_policy_has_at_most_20_rules() -> None:
    rule = {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1]}}
    obj = job(podFailurePolicy={"rules": [dict(rule) for _ in range(21)]})
    obj["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    assert "spec.podFailurePolicy.rules: Too many: 21: must have at most 20 items" in errors_of(created(obj))
