"""apps/v1 ReplicaSet, DaemonSet and ControllerRevision rules, on the strategies (Kubernetes' v1.28 defaults,
`ValidateReplicaSetSpec`, `ValidateDaemonSetSpec`, `ValidateControllerRevision` and their updates, the DaemonSet's
template generation, `ToSelectableFields`, the printers).

Messages and field paths are kube-apiserver v1.28's word for word.
"""

from __future__ import annotations

import copy
from typing import Any

from runtime.machinery.options import Body
from runtime.machinery.scheme import Scheme
from runtime.models.catalog import CONTROLLER_REVISION, DAEMON_SET, REPLICA_SET

SCHEME = Scheme("k8s.io")
RS = next(t for t in SCHEME.types if t.info is REPLICA_SET)
DS = next(t for t in SCHEME.types if t.info is DAEMON_SET)
CR = next(t for t in SCHEME.types if t.info is CONTROLLER_REVISION)
GENERATION = "deprecated.daemonset.template.generation"
MISMATCH = "`selector` does not match template `labels`"


def workload(kind: str, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"selector": {"matchLabels": {"app": "web"}},
                            "template": {"metadata": {"labels": {"app": "web"}},
                                         "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}}
    body.update(spec)
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "web", "namespace": "ci"}, "spec": body}


def created(rt: Any, obj: dict[str, Any]) -> dict[str, Any]:
    made = rt.strategy.decode(Body(obj), "Strict")[0]
    rt.strategy.default(made)
    if rt.strategy.counts_generation:
        made["metadata"]["generation"] = 1
    rt.strategy.prepare_for_create(made)
    return made


def errors_of(rt: Any, obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in rt.strategy.validate(created(rt, obj))]


def updated(rt: Any, old: dict[str, Any], change, subresource=None) -> dict[str, Any]:
    new = copy.deepcopy(old)
    change(new)
    rt.strategy.default(new)  # as the registry does first
    rt.strategy.prepare_for_update(new, old, subresource)
    return new


# ---- ReplicaSet ---------------------------------------------------------------------------------------

def test_replicaset_defaults_replicas_and_writes_status_replicas():
    made = created(RS, workload("ReplicaSet"))
    assert made["spec"]["replicas"] == 1 and made["status"] == {"replicas": 0}


def test_replicaset_selector_must_match_and_not_be_empty():
    assert errors_of(RS, workload("ReplicaSet", selector={"matchLabels": {"app": "x"}})) == [
        f'spec.template.metadata.labels: Invalid value: map[string]string{{"app":"web"}}: {MISMATCH}']
    assert errors_of(RS, workload("ReplicaSet", selector={})) == [
        "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:"
        "[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment"]


def test_replicaset_replicas_and_min_ready_seconds_may_not_be_negative():
    assert errors_of(RS, workload("ReplicaSet", replicas=-1, minReadySeconds=-1)) == [
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        "spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"]


def test_replicaset_template_restart_policy_must_be_always():
    obj = workload("ReplicaSet")
    obj["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    assert 'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"' \
        in errors_of(RS, obj)


def test_replicaset_selector_is_immutable():
    old = created(RS, workload("ReplicaSet"))
    new = updated(RS, old, lambda r: r["spec"].update(selector={"matchExpressions": [
        {"key": "app", "operator": "Exists"}]}))
    assert [str(e) for e in RS.strategy.validate_update(new, old)] == [
        "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:"
        '[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"app", Operator:"Exists", '
        "Values:[]string(nil)}}}: field is immutable"]


def test_replicaset_status_counters_are_bounded():
    old = created(RS, workload("ReplicaSet"))
    new = updated(RS, old, lambda r: r.update(status={"fullyLabeledReplicas": 1, "observedGeneration": -1}),
                  RS.strategy.subresources["status"])
    assert new["status"]["replicas"] == 0
    assert [str(e) for e in RS.strategy.validate_update(new, old)] == [
        "status.observedGeneration: Invalid value: -1: must be greater than or equal to 0",
        "status.fullyLabeledReplicas: Invalid value: 1: cannot be greater than status.replicas"]


def test_replicaset_serves_only_the_metadata_field_labels_in_apps_v1():
    assert RS.strategy.field_labels == ("metadata.name", "metadata.namespace")


def test_replicaset_cells_are_desired_current_ready_and_the_selector():
    made = created(RS, workload("ReplicaSet", replicas=2))
    made["status"] = {"replicas": 1, "readyReplicas": 1}
    cells = RS.strategy.columns.cells(made)
    assert [c["name"] for c in RS.strategy.columns.definitions] == [
        "Name", "Desired", "Current", "Ready", "Age", "Containers", "Images", "Selector"]
    assert cells[:4] == ["web", 2, 1, 1] and cells[5:] == ["web", "nginx:1.25", "app=web"]


# ---- DaemonSet ----------------------------------------------------------------------------------------

def test_daemonset_defaults_update_strategy_and_history():
    spec = created(DS, workload("DaemonSet"))["spec"]
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    assert spec["revisionHistoryLimit"] == 10


def test_daemonset_status_is_written_with_its_four_counts():
    assert created(DS, workload("DaemonSet"))["status"] == {
        "currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0}


def test_daemonset_template_generation_is_1_on_create_and_counts_template_changes():
    obj = workload("DaemonSet")
    obj["metadata"]["annotations"] = {GENERATION: "7"}
    old = created(DS, obj)
    assert old["metadata"]["annotations"][GENERATION] == "7"
    fresh = created(DS, workload("DaemonSet"))
    assert fresh["metadata"]["annotations"] == {GENERATION: "1"}
    image = updated(DS, fresh, lambda d: d["spec"]["template"]["spec"]["containers"][0].update(image="nginx:2"))
    assert image["metadata"]["annotations"][GENERATION] == "2" and image["metadata"]["generation"] == 2
    sent = updated(DS, fresh, lambda d: d["metadata"]["annotations"].update({GENERATION: "40"}))
    assert sent["metadata"]["annotations"][GENERATION] == "1"


def test_daemonset_without_a_selector_matches_no_template():
    obj = workload("DaemonSet")
    del obj["spec"]["selector"]
    assert errors_of(DS, obj) == [
        f'spec.template.metadata.labels: Invalid value: map[string]string{{"app":"web"}}: {MISMATCH}']


def test_daemonset_empty_selector_is_invalid():
    assert errors_of(DS, workload("DaemonSet", selector={})) == [
        "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:"
        "[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for daemonset"]


def test_daemonset_max_surge_and_max_unavailable_not_both_set():
    obj = workload("DaemonSet", updateStrategy={"type": "RollingUpdate",
                                                "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "10%"}})
    assert errors_of(DS, obj) == ['spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString'
                                  '{Type:1, IntVal:0, StrVal:"10%"}: may not be set when maxUnavailable is non-zero']


def test_daemonset_max_unavailable_may_not_be_0_when_max_surge_is_0():
    obj = workload("DaemonSet", updateStrategy={"rollingUpdate": {"maxUnavailable": 0}})
    assert errors_of(DS, obj) == [
        "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0"]


def test_daemonset_update_strategy_type_is_supported():
    assert errors_of(DS, workload("DaemonSet", updateStrategy={"type": "Surge"})) == [
        'spec.updateStrategy: Unsupported value: apps.DaemonSetUpdateStrategy{Type:"Surge", '
        'RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: supported values: "RollingUpdate", "OnDelete"']


def test_daemonset_selector_is_immutable():
    old = created(DS, workload("DaemonSet"))
    new = updated(DS, old, lambda d: d["spec"].update(selector={"matchLabels": {"app": "web", "b": "c"}}))
    new["spec"]["template"]["metadata"]["labels"]["b"] = "c"
    assert [str(e) for e in DS.strategy.validate_update(new, old)] == [
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "b":"c"}, '
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"]


def test_daemonset_cells_show_counts_and_the_node_selector():
    made = created(DS, workload("DaemonSet"))
    made["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "a", "disk": "ssd"}
    made["status"].update(desiredNumberScheduled=3, currentNumberScheduled=2, numberReady=1,
                          updatedNumberScheduled=2, numberAvailable=1)
    cells = DS.strategy.columns.cells(made)
    assert cells[:7] == ["web", 3, 2, 1, 2, 1, "disk=ssd,zone=a"]
    assert cells[8:] == ["web", "nginx:1.25", "app=web"]
    assert DS.strategy.columns.cells(created(DS, workload("DaemonSet")))[6] == "<none>"


# ---- ControllerRevision -------------------------------------------------------------------------------

def revision(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "web-1", "namespace": "ci"},
            **fields}


def test_controller_revision_data_is_mandatory_and_revision_non_negative():
    assert errors_of(CR, revision(revision=-1)) == ["data: Required value: data is mandatory",
                                                    "revision: Invalid value: -1: must be greater than or equal to 0"]


def test_controller_revision_revision_is_written_as_0_when_missing():
    assert created(CR, revision(data={"a": 1}))["revision"] == 0


def test_controller_revision_data_is_immutable():
    old = created(CR, revision(data={"a": 1}, revision=1))
    new = updated(CR, old, lambda r: r.update(data={"a": 2}))
    assert [str(e) for e in CR.strategy.validate_update(new, old)] == [
        'data: Invalid value: runtime.Unknown{TypeMeta:runtime.TypeMeta{APIVersion:"", Kind:""}, '
        'Raw:[]uint8{0x7b, 0x22, 0x61, 0x22, 0x3a, 0x32, 0x7d}, ContentEncoding:"", ContentType:"application/json"}: '
        "field is immutable"]
    assert CR.strategy.validate_update(updated(CR, old, lambda r: r.update(revision=2)), old) == []


def test_controller_revision_cells_name_the_controller():
    owned = revision(data={}, revision=3)
    owned["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db",
                                             "uid": "u", "controller": True}]
    made = created(CR, owned)
    assert CR.strategy.columns.cells(made)[:3] == ["web-1", "statefulset.apps/db", 3]
    assert CR.strategy.columns.cells(created(CR, revision(data={})))[1] == "<none>"
