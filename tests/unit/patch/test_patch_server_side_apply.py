"""Server-side apply: merging configurations, ownership, conflicts, force, pruning."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from runtime.models import ClusterRole, ClusterRoleBinding
from runtime.machinery.patch import ApplyConflict, MalformedPatch, PatchError, PatchNotApplicable, server_side_apply, update_managed_fields

RBAC = "rbac.authorization.k8s.io/v1"
T1, T2, T3 = "2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z", "2024-01-03T00:00:00Z"
POD_RULE = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}


def _config(**body: Any) -> dict[str, Any]:
    meta = {"name": "r", **body.pop("metadata", {})}
    return {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": meta, **body}


def _apply(live: dict[str, Any] | None, config: dict[str, Any], manager: str, now: str = T1,
           force: bool = False, model: type = ClusterRole) -> dict[str, Any]:
    return server_side_apply(live, config, manager=manager, model=model, force=force, api_version=RBAC, now=now)


def _fields(obj: dict[str, Any]) -> dict[str, Any]:
    return {(e["manager"], e["operation"]): e["fieldsV1"] for e in obj["metadata"].get("managedFields", [])}


def test_apply_creates_the_object_and_owns_exactly_the_applied_fields() -> None:
    obj = _apply(None, _config(metadata={"labels": {"a": "1"}}, rules=[POD_RULE]), "kubectl")
    assert obj["rules"] == [POD_RULE] and obj["metadata"]["labels"] == {"a": "1"}
    assert obj["metadata"]["managedFields"] == [{
        "manager": "kubectl", "operation": "Apply", "apiVersion": RBAC, "time": T1, "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:labels": {"f:a": {}}}, "f:rules": {}},
    }]


def test_two_managers_own_different_labels() -> None:
    obj = _apply(None, _config(metadata={"labels": {"a": "1"}}), "alice")
    obj = _apply(obj, _config(metadata={"labels": {"b": "2"}}), "bob", T2)
    assert obj["metadata"]["labels"] == {"a": "1", "b": "2"}
    assert _fields(obj) == {("alice", "Apply"): {"f:metadata": {"f:labels": {"f:a": {}}}},
                            ("bob", "Apply"): {"f:metadata": {"f:labels": {"f:b": {}}}}}


def test_changing_a_field_another_manager_owns_is_a_409_conflict() -> None:
    created = update_managed_fields(None, _config(rules=[POD_RULE]), manager="kubectl-client-side-apply",
                                    model=ClusterRole, api_version=RBAC, now=T1)
    with pytest.raises(ApplyConflict) as err:
        _apply(created, _config(rules=[{**POD_RULE, "verbs": ["list"]}]), "kubectl", T2)
    assert type(err.value) is ApplyConflict
    assert err.value.message == ('Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" '
                                 f"using {RBAC}: .rules")
    assert [c.to_dict() for c in err.value.causes()] == [{
        "reason": "FieldManagerConflict", "field": ".rules",
        "message": f'conflict with "kubectl-client-side-apply" using {RBAC}'}]


def test_several_conflicts_are_listed_per_manager() -> None:
    obj = _apply(None, _config(metadata={"labels": {"a": "1", "b": "1"}}), "alice")
    obj = _apply(obj, _config(metadata={"labels": {"c": "1"}}), "bob")
    with pytest.raises(ApplyConflict) as err:
        _apply(obj, _config(metadata={"labels": {"a": "2", "b": "2", "c": "2"}}), "carol")
    assert err.value.message == ('Apply failed with 3 conflicts: conflicts with "alice":\n'
                                 "- .metadata.labels.a\n- .metadata.labels.b\n"
                                 'conflicts with "bob":\n- .metadata.labels.c')


def test_applying_the_same_value_shares_ownership_without_conflict() -> None:
    obj = _apply(None, _config(rules=[POD_RULE]), "alice")
    obj = _apply(obj, _config(rules=[POD_RULE]), "bob", T2)
    assert _fields(obj) == {("alice", "Apply"): {"f:rules": {}}, ("bob", "Apply"): {"f:rules": {}}}


def test_force_takes_ownership_from_the_other_manager() -> None:
    obj = _apply(None, _config(metadata={"labels": {"a": "1", "keep": "x"}}), "alice")
    obj = _apply(obj, _config(metadata={"labels": {"a": "2"}}), "bob", T2, force=True)
    assert obj["metadata"]["labels"] == {"a": "2", "keep": "x"}
    assert _fields(obj) == {("alice", "Apply"): {"f:metadata": {"f:labels": {"f:keep": {}}}},
                            ("bob", "Apply"): {"f:metadata": {"f:labels": {"f:a": {}}}}}


def test_field_the_manager_stops_applying_is_removed() -> None:
    obj = _apply(None, _config(metadata={"labels": {"a": "1", "b": "2"}}, rules=[POD_RULE]), "kubectl")
    obj = _apply(obj, _config(metadata={"labels": {"a": "1"}}), "kubectl", T2)
    assert obj["metadata"]["labels"] == {"a": "1"}
    assert "rules" not in obj
    assert _fields(obj) == {("kubectl", "Apply"): {"f:metadata": {"f:labels": {"f:a": {}}}}}


def test_field_the_manager_stops_applying_stays_if_another_manager_owns_it() -> None:
    obj = _apply(None, _config(metadata={"labels": {"a": "1"}}, rules=[POD_RULE]), "alice")
    obj = _apply(obj, _config(rules=[POD_RULE]), "bob", T2)
    obj = _apply(obj, _config(metadata={"labels": {"a": "1"}}), "alice", T3)
    assert obj["rules"] == [POD_RULE]
    assert _fields(obj)[("bob", "Apply")] == {"f:rules": {}}


def test_field_the_manager_stops_applying_stays_if_an_updater_changed_it() -> None:
    obj = _apply(None, _config(metadata={"labels": {"a": "1", "b": "1"}}), "alice")
    edited = copy.deepcopy(obj)
    edited["metadata"]["labels"]["b"] = "edited"
    obj = update_managed_fields(obj, edited, manager="kubectl-edit", model=ClusterRole, api_version=RBAC, now=T2)
    obj = _apply(obj, _config(metadata={"labels": {"a": "1"}}), "alice", T3)
    assert obj["metadata"]["labels"] == {"a": "1", "b": "edited"}


def test_map_list_items_merge_by_key_and_unapplied_items_are_removed() -> None:
    ref = {"apiVersion": "v1", "kind": "Namespace", "name": "n", "uid": "1"}
    obj = _apply(None, _config(metadata={"ownerReferences": [ref]}), "alice")
    obj = _apply(obj, _config(metadata={"ownerReferences": [{**ref, "name": "m", "uid": "2"}]}), "bob", T2)
    assert [r["uid"] for r in obj["metadata"]["ownerReferences"]] == ["1", "2"]
    assert _fields(obj)[("bob", "Apply")] == {"f:metadata": {"f:ownerReferences": {
        'k:{"uid":"2"}': {}}}}
    obj = _apply(obj, _config(), "alice", T3)
    assert [r["uid"] for r in obj["metadata"]["ownerReferences"]] == ["2"]


def test_finalizers_merge_as_a_set_between_managers() -> None:
    obj = _apply(None, _config(metadata={"finalizers": ["a"]}), "alice")
    obj = _apply(obj, _config(metadata={"finalizers": ["b"]}), "bob", T2)
    assert obj["metadata"]["finalizers"] == ["a", "b"]
    assert _fields(obj)[("bob", "Apply")] == {"f:metadata": {"f:finalizers": {'v:"b"': {}}}}


def test_atomic_lists_are_replaced_whole() -> None:
    binding = {"apiVersion": RBAC, "kind": "ClusterRoleBinding", "metadata": {"name": "b"},
               "subjects": [{"kind": "User", "name": "alice"}],
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"}}
    obj = _apply(None, binding, "kubectl", model=ClusterRoleBinding)
    again = {**binding, "subjects": [{"kind": "User", "name": "bob"}]}
    obj = _apply(obj, again, "kubectl", T2, model=ClusterRoleBinding)
    assert obj["subjects"] == [{"kind": "User", "name": "bob"}]


def test_reapplying_the_same_configuration_keeps_the_time() -> None:
    obj = _apply(None, _config(rules=[POD_RULE]), "kubectl")
    again = _apply(obj, _config(rules=[POD_RULE]), "kubectl", T2)
    assert again == obj


def test_server_set_metadata_survives_apply() -> None:
    live = _apply(None, _config(metadata={"labels": {"a": "1"}}), "kubectl")
    live["metadata"].update(uid="u1", resourceVersion="9", creationTimestamp=T1)
    obj = _apply(live, {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": "r"}}, "kubectl", T2)
    assert obj["metadata"] == {"name": "r", "uid": "u1", "resourceVersion": "9", "creationTimestamp": T1}


def test_live_object_without_managed_fields_conflicts_with_before_first_apply() -> None:
    live = _config(rules=[POD_RULE])
    with pytest.raises(ApplyConflict) as err:
        _apply(live, _config(rules=[]), "kubectl-ssa")
    assert err.value.message == ('Apply failed with 1 conflict: conflict with "before-first-apply" '
                                 f"using {RBAC}: .rules")


def test_kubectl_takes_over_fields_from_its_last_applied_configuration() -> None:
    last = _config(rules=[POD_RULE])
    live = copy.deepcopy(last)
    live["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": json.dumps(last)}
    live = update_managed_fields(None, live, manager="kubectl-client-side-apply", model=ClusterRole,
                                 api_version=RBAC, now=T1)
    config = _config(rules=[{**POD_RULE, "verbs": ["list"]}])
    obj = _apply(live, config, "kubectl", T2)
    assert obj["rules"] == config["rules"]
    assert json.loads(obj["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]) == config
    with pytest.raises(ApplyConflict):
        _apply(live, config, "other-manager", T2)


def test_configuration_of_another_kind_or_version_is_400() -> None:
    with pytest.raises(PatchError) as err:
        _apply(None, {**_config(), "apiVersion": "rbac.authorization.k8s.io/v1beta1"}, "kubectl")
    assert (type(err.value), err.value.message) == (
        MalformedPatch, "invalid object type: rbac.authorization.k8s.io/v1beta1, Kind=ClusterRole")


def test_configuration_with_managed_fields_is_400() -> None:
    with pytest.raises(PatchError) as err:
        _apply(None, _config(metadata={"managedFields": []}), "kubectl")
    assert (type(err.value), err.value.message) == (MalformedPatch, "metadata.managedFields must be nil")


def test_duplicate_map_list_keys_in_a_configuration_are_422() -> None:
    ref = {"apiVersion": "v1", "kind": "Namespace", "name": "n", "uid": "1"}
    with pytest.raises(PatchError) as err:
        _apply(None, _config(metadata={"ownerReferences": [ref, ref]}), "kubectl")
    assert type(err.value) is PatchNotApplicable
    assert err.value.message == '.metadata.ownerReferences: duplicate entries for key [uid="1"]'


def test_inputs_are_not_modified() -> None:
    live = _apply(None, _config(metadata={"labels": {"a": "1"}}), "alice")
    config = _config(metadata={"labels": {"b": "2"}}, rules=[POD_RULE])
    live_copy, config_copy = copy.deepcopy(live), copy.deepcopy(config)
    _apply(live, config, "bob", T2)
    assert (live, config) == (live_copy, config_copy)


def test_an_applied_item_that_omits_a_defaulted_key_is_keyed_by_its_default() -> None:
    # A Service's ports are keyed by (port, protocol); protocol's schema default is TCP, so an applied port
    # without it is the item (80, TCP), as structured-merge-diff keys it (kubectl apply --server-side of
    # `ports: [{port: 80}]`). A key without a default is still required.
    from runtime.models.k8s.core_v1 import Pod, Service

    def svc(*ports: dict[str, Any]) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": {"ports": list(ports)}}

    def apply(live: dict[str, Any] | None, config: dict[str, Any], manager: str) -> dict[str, Any]:
        return server_side_apply(live, config, manager=manager, model=Service, force=False, api_version="v1", now=T1)

    obj = apply(None, svc({"port": 80, "targetPort": 8080}), "kubectl")
    assert obj["spec"]["ports"] == [{"port": 80, "targetPort": 8080}]
    fields = obj["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]["f:ports"]
    assert list(fields) == ['k:{"port":80,"protocol":"TCP"}']
    again = apply(obj, svc({"port": 80, "targetPort": 8081, "protocol": "TCP"}), "kubectl")
    assert again["spec"]["ports"] == [{"port": 80, "targetPort": 8081, "protocol": "TCP"}]  # the same item
    owner = {"apiVersion": "v1", "kind": "ConfigMap", "name": "c"}  # an owner reference's key, uid, has no default
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "ownerReferences": [owner]}}
    with pytest.raises(PatchNotApplicable, match='omits key field "uid"'):
        server_side_apply(None, pod, manager="m", model=Pod, force=False, api_version="v1", now=T1)


def test_a_list_with_a_merge_key_and_no_list_type_is_keyed_by_its_merge_key() -> None:
    # kube-openapi's schema conversion: a Pod's containers (patch strategy merge, key name, no list type) are an
    # associative list for server-side apply, so an applier owns its items' fields, not the whole list, and a
    # field another writer added to an item (LimitRanger's resources) survives a re-apply. A list that declares
    # itself atomic stays atomic even with a merge key (a Job's status.conditions).
    from runtime.machinery.patch.schema import schema_for
    from runtime.models.k8s.batch_v1 import Job
    from runtime.models.k8s.core_v1 import Pod

    containers = schema_for(Pod).child("spec").node.child("containers").node
    assert (containers.list_type, containers.map_keys) == ("map", ("name",))
    conditions = schema_for(Job).child("status").node.child("conditions").node
    assert conditions.list_type == "atomic"
    config = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
              "spec": {"containers": [{"name": "web", "image": "nginx"}]}}
    obj = server_side_apply(None, config, manager="kubectl", model=Pod, force=False, api_version="v1", now=T1)
    assert obj["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]["f:containers"] == {
        'k:{"name":"web"}': {".": {}, "f:image": {}, "f:name": {}}}
    obj["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m"}}  # another writer's, unowned
    again = server_side_apply(obj, config, manager="kubectl", model=Pod, force=False, api_version="v1", now=T2)
    assert again["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "100m"}}
