"""PriorityClass rules (Kubernetes v1.28's SetDefaults_PriorityClass, ValidatePriorityClass(Update), the Priority
admission plugin's one-default rule, the built-in classes and printPriorityClass), on the strategy."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import trio

from runtime.machinery import errors
from runtime.machinery.options import Body
from runtime.machinery.scheme import Scheme
from runtime.models.catalog import PRIORITY_CLASS
from runtime.server.kinds.base import AdmissionRequest
from runtime.server.kinds.cluster import SYSTEM_PRIORITY_CLASSES
from runtime.server.rbac.user import UserInfo

SCHEME = Scheme("k8s.io")
PC = next(t for t in SCHEME.types if t.info is PRIORITY_CLASS)


def created(name: str = "high", **fields: Any) -> dict[str, Any]:
    decoded = PC.strategy.decode(Body({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                       "metadata": {"name": name}, **fields}), "Strict")[0]
    PC.strategy.default(decoded)
    decoded["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    PC.strategy.prepare_for_create(decoded)
    return decoded


def errors_of(obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in PC.strategy.validate(obj)]


def test_preemption_policy_defaults_to_preempt_lower_priority():
    obj = created(value=10)
    assert obj["preemptionPolicy"] == "PreemptLowerPriority"
    assert errors_of(obj) == []


def test_preemption_policy_values():
    assert errors_of(created(value=1, preemptionPolicy="Always")) == [
        'preemptionPolicy: Unsupported value: "Always": supported values: "PreemptLowerPriority", "Never"']


def test_user_values_are_at_most_one_billion():
    assert errors_of(created(value=1_000_000_001)) == [
        "value: Forbidden: maximum allowed value of a user defined priority is 1000000000"]


def test_system_prefix_is_reserved_for_the_built_in_classes():
    assert errors_of(created("system-mine", value=1)) == [
        "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
        "error: system-mine is not a known system priority class"]
    assert errors_of(created("system-node-critical", value=5)) == [
        "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
        "error: value of system-node-critical PriorityClass must be 2000001000"]
    assert errors_of(created("system-cluster-critical", value=2_000_000_000)) == []


def test_built_in_classes_are_kubes():
    assert [(name, value) for name, value, _ in SYSTEM_PRIORITY_CLASSES] == [
        ("system-node-critical", 2000001000), ("system-cluster-critical", 2000000000)]


def test_value_and_preemption_policy_are_immutable():
    old = created(value=10)
    new = created(value=11, preemptionPolicy="Never")
    assert [str(e) for e in PC.strategy.validate_update(new, old)] == [
        "value: Forbidden: may not be changed in an update.",
        'preemptionPolicy: Invalid value: "Never": field is immutable']
    described = copy.deepcopy(old)
    described["description"] = "changed"
    assert PC.strategy.validate_update(described, old) == []


async def _admit(operation: str, obj: dict[str, Any]) -> None:
    await PC.strategy.admit(None, AdmissionRequest(UserInfo("u"), PC, operation, obj, None, False))  # type: ignore


def test_only_one_class_may_be_global_default():
    PC.strategy.observe_list([created("first", value=1, globalDefault=True)])
    with pytest.raises(errors.Forbidden) as caught:
        trio.run(_admit, "create", created("second", value=2, globalDefault=True))
    assert str(caught.value.message) == ('priorityclasses.scheduling.k8s.io "second" is forbidden: PriorityClass first '
                                         "is already marked as default. Only one default can exist")
    trio.run(_admit, "update", created("first", value=1, globalDefault=True))  # the default itself may be written
    trio.run(_admit, "create", created("third", value=3))
    PC.strategy.observe("DELETED", created("first", value=1, globalDefault=True))
    trio.run(_admit, "create", created("second", value=2, globalDefault=True))


def test_printer_columns_and_cells():
    assert [(c["name"], c["type"]) for c in PC.strategy.columns.definitions] == [
        ("Name", "string"), ("Value", "integer"), ("Global-Default", "boolean"), ("Age", "string"),
        ("PreemptionPolicy", "string")]
    cells = PC.strategy.columns.cells(created(value=7, globalDefault=True))
    assert (cells[:3], cells[4]) == (["high", 7, True], "PreemptLowerPriority")


def test_built_in_classes_may_not_be_deleted():
    with pytest.raises(errors.Forbidden) as caught:
        PC.strategy.check_delete("system-node-critical")
    assert caught.value.message == ('priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a '
                                    "system priority class and cannot be deleted")
    PC.strategy.check_delete("high")
