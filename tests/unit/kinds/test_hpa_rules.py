"""autoscaling HorizontalPodAutoscaler rules on the strategies (Kubernetes v1.28: v2's
`SetDefaults_HorizontalPodAutoscaler`, `ValidateHorizontalPodAutoscaler`, the v1 conversion and its round-trip
annotations, `printHorizontalPodAutoscaler`)."""

from __future__ import annotations

import copy
import json
from typing import Any

from runtime.machinery.options import Body
from runtime.machinery.scheme import Scheme
from runtime.machinery.storedobject import StoredObject
from runtime.server.kinds.batch.hpaconversion import to_v1, to_v2

SCHEME = Scheme("k8s.io")
V2 = SCHEME.by_api_version_kind("autoscaling/v2", "HorizontalPodAutoscaler")
V1 = SCHEME.by_api_version_kind("autoscaling/v1", "HorizontalPodAutoscaler")
REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
MEMORY = {"type": "Resource",
          "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "500Mi"}}}
CPU = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}


def hpa(api_version: str = "autoscaling/v2", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "ci"},
            "spec": {"scaleTargetRef": dict(REF), "maxReplicas": 5, **spec}}


def created(obj: dict[str, Any]) -> dict[str, Any]:
    rt = V1 if obj["apiVersion"] == "autoscaling/v1" else V2
    out, _ = rt.strategy.decode(Body(obj), "Strict")
    rt.strategy.default(out)
    out["metadata"]["uid"] = "u"
    out["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    rt.strategy.prepare_for_create(out)
    return out


def errors_of(obj: dict[str, Any]) -> list[str]:
    rt = V1 if obj["apiVersion"] == "autoscaling/v1" else V2
    return [str(e) for e in rt.strategy.validate(created(obj))]


def test_v2_defaults_min_replicas_and_the_cpu_target() -> None:
    spec = created(hpa())["spec"]
    assert spec["minReplicas"] == 1
    assert spec["metrics"] == [{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 80}}}]
    assert "behavior" not in spec


def test_v2_behavior_set_is_filled_with_the_default_rules() -> None:
    spec = created(hpa(behavior={"scaleDown": {"stabilizationWindowSeconds": 60}}))["spec"]
    assert spec["behavior"] == {
        "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]},
        "scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Max", "policies": [
            {"type": "Percent", "value": 100, "periodSeconds": 15}]}}


def test_defaulting_twice_equals_once() -> None:
    out, _ = V2.strategy.decode(Body(hpa(behavior={})), "Strict")
    V2.strategy.default(out)
    once = copy.deepcopy(out)
    V2.strategy.default(out)
    assert out == once


def test_scale_target_ref_kind_and_name_are_required() -> None:
    obj = hpa()
    obj["spec"]["scaleTargetRef"] = {"apiVersion": "apps/v1"}
    assert errors_of(obj) == ["spec.scaleTargetRef.kind: Required value", "spec.scaleTargetRef.name: Required value"]


def test_scale_target_ref_name_is_a_path_segment() -> None:
    obj = hpa()
    obj["spec"]["scaleTargetRef"]["name"] = "a/b"
    assert errors_of(obj) == ["spec.scaleTargetRef.name: Invalid value: \"a/b\": may not contain '/'"]


def test_min_replicas_at_least_one() -> None:
    assert errors_of(hpa(minReplicas=0)) == ["spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
                                            "spec.metrics: Forbidden: must specify at least one Object or External "
                                            "metric to support scaling to zero replicas"]


def test_max_replicas_positive_and_not_below_min() -> None:
    assert errors_of(hpa(minReplicas=3, maxReplicas=2)) == [
        "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`"]
    obj = hpa()
    del obj["spec"]["maxReplicas"]
    assert errors_of(obj) == ["spec.maxReplicas: Invalid value: 0: must be greater than 0",
                              "spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`"]


def test_metric_type_must_be_known_and_name_its_source() -> None:
    assert errors_of(hpa(metrics=[{"type": "Pods"}])) == [
        "spec.metrics[0].pods: Required value: must populate information for the given metric source"]
    assert errors_of(hpa(metrics=[{"type": "Magic"}])) == [
        'spec.metrics[0].type: Unsupported value: "Magic": supported values: "ContainerResource", "External", '
        '"Object", "Pods", "Resource"'] * 2


def test_metric_sets_only_its_source() -> None:
    metric = {"type": "Resource", "resource": CPU["resource"],
              "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}}
    assert "spec.metrics[0].pods: Forbidden: must populate the given metric source only" in \
        errors_of(hpa(metrics=[metric]))


def test_resource_target_utilization_positive() -> None:
    metric = copy.deepcopy(CPU)
    metric["resource"]["target"]["averageUtilization"] = 0
    assert errors_of(hpa(metrics=[metric])) == [
        "spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0"]


def test_resource_target_needs_utilization_or_value_not_both() -> None:
    metric = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization"}}}
    assert errors_of(hpa(metrics=[metric])) == [
        "spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or "
        "a target utilization"]
    metric["resource"]["target"].update(averageUtilization=50, averageValue="100m")
    assert errors_of(hpa(metrics=[metric])) == [
        "spec.metrics[0].resource.target.averageValue: Forbidden: may not set both a target raw value and a target "
        "utilization"]


def test_target_type_and_values_positive() -> None:
    metric = {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "Average", "averageValue": "0"}}}
    assert errors_of(hpa(metrics=[metric])) == [
        'spec.metrics[0].pods.target.type: Invalid value: "Average": must be either Utilization, Value, or '
        'AverageValue',
        "spec.metrics[0].pods.target.averageValue: Invalid value: 0: must be positive"]


def test_external_metric_needs_a_value_and_a_name() -> None:
    metric = {"type": "External", "external": {"metric": {}, "target": {"type": "Value"}}}
    assert errors_of(hpa(metrics=[metric])) == [
        "spec.metrics[0].external.metric.name: Required value: must specify a metric name",
        "spec.metrics[0].external.target.averageValue: Required value: must set either a target value for metric "
        "or a per-pod target"]


def test_object_metric_needs_its_described_object() -> None:
    metric = {"type": "Object", "object": {"describedObject": {"kind": "Ingress"}, "metric": {"name": "rps"},
                                           "target": {"type": "Value", "value": "100"}}}
    assert errors_of(hpa(metrics=[metric])) == ["spec.metrics[0].object.describedObject.name: Required value"]


def test_behavior_rules() -> None:
    behavior = {"scaleUp": {"stabilizationWindowSeconds": 4000, "selectPolicy": "Median", "policies": [
        {"type": "Nodes", "value": 0, "periodSeconds": 1801}]}, "scaleDown": {"policies": []}}
    assert errors_of(hpa(behavior=behavior)) == [
        "spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 4000: must be less than or equal to 3600",
        'spec.behavior.scaleUp.selectPolicy: Unsupported value: "Median": supported values: "Disabled", "Max", '
        '"Min"',
        'spec.behavior.scaleUp.policies[0].type: Unsupported value: "Nodes": supported values: "Percent", "Pods"',
        "spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero",
        "spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800",
        "spec.behavior.scaleDown.policies: Required value: must specify at least one Policy"]


def test_min_replicas_zero_kept_on_update_of_an_hpa_that_has_it() -> None:
    old = created(hpa())
    old["spec"]["minReplicas"] = 0
    new = copy.deepcopy(old)
    new["spec"]["maxReplicas"] = 6
    errs = [str(e) for e in V2.strategy.validate_update(new, old)]
    assert errs == ["spec.metrics: Forbidden: must specify at least one Object or External metric to support "
                    "scaling to zero replicas"]


def test_status_replicas_not_negative() -> None:
    obj = created(hpa())
    obj["status"] = {"currentReplicas": -1, "desiredReplicas": 0}
    assert [str(e) for e in V2.strategy.validate(obj)] == [
        "status.currentReplicas: Invalid value: -1: must be greater than or equal to 0"]


def test_no_generation_and_no_create_on_update() -> None:
    assert not V2.strategy.counts_generation and not V2.strategy.allow_create_on_update
    assert V2.strategy.status_subresource and V1.strategy.status_subresource


def test_v1_write_is_stored_as_v2_with_the_cpu_target() -> None:
    stored = created(hpa("autoscaling/v1", targetCPUUtilizationPercentage=70))
    assert stored["apiVersion"] == "autoscaling/v2" and stored["spec"]["minReplicas"] == 1
    assert stored["spec"]["metrics"] == [{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 70}}}]
    assert "targetCPUUtilizationPercentage" not in stored["spec"]


def test_v1_without_a_cpu_target_gets_80_percent() -> None:
    stored = created(hpa("autoscaling/v1"))
    assert stored["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 80


def test_v1_rules_are_the_v2_objects_with_its_paths() -> None:
    assert errors_of(hpa("autoscaling/v1", targetCPUUtilizationPercentage=0)) == [
        "spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0"]


def test_v2_read_as_v1_keeps_the_other_metrics_and_behavior_in_annotations() -> None:
    stored = created(hpa(metrics=[MEMORY, CPU], behavior={"scaleUp": {"selectPolicy": "Min"}}))
    shown = V1.strategy.present(StoredObject("k", stored, 1)).obj
    assert shown["apiVersion"] == "autoscaling/v1"
    assert shown["spec"] == {"scaleTargetRef": REF, "minReplicas": 1, "maxReplicas": 5,
                             "targetCPUUtilizationPercentage": 60}
    annotations = shown["metadata"]["annotations"]
    assert annotations["autoscaling.alpha.kubernetes.io/metrics"] == (
        '[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"500Mi"}}]')
    assert json.loads(annotations["autoscaling.alpha.kubernetes.io/behavior"]) == {
        "ScaleUp": {"StabilizationWindowSeconds": 0, "SelectPolicy": "Min", "Policies": [
            {"Type": "Pods", "Value": 4, "PeriodSeconds": 15}, {"Type": "Percent", "Value": 100, "PeriodSeconds": 15}]},
        "ScaleDown": {"StabilizationWindowSeconds": None, "SelectPolicy": "Max", "Policies": [
            {"Type": "Percent", "Value": 100, "PeriodSeconds": 15}]}}


def test_v1_round_trip_is_the_stored_object() -> None:
    stored = created(hpa(metrics=[MEMORY, CPU], behavior={"scaleDown": {"stabilizationWindowSeconds": 30}}))
    stored["status"] = {"currentReplicas": 2, "desiredReplicas": 3, "currentMetrics": [
        {"type": "Resource",
         "resource": {"name": "cpu", "current": {"averageUtilization": 40, "averageValue": "80m"}}}],
        "conditions": [{"type": "AbleToScale", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z",
                        "reason": "ReadyForNewScale"}]}
    shown = to_v1(stored)
    assert shown["status"]["currentCPUUtilizationPercentage"] == 40
    assert to_v2(shown) == {**stored, "apiVersion": "autoscaling/v2"}


def test_v1_round_trip_drops_annotations_it_did_not_make() -> None:
    stored = created(hpa())
    stored["metadata"]["annotations"] = {"autoscaling.alpha.kubernetes.io/metrics": "[]", "team": "a"}
    assert to_v1(stored)["metadata"]["annotations"] == {"team": "a"}


def test_v1_annotation_that_does_not_decode_is_ignored() -> None:
    obj = hpa("autoscaling/v1", targetCPUUtilizationPercentage=50)
    obj["metadata"]["annotations"] = {"autoscaling.alpha.kubernetes.io/metrics": "not json"}
    stored = created(obj)
    assert len(stored["spec"]["metrics"]) == 1 and "annotations" not in stored["metadata"]


def test_printer_columns_and_targets() -> None:
    assert [c["name"] for c in V2.strategy.columns.definitions] == [
        "Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"]
    obj = created(hpa(metrics=[CPU, MEMORY, {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {
        "type": "AverageValue", "averageValue": "1k"}}}]))
    obj["status"] = {"currentReplicas": 2, "currentMetrics": [
        {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 30}}}]}
    assert V2.strategy.columns.cells(obj)[1:6] == ["Deployment/web", "30%/60%, <unknown>/500Mi + 1 more...", "1", 5, 2]
    v1 = to_v1(created(hpa()))
    assert V1.strategy.columns.cells(v1)[2] == "<unknown>/80%"


def test_v1_metrics_annotation_is_gos_json_with_sorted_selector_labels() -> None:
    pods = {"type": "Pods", "pods": {"metric": {"name": "qps", "selector": {"matchLabels": {"z": "1", "a": "2"}}},
                                     "target": {"type": "AverageValue", "averageValue": "10"}}}
    shown = to_v1(created(hpa(metrics=[pods])))
    assert shown["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/metrics"] == (
        '[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10",'
        '"selector":{"matchLabels":{"a":"2","z":"1"}}}}]')


def test_container_resource_names_a_container_that_is_a_dns_label() -> None:
    metric = {"type": "ContainerResource", "containerResource": {
        "name": "cpu", "container": "Web_1", "target": {"type": "Utilization", "averageUtilization": 50}}}
    assert errors_of(hpa(metrics=[metric])) == [
        'spec.metrics[0].containerResource.container: Invalid value: "Web_1": a lowercase RFC 1123 label must '
        "consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric "
        "character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]
    del metric["containerResource"]["container"]
    assert errors_of(hpa(metrics=[metric])) == [
        "spec.metrics[0].containerResource.container: Required value: must specify a container"]
