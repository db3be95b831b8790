"""LimitRange and ResourceQuota rules (Kubernetes v1.28's SetDefaults_LimitRangeItem, ValidateLimitRange,
ValidateResourceQuota(Update), the resource name helpers, their strategies and printers), on the strategies."""

from __future__ import annotations

import copy
from typing import Any

from runtime.machinery.options import Body
from runtime.machinery.scheme import Scheme
from runtime.models.catalog import LIMIT_RANGE, RESOURCE_QUOTA
from runtime.server.kinds.cluster.resources import go_quantity

SCHEME = Scheme("k8s.io")
LR = next(t for t in SCHEME.types if t.info is LIMIT_RANGE)
RQ = next(t for t in SCHEME.types if t.info is RESOURCE_QUOTA)


def created(rt: Any, obj: dict[str, Any]) -> dict[str, Any]:
    decoded = rt.strategy.decode(Body(obj), "Strict")[0]
    rt.strategy.default(decoded)
    decoded["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    rt.strategy.prepare_for_create(decoded)
    return decoded


def limits(*items: dict[str, Any]) -> dict[str, Any]:
    return created(LR, {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "l", "namespace": "d"},
                        "spec": {"limits": list(items)}})


def quota(status: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    obj = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "d"}, "spec": spec}
    if status is not None:
        obj["status"] = status
    return created(RQ, obj)


def errors_of(rt: Any, obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in rt.strategy.validate(obj)]


def q(text: str) -> str:
    return str(go_quantity(text))


# ---- LimitRange ---------------------------------------------------------------------------------------

def test_container_limits_default_to_max_and_requests_to_default_then_min():
    spec = limits({"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}})["spec"]["limits"][0]
    assert spec["default"] == {"cpu": "2"}
    assert spec["defaultRequest"] == {"cpu": "2", "memory": "64Mi"}


def test_pod_limits_get_no_defaults():
    assert "default" not in limits({"type": "Pod", "max": {"cpu": "2"}})["spec"]["limits"][0]


def test_limit_type_is_standard_or_fully_qualified():
    assert errors_of(LR, limits({"type": "Node"})) == [
        'spec.limits[0].type: Invalid value: "Node": must be a standard limit type or fully qualified']
    assert errors_of(LR, limits({"type": "example.com/Thing"})) == []


def test_limit_type_appears_once():
    assert errors_of(LR, limits({"type": "Pod"}, {"type": "Pod"})) == ['spec.limits[1].type: Duplicate value: "Pod"']


def test_container_limits_name_container_resources():
    assert errors_of(LR, limits({"type": "Container", "max": {"pods": "2"}})) == [
        'spec.limits[0].max[pods]: Invalid value: "pods": must be a standard resource for containers',
        'spec.limits[0].default[pods]: Invalid value: "pods": must be a standard resource for containers',
        'spec.limits[0].defaultRequest[pods]: Invalid value: "pods": must be a standard resource for containers']


def test_pod_limits_may_not_have_defaults():
    obj = limits({"type": "Pod", "default": {"cpu": "1"}, "defaultRequest": {"cpu": "1"}})
    assert errors_of(LR, obj) == [
        "spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'",
        "spec.limits[0].defaultRequest: Forbidden: may not be specified when `type` is 'Pod'"]


def test_claim_limits_need_a_min_or_max_storage():
    assert errors_of(LR, limits({"type": "PersistentVolumeClaim"})) == [
        "spec.limits[0].limits: Required value: either minimum or maximum storage value is required, "
        "but neither was provided"]
    assert errors_of(LR, limits({"type": "PersistentVolumeClaim", "max": {"storage": "10Gi"}})) == []


def test_min_may_not_exceed_max():
    assert errors_of(LR, limits({"type": "Pod", "min": {"cpu": "2"}, "max": {"cpu": "1"}})) == [
        f"spec.limits[0].min[cpu]: Invalid value: {q('2')}: min value 2 is greater than max value 1"]


def test_default_request_may_not_exceed_default():
    obj = limits({"type": "Container", "default": {"memory": "128Mi"}, "defaultRequest": {"memory": "256Mi"}})
    assert errors_of(LR, obj) == [
        f"spec.limits[0].defaultRequest[memory]: Invalid value: {q('256Mi')}: default request value 256Mi is "
        "greater than default limit value 128Mi"]


def test_default_may_not_exceed_max():
    obj = limits({"type": "Container", "default": {"cpu": "2"}, "defaultRequest": {"cpu": "1"}, "max": {"cpu": "1"}})
    assert errors_of(LR, obj) == [
        f"spec.limits[0].default[cpu]: Invalid value: {q('1')}: default value 2 is greater than max value 1"]


def test_max_limit_request_ratio_is_at_least_one_and_at_most_max_over_min():
    assert errors_of(LR, limits({"type": "Pod", "maxLimitRequestRatio": {"cpu": "500m"}})) == [
        f"spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: {q('500m')}: ratio 500m is less than 1"]
    obj = limits({"type": "Pod", "min": {"cpu": "1"}, "max": {"cpu": "2"}, "maxLimitRequestRatio": {"cpu": "3"}})
    assert errors_of(LR, obj) == [
        f"spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: {q('3')}: ratio 3 is greater than "
        "max/min = 2.000000"]


def test_resources_that_cannot_overcommit_need_default_equal_to_request():
    obj = limits({"type": "Container", "default": {"example.com/gpu": "2"}, "defaultRequest": {"example.com/gpu": "1"}})
    assert errors_of(LR, obj) == [
        f"spec.limits[0].defaultRequest[example.com/gpu]: Invalid value: {q('1')}: default value 2 must equal to "
        "defaultRequest value 1 in example.com/gpu"]


def test_limit_range_may_be_created_by_a_put():
    assert LR.strategy.allow_create_on_update is True


def test_limit_range_prints_name_and_created_at():
    assert [c["name"] for c in LR.strategy.columns.definitions] == ["Name", "Created At"]


# ---- ResourceQuota ------------------------------------------------------------------------------------

def test_quota_hard_names_standard_or_qualified_resources():
    assert errors_of(RQ, quota(hard={"pods": "10", "count/deployments.apps": "2", "requests.example.com/gpu": "1",
                                     "limits.memory": "1Gi"})) == []
    assert errors_of(RQ, quota(hard={"widgets": "1"})) == [
        'spec.hard[widgets]: Invalid value: "widgets": must be a standard resource type or fully qualified',
        'spec.hard[widgets]: Invalid value: "widgets": must be a standard resource for quota']


def test_quota_quantities_are_not_negative_and_counts_whole():
    errs = errors_of(RQ, quota(hard={"cpu": "-1", "pods": "1500m"}))
    assert errs[0] == 'spec.hard[cpu]: Invalid value: "-1": must be greater than or equal to 0'
    assert errs[1].startswith("spec.hard[pods]: Invalid value: resource.Quantity{") and errs[1].endswith(
        ": must be an integer")


def test_quota_scopes_are_supported_and_fit_the_resources():
    assert errors_of(RQ, quota(hard={"pods": "1"}, scopes=["Sometimes"])) == [
        'spec.scopes: Invalid value: []core.ResourceQuotaScope{"Sometimes"}: unsupported scope']
    assert errors_of(RQ, quota(hard={"requests.cpu": "1"}, scopes=["BestEffort"])) == [
        'spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort"}: unsupported scope applied to resource']


def test_quota_scopes_may_not_conflict():
    assert errors_of(RQ, quota(hard={"pods": "1"}, scopes=["Terminating", "NotTerminating"])) == [
        'spec.scopes: Invalid value: []core.ResourceQuotaScope{"Terminating", "NotTerminating"}: conflicting scopes']


def test_quota_scope_selector_operators():
    selector = {"matchExpressions": [{"scopeName": "BestEffort", "operator": "In", "values": ["x"]},
                                     {"scopeName": "PriorityClass", "operator": "In"}]}
    assert errors_of(RQ, quota(hard={"pods": "1"}, scopeSelector=selector)) == [
        "spec.scopeSelector.matchExpressions.operator: Invalid value: \"In\": must be 'Exist' when scope is any of "
        "ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "
        "ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
        "spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when `operator` is "
        "'In' or 'NotIn' for scope selector"]


def test_quota_scopes_are_immutable():
    old = quota(hard={"pods": "1"}, scopes=["BestEffort"])
    new = quota(hard={"pods": "1"}, scopes=["NotBestEffort"])
    assert [str(e) for e in RQ.strategy.validate_update(new, old)] == [
        'spec.scopes: Invalid value: []core.ResourceQuotaScope{"NotBestEffort"}: field is immutable']


def test_quota_create_starts_with_an_empty_status_kept_by_main_writes():
    assert "status" not in quota(hard={"pods": "1"}, status={"hard": {"pods": "1"}})
    old = copy.deepcopy(quota(hard={"pods": "1"}))
    old["status"] = {"hard": {"pods": "1"}, "used": {"pods": "0"}}
    new = quota(hard={"pods": "2"})
    RQ.strategy.default(new)  # as the registry does first
    RQ.strategy.prepare_for_update(new, old)
    assert new["status"] == old["status"]


def test_quota_printer_splits_requests_and_limits_of_the_status():
    assert [c["name"] for c in RQ.strategy.columns.definitions] == ["Name", "Age", "Request", "Limit"]
    obj = quota(hard={"pods": "4"})
    obj["status"] = {"hard": {"pods": "4", "requests.cpu": "1", "limits.memory": "1Gi"},
                     "used": {"pods": "1", "limits.memory": "512Mi"}}
    assert RQ.strategy.columns.cells(obj)[2:] == ["pods: 1/4, requests.cpu: 0/1", "limits.memory: 512Mi/1Gi"]


def test_resource_quantities_are_rounded_up_to_thousandths():
    obj = quota(hard={"requests.cpu": "1.5n", "limits.cpu": "-0.0001"})
    assert obj["spec"]["hard"] == {"requests.cpu": "1m", "limits.cpu": "-1m"}
