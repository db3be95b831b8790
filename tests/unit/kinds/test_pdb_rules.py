"""PodDisruptionBudget's rules (Kubernetes v1.28 `pkg/apis/policy/validation`, its strategy and printer) and the
eviction's budget decisions (`pkg/registry/core/pod/storage/eviction.go`: getPodDisruptionBudgets,
checkAndDecrement), on the strategy and functions directly."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from runtime.machinery import errors
from runtime.machinery.options import Body
from runtime.machinery.scheme import Scheme
from runtime.server.kinds.pods.eviction import MAX_DISRUPTED_PODS, VIOLATION_MSG, matching_budgets, take_disruption

SCHEME = Scheme("k8s.io")
S = SCHEME.by_kind("PodDisruptionBudget", "policy").strategy
PERCENT_MSG = ("a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
               "regex used for validation is '[0-9]+%')")


def new_pdb(**spec: Any) -> dict[str, Any]:
    body = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b", "namespace": "ns"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec}}
    obj, _ = S.decode(Body(body), "Strict")
    S.prepare_for_create(obj)
    return obj


def errs(obj: dict[str, Any]) -> list[str]:
    return [f"{e.field}: {e.detail}" for e in S.validate(obj)]


def test_min_available_and_max_unavailable_cannot_be_both_set():
    assert errs(new_pdb(minAvailable=1, maxUnavailable=1)) == [
        "spec: minAvailable and maxUnavailable cannot be both set"]


def test_bounds_are_non_negative_integers_or_percents_up_to_100():
    assert errs(new_pdb(minAvailable=-1)) == ["spec.minAvailable: must be greater than or equal to 0"]
    assert errs(new_pdb(maxUnavailable="half")) == [f"spec.maxUnavailable: {PERCENT_MSG}"]
    assert errs(new_pdb(maxUnavailable="101%")) == ["spec.maxUnavailable: must not be greater than 100%"]
    assert errs(new_pdb(minAvailable="100%")) == [] and errs(new_pdb(maxUnavailable=0)) == []


def test_selector_is_a_valid_label_selector():
    obj = new_pdb()
    obj["spec"]["selector"] = {"matchExpressions": [{"key": "app", "operator": "In", "values": []}]}
    assert [e.split(":")[0] for e in errs(obj)] == ["spec.selector.matchExpressions[0].values"]


def test_unhealthy_pod_eviction_policy_is_supported():
    assert errs(new_pdb(unhealthyPodEvictionPolicy="Sometimes")) == [
        'spec.unhealthyPodEvictionPolicy: supported values: "AlwaysAllow", "IfHealthyBudget"']
    assert errs(new_pdb(unhealthyPodEvictionPolicy="AlwaysAllow")) == []


def test_create_resets_status_and_counts_generation():
    obj = new_pdb()
    assert obj["status"] == {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}
    assert S.counts_generation is True


def test_status_counts_are_not_negative():
    old = new_pdb()
    new = copy.deepcopy(old)
    new["status"]["disruptionsAllowed"] = -1
    S.default(new)  # as the registry does first
    S.prepare_for_update(new, old, S.subresources["status"])
    assert [f"{e.field}: {e.detail}" for e in S.validate_update(new, old)] == [
        "status.disruptionsAllowed: must be greater than or equal to 0"]


def test_printer_cells():
    assert [c["name"] for c in S.columns.definitions] == ["Name", "Min Available", "Max Unavailable",
                                                          "Allowed Disruptions", "Age"]
    assert S.columns.cells(new_pdb(minAvailable="50%"))[:4] == ["b", "50%", "N/A", 0]


# ---- the eviction's decisions ------------------------------------------------------------------------

def test_budgets_matching_a_pod_never_an_empty_selector():
    pod = {"metadata": {"labels": {"app": "web"}}}
    web, empty, other = new_pdb(), new_pdb(), new_pdb()
    empty["spec"]["selector"] = {}
    other["spec"]["selector"] = {"matchLabels": {"app": "db"}}
    assert matching_budgets(pod, [web, empty, other]) == [web]


def observed(budget: dict[str, Any], **status: Any) -> dict[str, Any]:
    budget["metadata"]["generation"] = 1
    budget["status"].update(observedGeneration=1, **status)
    return budget


def test_a_budget_not_yet_observed_is_429_retry_after_10():
    budget = new_pdb()
    budget["metadata"]["generation"] = 1
    with pytest.raises(errors.TooManyRequests) as caught:
        take_disruption(budget, "p")
    assert (caught.value.message, caught.value.retry_after) == (VIOLATION_MSG, 10)
    assert caught.value.causes[0].message == "The disruption budget b is still being processed by the server."


def test_no_disruption_allowed_is_429_naming_the_budgets_counts():
    with pytest.raises(errors.TooManyRequests) as caught:
        take_disruption(observed(new_pdb(), desiredHealthy=2, currentHealthy=2), "p")
    assert caught.value.retry_after is None
    assert (caught.value.causes[0].reason, caught.value.causes[0].message) == (
        "DisruptionBudget", "The disruption budget b needs 2 healthy pods and has 2 currently")


def test_too_many_disrupted_pods_is_403():
    budget = observed(new_pdb(), disruptionsAllowed=1,
                      disruptedPods={f"p{i}": "2024-01-01T00:00:00Z" for i in range(MAX_DISRUPTED_PODS + 1)})
    with pytest.raises(errors.Forbidden):
        take_disruption(budget, "p")


def test_a_disruption_taken_lowers_allowed_and_records_the_pod():
    budget = observed(new_pdb(), disruptionsAllowed=1)
    take_disruption(budget, "p")
    status = budget["status"]
    assert status["disruptionsAllowed"] == 0 and list(status["disruptedPods"]) == ["p"]
    assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == [
        ("DisruptionAllowed", "False", "InsufficientPods")]
