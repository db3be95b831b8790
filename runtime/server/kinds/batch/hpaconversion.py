"""A HorizontalPodAutoscaler between `autoscaling/v2` (as stored) and `autoscaling/v1`, as Kubernetes converts
it (`pkg/apis/autoscaling/v1/conversion.go`, v1.28). Pure; neither argument is changed.

- `to_v1(hpa)`: targetCPUUtilizationPercentage is the first cpu Resource metric's averageUtilization;
  currentCPUUtilizationPercentage the first cpu Resource status's. What v1 cannot hold is kept in
  annotations, as Kubernetes writes them: `autoscaling.alpha.kubernetes.io/metrics` (the other metrics, in
  v1's MetricSpec form), `.../current-metrics` (every current metric, v1's MetricStatus form),
  `.../behavior` (the behavior as Go marshals its internal type: `{"ScaleUp":{"StabilizationWindowSeconds":
  0,...}}`), `.../conditions` (the conditions). Round-trip annotations the object already had are dropped
  first.
- `to_v2(hpa)`: the reverse: the annotations' metrics, then the cpu target; an HPA with no metric at all gets
  the cpu target of 80% (v1's implicit default); the annotations are dropped. An annotation that does not
  decode is ignored, as Kubernetes does.
"""

from __future__ import annotations

import json
from typing import Any, Callable

__all__ = ["to_v1", "to_v2", "ROUND_TRIP_ANNOTATIONS", "DEFAULT_CPU_UTILIZATION"]

_METRICS = "autoscaling.alpha.kubernetes.io/metrics"
_CURRENT_METRICS = "autoscaling.alpha.kubernetes.io/current-metrics"
_BEHAVIOR = "autoscaling.alpha.kubernetes.io/behavior"
_CONDITIONS = "autoscaling.alpha.kubernetes.io/conditions"
ROUND_TRIP_ANNOTATIONS = (_METRICS, _CURRENT_METRICS, _BEHAVIOR, _CONDITIONS)
DEFAULT_CPU_UTILIZATION = 80
_ZERO = "0"  # a v1 Quantity that is not a pointer shows its zero value


def _dumps(value: Any) -> str:
    """Go's `json.Marshal` of a typed value: compact, in the struct's field order, `<>&` escaped."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _pick(**fields: Any) -> dict[str, Any]:
    """A struct's JSON: its fields in order, the unset (None) ones left out (`omitempty`)."""
    return {k: v for k, v in fields.items() if v is not None}


def _selector(selector: Any) -> Any:
    """A LabelSelector as Go marshals it: its fields in order, `matchLabels`' keys sorted (a Go map)."""
    if not isinstance(selector, dict):
        return selector
    labels, exprs = selector.get("matchLabels"), selector.get("matchExpressions")
    return _pick(matchLabels=None if not labels else {k: labels[k] for k in sorted(labels)},
                 matchExpressions=None if not exprs else [
                     _pick(key=e.get("key", ""), operator=e.get("operator", ""), values=e.get("values") or None)
                     for e in exprs])


def _is_cpu_utilization(metric: dict[str, Any]) -> bool:
    resource = metric.get("resource")
    return (metric.get("type") == "Resource" and isinstance(resource, dict) and resource.get("name") == "cpu"
            and (resource.get("target") or {}).get("averageUtilization") is not None)


# ---- v2 -> v1 ------------------------------------------------------------------------------------------

def _v1_metric(m: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": m.get("type", "")}
    if (src := m.get("object")) is not None:
        target, metric = src.get("target") or {}, src.get("metric") or {}
        out["object"] = _pick(target=src.get("describedObject") or {"kind": "", "name": ""},
                              metricName=metric.get("name", ""), targetValue=target.get("value", _ZERO),
                              selector=_selector(metric.get("selector")), averageValue=target.get("averageValue"))
    if (src := m.get("pods")) is not None:
        target, metric = src.get("target") or {}, src.get("metric") or {}
        out["pods"] = _pick(metricName=metric.get("name", ""), targetAverageValue=target.get("averageValue", _ZERO),
                            selector=_selector(metric.get("selector")))
    if (src := m.get("resource")) is not None:
        target = src.get("target") or {}
        out["resource"] = _pick(name=src.get("name", ""), targetAverageUtilization=target.get("averageUtilization"),
                                targetAverageValue=target.get("averageValue"))
    if (src := m.get("containerResource")) is not None:
        target = src.get("target") or {}
        out["containerResource"] = _pick(name=src.get("name", ""),
                                         targetAverageUtilization=target.get("averageUtilization"),
                                         targetAverageValue=target.get("averageValue"),
                                         container=src.get("container", ""))
    if (src := m.get("external")) is not None:
        target, metric = src.get("target") or {}, src.get("metric") or {}
        out["external"] = _pick(metricName=metric.get("name", ""), metricSelector=_selector(metric.get("selector")),
                                targetValue=target.get("value"), targetAverageValue=target.get("averageValue"))
    return out


def _v1_metric_status(m: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": m.get("type", "")}
    if (src := m.get("object")) is not None:
        current, metric = src.get("current") or {}, src.get("metric") or {}
        out["object"] = _pick(target=src.get("describedObject") or {"kind": "", "name": ""},
                              metricName=metric.get("name", ""), currentValue=current.get("value", _ZERO),
                              selector=_selector(metric.get("selector")), averageValue=current.get("averageValue"))
    if (src := m.get("pods")) is not None:
        current, metric = src.get("current") or {}, src.get("metric") or {}
        out["pods"] = _pick(metricName=metric.get("name", ""),
                            currentAverageValue=current.get("averageValue", _ZERO),
                            selector=_selector(metric.get("selector")))
    for key in ("resource", "containerResource"):
        if (src := m.get(key)) is not None:
            current = src.get("current") or {}
            out[key] = _pick(name=src.get("name", ""), currentAverageUtilization=current.get("averageUtilization"),
                             currentAverageValue=current.get("averageValue", _ZERO),
                             container=src.get("container", "") if key == "containerResource" else None)
    if (src := m.get("external")) is not None:
        current, metric = src.get("current") or {}, src.get("metric") or {}
        out["external"] = _pick(metricName=metric.get("name", ""), metricSelector=_selector(metric.get("selector")),
                                currentValue=current.get("value", _ZERO),
                                currentAverageValue=current.get("averageValue"))
    return out


def _go_rules(rules: dict[str, Any] | None) -> dict[str, Any] | None:
    """The internal HPAScalingRules as Go marshals it (no JSON tags: Go's field names, nil as null)."""
    if rules is None:
        return None
    policies = rules.get("policies")
    return {"StabilizationWindowSeconds": rules.get("stabilizationWindowSeconds"),
            "SelectPolicy": rules.get("selectPolicy"),
            "Policies": None if policies is None else [
                {"Type": p.get("type", ""), "Value": p.get("value", 0), "PeriodSeconds": p.get("periodSeconds", 0)}
                for p in policies]}


def _v1_condition(c: dict[str, Any]) -> dict[str, Any]:
    # A zero metav1.Time marshals as null, `omitempty` or not.
    return {"type": c.get("type", ""), "status": c.get("status", ""),
            "lastTransitionTime": c.get("lastTransitionTime"),
            **_pick(reason=c.get("reason") or None, message=c.get("message") or None)}


def to_v1(hpa: dict[str, Any]) -> dict[str, Any]:
    """The v2 `hpa` as autoscaling/v1 shows it (see the module doc)."""
    spec, status = hpa.get("spec") or {}, hpa.get("status")
    meta = dict(hpa.get("metadata") or {})
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in ROUND_TRIP_ANNOTATIONS}
    metrics = spec.get("metrics") or []
    out_spec = {k: spec[k] for k in ("scaleTargetRef", "minReplicas", "maxReplicas") if k in spec}
    for metric in metrics:
        if metric.get("type") == "Resource" and (metric.get("resource") or {}).get("name") == "cpu":
            utilization = (metric["resource"].get("target") or {}).get("averageUtilization")
            if utilization is not None:
                out_spec["targetCPUUtilizationPercentage"] = utilization
            break
    others = [_v1_metric(m) for m in metrics if not _is_cpu_utilization(m)]
    if others:
        annotations[_METRICS] = _dumps(others)
    out: dict[str, Any] = {"apiVersion": "autoscaling/v1", "kind": hpa.get("kind", "HorizontalPodAutoscaler"),
                           "metadata": meta, "spec": out_spec}
    if status is not None:
        current = status.get("currentMetrics") or []
        out_status = {k: status[k] for k in ("observedGeneration", "lastScaleTime", "currentReplicas",
                                             "desiredReplicas") if k in status}
        for metric in current:
            resource = metric.get("resource") or {}
            if metric.get("type") == "Resource" and resource.get("name") == "cpu":
                utilization = (resource.get("current") or {}).get("averageUtilization")
                if utilization is not None:
                    out_status["currentCPUUtilizationPercentage"] = utilization
        if current:
            annotations[_CURRENT_METRICS] = _dumps([_v1_metric_status(m) for m in current])
        if status.get("conditions"):
            annotations[_CONDITIONS] = _dumps([_v1_condition(c) for c in status["conditions"]])
        out["status"] = out_status
    if spec.get("behavior") is not None:
        behavior = spec["behavior"]
        annotations[_BEHAVIOR] = _dumps({"ScaleUp": _go_rules(behavior.get("scaleUp")),
                                         "ScaleDown": _go_rules(behavior.get("scaleDown"))})
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    return out


# ---- v1 -> v2 ------------------------------------------------------------------------------------------

def _target(kind: str, **values: Any) -> dict[str, Any]:
    return {"type": kind, **_pick(**values)}


def _identifier(name: Any, selector: Any) -> dict[str, Any]:
    return _pick(name=name or "", selector=selector)


def _v2_metric(m: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": m.get("type", "")}
    if isinstance(src := m.get("object"), dict):
        average = src.get("averageValue")
        out["object"] = {"describedObject": src.get("target") or {"kind": "", "name": ""},
                         "metric": _identifier(src.get("metricName"), src.get("selector")),
                         "target": _target("Value" if average is None else "AverageValue",
                                           value=src.get("targetValue", _ZERO), averageValue=average)}
    if isinstance(src := m.get("pods"), dict):
        out["pods"] = {"metric": _identifier(src.get("metricName"), src.get("selector")),
                       "target": _target("AverageValue", averageValue=src.get("targetAverageValue", _ZERO))}
    for key in ("resource", "containerResource"):
        if isinstance(src := m.get(key), dict):
            utilization = src.get("targetAverageUtilization")
            out[key] = _pick(name=src.get("name", ""),
                             target=_target("AverageValue" if utilization is None else "Utilization",
                                            averageValue=src.get("targetAverageValue"),
                                            averageUtilization=utilization),
                             container=src.get("container", "") if key == "containerResource" else None)
    if isinstance(src := m.get("external"), dict):
        value = src.get("targetValue")
        out["external"] = {"metric": _identifier(src.get("metricName"), src.get("metricSelector")),
                           "target": _target("AverageValue" if value is None else "Value", value=value,
                                             averageValue=src.get("targetAverageValue"))}
    return out


def _v2_metric_status(m: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": m.get("type", "")}
    if isinstance(src := m.get("object"), dict):
        out["object"] = {"metric": _identifier(src.get("metricName"), src.get("selector")),
                         "current": _pick(value=src.get("currentValue", _ZERO), averageValue=src.get("averageValue")),
                         "describedObject": src.get("target") or {"kind": "", "name": ""}}
    if isinstance(src := m.get("pods"), dict):
        out["pods"] = {"metric": _identifier(src.get("metricName"), src.get("selector")),
                       "current": {"averageValue": src.get("currentAverageValue", _ZERO)}}
    for key in ("resource", "containerResource"):
        if isinstance(src := m.get(key), dict):
            out[key] = _pick(name=src.get("name", ""),
                             current=_pick(averageValue=src.get("currentAverageValue", _ZERO),
                                           averageUtilization=src.get("currentAverageUtilization")),
                             container=src.get("container", "") if key == "containerResource" else None)
    if isinstance(src := m.get("external"), dict):
        out["external"] = {"metric": _identifier(src.get("metricName"), src.get("metricSelector")),
                           "current": _pick(value=src.get("currentValue", _ZERO),
                                            averageValue=src.get("currentAverageValue"))}
    return out


def _field(struct: dict[str, Any], name: str) -> Any:
    """A field of a Go struct decoded from JSON: its key matched case-insensitively, as `json.Unmarshal` does."""
    if name in struct:
        return struct[name]
    return next((v for k, v in struct.items() if k.lower() == name.lower()), None)


def _v2_rules(rules: Any) -> dict[str, Any] | None:
    if not isinstance(rules, dict):
        return None
    policies = _field(rules, "Policies")
    return _pick(stabilizationWindowSeconds=_field(rules, "StabilizationWindowSeconds"),
                 selectPolicy=_field(rules, "SelectPolicy"),
                 policies=None if not isinstance(policies, list) else [
                     {"type": _field(p, "Type") or "", "value": _field(p, "Value") or 0,
                      "periodSeconds": _field(p, "PeriodSeconds") or 0} for p in policies if isinstance(p, dict)])


def _decoded(annotations: dict[str, str], key: str, kind: type) -> Any:
    try:
        value = json.loads(annotations[key]) if key in annotations else None
    except ValueError:
        return None
    return value if isinstance(value, kind) else None


def _listed(value: list[Any] | None, convert: Callable[[dict[str, Any]], dict[str, Any]]) -> list[dict[str, Any]]:
    return [convert(item) for item in value or [] if isinstance(item, dict)]


def to_v2(hpa: dict[str, Any]) -> dict[str, Any]:
    """The v1 `hpa` as autoscaling/v2 holds it (see the module doc)."""
    spec, status = hpa.get("spec") or {}, hpa.get("status")
    meta = dict(hpa.get("metadata") or {})
    annotations = dict(meta.get("annotations") or {})
    out_spec = {k: spec[k] for k in ("scaleTargetRef", "minReplicas", "maxReplicas") if k in spec}
    cpu = [] if spec.get("targetCPUUtilizationPercentage") is None else [
        {"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": spec["targetCPUUtilizationPercentage"]}}}]
    others = _decoded(annotations, _METRICS, list)
    metrics = _listed(others, _v2_metric) + cpu if others is not None else cpu
    behavior = _decoded(annotations, _BEHAVIOR, dict)
    if behavior is not None:
        shown = _pick(scaleUp=_v2_rules(_field(behavior, "ScaleUp")),
                      scaleDown=_v2_rules(_field(behavior, "ScaleDown")))
        if shown:
            out_spec["behavior"] = shown
    if not metrics:
        metrics = [{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}}}]
    out_spec["metrics"] = metrics
    out: dict[str, Any] = {"apiVersion": "autoscaling/v2", "kind": hpa.get("kind", "HorizontalPodAutoscaler"),
                           "metadata": meta, "spec": out_spec}
    current_ann = _decoded(annotations, _CURRENT_METRICS, list)
    conditions = _decoded(annotations, _CONDITIONS, list)
    if status is not None or current_ann is not None or conditions is not None:
        status = status or {}
        out_status = {k: status[k] for k in ("observedGeneration", "lastScaleTime", "currentReplicas",
                                             "desiredReplicas") if k in status}
        if current_ann is not None:
            if current_ann:  # an empty list is none (`omitempty`)
                out_status["currentMetrics"] = _listed(current_ann, _v2_metric_status)
        elif status.get("currentCPUUtilizationPercentage") is not None:
            out_status["currentMetrics"] = [{"type": "Resource", "resource": {"name": "cpu", "current": {
                "averageUtilization": status["currentCPUUtilizationPercentage"]}}}]
        if conditions:
            out_status["conditions"] = [_pick(type=c.get("type", ""), status=c.get("status", ""),
                                              lastTransitionTime=c.get("lastTransitionTime"),
                                              reason=c.get("reason") or None, message=c.get("message") or None)
                                        for c in conditions if isinstance(c, dict)]
        out["status"] = out_status
    for key in ROUND_TRIP_ANNOTATIONS:
        annotations.pop(key, None)
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    return out
