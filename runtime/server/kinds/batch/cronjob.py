"""`batch/v1` CronJob: Jobs on a schedule, as kube-apiserver v1.28 serves it with no cronjob controller
(`pkg/apis/batch/v1/defaults.go`, `pkg/apis/batch/validation`, `pkg/registry/batch/cronjob/strategy.go`).

- Defaults (`SetDefaults_CronJob`): concurrencyPolicy Allow, suspend false, successfulJobsHistoryLimit 3,
  failedJobsHistoryLimit 1; the job template's pod template has the pod defaults (the Job's own defaults are
  not applied to a template, as Kubernetes' generated defaulters do not).
- Create: the status is cleared, generation 1, counted on spec changes.
- Validation (`ValidateCronJobCreate`): names are DNS subdomains of at most 52 characters (the controller
  appends 11 to name its Jobs); a schedule is required and parses as robfig/cron's standard spec
  (`runtime.server.kinds.batch.cronschedule`); `TZ=` or `CRON_TZ=` in it is refused on create, and on
  update unless the old schedule had one (then not with timeZone); timeZone, when set and changed, is an
  IANA zone, not empty and not `Local`; startingDeadlineSeconds and the history limits are not negative;
  concurrencyPolicy is Allow, Forbid or Replace; the job template's spec follows the Job's rules at
  `spec.jobTemplate.spec`, with no selector and no manualSelector (both are generated per Job).
- Warnings: a name that is not a DNS label (create); a changed spec whose schedule keeps `TZ` (update).
- Status is written by `status` only; a PUT of a missing CronJob is 404.
- `kubectl get`: NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE, `-o wide` CONTAINERS IMAGES
  SELECTOR.
"""

from __future__ import annotations

import re
from typing import Any

from runtime.machinery.validation import FieldError, validate_object_meta
from runtime.machinery.validation.fielderrors import invalid, nonnegative, not_supported, required
from runtime.server.kinds.apps.gosyntax import go_label_selector
from runtime.server.kinds.base import Strategy
from runtime.server.kinds.batch.cronschedule import schedule_error, zone_error
from runtime.server.kinds.batch.job import WIDE_COLUMNS
from runtime.server.kinds.batch.jobspec import (
    container_cells, drop_disabled_fields, job_spec_errors, selector_cell,
)
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column
from runtime.server.kinds.pods.podspec import default_pod_template, pod_name_warnings, pod_template_warnings
from runtime.server.kinds.subresources import StatusSubresource, Subresource

__all__ = ["CronJobStrategy"]

#: 63 (a Job's name, a DNS label) less the 11 characters the controller appends (`-<minutes>`).
_MAX_NAME = 52
_POLICIES = ["Allow", "Forbid", "Replace"]
_ZONE_PART = re.compile(r"[A-Za-z.\-_0-9+]{1,14}")

_SCHEDULE_DOC = "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."
_ZONE_DOC = ("The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_"
             "zones. If not specified, this will default to the time zone of the kube-controller-manager process. "
             "The set of valid time zone names and the time zone offset is loaded from the system-wide time zone "
             "database by the API server during CronJob validation and the controller manager during execution. "
             "If no system-wide time zone database can be found a bundled version of the database is used instead. "
             "If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in host "
             "configuration, the controller will stop creating new new Jobs and will create a system event with the "
             "reason UnknownTimeZone. More information can be found in https://kubernetes.io/docs/concepts/"
             "workloads/controllers/cron-jobs/#time-zones")
_SUSPEND_DOC = ("This flag tells the controller to suspend subsequent executions, it does not apply to already "
                "started executions.  Defaults to false.")
_ACTIVE_DOC = "A list of pointers to currently running jobs."
_LAST_DOC = "Information when was the last time the job was successfully scheduled."


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta, spec, status = obj["metadata"], obj.get("spec") or {}, obj.get("status") or {}
    job_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    names, images = container_cells(job_spec.get("template"))
    suspend = spec.get("suspend")
    last = status.get("lastScheduleTime")
    return [meta.get("name", ""), spec.get("schedule", ""), spec.get("timeZone", "<none>"),
            "<unset>" if suspend is None else ("True" if suspend else "False"), len(status.get("active") or []),
            age(last) if last else "<none>", age(meta.get("creationTimestamp")), names, images,
            selector_cell(job_spec.get("selector"))]


def _schedule_errors(schedule: str, zone: str | None, allow_tz: bool) -> list[FieldError]:
    """`validateScheduleFormat`: robfig's standard spec, and `TZ` only where the old schedule had it."""
    errs: list[FieldError] = []
    problem = schedule_error(schedule)
    if problem:
        errs.append(invalid("spec.schedule", schedule, problem))
    if "TZ" in schedule:
        if not allow_tz:
            errs.append(invalid("spec.schedule", schedule,
                                "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
        elif zone is not None:
            errs.append(invalid("spec.schedule", schedule,
                                "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
    return errs


def _zone_errors(zone: str | None) -> list[FieldError]:
    """`validateTimeZone`: an explicit IANA zone."""
    if zone is None:
        return []
    if not zone:
        return [invalid("spec.timeZone", zone, "timeZone must be nil or non-empty string")]
    for part in zone.split("/"):
        if part in (".", "..") or part.startswith("-") or not _ZONE_PART.fullmatch(part):
            return [invalid("spec.timeZone", zone, f"unknown time zone {zone}")]
    errs: list[FieldError] = []
    if zone.lower() == "local":
        errs.append(invalid("spec.timeZone", zone,
                            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
    problem = zone_error(zone)
    if problem:
        errs.append(invalid("spec.timeZone", zone, problem))
    return errs


def _spec_errors(spec: dict[str, Any], old_spec: dict[str, Any] | None) -> list[FieldError]:
    """`validateCronJobSpec` (`old_spec`: an update's)."""
    errs: list[FieldError] = []
    schedule, zone = spec.get("schedule") or "", spec.get("timeZone")
    if not schedule:
        errs.append(required("spec.schedule"))
    else:
        errs += _schedule_errors(schedule, zone, "TZ" in (old_spec or {}).get("schedule", ""))
    errs += nonnegative(spec.get("startingDeadlineSeconds"), "spec.startingDeadlineSeconds")
    if old_spec is None or old_spec.get("timeZone") != zone:
        errs += _zone_errors(zone)
    policy = spec.get("concurrencyPolicy") or ""
    if not policy:
        errs.append(required("spec.concurrencyPolicy"))
    elif policy not in _POLICIES:
        errs.append(not_supported("spec.concurrencyPolicy", policy, _POLICIES))
    job_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    errs += job_spec_errors(job_spec, "spec.jobTemplate.spec")
    if job_spec.get("selector") is not None:
        errs.append(invalid("spec.jobTemplate.spec.selector", go_label_selector(job_spec["selector"]),
                            "`selector` will be auto-generated"))
    if job_spec.get("manualSelector"):
        errs.append(not_supported("spec.jobTemplate.spec.manualSelector", True, ["nil", "false"]))
    for name in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        errs += nonnegative(spec.get(name), f"spec.{name}")
    return errs


class CronJobStrategy(Strategy):
    """See the module doc."""

    name_rule = "dns-subdomain"
    counts_generation = True
    allow_create_on_update = False
    subresources = {"status": StatusSubresource()}
    columns = Columns((NAME_COLUMN, column("Schedule", _SCHEDULE_DOC), column("Timezone", _ZONE_DOC),
                       column("Suspend", _SUSPEND_DOC, type_="boolean"), column("Active", _ACTIVE_DOC, type_="integer"),
                       column("Last Schedule", _LAST_DOC), AGE_COLUMN, *WIDE_COLUMNS), _cells)

    def default(self, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})
        if not spec.get("concurrencyPolicy"):
            spec["concurrencyPolicy"] = "Allow"
        spec.setdefault("suspend", False)
        spec.setdefault("successfulJobsHistoryLimit", 3)
        spec.setdefault("failedJobsHistoryLimit", 1)
        template = ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template")
        if isinstance(template, dict):
            default_pod_template(template)

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        job_spec = (obj.get("spec") or {}).get("jobTemplate", {}).get("spec")
        if isinstance(job_spec, dict):
            drop_disabled_fields(job_spec, None)
        obj.pop("status", None)
        super().prepare_for_create(obj)

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any],
                           subresource: Subresource | None = None) -> None:
        job_spec = new["spec"].get("jobTemplate", {}).get("spec")
        if isinstance(job_spec, dict):
            drop_disabled_fields(job_spec, ((old.get("spec") or {}).get("jobTemplate") or {}).get("spec") or {})
        super().prepare_for_update(new, old, subresource)

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        errs = _spec_errors(obj.get("spec") or {}, None)
        name = obj["metadata"].get("name", "")
        if len(name) > _MAX_NAME:
            errs.append(invalid("metadata.name", name, f"must be no more than {_MAX_NAME} characters"))
        return errs

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        # No name length rule on update: a CronJob named before the rule may still change and go.
        meta = validate_object_meta(new["metadata"], namespaced=True, name_rule=self.name_rule)
        return meta + _spec_errors(new.get("spec") or {}, old.get("spec") or {})

    def warnings(self, old: dict[str, Any] | None, new: dict[str, Any], manager: str) -> list[str]:
        template = (((new.get("spec") or {}).get("jobTemplate") or {}).get("spec") or {}).get("template") or {}
        template_warnings = pod_template_warnings(template, "spec.jobTemplate.spec.template")
        if old is None:
            return pod_name_warnings(new["metadata"].get("name", "")) + template_warnings
        changed = new["metadata"].get("generation") != old["metadata"].get("generation")
        if not changed:
            return []
        if "TZ" in (new.get("spec") or {}).get("schedule", ""):
            # Kubernetes' words, its path included (`spec.spec.schedule`).
            template_warnings.append("CRON_TZ or TZ used in spec.spec.schedule is not officially supported, see "
                                     "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more "
                                     "details")
        return template_warnings
