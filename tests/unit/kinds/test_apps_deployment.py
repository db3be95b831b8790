"""apps/v1 Deployment rules, on the strategy (Kubernetes' `SetDefaults_Deployment`, `ValidateDeploymentSpec`,
`ValidateDeploymentStatus`, the deployment strategy's generation and status handling, `printDeployment`, ScaleREST).

Messages and field paths are kube-apiserver v1.28's word for word.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from runtime.machinery import errors
from runtime.machinery.options import Body
from runtime.machinery.scheme import Scheme
from runtime.models.catalog import DEPLOYMENT

SCHEME = Scheme("k8s.io")
RT = next(t for t in SCHEME.types if t.info is DEPLOYMENT)
STATUS = RT.strategy.subresources["status"]
SCALE = RT.strategy.subresources["scale"]
MISMATCH = "`selector` does not match template `labels`"


def deployment(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"selector": {"matchLabels": {"app": "web"}},
                            "template": {"metadata": {"labels": {"app": "web"}},
                                         "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}}
    body.update(spec)
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "ci"},
            "spec": body}


def created(obj: dict[str, Any]) -> dict[str, Any]:
    """A body as the create path makes it: decoded, defaulted, prepared (generation 1)."""
    made = RT.strategy.decode(Body(obj), "Strict")[0]
    RT.strategy.default(made)
    made["metadata"]["generation"] = 1
    RT.strategy.prepare_for_create(made)
    return made


def errors_of(obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in RT.strategy.validate(created(obj))]


def updated(old: dict[str, Any], change, subresource=None) -> dict[str, Any]:
    new = copy.deepcopy(old)
    change(new)
    RT.strategy.default(new)  # as the registry does first
    RT.strategy.prepare_for_update(new, old, subresource)
    return new


# ---- defaults -----------------------------------------------------------------------------------------

def test_defaults_replicas_strategy_history_and_deadline():
    spec = created(deployment())["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert (spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) == (10, 600)


def test_defaults_keep_what_is_given_and_fill_a_partial_rolling_update():
    spec = created(deployment(replicas=0, strategy={"rollingUpdate": {"maxSurge": 2}}))["spec"]
    assert spec["replicas"] == 0
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2, "maxUnavailable": "25%"}}


def test_recreate_gets_no_rolling_update():
    assert created(deployment(strategy={"type": "Recreate"}))["spec"]["strategy"] == {"type": "Recreate"}


def test_the_pod_template_is_defaulted_through_podspec():
    pod = created(deployment())["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Always" and pod["dnsPolicy"] == "ClusterFirst"


def test_defaulting_twice_equals_defaulting_once():
    once = created(deployment())
    twice = copy.deepcopy(once)
    RT.strategy.default(twice)
    assert twice == once


def test_a_created_deployment_has_an_empty_status_and_generation_1():
    made = created({**deployment(), "status": {"replicas": 5}})
    assert made["status"] == {} and made["metadata"]["generation"] == 1


# ---- validation ---------------------------------------------------------------------------------------

def test_a_valid_deployment_has_no_errors():
    assert errors_of(deployment()) == []


def test_selector_must_match_template_labels():
    obj = deployment(selector={"matchLabels": {"app": "other"}})
    assert errors_of(obj) == [f'spec.template.metadata.labels: Invalid value: map[string]string{{"app":"web"}}: '
                              f"{MISMATCH}"]


def test_selector_is_required():
    obj = deployment()
    del obj["spec"]["selector"]
    assert errors_of(obj) == ["spec.selector: Required value",
                              f'spec.template.metadata.labels: Invalid value: map[string]string{{"app":"web"}}: '
                              f"{MISMATCH}"]


def test_an_empty_selector_is_invalid():
    assert errors_of(deployment(selector={})) == [
        "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment"]


def test_a_selector_with_a_bad_operator_is_invalid():
    obj = deployment(selector={"matchExpressions": [{"key": "app", "operator": "Like", "values": ["web"]}]})
    assert errors_of(obj) == [
        'spec.selector.matchExpressions[0].operator: Invalid value: "Like": not a valid selector operator',
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:'
        '[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"app", Operator:"Like", '
        'Values:[]string{"web"}}}}: invalid label selector']


def test_a_selector_matching_by_expression_is_valid():
    obj = deployment(selector={"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]})
    assert errors_of(obj) == []


def test_template_restart_policy_must_be_always():
    obj = deployment()
    obj["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    assert 'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"' \
        in errors_of(obj)


def test_template_active_deadline_seconds_is_forbidden():
    obj = deployment()
    obj["spec"]["template"]["spec"]["activeDeadlineSeconds"] = 30
    assert "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in Deployment is not " \
           "Supported" in errors_of(obj)


def test_the_pod_template_is_validated_through_podspec():
    obj = deployment()
    obj["spec"]["template"]["spec"]["containers"] = []
    assert any(e.startswith("spec.template.spec.containers: Required value") for e in errors_of(obj))


def test_replicas_may_not_be_negative():
    assert errors_of(deployment(replicas=-1)) == [
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0"]


def test_max_surge_and_max_unavailable_may_not_both_be_zero():
    obj = deployment(strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "0%"}})
    assert errors_of(obj) == ['spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString'
                              '{Type:1, IntVal:0, StrVal:"0%"}: may not be 0 when `maxSurge` is 0']


def test_max_unavailable_may_not_exceed_100_percent():
    obj = deployment(strategy={"rollingUpdate": {"maxUnavailable": "150%"}})
    assert errors_of(obj) == ['spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString'
                              '{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%']


def test_max_surge_must_be_a_percent_or_a_non_negative_integer():
    obj = deployment(strategy={"rollingUpdate": {"maxSurge": "lots", "maxUnavailable": -1}})
    assert errors_of(obj) == [
        "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: -1: must be greater than or equal to 0",
        'spec.strategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"lots"}: '
        "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex "
        "used for validation is '[0-9]+%')"]


def test_recreate_may_not_have_a_rolling_update():
    obj = deployment(strategy={"type": "Recreate", "rollingUpdate": {"maxSurge": 1}})
    assert errors_of(obj) == [
        "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"]


def test_an_unknown_strategy_type_is_unsupported():
    assert errors_of(deployment(strategy={"type": "BlueGreen"})) == [
        'spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:"BlueGreen", '
        'RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: "Recreate", "RollingUpdate"']


def test_min_ready_seconds_and_revision_history_limit_may_not_be_negative():
    obj = deployment(minReadySeconds=-1, revisionHistoryLimit=-2)
    assert errors_of(obj) == ["spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0",
                              "spec.revisionHistoryLimit: Invalid value: -2: must be greater than or equal to 0"]


def test_progress_deadline_must_exceed_min_ready_seconds():
    obj = deployment(minReadySeconds=30, progressDeadlineSeconds=30)
    assert errors_of(obj) == ["spec.progressDeadlineSeconds: Invalid value: 30: must be greater than minReadySeconds"]


def test_names_are_dns_subdomains():
    obj = deployment()
    obj["metadata"]["name"] = "Web"
    assert errors_of(obj)[0].startswith('metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain')


# ---- updates ------------------------------------------------------------------------------------------

def test_selector_is_immutable():
    old = created(deployment())
    new = updated(old, lambda d: d["spec"].update(selector={"matchLabels": {"app": "web", "tier": "x"}}))
    new["spec"]["template"]["metadata"]["labels"]["tier"] = "x"
    assert [str(e) for e in RT.strategy.validate_update(new, old)] == [
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "tier":"x"}, '
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"]


def test_a_spec_change_bumps_the_generation():
    old = created(deployment())
    assert updated(old, lambda d: d["spec"].update(replicas=3))["metadata"]["generation"] == 2


def test_an_annotation_change_bumps_the_generation():
    old = created(deployment())
    new = updated(old, lambda d: d["metadata"].update(annotations={"note": "x"}))
    assert new["metadata"]["generation"] == 2


def test_a_label_change_keeps_the_generation():
    old = created(deployment())
    assert updated(old, lambda d: d["metadata"].update(labels={"a": "b"}))["metadata"]["generation"] == 1


def test_a_spec_write_keeps_the_stored_status():
    old = created(deployment())
    old["status"] = {"replicas": 1}
    assert updated(old, lambda d: d.update(status={"replicas": 9}))["status"] == {"replicas": 1}


def test_an_update_is_defaulted_as_a_create():
    old = created(deployment(replicas=3))
    new = updated(old, lambda d: d["spec"].pop("replicas"))
    assert new["spec"]["replicas"] == 1 and new["metadata"]["generation"] == 2


def test_a_status_write_keeps_the_spec_and_the_generation():
    old = created(deployment())
    new = updated(old, lambda d: (d["spec"].update(replicas=7), d.update(status={"replicas": 1})), STATUS)
    assert new["spec"]["replicas"] == 1 and new["status"] == {"replicas": 1}
    assert new["metadata"]["generation"] == 1
    assert RT.strategy.validate_update(new, old) == []


def test_status_counters_may_not_be_negative_nor_exceed_replicas():
    old = created(deployment())
    new = updated(old, lambda d: d.update(status={"replicas": 1, "readyReplicas": 2, "availableReplicas": 2,
                                                  "unavailableReplicas": -1}), STATUS)
    assert [str(e) for e in RT.strategy.validate_update(new, old)] == [
        "status.unavailableReplicas: Invalid value: -1: must be greater than or equal to 0",
        "status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas",
        "status.availableReplicas: Invalid value: 2: cannot be greater than status.replicas"]


def test_collision_count_may_not_be_decremented():
    old = created(deployment())
    old["status"] = {"collisionCount": 2}
    new = updated(old, lambda d: d.update(status={"collisionCount": 1}), STATUS)
    assert [str(e) for e in RT.strategy.validate_update(new, old)] == [
        "status.collisionCount: Invalid value: 1: cannot be decremented"]


# ---- scale --------------------------------------------------------------------------------------------

def test_scale_view_shows_replicas_and_the_selector_string():
    obj = created(deployment(replicas=3, selector={"matchLabels": {"app": "web"}, "matchExpressions": [
        {"key": "tier", "operator": "In", "values": ["b", "a"]}]}))
    obj["spec"]["template"]["metadata"]["labels"]["tier"] = "a"
    obj["status"] = {"replicas": 2}
    view = SCALE.view(obj)
    assert (view["apiVersion"], view["kind"]) == ("autoscaling/v1", "Scale")
    assert view["spec"] == {"replicas": 3}
    assert view["status"] == {"replicas": 2, "selector": "app=web,tier in (a,b)"}


def test_scale_view_of_zero_replicas_leaves_spec_replicas_out():
    assert SCALE.view(created(deployment(replicas=0)))["spec"] == {}


def test_a_written_scale_changes_only_spec_replicas():
    obj = created(deployment())
    new = SCALE.from_view({"spec": {"replicas": 4}, "status": {"replicas": 99}}, copy.deepcopy(obj))
    assert new["spec"]["replicas"] == 4 and new["status"] == obj["status"]


def test_a_negative_scale_is_invalid():
    with pytest.raises(errors.Invalid) as caught:
        SCALE.from_view({"spec": {"replicas": -1}}, created(deployment()))
    assert str(caught.value) == ('Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: '
                                 "must be greater than or equal to 0")


# ---- printing -----------------------------------------------------------------------------------------

def test_columns_are_name_ready_up_to_date_available_age_then_wide():
    names = [(c["name"], c["priority"]) for c in RT.strategy.columns.definitions]
    assert names == [("Name", 0), ("Ready", 0), ("Up-to-date", 0), ("Available", 0), ("Age", 0),
                     ("Containers", 1), ("Images", 1), ("Selector", 1)]


def test_cells_show_ready_of_desired_and_the_wide_columns():
    obj = created(deployment(replicas=3))
    obj["spec"]["template"]["spec"]["containers"].append({"name": "side", "image": "busybox"})
    obj["status"] = {"readyReplicas": 1, "updatedReplicas": 2, "availableReplicas": 1}
    cells = RT.strategy.columns.cells(obj)
    assert cells[:4] == ["web", "1/3", 2, 1]
    assert cells[5:] == ["web,side", "nginx:1.25,busybox", "app=web"]


def test_a_name_that_is_no_dns_label_earns_a_warning_on_create():
    obj = deployment()
    obj["metadata"]["name"] = "web.v1"
    assert RT.strategy.warnings(None, created(obj), "kubectl") == [
        "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS "
        "label is recommended: [a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
        "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')]"]
    assert RT.strategy.warnings(None, created(deployment()), "kubectl") == []


def test_an_empty_strategy_type_is_defaulted_as_unset():
    assert created(deployment(strategy={"type": ""}))["spec"]["strategy"]["type"] == "RollingUpdate"


def test_a_scale_whose_uid_differs_is_a_conflict():
    obj = created(deployment())
    obj["metadata"]["uid"] = "u-1"
    with pytest.raises(errors.Conflict) as caught:
        SCALE.from_view({"metadata": {"uid": "u-2"}, "spec": {"replicas": 2}}, obj)
    assert str(caught.value) == ('Operation cannot be fulfilled on deployments/scale.apps "web": Precondition '
                                 "failed: UID in precondition: u-2, UID in object meta: u-1")


def test_observed_generation_is_checked_first_as_kubernetes_orders_it():
    old = created(deployment())
    new = updated(old, lambda d: d.update(status={"replicas": -1, "observedGeneration": -1}), STATUS)
    assert [e.field for e in RT.strategy.validate_update(new, old)][:2] == ["status.observedGeneration",
                                                                           "status.replicas"]
