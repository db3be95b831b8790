"""The validation rules the apps kinds share (`pkg/apis/apps/validation`), in Kubernetes' words and paths.

- `selector_errors`: a required, valid, non-empty `spec.selector`
  (`spec.selector: Required value`; `empty selector is invalid for
  deployment`, which ReplicaSets say too, as Kubernetes' copy of the rule does);
- `as_selector`: `metav1.LabelSelectorAsSelector` (None when it fails);
- `template_label_errors`: the selector must match the template's labels
  (``spec.template.metadata.labels: Invalid value: map[string]string{...}:
  `selector` does not match template `labels```);
- `replica_template_errors`: `ValidatePodTemplateSpecForReplicaSet`'s rest,
  the pod template through podspec, then `restartPolicy` Always only and no
  `activeDeadlineSeconds` (Deployments, ReplicaSets, DaemonSets);
- `int_or_percent_errors`, `int_or_percent_value`,
  `more_than_100_percent`: `ValidateNonnegativeField`,
  `ValidatePositiveIntOrPercent`, `getIntOrPercentValue`, `IsNotMoreThan100Percent`;
- `immutable_selector`: in apps/v1 an update cannot change `spec.selector`
  (`field is immutable`);
- `semantically_equal`: `apiequality.Semantic.DeepEqual` on JSON values (a
  missing, null, empty list and empty map are all Go's zero value).

Internal to `runtime.server.kinds.apps`: imported by its modules only.
"""

from __future__ import annotations

import re
from typing import Any

from runtime.machinery.selectors import ParsedLabelSelector, SelectorError, label_selector_from_dict
from runtime.machinery.validation import FieldError, label_selector_errors
from runtime.machinery.validation.fielderrors import forbidden, invalid, nonnegative, not_supported, required
from runtime.server.kinds.apps.gosyntax import go_int_or_string, go_label_selector, go_string_map
from runtime.server.kinds.pods.podspec import validate_pod_template_spec

__all__ = ["selector_errors", "as_selector", "template_label_errors", "replica_template_errors",
           "int_or_percent_errors", "int_or_percent_value", "more_than_100_percent", "immutable_selector",
           "semantically_equal"]

_PERCENT = re.compile(r"[0-9]+%")
_PERCENT_MSG = ("a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
                "regex used for validation is '[0-9]+%')")


def selector_errors(spec: dict[str, Any], path: str, kind: str) -> list[FieldError]:
    """The selector's own rules: required, metav1 LabelSelector rules, not empty (`empty selector is invalid
    for <kind>`)."""
    selector = spec.get("selector")
    if selector is None:
        return [required(f"{path}.selector")]
    errs = label_selector_errors(selector, f"{path}.selector")
    if not (selector.get("matchLabels") or selector.get("matchExpressions")):
        errs.append(invalid(f"{path}.selector", go_label_selector(selector), f"empty selector is invalid for {kind}"))
    return errs


def as_selector(selector: dict[str, Any] | None) -> ParsedLabelSelector | None:
    """`metav1.LabelSelectorAsSelector`: None selects nothing, `{}` everything; None when it does not convert."""
    try:
        return label_selector_from_dict(selector)
    except SelectorError:
        return None


def template_label_errors(template: dict[str, Any], selector: ParsedLabelSelector, path: str) -> list[FieldError]:
    """A selector that restricts must match the template's labels (`path` is the template's)."""
    labels = (template.get("metadata") or {}).get("labels")
    if selector.empty or selector.matches(labels):
        return []
    return [invalid(f"{path}.metadata.labels", go_string_map(labels), "`selector` does not match template `labels`")]


def replica_template_errors(template: dict[str, Any], path: str, kind: str) -> list[FieldError]:
    """The pod template's rules (podspec), then what a controller's pods need: `restartPolicy` Always (the
    defaulted value) and no `activeDeadlineSeconds` (`activeDeadlineSeconds in <Kind> is not Supported`)."""
    errs = validate_pod_template_spec(template, path)
    pod = template.get("spec") or {}
    policy = pod.get("restartPolicy", "Always")  # Always is SetDefaults_PodSpec's value
    if policy != "Always":
        errs.append(not_supported(f"{path}.spec.restartPolicy", policy, ["Always"]))
    if pod.get("activeDeadlineSeconds") is not None:
        errs.append(forbidden(f"{path}.spec.activeDeadlineSeconds",
                              f"activeDeadlineSeconds in {kind} is not Supported"))
    return errs


def int_or_percent_errors(value: Any, path: str) -> list[FieldError]:
    """`ValidatePositiveIntOrPercent`: a percent string (`25%`) or a non-negative integer."""
    if isinstance(value, str):
        return [] if _PERCENT.fullmatch(value) else [invalid(path, go_int_or_string(value), _PERCENT_MSG)]
    return nonnegative(value, path)


def int_or_percent_value(value: Any) -> int:
    """`getIntOrPercentValue`: a percent's number, an integer itself; a string that is neither counts as 0."""
    if isinstance(value, str):
        if _PERCENT.fullmatch(value):
            return int(value[:-1])
        return int(value) if value.lstrip("-").isdigit() else 0
    return value if isinstance(value, int) else 0


def more_than_100_percent(value: Any, path: str) -> list[FieldError]:
    """`IsNotMoreThan100Percent`: a percent above 100 is `must not be greater than 100%`."""
    if isinstance(value, str) and _PERCENT.fullmatch(value) and int(value[:-1]) > 100:
        return [invalid(path, go_int_or_string(value), "must not be greater than 100%")]
    return []


def immutable_selector(new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """apps/v1's `ValidateImmutableField(spec.selector)`."""
    selector = (new.get("spec") or {}).get("selector")
    if semantically_equal(selector, (old.get("spec") or {}).get("selector")):
        return []
    return [invalid("spec.selector", go_label_selector(selector), "field is immutable")]


def _zero(value: Any) -> Any:
    if isinstance(value, dict):
        kept = {k: _zero(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v is not None}
    if isinstance(value, list):
        return [_zero(v) for v in value] or None
    return value


def semantically_equal(a: Any, b: Any) -> bool:
    """Equal as Kubernetes' `apiequality.Semantic.DeepEqual` compares typed values: absent, null and empty
    collections are one zero value."""
    return _zero(a) == _zero(b)
