"""`batch/v1` Job: pods run to completion, as kube-apiserver v1.28 serves it with no job controller behind it
(`pkg/apis/batch/v1/defaults.go`, `pkg/apis/batch/validation`, `pkg/registry/batch/job/strategy.go`).

- Defaults (`SetDefaults_Job`): the spec's (`runtime.server.kinds.batch.jobspec`), manualSelector false,
  and the Job's labels are its template's when it has none (Kubernetes applies this default on every read
  from storage too, so they carry the generated labels below).
- Create (`PrepareForCreate`, after the server set the uid): unless manualSelector, the generated selector
  `matchLabels: {batch.kubernetes.io/controller-uid: <uid>}` and the template's labels
  `batch.kubernetes.io/controller-uid`, `controller-uid` (the uid), `batch.kubernetes.io/job-name`,
  `job-name` (the name), each unless already set; the status is cleared; the feature-gated fields are dropped;
  generation 1, counted on spec changes.
- Validation (`ValidateJob`): names are DNS subdomains; the generated selector's labels are on the template
  and the selector matches them ("`selector` not auto-generated"); a selector is required and must match the
  template's labels; the spec's rules (`job_spec_errors`); an Indexed Job's name with its last index is a
  DNS label.
- Update (`ValidateJobUpdate`): selector, completionMode, podFailurePolicy and backoffLimitPerIndex are
  immutable; completions too, except an Indexed Job's changed in tandem with parallelism; the template is
  immutable, except, while the Job is suspended and has never started, its node affinity, node selector,
  tolerations, scheduling gates, labels and annotations. The prefixed labels are required on update only of
  a Job that had them.
- Status (`ValidateJobStatus`): active, succeeded, failed, ready not negative; written by `status` only.
- Warnings: a name that is not a DNS label; an Indexed Job too big to track (`job_spec_warnings`).
- A PUT of a missing Job is 404; a delete without a propagation policy orphans the Job's pods (batch/v1's
  legacy default).
- Field selectors: `metadata.name`, `metadata.namespace` and `status.successful` (the succeeded count,
  `JobToSelectableFields`); another is `field label "<label>" not supported for Job` (batch/v1's conversion).
- `kubectl get`: NAME COMPLETIONS DURATION AGE, `-o wide` CONTAINERS IMAGES SELECTOR.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from runtime.machinery.options import ParsedDeleteOptions
from runtime.machinery.selectors import SelectorError, label_selector_from_dict
from runtime.machinery.validation import FieldError, label_selector_errors, validate_object_meta
from runtime.machinery.validation.fielderrors import invalid, nonnegative, required
from runtime.machinery.validation.names import dns1123_label_errors
from runtime.machinery.wellknown import FOREGROUND_FINALIZER, ORPHAN_FINALIZER
from runtime.server.kinds.apps.gosyntax import go_label_selector, go_string_map
from runtime.server.kinds.base import Strategy
from runtime.server.kinds.batch.jobspec import (
    container_cells, default_job_spec, drop_disabled_fields, immutable, job_spec_errors, job_spec_warnings,
    selector_cell,
)
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column
from runtime.server.kinds.pods.podspec import pod_name_warnings, pod_template_warnings
from runtime.server.kinds.subresources import StatusSubresource, Subresource

__all__ = ["JobStrategy", "CONTROLLER_UID_LABEL", "JOB_NAME_LABEL", "WIDE_COLUMNS", "job_labels_errors"]

CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
_LEGACY_CONTROLLER_UID = "controller-uid"
_LEGACY_JOB_NAME = "job-name"
_SCHEDULING_FIELDS = ("nodeSelector", "tolerations", "schedulingGates")

_SUCCEEDED_DOC = "The number of pods which reached phase Succeeded."
_SELECTOR_DOC = ("A label query over pods that should match the pod count. Normally, the system sets this field for "
                 "you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/"
                 "#label-selectors")
#: The wide columns of a Job and a CronJob (printers.go).
WIDE_COLUMNS = (column("Containers", "Names of each container in the template.", priority=1),
                column("Images", "Images referenced by each container in the template.", priority=1),
                column("Selector", _SELECTOR_DOC, priority=1))


def _parse_time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)


def _completions(spec: dict[str, Any], succeeded: int) -> str:
    if spec.get("completions") is not None:
        return f"{succeeded}/{spec['completions']}"
    parallelism = spec.get("parallelism") or 0
    return f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"


def _duration(status: dict[str, Any]) -> str:
    start, done = status.get("startTime"), status.get("completionTime")
    if not start:
        return ""
    try:
        return age(start, _parse_time(done) if done else None)
    except ValueError:
        return "<invalid>"


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta, spec, status = obj["metadata"], obj.get("spec") or {}, obj.get("status") or {}
    names, images = container_cells(spec.get("template"))
    return [meta.get("name", ""), _completions(spec, status.get("succeeded") or 0), _duration(status),
            age(meta.get("creationTimestamp")), names, images, selector_cell(spec.get("selector"))]


def _has_label(template_meta: dict[str, Any], key: str, value: str) -> list[FieldError]:
    """`ValidateHasLabel` at `spec.template.metadata`."""
    labels = template_meta.get("labels") or {}
    if key not in labels:
        return [required(f"spec.template.metadata.labels[{key}]", f"must be '{value}'")]
    if labels[key] != value:
        return [invalid(f"spec.template.metadata.labels[{key}]", go_string_map(labels), f"must be '{value}'")]
    return []


def job_labels_errors(obj: dict[str, Any], prefixed: bool) -> list[FieldError]:
    """`validateGeneratedSelector`: the generated labels are on the template, and the selector selects them."""
    spec, meta = obj.get("spec") or {}, obj["metadata"]
    if spec.get("manualSelector") or spec.get("selector") is None:
        return []
    uid, name = meta.get("uid", ""), meta.get("name", "")
    errs = [] if uid else [required("metadata.uid")]
    template_meta = (spec.get("template") or {}).get("metadata") or {}
    errs += _has_label(template_meta, _LEGACY_CONTROLLER_UID, uid) + _has_label(template_meta, _LEGACY_JOB_NAME, name)
    expected = {_LEGACY_CONTROLLER_UID: uid, _LEGACY_JOB_NAME: name}
    if prefixed:
        errs += _has_label(template_meta, CONTROLLER_UID_LABEL, uid) + _has_label(template_meta, JOB_NAME_LABEL, name)
        expected.update({CONTROLLER_UID_LABEL: uid, JOB_NAME_LABEL: name})
    try:
        if not label_selector_from_dict(spec["selector"]).matches(expected):
            errs.append(invalid("spec.selector", go_label_selector(spec["selector"]), "`selector` not auto-generated"))
    except SelectorError:
        pass  # the selector's own validation says why
    return errs


def _generate_selector(obj: dict[str, Any]) -> None:
    """`generateSelector`: the labels that tie the Job's pods to it, and the selector of them."""
    meta, spec = obj["metadata"], obj.setdefault("spec", {})
    template = spec.setdefault("template", {})
    labels = template.setdefault("metadata", {}).setdefault("labels", {})
    for key in (_LEGACY_JOB_NAME, JOB_NAME_LABEL):
        labels.setdefault(key, meta.get("name", ""))
    for key in (_LEGACY_CONTROLLER_UID, CONTROLLER_UID_LABEL):
        labels.setdefault(key, meta.get("uid", ""))
    selector = spec.get("selector") or {}
    spec["selector"] = selector
    selector.setdefault("matchLabels", {}).setdefault(CONTROLLER_UID_LABEL, meta.get("uid", ""))


def _labels_from_template(obj: dict[str, Any]) -> None:
    """`SetDefaults_Job`'s labels: a Job without labels has its template's."""
    template_meta = ((obj.get("spec") or {}).get("template") or {}).get("metadata") or {}
    if isinstance(template_meta.get("labels"), dict) and not obj["metadata"].get("labels"):
        obj["metadata"]["labels"] = dict(template_meta["labels"])


def _scheduling_view(template: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The old template with what a suspended, never started Job may change taken from the new one
    (`validatePodTemplateUpdate` with AllowMutableSchedulingDirectives)."""
    view = copy.deepcopy(template)
    spec, new_spec = view.setdefault("spec", {}), new.get("spec") or {}
    old_affinity, new_affinity = spec.get("affinity"), new_spec.get("affinity")
    if new_affinity is None and old_affinity is not None:
        rest = {k: v for k, v in old_affinity.items() if k != "nodeAffinity"}
        if rest:
            spec["affinity"] = rest
        else:
            spec.pop("affinity")
    elif new_affinity is not None:
        rest = dict(old_affinity or {})
        rest.pop("nodeAffinity", None)
        if "nodeAffinity" in new_affinity:
            rest["nodeAffinity"] = new_affinity["nodeAffinity"]
        spec["affinity"] = rest
    for name in _SCHEDULING_FIELDS:
        if name in new_spec:
            spec[name] = new_spec[name]
        else:
            spec.pop(name, None)
    meta, new_meta = view.setdefault("metadata", {}), new.get("metadata") or {}
    for name in ("labels", "annotations"):
        if name in new_meta:
            meta[name] = new_meta[name]
        else:
            meta.pop(name, None)
    if not meta:
        view.pop("metadata")
    return view


def _template_errors(spec: dict[str, Any], old_spec: dict[str, Any], old_status: dict[str, Any]) -> list[FieldError]:
    template, old_template = spec.get("template") or {}, old_spec.get("template") or {}
    if old_spec.get("suspend") and not old_status.get("startTime"):
        old_template = _scheduling_view(old_template, template)
    return immutable("spec.template", _comparable(template), _comparable(old_template))


def _comparable(value: Any) -> Any:
    """A value as Kubernetes' semantic equality compares it: an empty map or list is none."""
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items() if v not in ({}, [], None)}
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    return value


def _completions_errors(spec: dict[str, Any], old_spec: dict[str, Any]) -> list[FieldError]:
    """`validateCompletions` (ElasticIndexedJob, on in 1.28): an Indexed Job's completions change with
    parallelism, any other's never."""
    new, old = spec.get("completions"), old_spec.get("completions")
    if spec.get("completionMode") != "Indexed":
        return immutable("spec.completions", new, old)
    if new == old or new is None:
        return []
    if new != spec.get("parallelism"):
        return [invalid("spec.completions", new, "can only be modified in tandem with spec.parallelism")]
    return []


def _status_errors(status: dict[str, Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    for name in ("active", "succeeded", "failed", "ready"):
        errs += nonnegative(status.get(name), f"status.{name}")
    uncounted = status.get("uncountedTerminatedPods") or {}
    seen: set[str] = set()
    for part in ("succeeded", "failed"):
        for i, uid in enumerate(uncounted.get(part) or []):
            at = f"status.uncountedTerminatedPods.{part}[{i}]"
            if not uid:
                errs.append(invalid(at, uid, "must not be empty"))
            elif uid in seen:
                errs.append(FieldError("FieldValueDuplicate", at, "", uid))
            seen.add(uid)
    return errs


class JobStrategy(Strategy):
    """See the module doc."""

    name_rule = "dns-subdomain"
    counts_generation = True
    allow_create_on_update = False
    subresources = {"status": StatusSubresource()}
    field_labels = ("metadata.name", "metadata.namespace", "status.successful")
    field_label_error = "field label {quoted} not supported for Job"  # batch/v1's own conversion
    columns = Columns((NAME_COLUMN, column("Completions", _SUCCEEDED_DOC),
                       column("Duration", "Time required to complete the job."), AGE_COLUMN, *WIDE_COLUMNS), _cells)

    def selectable_fields(self, obj: dict[str, Any]) -> dict[str, str]:
        fields = super().selectable_fields(obj)
        fields["status.successful"] = str((obj.get("status") or {}).get("succeeded") or 0)
        return fields

    def default(self, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})
        default_job_spec(spec)
        spec.setdefault("manualSelector", False)
        _labels_from_template(obj)

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})
        if not spec.get("manualSelector"):
            _generate_selector(obj)
        drop_disabled_fields(spec, None)
        _labels_from_template(obj)  # as Kubernetes' read back from storage defaults them
        obj.pop("status", None)
        super().prepare_for_create(obj)

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any],
                           subresource: Subresource | None = None) -> None:
        spec = new.setdefault("spec", {})
        drop_disabled_fields(spec, old.get("spec") or {})
        super().prepare_for_update(new, old, subresource)

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        return self._rules(obj, prefixed=True)

    def _rules(self, obj: dict[str, Any], *, prefixed: bool) -> list[FieldError]:
        spec, meta = obj.get("spec") or {}, obj["metadata"]
        errs = job_labels_errors(obj, prefixed) + job_spec_errors(spec, "spec")
        selector = spec.get("selector")
        if selector is None:
            errs.append(required("spec.selector"))
        else:
            errs += label_selector_errors(selector, "spec.selector")
        try:
            labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
            if not label_selector_from_dict(selector).matches(labels or {}):
                errs.append(invalid("spec.template.metadata.labels", go_string_map(labels),
                                    "`selector` does not match template `labels`"))
        except SelectorError:
            pass
        completions = spec.get("completions")
        if spec.get("completionMode") == "Indexed" and isinstance(completions, int) and completions > 0:
            hostname = f"{meta.get('name', '')}-{completions - 1}"
            if dns1123_label_errors(hostname):
                errs.append(invalid("metadata.name", meta.get("name", ""),
                                    f"will not able to create pod with invalid DNS label: {hostname}"))
        return errs + _status_errors(obj.get("status") or {})

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        old_labels = ((old.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels") or {}
        prefixed = JOB_NAME_LABEL in old_labels and CONTROLLER_UID_LABEL in old_labels
        spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        errs = validate_object_meta(new["metadata"], namespaced=True, name_rule=self.name_rule)
        errs += self._rules(new, prefixed=prefixed)
        errs += _completions_errors(spec, old_spec)
        if spec.get("selector") != old_spec.get("selector"):
            errs.append(invalid("spec.selector", go_label_selector(spec.get("selector") or {}), "field is immutable"))
        errs += _template_errors(spec, old_spec, old.get("status") or {})
        for name in ("completionMode", "podFailurePolicy", "backoffLimitPerIndex"):
            errs += immutable(f"spec.{name}", spec.get(name), old_spec.get(name))
        return errs

    def warnings(self, old: dict[str, Any] | None, new: dict[str, Any], manager: str) -> list[str]:
        spec = new.get("spec") or {}
        spec_warnings = job_spec_warnings(spec, "spec") + pod_template_warnings(spec.get("template") or {},
                                                                                "spec.template")
        if old is None:
            return pod_name_warnings(new["metadata"].get("name", "")) + spec_warnings
        changed = new["metadata"].get("generation") != old["metadata"].get("generation")
        return spec_warnings if changed else []

    def deletion_finalizers(self, finalizers: list[str], options: ParsedDeleteOptions) -> list[str]:
        """batch/v1's legacy default: a delete that names no propagation orphans the Job's pods."""
        if (options.orphan_dependents is None and options.propagation_policy is None
                and not {ORPHAN_FINALIZER, FOREGROUND_FINALIZER} & set(finalizers)):
            options = replace(options, propagation_policy="Orphan")
        return super().deletion_finalizers(finalizers, options)
