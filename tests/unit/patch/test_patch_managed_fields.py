"""Ownership of fields for non-apply writes (create, update, patch)."""

from __future__ import annotations

import copy
from typing import Any

from runtime.models import ClusterRole, Namespace
from runtime.machinery.patch import manager_from_user_agent, update_managed_fields

RBAC = "rbac.authorization.k8s.io/v1"
T1, T2, T3 = "2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z", "2024-01-03T00:00:00Z"


def _role(labels: dict[str, str] | None = None, verbs: tuple[str, ...] = ("get",)) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "r", "uid": "u1", "resourceVersion": "1"}
    if labels is not None:
        meta["labels"] = labels
    return {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": meta,
            "rules": [{"verbs": list(verbs), "apiGroups": [""], "resources": ["pods"]}]}


def _update(old: dict[str, Any] | None, new: dict[str, Any], manager: str, now: str) -> dict[str, Any]:
    return update_managed_fields(old, new, manager=manager, model=ClusterRole, api_version=RBAC, now=now)


def _entries(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["manager"]: e for e in obj["metadata"].get("managedFields", [])}


def test_manager_defaults_to_user_agent_before_first_slash() -> None:
    assert manager_from_user_agent("kubectl/v1.32.0 (linux/amd64) kubernetes/70d3cc9") == "kubectl"
    assert manager_from_user_agent("python-httpx") == "python-httpx"


def test_create_owns_every_field_set_with_dot_for_new_maps() -> None:
    created = _update(None, _role({"a": "1"}), "kubectl-create", T1)
    assert created["metadata"]["managedFields"] == [{
        "manager": "kubectl-create", "operation": "Update", "apiVersion": RBAC, "time": T1,
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:a": {}}}, "f:rules": {}},
    }]


def test_namespace_create_owns_its_spec_fields() -> None:
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}, "spec": {"finalizers": ["kubernetes"]}}
    created = update_managed_fields(None, ns, manager="kubectl-create", model=Namespace, api_version="v1", now=T1)
    assert created["metadata"]["managedFields"][0]["fieldsV1"] == {"f:spec": {".": {}, "f:finalizers": {}}}


def test_update_moves_changed_fields_to_the_writer() -> None:
    created = _update(None, _role({"a": "1"}), "kubectl-create", T1)
    edited = copy.deepcopy(created)
    edited["rules"][0]["verbs"] = ["get", "list"]
    updated = _update(created, edited, "kubectl-edit", T2)
    entries = _entries(updated)
    assert entries["kubectl-create"]["fieldsV1"] == {"f:metadata": {"f:labels": {".": {}, "f:a": {}}}}
    assert entries["kubectl-create"]["time"] == T1
    assert entries["kubectl-edit"]["fieldsV1"] == {"f:rules": {}}
    assert entries["kubectl-edit"]["time"] == T2


def test_manager_left_with_no_fields_is_dropped() -> None:
    created = _update(None, _role(), "kubectl-create", T1)
    edited = copy.deepcopy(created)
    edited["rules"] = [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]
    assert list(_entries(_update(created, edited, "kubectl-edit", T2))) == ["kubectl-edit"]


def test_removed_field_leaves_every_entry() -> None:
    created = _update(None, _role({"a": "1", "b": "2"}), "kubectl-create", T1)
    edited = copy.deepcopy(created)
    del edited["metadata"]["labels"]["b"]
    updated = _update(created, edited, "kubectl-label", T2)
    assert _entries(updated)["kubectl-create"]["fieldsV1"] == {
        "f:metadata": {"f:labels": {".": {}, "f:a": {}}}, "f:rules": {}}
    assert "kubectl-label" not in _entries(updated)


def test_write_that_changes_nothing_keeps_entries_and_times() -> None:
    created = _update(None, _role({"a": "1"}), "kubectl-create", T1)
    again = _update(created, copy.deepcopy(created), "someone-else", T2)
    assert again["metadata"]["managedFields"] == created["metadata"]["managedFields"]


def test_same_manager_accumulates_fields_across_updates() -> None:
    created = _update(None, _role(), "ctl", T1)
    edited = copy.deepcopy(created)
    edited["metadata"]["labels"] = {"x": "y"}
    updated = _update(created, edited, "ctl", T2)
    assert _entries(updated)["ctl"]["fieldsV1"] == {"f:metadata": {"f:labels": {".": {}, "f:x": {}}}, "f:rules": {}}
    assert _entries(updated)["ctl"]["time"] == T2


def test_managed_fields_sent_with_the_write_replace_the_stored_ones() -> None:
    created = _update(None, _role({"a": "1"}), "kubectl-create", T1)
    sent = copy.deepcopy(created)
    sent["metadata"]["managedFields"] = [{"manager": "imported", "operation": "Update", "apiVersion": RBAC,
                                          "fieldsType": "FieldsV1", "fieldsV1": {"f:rules": {}}}]
    updated = _update(created, sent, "kubectl-replace", T2)
    assert list(_entries(updated)) == ["imported"]


def test_undecodable_sent_managed_fields_fall_back_to_the_stored_ones() -> None:
    created = _update(None, _role({"a": "1"}), "kubectl-create", T1)
    sent = copy.deepcopy(created)
    sent["metadata"]["managedFields"] = [{"manager": "x", "operation": "Bogus"}]
    assert _update(created, sent, "y", T2)["metadata"]["managedFields"] == created["metadata"]["managedFields"]


def test_empty_managed_fields_list_resets_and_object_stays_untracked() -> None:
    created = _update(None, _role({"a": "1"}), "kubectl-create", T1)
    reset = copy.deepcopy(created)
    reset["metadata"]["managedFields"] = [{}]
    cleared = _update(created, reset, "kubectl-patch", T2)
    assert "managedFields" not in cleared["metadata"]
    edited = copy.deepcopy(cleared)
    edited["metadata"]["labels"]["b"] = "2"
    assert "managedFields" not in _update(cleared, edited, "kubectl-label", T3)["metadata"]


def test_inputs_are_not_modified() -> None:
    old = _update(None, _role({"a": "1"}), "kubectl-create", T1)
    new = copy.deepcopy(old)
    new["metadata"]["labels"]["b"] = "2"
    old_copy, new_copy = copy.deepcopy(old), copy.deepcopy(new)
    _update(old, new, "kubectl-label", T2)
    assert (old, new) == (old_copy, new_copy)


def test_subresource_write_is_recorded_and_cannot_set_managed_fields() -> None:
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n", "uid": "u"}, "spec": {}}
    created = update_managed_fields(None, ns, manager="kubectl-create", model=Namespace, api_version="v1", now=T1)
    status = copy.deepcopy(created)
    status["status"] = {"phase": "Terminating"}
    status["metadata"]["managedFields"] = []
    written = update_managed_fields(created, status, manager="namespace-controller", model=Namespace,
                                    api_version="v1", now=T2, subresource="status")
    entry = _entries(written)["namespace-controller"]
    assert entry["subresource"] == "status"
    assert entry["fieldsV1"] == {"f:status": {".": {}, "f:phase": {}}}
    assert "kubectl-create" in _entries(written)
