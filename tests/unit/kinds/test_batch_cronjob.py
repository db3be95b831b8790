"""batch/v1 CronJob rules on the strategy (Kubernetes v1.28: `SetDefaults_CronJob`, `ValidateCronJobCreate`,
`ValidateCronJobUpdate`, robfig/cron v3's `ParseStandard`, `printCronJob`), in kube-apiserver's words."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from runtime.machinery.options import Body
from runtime.machinery.scheme import Scheme
from runtime.server.kinds.batch.cronschedule import schedule_error

SCHEME = Scheme("k8s.io")
CRON = SCHEME.by_api_version_kind("batch/v1", "CronJob")


def cronjob(name: str = "nightly", **spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
        "restartPolicy": "OnFailure", "containers": [{"name": "work", "image": "busybox:1.36"}]}}}}}
    base.update(spec)
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name, "namespace": "ci"}, "spec": base}


def created(obj: dict[str, Any]) -> dict[str, Any]:
    out, _ = CRON.strategy.decode(Body(obj), "Strict")
    CRON.strategy.default(out)
    out["metadata"]["uid"] = "u"
    out["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    CRON.strategy.prepare_for_create(out)
    return out


def errors_of(obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in CRON.strategy.validate(created(obj))]


def update_errors(new: dict[str, Any], old: dict[str, Any]) -> list[str]:
    new = copy.deepcopy(new)
    CRON.strategy.default(new)  # as the registry does first
    CRON.strategy.prepare_for_update(new, old)
    return [str(e) for e in CRON.strategy.validate_update(new, old)]


def test_defaults_concurrency_suspend_history_limits() -> None:
    spec = created(cronjob())["spec"]
    assert (spec["concurrencyPolicy"], spec["suspend"], spec["successfulJobsHistoryLimit"],
            spec["failedJobsHistoryLimit"]) == ("Allow", False, 3, 1)


def test_the_job_template_keeps_no_job_defaults() -> None:
    job_spec = created(cronjob())["spec"]["jobTemplate"]["spec"]
    assert "backoffLimit" not in job_spec and "completions" not in job_spec and "selector" not in job_spec


def test_a_valid_cronjob_has_no_errors() -> None:
    assert errors_of(cronjob()) == []


def test_schedule_is_required() -> None:
    assert errors_of(cronjob(schedule="")) == ["spec.schedule: Required value"]


@pytest.mark.parametrize(("schedule", "message"), [
    ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
    ("60 * * * *", "end of range (60) above maximum (59): 60"),
    ("* 24 * * *", "end of range (24) above maximum (23): 24"),
    ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("* * * 13 *", "end of range (13) above maximum (12): 13"),
    ("* * * * 7", "end of range (7) above maximum (6): 7"),
    ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
    ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
    ("*/2/3 * * * *", "too many slashes: */2/3"),
    ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
    ("@fortnightly", "unrecognized descriptor: @fortnightly"),
    ("@every 5", 'failed to parse duration @every 5: time: missing unit in duration "5"'),
    ("@every 5y", 'failed to parse duration @every 5y: time: unknown unit "y" in duration "5y"'),
])
def test_schedule_parse_errors_are_robfig_crons(schedule: str, message: str) -> None:
    assert errors_of(cronjob(schedule=schedule)) == [f'spec.schedule: Invalid value: "{schedule}": {message}']


@pytest.mark.parametrize("schedule", ["0 0 * * *", "*/15 9-17 * * MON-FRI", "0 12 1 jan,jul ?", "5,10 * * * sun",
                                      "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight",
                                      "@hourly", "@every 1h30m", "30 2 * * 1/2"])
def test_standard_schedules_and_descriptors_parse(schedule: str) -> None:
    assert schedule_error(schedule) is None


def test_tz_in_the_schedule_is_refused_on_create() -> None:
    assert errors_of(cronjob(schedule="TZ=UTC 0 0 * * *")) == [
        'spec.schedule: Invalid value: "TZ=UTC 0 0 * * *": cannot use TZ or CRON_TZ in schedule, use timeZone '
        'field instead']


def test_a_bad_tz_in_the_schedule_is_the_parsers_error() -> None:
    assert errors_of(cronjob(schedule="CRON_TZ=Nowhere/Land 0 0 * * *"))[0] == (
        'spec.schedule: Invalid value: "CRON_TZ=Nowhere/Land 0 0 * * *": provided bad location Nowhere/Land: '
        'unknown time zone Nowhere/Land')


def test_tz_kept_on_update_of_a_cronjob_that_had_it_but_not_with_time_zone() -> None:
    old = created(cronjob())
    old["spec"]["schedule"] = "TZ=UTC 0 0 * * *"
    new = copy.deepcopy(old)
    new["spec"]["schedule"] = "TZ=UTC 0 1 * * *"
    assert update_errors(new, old) == []
    new["spec"]["timeZone"] = "UTC"
    assert update_errors(new, old) == ['spec.schedule: Invalid value: "TZ=UTC 0 1 * * *": cannot use both timeZone '
                                       'field and TZ or CRON_TZ in schedule']


def test_time_zone_must_be_known() -> None:
    assert errors_of(cronjob(timeZone="Mars/Olympus")) == [
        'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus']
    assert errors_of(cronjob(timeZone="Europe/Berlin")) == []


def test_time_zone_local_and_empty_are_refused() -> None:
    assert errors_of(cronjob(timeZone="Local")) == [
        'spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as defined in '
        'https://www.iana.org/time-zones']
    assert errors_of(cronjob(timeZone="")) == [
        'spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string']


def test_time_zone_with_bad_characters_is_unknown() -> None:
    assert errors_of(cronjob(timeZone="../etc/passwd")) == [
        'spec.timeZone: Invalid value: "../etc/passwd": unknown time zone ../etc/passwd']


def test_name_at_most_52_characters_on_create_only() -> None:
    name = "n" * 53
    assert errors_of(cronjob(name=name)) == [f'metadata.name: Invalid value: "{name}": must be no more than 52 '
                                             'characters']
    old = created(cronjob(name=name))
    new = copy.deepcopy(old)
    new["spec"]["suspend"] = True
    assert update_errors(new, old) == []


def test_concurrency_policy_values() -> None:
    assert errors_of(cronjob(concurrencyPolicy="Sometimes")) == [
        'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"']


def test_starting_deadline_and_history_limits_not_negative() -> None:
    assert errors_of(cronjob(startingDeadlineSeconds=-1, successfulJobsHistoryLimit=-1, failedJobsHistoryLimit=-2)) \
        == ["spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0",
            "spec.successfulJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0",
            "spec.failedJobsHistoryLimit: Invalid value: -2: must be greater than or equal to 0"]


def test_job_template_follows_the_jobs_rules_at_its_path() -> None:
    obj = cronjob()
    obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    obj["spec"]["jobTemplate"]["spec"]["parallelism"] = -1
    assert errors_of(obj) == [
        "spec.jobTemplate.spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
        'spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"']


def test_job_template_may_not_set_a_selector_or_manual_selector() -> None:
    obj = cronjob()
    obj["spec"]["jobTemplate"]["spec"].update(selector={"matchLabels": {"a": "b"}}, manualSelector=True)
    assert errors_of(obj) == [
        'spec.jobTemplate.spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"a":"b"}, '
        'MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` will be auto-generated',
        'spec.jobTemplate.spec.manualSelector: Unsupported value: true: supported values: "nil", "false"']


def test_generation_counted_and_status_kept_to_its_subresource() -> None:
    assert CRON.strategy.counts_generation and CRON.strategy.status_subresource
    old = created(cronjob())
    old["metadata"]["generation"] = 1
    old["status"] = {"lastScheduleTime": "2026-01-01T00:05:00Z"}
    new = copy.deepcopy(old)
    new["spec"]["schedule"] = "0 * * * *"
    new["status"] = {}
    CRON.strategy.default(new)  # as the registry does first
    CRON.strategy.prepare_for_update(new, old)
    assert new["metadata"]["generation"] == 2 and new["status"] == old["status"]


def test_printer_columns_and_cells() -> None:
    defs = CRON.strategy.columns.definitions
    assert [c["name"] for c in defs] == ["Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule", "Age",
                                         "Containers", "Images", "Selector"]
    assert [c["name"] for c in defs if c["priority"] == 1] == ["Containers", "Images", "Selector"]
    cells = CRON.strategy.columns.cells(created(cronjob()))
    assert cells[1:6] == ["*/5 * * * *", "<none>", "False", 0, "<none>"]
    assert cells[7:] == ["work", "busybox:1.36", "<none>"]


def test_warnings_name_not_a_dns_label_and_tz_kept_on_update() -> None:
    obj = created(cronjob(name="nightly.v2"))
    assert CRON.strategy.warnings(None, obj, "m")[0].startswith("metadata.name: this is used in Pod names")
    old = created(cronjob())
    old["spec"]["schedule"] = "TZ=UTC 0 0 * * *"
    old["metadata"]["generation"] = 1
    new = copy.deepcopy(old)
    new["spec"]["schedule"] = "TZ=UTC 0 1 * * *"
    CRON.strategy.default(new)  # as the registry does first
    CRON.strategy.prepare_for_update(new, old)
    assert CRON.strategy.warnings(old, new, "m") == [
        "CRON_TZ or TZ used in spec.spec.schedule is not officially supported, see "
        "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details"]
