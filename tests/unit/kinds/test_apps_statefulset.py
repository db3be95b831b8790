"""apps/v1 StatefulSet rules, on the strategy (Kubernetes' v1.28 `SetDefaults_StatefulSet`, `ValidateStatefulSetSpec`,
`ValidateStatefulSetUpdate`, `ValidateStatefulSetStatus`, the strategy's dropped fields, `printStatefulSet`).

Messages and field paths are kube-apiserver v1.28's word for word.
"""

from __future__ import annotations

import copy
from typing import Any

from runtime.machinery.options import Body
from runtime.machinery.scheme import Scheme
from runtime.models.catalog import STATEFUL_SET

SCHEME = Scheme("k8s.io")
RT = next(t for t in SCHEME.types if t.info is STATEFUL_SET)
STATUS = RT.strategy.subresources["status"]
FORBIDDEN = ("spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
             "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")


def statefulset(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                            "template": {"metadata": {"labels": {"app": "db"}},
                                         "spec": {"containers": [{"name": "db", "image": "postgres:16"}]}}}
    body.update(spec)
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "ci"},
            "spec": body}


def created(obj: dict[str, Any]) -> dict[str, Any]:
    made = RT.strategy.decode(Body(obj), "Strict")[0]
    RT.strategy.default(made)
    made["metadata"]["generation"] = 1
    RT.strategy.prepare_for_create(made)
    return made


def errors_of(obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in RT.strategy.validate(created(obj))]


def update_errors(old: dict[str, Any], change, subresource=None) -> list[str]:
    new = copy.deepcopy(old)
    change(new)
    RT.strategy.default(new)  # as the registry does first
    RT.strategy.prepare_for_update(new, old, subresource)
    return [str(e) for e in RT.strategy.validate_update(new, old)]


# ---- defaults -----------------------------------------------------------------------------------------

def test_defaults_of_v1_28():
    spec = created(statefulset())["spec"]
    assert spec["replicas"] == 1 and spec["revisionHistoryLimit"] == 10
    assert spec["podManagementPolicy"] == "OrderedReady"
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}


def test_service_name_is_optional_and_written_empty():
    obj = statefulset()
    del obj["spec"]["serviceName"]
    made = created(obj)
    assert made["spec"]["serviceName"] == "" and RT.strategy.validate(made) == []


def test_on_delete_gets_no_rolling_update_and_a_given_rolling_update_gets_partition_0():
    assert created(statefulset(updateStrategy={"type": "OnDelete"}))["spec"]["updateStrategy"] == {"type": "OnDelete"}
    given = created(statefulset(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {}}))
    assert given["spec"]["updateStrategy"]["rollingUpdate"] == {"partition": 0}


def test_volume_claim_templates_get_claim_defaults():
    claim = {"metadata": {"name": "data"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1024Mi"}}}}
    made = created(statefulset(volumeClaimTemplates=[claim]))["spec"]["volumeClaimTemplates"][0]
    assert made["spec"]["volumeMode"] == "Filesystem" and made["status"] == {"phase": "Pending"}
    assert made["spec"]["resources"]["requests"] == {"storage": "1Gi"}


def test_max_unavailable_is_dropped_while_its_gate_is_off():
    made = created(statefulset(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}))
    assert made["spec"]["updateStrategy"]["rollingUpdate"] == {"partition": 0}


def test_a_created_statefulset_status_is_zero_replicas():
    assert created(statefulset())["status"] == {"replicas": 0, "availableReplicas": 0}


def test_defaulting_twice_equals_defaulting_once():
    once = created(statefulset(volumeClaimTemplates=[{"metadata": {"name": "d"}, "spec": {}}]))
    twice = copy.deepcopy(once)
    RT.strategy.default(twice)
    assert twice == once


# ---- validation ---------------------------------------------------------------------------------------

def test_a_valid_statefulset_has_no_errors():
    assert errors_of(statefulset()) == []


def test_selector_must_match_template_labels():
    assert errors_of(statefulset(selector={"matchLabels": {"app": "other"}})) == [
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"db"}: `selector` does not match '
        "template `labels`"]


def test_an_empty_selector_is_invalid_for_statefulset():
    assert errors_of(statefulset(selector={"matchLabels": {}})) == [
        "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{}, "
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for statefulset"]


def test_pod_management_policy_is_ordered_ready_or_parallel():
    assert errors_of(statefulset(podManagementPolicy="Random")) == [
        "spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'"]


def test_update_strategy_type_is_rolling_update_or_on_delete():
    assert errors_of(statefulset(updateStrategy={"type": "Canary"})) == [
        'spec.updateStrategy: Invalid value: apps.StatefulSetUpdateStrategy{Type:"Canary", '
        "RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}: must be 'RollingUpdate' or 'OnDelete'"]


def test_on_delete_may_not_have_a_rolling_update():
    assert errors_of(statefulset(updateStrategy={"type": "OnDelete", "rollingUpdate": {"partition": 1}})) == [
        "spec.updateStrategy.rollingUpdate: Invalid value: apps.RollingUpdateStatefulSetStrategy{Partition:1, "
        "MaxUnavailable:(*intstr.IntOrString)(nil)}: only allowed for updateStrategy 'RollingUpdate'"]


def test_partition_may_not_be_negative():
    assert errors_of(statefulset(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": -1}})) == [
        "spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0"]


def test_retention_policy_is_retain_or_delete():
    assert errors_of(statefulset(persistentVolumeClaimRetentionPolicy={"whenDeleted": "Keep"})) == [
        'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": supported values: '
        '"Retain", "Delete"']


def test_replicas_min_ready_seconds_and_ordinals_may_not_be_negative():
    assert errors_of(statefulset(replicas=-1, minReadySeconds=-1, ordinals={"start": -1})) == [
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        "spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0",
        "spec.ordinals.start: Invalid value: -1: must be greater than or equal to 0"]


def test_template_restart_policy_must_be_always_and_no_active_deadline():
    obj = statefulset()
    obj["spec"]["template"]["spec"].update(restartPolicy="Never", activeDeadlineSeconds=5)
    assert errors_of(obj) == [
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
        "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported"]


def test_the_template_pod_spec_is_not_validated_as_kubernetes_leaves_it_out():
    obj = statefulset()
    obj["spec"]["template"]["spec"]["containers"] = []
    assert errors_of(obj) == []


def test_template_labels_are_validated_at_template_labels():
    obj = statefulset(selector={"matchLabels": {"app": "db"}})
    obj["spec"]["template"]["metadata"]["labels"]["bad key"] = "x"
    assert errors_of(obj)[0].startswith('spec.template.labels: Invalid value: "bad key": name part must consist')


# ---- updates ------------------------------------------------------------------------------------------

def test_replicas_template_strategy_and_retention_may_change():
    old = created(statefulset())

    def change(s):
        s["spec"].update(replicas=3, minReadySeconds=5, updateStrategy={"type": "OnDelete"},
                         persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete", "whenScaled": "Retain"})
        s["spec"]["template"]["spec"]["containers"][0]["image"] = "postgres:17"
    assert update_errors(old, change) == []


def test_other_spec_fields_may_not_change():
    old = created(statefulset())
    assert update_errors(old, lambda s: s["spec"].update(serviceName="other")) == [FORBIDDEN]
    assert update_errors(old, lambda s: s["spec"].update(podManagementPolicy="Parallel")) == [FORBIDDEN]


def test_the_selector_may_not_change():
    old = created(statefulset())

    def change(s):
        s["spec"]["selector"] = {"matchLabels": {"app": "db", "x": "y"}}
        s["spec"]["template"]["metadata"]["labels"]["x"] = "y"
    assert update_errors(old, change) == [FORBIDDEN]


def test_a_spec_change_bumps_the_generation_and_a_status_write_does_not():
    old = created(statefulset())
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = 2
    RT.strategy.default(new)  # as the registry does first
    RT.strategy.prepare_for_update(new, old)
    assert new["metadata"]["generation"] == 2
    status = copy.deepcopy(old)
    status["status"] = {"readyReplicas": 0}
    RT.strategy.default(status)  # as the registry does first
    RT.strategy.prepare_for_update(status, old, STATUS)
    assert status["metadata"]["generation"] == 1
    assert status["status"] == {"readyReplicas": 0, "replicas": 0, "availableReplicas": 0}


def test_status_counters_are_bounded_by_replicas_and_ready():
    old = created(statefulset())
    assert update_errors(old, lambda s: s.update(status={"replicas": 2, "readyReplicas": 1, "availableReplicas": 2,
                                                         "currentReplicas": 3}), STATUS) == [
        "status.currentReplicas: Invalid value: 3: cannot be greater than status.replicas",
        "status.availableReplicas: Invalid value: 2: cannot be greater than status.readyReplicas"]


# ---- printing -----------------------------------------------------------------------------------------

def test_columns_and_cells_are_name_ready_age_then_containers_and_images():
    assert [c["name"] for c in RT.strategy.columns.definitions] == ["Name", "Ready", "Age", "Containers", "Images"]
    obj = created(statefulset(replicas=3))
    obj["status"]["readyReplicas"] = 2
    cells = RT.strategy.columns.cells(obj)
    assert cells[:2] == ["db", "2/3"] and cells[3:] == ["db", "postgres:16"]


def test_a_statefulset_stored_before_its_defaults_may_still_be_scaled():
    stored = created(statefulset())
    del stored["spec"]["serviceName"], stored["spec"]["revisionHistoryLimit"]
    assert update_errors(stored, lambda s: s["spec"].update(replicas=2)) == []


def test_an_empty_pod_management_policy_is_defaulted_as_unset():
    assert created(statefulset(podManagementPolicy=""))["spec"]["podManagementPolicy"] == "OrderedReady"


def test_names_are_dns_labels_on_create_only():
    obj = statefulset()
    obj["metadata"]["name"] = "db.v1"
    assert errors_of(obj) == ['metadata.name: Invalid value: "db.v1": a lowercase RFC 1123 label must consist of '
                              "lower case alphanumeric characters or '-', and must start and end with an alphanumeric "
                              "character (e.g. 'my-name',  or '123-abc', regex used for validation is "
                              "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]
    assert update_errors(created(obj), lambda s: s["spec"].update(replicas=2)) == []


def test_claim_template_quantities_are_rounded_up_to_milli_units():
    claim = {"metadata": {"name": "data"}, "spec": {"resources": {"requests": {"storage": "0.0001"}}}}
    made = created(statefulset(volumeClaimTemplates=[claim]))["spec"]["volumeClaimTemplates"][0]
    assert made["spec"]["resources"]["requests"] == {"storage": "1m"}
