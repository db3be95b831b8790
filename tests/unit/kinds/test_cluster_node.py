"""Node rules (Kubernetes v1.28's ValidateNode, ValidateNodeUpdate, the v1 NodeSpec conversion,
SetDefaults_NodeStatus, the node strategy, its field label conversion and printNode), on the strategy."""

from __future__ import annotations

import copy
from typing import Any

from runtime.machinery.options import Body
from runtime.machinery.scheme import Scheme
from runtime.models.catalog import NODE

SCHEME = Scheme("k8s.io")
RT = next(t for t in SCHEME.types if t.info is NODE)
S = RT.strategy


def node(spec: dict[str, Any] | None = None, status: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", **meta},
                           "spec": spec or {}}
    if status is not None:
        obj["status"] = status
    decoded = S.decode(Body(obj), "Strict")[0]
    S.default(decoded)
    decoded["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    S.prepare_for_create(decoded)
    return decoded


def errors_of(obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in S.validate(obj)]


def update_errors(new: dict[str, Any], old: dict[str, Any]) -> list[str]:
    return [str(e) for e in S.validate_update(new, old)]


def test_node_is_cluster_scoped_with_a_status_subresource_and_no_create_on_update():
    assert (RT.namespaced, S.status_subresource, S.allow_create_on_update) == (False, True, False)


def test_node_name_is_a_dns_subdomain():
    assert errors_of(node()) == []
    assert any(e.startswith('metadata.name: Invalid value: "N_1"') for e in errors_of(node(name="N_1")))


def test_pod_cidr_alone_becomes_pod_cidrs():
    assert node({"podCIDR": "10.0.0.0/24"})["spec"]["podCIDRs"] == ["10.0.0.0/24"]


def test_pod_cidr_is_always_the_first_of_pod_cidrs():
    spec = node({"podCIDR": "10.9.0.0/24", "podCIDRs": ["10.0.0.0/24", "fd00::/64"]})["spec"]
    assert spec["podCIDR"] == "10.0.0.0/24"


def test_pod_cidrs_must_be_cidrs():
    assert errors_of(node({"podCIDRs": ["10.0.0.0/33"]})) == [
        'spec.podCIDRs[0]: Invalid value: []string{"10.0.0.0/33"}: must be valid CIDR']


def test_pod_cidrs_hold_at_most_one_cidr_per_family():
    assert errors_of(node({"podCIDRs": ["10.0.0.0/24", "10.1.0.0/24"]})) == [
        'spec.podCIDRs: Invalid value: []string{"10.0.0.0/24", "10.1.0.0/24"}: '
        "may specify no more than one CIDR for each IP family"]
    assert errors_of(node({"podCIDRs": ["10.0.0.0/24", "fd00::/64"]})) == []


def test_taint_effect_is_required_and_supported():
    errs = errors_of(node({"taints": [{"key": "a"}, {"key": "b", "effect": "Sometimes"}]}))
    assert errs == ["metadata.taints[0].effect: Required value",
                    'metadata.taints[1].effect: Unsupported value: "Sometimes": supported values: '
                    '"NoSchedule", "PreferNoSchedule", "NoExecute"']


def test_taints_are_unique_by_key_and_effect():
    taints = [{"key": "a", "effect": "NoSchedule"}, {"key": "a", "effect": "NoExecute"},
              {"key": "a", "value": "x", "effect": "NoSchedule"}]
    assert errors_of(node({"taints": taints})) == [
        'metadata.taints[2]: Duplicate value: core.Taint{Key:"a", Value:"x", Effect:"NoSchedule", '
        'TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair']


def test_taint_key_is_a_label_name_and_value_a_label_value():
    errs = errors_of(node({"taints": [{"key": "a b", "value": "-x", "effect": "NoSchedule"}]}))
    assert [e.split(":")[0] for e in errs] == ["metadata.taints[0].key", "metadata.taints[0].value"]


def test_status_quantities_must_be_whole_for_counted_resources():
    errs = errors_of(node(status={"capacity": {"cpu": "500m", "pods": "1.5"}}))
    assert errs[0].startswith("status.capacity.pods: Invalid value: resource.Quantity{i:resource.int64Amount{")
    assert errs[0].endswith(": must be an integer")


def test_allocatable_defaults_to_capacity():
    assert node(status={"capacity": {"cpu": "2"}})["status"]["allocatable"] == {"cpu": "2"}


def test_quantities_are_written_back_canonically():
    assert node(status={"capacity": {"cpu": "2000m", "memory": "1048576Ki"}})["status"]["capacity"] == {
        "cpu": "2", "memory": "1Gi"}


def test_a_create_keeps_the_status_it_is_sent():
    assert node(status={"phase": "Running"})["status"] == {"phase": "Running"}


def test_pod_cidrs_may_only_be_set_from_empty():
    old = node({"podCIDRs": ["10.0.0.0/24"]})
    new = copy.deepcopy(old)
    new["spec"]["podCIDRs"] = ["10.1.0.0/24"]
    assert update_errors(new, old) == [
        'spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid']
    assert update_errors(old, node()) == []


def test_provider_id_is_immutable_once_set():
    old = node({"providerID": "aws://a"})
    new = copy.deepcopy(old)
    new["spec"]["providerID"] = "aws://b"
    assert update_errors(new, old) == [
        'spec.providerID: Forbidden: node updates may not change providerID except from "" to valid']
    assert update_errors(old, node()) == []


def test_external_id_may_not_be_updated():
    new = node({"externalID": "x"})
    assert update_errors(new, node()) == ["spec.externalID: Forbidden: may not be updated"]


def test_status_addresses_are_unique_on_update():
    address = {"type": "InternalIP", "address": "10.0.0.1"}
    new = node(status={"addresses": [address, address]})
    assert update_errors(new, node()) == [
        'status.addresses[1]: Duplicate value: core.NodeAddress{Type:"InternalIP", Address:"10.0.0.1"}']


def test_a_spec_write_keeps_the_status_and_a_status_write_keeps_the_spec():
    old = node({"unschedulable": False}, status={"phase": "Running"})
    new = node({"unschedulable": True}, status={"phase": "Pending"})
    S.default(new)  # as the registry does first
    S.prepare_for_update(new, old)
    assert (new["spec"]["unschedulable"], new["status"]) == (True, {"phase": "Running"})
    status_write = node({"unschedulable": True}, status={"phase": "Pending"})
    S.default(status_write)  # as the registry does first
    S.prepare_for_update(status_write, old, S.subresources["status"])
    assert (status_write["spec"].get("unschedulable"), status_write["status"]) == (False, {"phase": "Pending"})


def test_field_selectors_are_metadata_name_and_spec_unschedulable():
    assert S.field_labels == ("metadata.name", "spec.unschedulable")
    assert S.selectable_fields(node({"unschedulable": True})) == {"metadata.name": "n1", "spec.unschedulable": "true"}
    assert S.selectable_fields(node())["spec.unschedulable"] == "false"


def test_printer_columns_are_kubes():
    names = [(c["name"], c["priority"]) for c in S.columns.definitions]
    assert names == [("Name", 0), ("Status", 0), ("Roles", 0), ("Age", 0), ("Version", 0), ("Internal-IP", 1),
                     ("External-IP", 1), ("OS-Image", 1), ("Kernel-Version", 1), ("Container-Runtime", 1)]


def test_printer_shows_readiness_roles_and_addresses():
    obj = node({"unschedulable": True}, status={
        "conditions": [{"type": "Ready", "status": "True"}],
        "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
        "nodeInfo": {"kubeletVersion": "v1.28.0", "osImage": "Linux"}},
        labels={"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "worker"})
    cells = S.columns.cells(obj)
    assert cells[1:3] == ["Ready,SchedulingDisabled", "control-plane,worker"]
    assert cells[4:] == ["v1.28.0", "10.0.0.1", "<none>", "Linux", "<unknown>", "<unknown>"]


def test_printer_status_is_unknown_without_a_ready_condition_and_roles_none():
    assert S.columns.cells(node())[1:3] == ["Unknown", "<none>"]
    not_ready = node(status={"conditions": [{"type": "Ready", "status": "False"}]})
    assert S.columns.cells(not_ready)[1] == "NotReady"
