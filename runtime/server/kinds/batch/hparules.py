"""An `autoscaling/v2` HorizontalPodAutoscaler's defaults, rules and printed cells (Kubernetes v1.28:
`pkg/apis/autoscaling/v2/defaults.go`, `pkg/apis/autoscaling/validation`, printers.go). Pure.

- `default_v2(hpa)`: minReplicas 1; no metrics is the cpu target of 80% utilization; a behavior that is set
  has its unset rules filled (scale up: no stabilization window, Max of 4 pods or 100% per 15 s; scale down:
  Max of 100% per 15 s, the window left to the controller's flag); a behavior that is not set stays unset.
- `hpa_errors(hpa, min_replicas_bound)`: `ValidateHorizontalPodAutoscaler`'s spec rules: minReplicas at
  least the bound (1: HPAScaleToZero is off in 1.28; 0 on update of an HPA that already has 0), maxReplicas
  above 0 and not below minReplicas, scaleTargetRef's kind and name required path segments, each metric's
  type and the one source it names (targets positive, the source's required target), scale to zero only
  with an Object or External metric, the behavior's rules (window 0..3600 s, selectPolicy, at least one
  policy, each Pods or Percent with a positive value and period at most 1800 s); and the status's replica
  counts not negative.
- `hpa_cells(hpa)`: NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE (`formatHPAMetrics`: at most two
  targets, then "+ N more...").
"""

from __future__ import annotations

import copy
from typing import Any

from runtime.machinery.quantity import QuantityError, parse_quantity
from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import forbidden, invalid, nonnegative, not_supported, required
from runtime.machinery.validation.gofmt import GoText
from runtime.machinery.validation.names import dns1123_label_errors, path_segment_errors
from runtime.server.kinds.batch.hpaconversion import DEFAULT_CPU_UTILIZATION
from runtime.server.kinds.columns import age

__all__ = ["default_v2", "hpa_errors", "hpa_cells"]

_MAX_PERIOD = 1800
_MAX_WINDOW = 3600
_SOURCE_TYPES = ["ContainerResource", "External", "Object", "Pods", "Resource"]
_SOURCE_FIELDS = {"Object": "object", "Pods": "pods", "Resource": "resource", "External": "external",
                  "ContainerResource": "containerResource"}
_SELECT_POLICIES = ["Disabled", "Max", "Min"]
_POLICY_TYPES = ["Percent", "Pods"]
_SCALE_UP = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
             "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                          {"type": "Percent", "value": 100, "periodSeconds": 15}]}
_SCALE_DOWN = {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}


def _filled(rules: dict[str, Any] | None, defaults: dict[str, Any]) -> dict[str, Any]:
    """`GenerateHPAScale{Up,Down}Rules`: the defaults, with what `rules` sets over them."""
    out = copy.deepcopy(defaults)
    for key, value in (rules or {}).items():
        if value is not None:
            out[key] = value
    return out


def default_v2(hpa: dict[str, Any]) -> None:
    """`SetDefaults_HorizontalPodAutoscaler` (v2), in place."""
    spec = hpa.setdefault("spec", {})
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not spec.get("metrics"):
        spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}}}]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        behavior["scaleUp"] = _filled(behavior.get("scaleUp"), _SCALE_UP)
        behavior["scaleDown"] = _filled(behavior.get("scaleDown"), _SCALE_DOWN)


def _quantity(text: Any) -> Any:
    """A quantity's canonical text (what Go prints of it), the text itself when it does not parse."""
    try:
        return str(parse_quantity(text))
    except QuantityError:
        return text


def _reference_errors(ref: dict[str, Any], path: str) -> list[FieldError]:
    """`ValidateCrossVersionObjectReference`."""
    errs: list[FieldError] = []
    for name in ("kind", "name"):
        value = ref.get(name) or ""
        if not value:
            errs.append(required(f"{path}.{name}"))
        errs += [invalid(f"{path}.{name}", value, msg) for msg in path_segment_errors(value)] if value else []
    return errs


def _target_errors(target: dict[str, Any], path: str) -> list[FieldError]:
    """`validateMetricTarget`."""
    errs: list[FieldError] = []
    kind = target.get("type") or ""
    if not kind:
        errs.append(required(f"{path}.type", "must specify a metric target type"))
    if kind not in ("Utilization", "Value", "AverageValue"):
        errs.append(invalid(f"{path}.type", kind, "must be either Utilization, Value, or AverageValue"))
    for name in ("value", "averageValue"):
        if target.get(name) is not None:
            try:
                positive = parse_quantity(target[name]).value > 0
            except QuantityError:
                positive = False
            if not positive:
                errs.append(invalid(f"{path}.{name}", GoText(_quantity(target[name])), "must be positive"))
    utilization = target.get("averageUtilization")
    if utilization is not None and utilization < 1:
        errs.append(invalid(f"{path}.averageUtilization", utilization, "must be greater than 0"))
    return errs


def _identifier_errors(metric: dict[str, Any], path: str) -> list[FieldError]:
    name = metric.get("name") or ""
    if not name:
        return [required(f"{path}.name", "must specify a metric name")]
    return [invalid(f"{path}.name", name, msg) for msg in path_segment_errors(name)]


def _source_errors(kind: str, src: dict[str, Any], path: str) -> list[FieldError]:
    """The rules of one metric source (`validate{Object,External,Pods,Resource,ContainerResource}Source`)."""
    target = src.get("target") or {}
    errs: list[FieldError] = []
    if kind == "object":
        errs += _reference_errors(src.get("describedObject") or {}, f"{path}.describedObject")
    if kind in ("object", "external", "pods"):
        errs += _identifier_errors(src.get("metric") or {}, f"{path}.metric")
    else:
        if not src.get("name"):
            errs.append(required(f"{path}.name", "must specify a resource name"))
        if kind == "containerResource":
            container = src.get("container") or ""
            if not container:
                errs.append(required(f"{path}.container", "must specify a container"))
            errs += [invalid(f"{path}.container", container, msg) for msg in dns1123_label_errors(container)
                     ] if container else []
    errs += _target_errors(target, f"{path}.target")
    value, average, utilization = (target.get(k) for k in ("value", "averageValue", "averageUtilization"))
    if kind == "object" and value is None and average is None:
        errs.append(required(f"{path}.target.averageValue", "must set either a target value or averageValue"))
    elif kind == "external":
        if value is None and average is None:
            errs.append(required(f"{path}.target.averageValue",
                                 "must set either a target value for metric or a per-pod target"))
        if value is not None and average is not None:
            errs.append(forbidden(f"{path}.target.value",
                                  "may not set both a target value for metric and a per-pod target"))
    elif kind == "pods" and average is None:
        errs.append(required(f"{path}.target.averageValue", "must specify a positive target averageValue"))
    elif kind in ("resource", "containerResource"):
        if utilization is None and average is None:
            errs.append(required(f"{path}.target.averageUtilization",
                                 "must set either a target raw value or a target utilization"))
        if utilization is not None and average is not None:
            errs.append(forbidden(f"{path}.target.averageValue",
                                  "may not set both a target raw value and a target utilization"))
    return errs


def _metric_errors(metric: dict[str, Any], path: str) -> list[FieldError]:
    """`validateMetricSpec`: its type, the one source it sets, that source's rules."""
    errs: list[FieldError] = []
    kind = metric.get("type") or ""
    if not kind:
        errs.append(required(f"{path}.type", "must specify a metric source type"))
    if kind not in _SOURCE_TYPES:
        errs.append(not_supported(f"{path}.type", kind, _SOURCE_TYPES))
    present = [f for f in ("object", "external", "pods", "resource", "containerResource") if metric.get(f) is not None]
    if present:
        errs += _source_errors(present[0], metric[present[0]], f"{path}.{present[0]}")
    expected = _SOURCE_FIELDS.get(kind)
    if expected is None:
        errs.append(not_supported(f"{path}.type", kind, _SOURCE_TYPES))
    elif metric.get(expected) is None:
        errs.append(required(f"{path}.{expected}", "must populate information for the given metric source"))
    if len(present) != 1:
        for name in sorted(set(present) - {expected}):
            errs.append(forbidden(f"{path}.{name}", "must populate the given metric source only"))
    return errs


def _rules_errors(rules: dict[str, Any] | None, path: str) -> list[FieldError]:
    """`validateScalingRules`."""
    if rules is None:
        return []
    errs: list[FieldError] = []
    window = rules.get("stabilizationWindowSeconds")
    if window is not None and window < 0:
        errs.append(invalid(f"{path}.stabilizationWindowSeconds", window, "must be greater than or equal to zero"))
    if window is not None and window > _MAX_WINDOW:
        errs.append(invalid(f"{path}.stabilizationWindowSeconds", window,
                            f"must be less than or equal to {_MAX_WINDOW}"))
    select = rules.get("selectPolicy")
    if select is not None and select not in _SELECT_POLICIES:
        errs.append(not_supported(f"{path}.selectPolicy", select, _SELECT_POLICIES))
    policies = rules.get("policies") or []
    if not policies:
        errs.append(required(f"{path}.policies", "must specify at least one Policy"))
    for i, policy in enumerate(policies):
        at = f"{path}.policies[{i}]"
        if policy.get("type") not in _POLICY_TYPES:
            errs.append(not_supported(f"{at}.type", policy.get("type") or "", _POLICY_TYPES))
        value, period = policy.get("value") or 0, policy.get("periodSeconds") or 0
        if value <= 0:
            errs.append(invalid(f"{at}.value", value, "must be greater than zero"))
        if period <= 0:
            errs.append(invalid(f"{at}.periodSeconds", period, "must be greater than zero"))
        if period > _MAX_PERIOD:
            errs.append(invalid(f"{at}.periodSeconds", period, f"must be less than or equal to {_MAX_PERIOD}"))
    return errs


def hpa_errors(hpa: dict[str, Any], min_replicas_bound: int) -> list[FieldError]:
    """`validateHorizontalPodAutoscalerSpec` and the status's counts (see the module doc)."""
    spec = hpa.get("spec") or {}
    errs: list[FieldError] = []
    low, high = spec.get("minReplicas"), spec.get("maxReplicas") or 0
    if low is not None and low < min_replicas_bound:
        errs.append(invalid("spec.minReplicas", low, f"must be greater than or equal to {min_replicas_bound}"))
    if high < 1:
        errs.append(invalid("spec.maxReplicas", high, "must be greater than 0"))
    if low is not None and high < low:
        errs.append(invalid("spec.maxReplicas", high, "must be greater than or equal to `minReplicas`"))
    errs += _reference_errors(spec.get("scaleTargetRef") or {}, "spec.scaleTargetRef")
    metrics = spec.get("metrics") or []
    for i, metric in enumerate(metrics):
        errs += _metric_errors(metric, f"spec.metrics[{i}]")
    if low == 0 and not any(m.get("type") in ("Object", "External") for m in metrics):
        errs.append(forbidden("spec.metrics",
                              "must specify at least one Object or External metric to support scaling to zero "
                              "replicas"))
    behavior = spec.get("behavior")
    if behavior is not None:
        errs += _rules_errors(behavior.get("scaleUp"), "spec.behavior.scaleUp")
        errs += _rules_errors(behavior.get("scaleDown"), "spec.behavior.scaleDown")
    status = hpa.get("status") or {}
    errs += nonnegative(status.get("currentReplicas"), "status.currentReplicas")
    errs += nonnegative(status.get("desiredReplicas"), "status.desiredReplicas")
    return errs


def _current(statuses: list[dict[str, Any]], i: int, source: str) -> dict[str, Any] | None:
    if i < len(statuses) and isinstance(statuses[i].get(source), dict):
        return statuses[i][source].get("current") or {}
    return None


def _shown(value: Any) -> str:
    return "<nil>" if value is None else _quantity(value)


def _target_text(spec: dict[str, Any], statuses: list[dict[str, Any]], i: int) -> str:
    """One metric's `current/target` (`formatHPAMetrics`)."""
    kind = spec.get("type")
    source = _SOURCE_FIELDS.get(kind or "")
    if source is None or not isinstance(spec.get(source), dict):
        return "<unknown type>"
    target = spec[source].get("target") or {}
    current = _current(statuses, i, source)
    if source in ("external", "object"):
        if target.get("averageValue") is not None:
            now = "<unknown>" if current is None or current.get("averageValue") is None else _shown(
                current["averageValue"])
            return f"{now}/{_shown(target['averageValue'])} (avg)"
        now = "<unknown>" if current is None else _shown(current.get("value"))
        return f"{now}/{_shown(target.get('value'))}"
    if source == "pods":
        now = "<unknown>" if current is None else _shown(current.get("averageValue"))
        return f"{now}/{_shown(target.get('averageValue'))}"
    if target.get("averageValue") is not None:
        now = "<unknown>" if current is None else _shown(current.get("averageValue"))
        return f"{now}/{_shown(target['averageValue'])}"
    now = "<unknown>" if current is None or current.get("averageUtilization") is None else \
        f"{current['averageUtilization']}%"
    goal = "<auto>" if target.get("averageUtilization") is None else f"{target['averageUtilization']}%"
    return f"{now}/{goal}"


def hpa_cells(hpa: dict[str, Any]) -> list[Any]:
    """`printHorizontalPodAutoscaler` of a v2 object."""
    meta, spec, status = hpa["metadata"], hpa.get("spec") or {}, hpa.get("status") or {}
    metrics, statuses = spec.get("metrics") or [], status.get("currentMetrics") or []
    if not metrics:
        targets = "<none>"
    else:
        texts = [_target_text(m, statuses, i) for i, m in enumerate(metrics)]
        targets = ", ".join(texts[:2]) + (f" + {len(texts) - 2} more..." if len(texts) > 2 else "")
    ref = spec.get("scaleTargetRef") or {}
    low = spec.get("minReplicas")
    return [meta.get("name", ""), f"{ref.get('kind', '')}/{ref.get('name', '')}", targets,
            "<unset>" if low is None else str(low), spec.get("maxReplicas") or 0, status.get("currentReplicas") or 0,
            age(meta.get("creationTimestamp"))]
