"""A Job's spec, which a Job and a CronJob's `jobTemplate` share: its defaults, its rules and its printed cells.

- `default_job_spec(spec)`: the spec's part of Kubernetes' `SetDefaults_Job` (v1.28): completions and
  parallelism 1 when both are unset, parallelism 1, backoffLimit 6 (int32's largest with
  backoffLimitPerIndex), completionMode NonIndexed, suspend false, a pod failure policy's onPodConditions
  status True; podReplacementPolicy is feature-gated off in 1.28, so it has no default; then the pod
  template's defaults (`runtime.server.kinds.pods.podspec`).
- `drop_disabled_fields(spec, old)`: what 1.28's strategy drops while its feature gates are off
  (backoffLimitPerIndex, maxFailedIndexes and FailIndex rules, podReplacementPolicy), unless the old
  spec had them.
- `job_spec_errors(spec, path)`: `validateJobSpec`: the counts are not negative, the completion modes'
  rules, the pod failure policy's rules, the pod template (`validate_pod_template_spec`), and the template's
  restartPolicy (OnFailure or Never; Always, or none, is "Required value").
- `immutable(path, new, old)`: apimachinery's `ValidateImmutableField`.
- `job_spec_warnings(spec, path)`: `WarningsForJobSpec`'s own (an Indexed Job above 10^5 completions and
  10^4 parallelism); the pod template's are the kinds' `warnings` (podspec's `pod_template_warnings`).
- `container_cells(template)` and `selector_cell(selector)`: the wide columns' cells (printers.go's
  `layoutContainerCells`, `metav1.FormatLabelSelector`).
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.selectors import SelectorError, label_selector_from_dict
from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import duplicate, invalid, nonnegative, not_supported, required, too_many
from runtime.machinery.validation.gofmt import GoText
from runtime.machinery.validation.labels import label_key_errors
from runtime.server.kinds.pods.podspec import default_pod_template, validate_pod_template_spec

__all__ = ["default_job_spec", "drop_disabled_fields", "job_spec_errors", "immutable",
           "container_cells", "selector_cell",
           "job_spec_warnings", "INT32_MAX"]

INT32_MAX = 2**31 - 1
#: An Indexed Job's largest parallelism (it bounds `status.completedIndexes`), and the other 1.28 bounds.
_MAX_INDEXED_PARALLELISM = 100000
_MAX_FAILED_INDEXES = 100000
_COMPLETIONS_SOFT_LIMIT = 100000
_PARALLELISM_LIMIT_HIGH_COMPLETIONS = 10000
_MAX_FAILED_INDEXES_HIGH_COMPLETIONS = 1000
_MAX_RULES = 20
_MAX_EXIT_CODES = 255
_MAX_CONDITION_PATTERNS = 20
_ACTIONS = ["Count", "FailIndex", "FailJob", "Ignore"]
_EXIT_CODE_OPERATORS = ["In", "NotIn"]
_CONDITION_STATUSES = ["False", "True", "Unknown"]
_REPLACEMENT_POLICIES = ["Failed", "TerminatingOrFailed"]


def default_job_spec(spec: dict[str, Any]) -> None:
    """The spec's defaults of `SetDefaults_Job`, in place (see the module doc)."""
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = INT32_MAX if spec.get("backoffLimitPerIndex") is not None else 6
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    for rule in (spec.get("podFailurePolicy") or {}).get("rules") or []:
        for pattern in rule.get("onPodConditions") or []:
            if not pattern.get("status"):
                pattern["status"] = "True"
    template = spec.get("template")
    if isinstance(template, dict):
        default_pod_template(template)


def drop_disabled_fields(spec: dict[str, Any], old: dict[str, Any] | None) -> None:
    """Drop what 1.28 serves behind feature gates that are off (JobBackoffLimitPerIndex,
    JobPodReplacementPolicy), unless the old spec (an update's) already had it."""
    old = old or {}
    for name in ("backoffLimitPerIndex", "maxFailedIndexes", "podReplacementPolicy"):
        if old.get(name) is None:
            spec.pop(name, None)
    if not old:
        # A new Job's FailIndex rules go with backoffLimitPerIndex (update: the policy is immutable).
        policy = spec.get("podFailurePolicy")
        if isinstance(policy, dict) and policy.get("rules"):
            policy["rules"] = [r for r in policy["rules"] if r.get("action") != "FailIndex"]


def immutable(path: str, new: Any, old: Any) -> list[FieldError]:
    """`ValidateImmutableField`: `new` is `old`."""
    return [] if new == old else [invalid(path, new, "field is immutable")]


def job_spec_errors(spec: dict[str, Any], path: str) -> list[FieldError]:
    """`validateJobSpec` at `path` (`spec`, `spec.jobTemplate.spec`); see the module doc."""
    errs: list[FieldError] = []
    for name in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished",
                 "backoffLimitPerIndex"):
        errs += nonnegative(spec.get(name), f"{path}.{name}")
    per_index, max_failed = spec.get("backoffLimitPerIndex"), spec.get("maxFailedIndexes")
    if max_failed is not None:
        errs += nonnegative(max_failed, f"{path}.maxFailedIndexes")
        if per_index is None:
            errs.append(required(f"{path}.backoffLimitPerIndex", "when maxFailedIndexes is specified"))
    mode = spec.get("completionMode")
    if mode is not None:
        if mode not in ("NonIndexed", "Indexed"):
            errs.append(not_supported(f"{path}.completionMode", mode, ["NonIndexed", "Indexed"]))
        if mode == "Indexed":
            errs += _indexed_errors(spec, path)
    if mode in (None, "NonIndexed"):
        if per_index is not None:
            errs.append(invalid(f"{path}.backoffLimitPerIndex", per_index, "requires indexed completion mode"))
        if max_failed is not None:
            errs.append(invalid(f"{path}.maxFailedIndexes", max_failed, "requires indexed completion mode"))
    policy = spec.get("podFailurePolicy")
    if policy is not None:
        errs += _pod_failure_policy_errors(spec, policy, f"{path}.podFailurePolicy")
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None:
        allowed = ["Failed"] if policy is not None else _REPLACEMENT_POLICIES
        if replacement not in allowed:
            errs.append(not_supported(f"{path}.podReplacementPolicy", replacement, allowed))
    template = spec.get("template") or {}
    errs += validate_pod_template_spec(template, f"{path}.template")
    restart = (template.get("spec") or {}).get("restartPolicy") or ""
    at = f"{path}.template.spec.restartPolicy"
    if restart in ("Always", ""):
        # The pod defaults make an unset policy Always, hence "Required" for both.
        errs.append(required(at, 'valid values: "OnFailure", "Never"'))
    elif restart not in ("OnFailure", "Never"):
        errs.append(not_supported(at, restart, ["OnFailure", "Never"]))
    elif policy is not None and restart != "Never":
        errs.append(invalid(at, restart, 'only "Never" is supported when podFailurePolicy is specified'))
    return errs


def _indexed_errors(spec: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    completions, parallelism = spec.get("completions"), spec.get("parallelism")
    per_index, max_failed = spec.get("backoffLimitPerIndex"), spec.get("maxFailedIndexes")
    if completions is None:
        errs.append(required(f"{path}.completions", "when completion mode is Indexed"))
    if parallelism is not None and parallelism > _MAX_INDEXED_PARALLELISM:
        errs.append(invalid(f"{path}.parallelism", parallelism, f"must be less than or equal to "
                            f"{_MAX_INDEXED_PARALLELISM} when completion mode is Indexed"))
    if completions is not None and max_failed is not None and max_failed > completions:
        errs.append(invalid(f"{path}.maxFailedIndexes", max_failed, "must be less than or equal to completions"))
    if max_failed is not None and max_failed > _MAX_FAILED_INDEXES:
        errs.append(invalid(f"{path}.maxFailedIndexes", max_failed,
                            f"must be less than or equal to {_MAX_FAILED_INDEXES}"))
    if completions is not None and completions > _COMPLETIONS_SOFT_LIMIT and per_index is not None:
        tail = f"when completions are above {_COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
        if max_failed is None:
            errs.append(required(f"{path}.maxFailedIndexes",
                                 f"must be specified when completions is above {_COMPLETIONS_SOFT_LIMIT}"))
        if parallelism is not None and parallelism > _PARALLELISM_LIMIT_HIGH_COMPLETIONS:
            errs.append(invalid(f"{path}.parallelism", parallelism,
                                f"must be less than or equal to {_PARALLELISM_LIMIT_HIGH_COMPLETIONS} {tail}"))
        if max_failed is not None and max_failed > _MAX_FAILED_INDEXES_HIGH_COMPLETIONS:
            errs.append(invalid(f"{path}.maxFailedIndexes", max_failed,
                                f"must be less than or equal to {_MAX_FAILED_INDEXES_HIGH_COMPLETIONS} {tail}"))
    return errs


def _pod_failure_policy_errors(spec: dict[str, Any], policy: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    rules = policy.get("rules") or []
    if len(rules) > _MAX_RULES:
        errs.append(too_many(f"{path}.rules", len(rules), _MAX_RULES))
    pod_spec = (spec.get("template") or {}).get("spec") or {}
    names = {c.get("name") for key in ("containers", "initContainers") for c in pod_spec.get(key) or []}
    for i, rule in enumerate(rules):
        at = f"{path}.rules[{i}]"
        action = rule.get("action") or ""
        if not action:
            errs.append(required(f"{at}.action", "valid values: " + _go_list(_ACTIONS)))
        elif action == "FailIndex":
            if spec.get("backoffLimitPerIndex") is None:
                errs.append(invalid(f"{at}.action", action, "requires the backoffLimitPerIndex to be set"))
        elif action not in _ACTIONS:
            errs.append(not_supported(f"{at}.action", action, _ACTIONS))
        exit_codes, conditions = rule.get("onExitCodes"), rule.get("onPodConditions") or []
        if exit_codes is not None:
            errs += _exit_codes_errors(exit_codes, f"{at}.onExitCodes", names)
        if conditions:
            errs += _conditions_errors(conditions, f"{at}.onPodConditions")
        if exit_codes is not None and conditions:
            errs.append(FieldError("FieldValueInvalid", at,
                                   "specifying both OnExitCodes and OnPodConditions is not supported"))
        if exit_codes is None and not conditions:
            errs.append(FieldError("FieldValueInvalid", at,
                                   "specifying one of OnExitCodes and OnPodConditions is required"))
    return errs


def _go_list(values: list[str]) -> str:
    """Go's `%q` of a `[]string`: `["a" "b"]`."""
    return "[" + " ".join(f'"{v}"' for v in values) + "]"


def _exit_codes_errors(req: dict[str, Any], path: str, names: set[Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    operator = req.get("operator") or ""
    if not operator:
        errs.append(required(f"{path}.operator", "valid values: " + _go_list(_EXIT_CODE_OPERATORS)))
    elif operator not in _EXIT_CODE_OPERATORS:
        errs.append(not_supported(f"{path}.operator", operator, _EXIT_CODE_OPERATORS))
    container = req.get("containerName")
    if container is not None and container not in names:
        errs.append(invalid(f"{path}.containerName", container,
                            "must be one of the container or initContainer names in the pod template"))
    values = req.get("values") or []
    if not values:
        errs.append(invalid(f"{path}.values", GoText("[]int32(nil)" if req.get("values") is None else "[]int32{}"),
                            "at least one value is required"))
    elif len(values) > _MAX_EXIT_CODES:
        errs.append(too_many(f"{path}.values", len(values), _MAX_EXIT_CODES))
    seen: set[int] = set()
    for j, value in enumerate(values):
        if operator == "In" and value == 0:
            errs.append(invalid(f"{path}.values[{j}]", value, "must not be 0 for the In operator"))
        if value in seen:
            errs.append(duplicate(f"{path}.values[{j}]", value))
        seen.add(value)
    if any(values[j - 1] > values[j] for j in range(1, len(values))):
        errs.append(invalid(f"{path}.values", GoText("[]int32{" + ", ".join(map(str, values)) + "}"),
                            "must be ordered"))
    return errs


def _conditions_errors(patterns: list[dict[str, Any]], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if len(patterns) > _MAX_CONDITION_PATTERNS:
        errs.append(too_many(path, len(patterns), _MAX_CONDITION_PATTERNS))
    for j, pattern in enumerate(patterns):
        kind = pattern.get("type") or ""
        errs += [invalid(f"{path}[{j}].type", kind, msg) for msg in label_key_errors(kind)]
        status = pattern.get("status") or ""
        if not status:
            errs.append(required(f"{path}[{j}].status", "valid values: " + _go_list(_CONDITION_STATUSES)))
        elif status not in _CONDITION_STATUSES:
            errs.append(not_supported(f"{path}[{j}].status", status, _CONDITION_STATUSES))
    return errs


def container_cells(template: dict[str, Any] | None) -> tuple[str, str]:
    """The template's container names and images, each joined by commas (`layoutContainerCells`)."""
    containers = ((template or {}).get("spec") or {}).get("containers") or []
    return (",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers))


def selector_cell(selector: dict[str, Any] | None) -> str:
    """`metav1.FormatLabelSelector`: the selector's query form, `<none>` when it selects by nothing."""
    try:
        text = str(label_selector_from_dict(selector))
    except SelectorError:
        return "<error>"
    return text or "<none>"


def job_spec_warnings(spec: dict[str, Any], path: str) -> list[str]:
    """`WarningsForJobSpec`'s warning of an Indexed Job too big to track its completed indexes."""
    if spec.get("completionMode") != "Indexed":
        return []
    if (spec.get("completions") or 0) > _COMPLETIONS_SOFT_LIMIT and \
            (spec.get("parallelism") or 0) > _PARALLELISM_LIMIT_HIGH_COMPLETIONS:
        return [f"{path}: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher "
                "than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail"]
    return []
