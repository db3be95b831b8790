"""The Pod strategy's rules, on the strategy directly (Kubernetes v1.28 `pkg/registry/core/pod/strategy.go`,
ValidatePodCreate, ValidatePodUpdate, ValidatePodStatusUpdate, ValidatePodEphemeralContainersUpdate,
CheckGracefulDelete, PodToSelectableFields), in kube's words and field paths."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from runtime.machinery import errors
from runtime.machinery.options import Body
from runtime.machinery.scheme import Scheme
from runtime.server.kinds.pods.binding import binding_errors
from runtime.server.kinds.pods.podupdate import IMMUTABLE_SPEC_MSG

SCHEME = Scheme("k8s.io")
PODS = SCHEME.by_kind("Pod", "")
S = PODS.strategy


def new_pod(**spec: Any) -> dict[str, Any]:
    """A Pod as a create stores it (decoded, defaulted, prepared)."""
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}
    obj, _ = S.decode(Body(body), "Strict")
    S.default(obj)
    S.prepare_for_create(obj)
    return obj


def update(old: dict[str, Any], change, subresource: str = "") -> list[str]:
    """The errors (as `field: detail`) of writing `old` changed by `change` (to the main resource or a subresource)."""
    new = copy.deepcopy(old)
    change(new)
    S.default(new)  # as the registry does first
    S.prepare_for_update(new, old, S.subresources.get(subresource) if subresource else None)
    return [f"{e.field}: {e.detail}" for e in S.validate_update(new, old)]


def errs(obj: dict[str, Any]) -> list[str]:
    return [f"{e.field}: {e.detail}" for e in S.validate(obj)]


# ---- create ----------------------------------------------------------------------------------------

def test_create_resets_status_to_pending_with_qos_class():
    body = new_pod()
    body["status"] = {"phase": "Running", "podIP": "10.0.0.1"}
    S.prepare_for_create(body)
    assert body["status"] == {"phase": "Pending", "qosClass": "BestEffort"}


def test_create_with_scheduling_gates_is_scheduling_gated():
    obj = new_pod(schedulingGates=[{"name": "example.com/wait"}])
    assert obj["status"]["conditions"] == [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
                                            "message": "Scheduling is blocked due to non-empty scheduling gates"}]


def test_create_refuses_ephemeral_containers():
    obj = new_pod(ephemeralContainers=[{"name": "debug", "image": "busybox", "terminationMessagePolicy": "File",
                                        "imagePullPolicy": "Always"}])
    assert "spec.ephemeralContainers: cannot be set on create" in errs(obj)


def test_create_refuses_node_name_with_scheduling_gates():
    obj = new_pod(nodeName="n1", schedulingGates=[{"name": "g"}])
    assert "spec.nodeName: cannot be set until all schedulingGates have been cleared" in errs(obj)


def test_create_pod_name_is_a_dns_subdomain():
    obj = new_pod()
    obj["metadata"]["name"] = "Bad_Name"
    assert any(e.startswith("metadata.name: a lowercase RFC 1123 subdomain") for e in errs(obj))


def test_mirror_pod_annotation_needs_a_node_and_never_changes():
    obj = new_pod()
    obj["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "x"}
    assert "metadata.annotations[kubernetes.io/config.mirror]: must set spec.nodeName if mirror pod annotation is " \
           "set" in errs(obj)
    assert update(new_pod(), lambda p: p["metadata"].update(annotations={"kubernetes.io/config.mirror": "x"})) == [
        "metadata.annotations[kubernetes.io/config.mirror]: may not add mirror pod annotation",
        "metadata.annotations[kubernetes.io/config.mirror]: must set spec.nodeName if mirror pod annotation is set"]


def test_pod_deletion_cost_is_a_32bit_integer():
    obj = new_pod()
    obj["metadata"]["annotations"] = {"controller.kubernetes.io/pod-deletion-cost": "2147483648"}
    assert errs(obj) == ["metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: must be a 32bit integer"]
    obj["metadata"]["annotations"]["controller.kubernetes.io/pod-deletion-cost"] = "-5"
    assert errs(obj) == []


def test_apparmor_annotations_may_not_be_added_on_update():
    key = "container.apparmor.security.beta.kubernetes.io/c"
    assert update(new_pod(), lambda p: p["metadata"].update(annotations={key: "runtime/default"})) == [
        f"metadata.annotations[{key}]: may not add AppArmor annotations"]


def test_create_validates_the_spec_through_podspec():
    obj = new_pod()
    obj["spec"]["containers"][0]["image"] = ""
    assert "spec.containers[0].image: " in errs(obj)


def test_pods_keep_generation_as_sent():
    assert S.counts_generation is False


# ---- update ----------------------------------------------------------------------------------------

def test_update_may_change_container_images():
    assert update(new_pod(), lambda p: p["spec"]["containers"][0].update(image="nginx:2")) == []


def test_update_of_another_field_is_forbidden_with_a_diff():
    found = update(new_pod(), lambda p: p["spec"].update(restartPolicy="Never"))
    assert len(found) == 1 and found[0].startswith(f"spec: {IMMUTABLE_SPEC_MSG}\n  core.PodSpec{{")
    assert '- \trestartPolicy: "Always",' in found[0] and '+ \trestartPolicy: "Never",' in found[0]


def test_update_may_not_add_or_remove_containers():
    found = update(new_pod(), lambda p: p["spec"]["containers"].append({"name": "d", "image": "x"}))
    assert found == ["spec.containers: pod updates may not add or remove containers"]


def test_update_image_may_not_be_emptied_or_padded():
    assert update(new_pod(), lambda p: p["spec"]["containers"][0].update(image=" nginx")) == [
        "spec.containers[0].image: must not have leading or trailing whitespace"]


def test_update_active_deadline_may_be_set_and_lowered_but_not_raised_or_unset():
    old = new_pod()
    assert update(old, lambda p: p["spec"].update(activeDeadlineSeconds=100)) == []
    old["spec"]["activeDeadlineSeconds"] = 100
    assert update(old, lambda p: p["spec"].update(activeDeadlineSeconds=50)) == []
    assert update(old, lambda p: p["spec"].update(activeDeadlineSeconds=200)) == [
        "spec.activeDeadlineSeconds: must be less than or equal to previous value"]
    assert update(old, lambda p: p["spec"].pop("activeDeadlineSeconds")) == [
        "spec.activeDeadlineSeconds: must not update from a positive integer to nil value"]


def test_update_tolerations_additions_only():
    old = new_pod(tolerations=[{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}])
    assert update(old, lambda p: p["spec"]["tolerations"].append({"key": "b", "operator": "Exists"})) == []
    assert update(old, lambda p: p["spec"]["tolerations"][0].update(tolerationSeconds=10)) == []
    assert update(old, lambda p: p["spec"].update(tolerations=[])) == [
        "spec.tolerations: existing toleration can not be modified except its tolerationSeconds"]


def test_update_scheduling_gates_removals_only():
    old = new_pod(schedulingGates=[{"name": "a"}])
    assert update(old, lambda p: p["spec"].update(schedulingGates=[])) == []
    assert update(old, lambda p: p["spec"]["schedulingGates"].append({"name": "b"})) == [
        "spec.schedulingGates[1].name: only deletion is allowed, but found new scheduling gate 'b'"]


def test_update_negative_grace_period_may_become_one():
    old = new_pod(terminationGracePeriodSeconds=-1)
    assert update(old, lambda p: p["spec"].update(terminationGracePeriodSeconds=1)) == []
    assert len(update(old, lambda p: p["spec"].update(terminationGracePeriodSeconds=2))) == 1


def test_pod_write_keeps_the_status():
    old = new_pod()
    new = copy.deepcopy(old)
    new["status"] = {"phase": "Running"}
    S.default(new)  # as the registry does first
    S.prepare_for_update(new, old)
    assert new["status"] == old["status"]


def test_pod_write_of_ephemeral_containers_is_refused():
    with pytest.raises(errors.Invalid) as caught:
        update(new_pod(), lambda p: p["spec"].update(ephemeralContainers=[{"name": "d", "image": "busybox"}]))
    assert IMMUTABLE_SPEC_MSG in caught.value.message


def test_update_body_is_defaulted():
    old = new_pod()
    assert update(old, lambda p: p["spec"].pop("dnsPolicy")) == []


# ---- status ----------------------------------------------------------------------------------------

def test_status_write_keeps_spec_and_qos_class():
    old = new_pod()
    new = copy.deepcopy(old)
    new["spec"]["nodeName"] = "n1"
    new["status"] = {"phase": "Running"}
    S.default(new)  # as the registry does first
    S.prepare_for_update(new, old, S.subresources["status"])
    assert "nodeName" not in new["spec"] and new["status"] == {"phase": "Running", "qosClass": "BestEffort"}


def test_status_pod_ip_and_pod_ips_are_kept_in_step():
    old = new_pod()
    for sent, ip, ips in (({"podIP": "10.0.0.1"}, "10.0.0.1", ["10.0.0.1"]),
                          ({"podIPs": [{"ip": "fd00::1"}]}, "fd00::1", ["fd00::1"]),
                          ({"podIP": "10.0.0.2", "podIPs": [{"ip": "10.0.0.3"}]}, "10.0.0.2", ["10.0.0.2"])):
        new = copy.deepcopy(old)
        new["status"] = dict(sent)
        S.default(new)  # as the registry does first
        S.prepare_for_update(new, old, S.subresources["status"])
        assert (new["status"]["podIP"], [e["ip"] for e in new["status"]["podIPs"]]) == (ip, ips)


def test_status_write_does_not_check_the_stored_spec_again():
    old = new_pod()
    old["spec"]["containers"][0]["image"] = ""  # stored before a rule it now breaks
    assert update(old, lambda p: p["status"].update(phase="Running"), "status") == []


def test_status_nominated_node_name_is_a_dns_subdomain():
    found = update(new_pod(), lambda p: p["status"].update(nominatedNodeName="Bad_Node"), "status")
    assert [f.split(":")[0] for f in found] == ["status.nominatedNodeName"]


def test_status_terminated_container_that_may_not_restart_stays_terminated():
    old = new_pod(restartPolicy="Never")
    old["status"]["containerStatuses"] = [{"name": "c", "state": {"terminated": {"exitCode": 0}}}]
    found = update(old, lambda p: p["status"].update(containerStatuses=[{"name": "c", "state": {"running": {}}}]),
                   "status")
    assert found == ["status.containerStatuses[0].state: may not be transitioned to non-terminated state"]


def test_status_on_failure_container_that_failed_may_restart():
    old = new_pod(restartPolicy="OnFailure")
    old["status"]["containerStatuses"] = [{"name": "c", "state": {"terminated": {"exitCode": 1}}}]
    assert update(old, lambda p: p["status"].update(containerStatuses=[{"name": "c", "state": {"running": {}}}]),
                  "status") == []


def test_status_pod_ips_are_ips_one_per_family():
    assert update(new_pod(), lambda p: p["status"].update(podIPs=[{"ip": "x"}]), "status") == [
        "status.podIPs[0]: must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"]
    assert update(new_pod(), lambda p: p["status"].update(podIPs=[{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}]),
                  "status")[0] == "status.podIPs: may specify no more than one IP for each IP family"
    assert update(new_pod(), lambda p: p["status"].update(podIPs=[{"ip": "10.0.0.1"}, {"ip": "fd00::1"}]),
                  "status") == []


# ---- ephemeral containers --------------------------------------------------------------------------

EPHEMERAL = {"name": "debug", "image": "busybox", "terminationMessagePolicy": "File", "imagePullPolicy": "Always"}


def test_ephemeral_write_changes_only_ephemeral_containers():
    old = new_pod()
    new = copy.deepcopy(old)
    new["spec"]["ephemeralContainers"] = [EPHEMERAL]
    new["spec"]["restartPolicy"] = "Never"
    new["status"] = {}
    S.default(new)  # as the registry does first
    S.prepare_for_update(new, old, S.subresources["ephemeralcontainers"])
    assert new["spec"]["restartPolicy"] == "Always" and new["status"] == old["status"]
    assert S.validate_update(new, old) == []


def test_ephemeral_containers_may_not_be_removed_or_changed():
    old = new_pod()
    old["spec"]["ephemeralContainers"] = [dict(EPHEMERAL)]
    assert update(old, lambda p: p["spec"].update(ephemeralContainers=[]), "ephemeralcontainers") == [
        'spec.ephemeralContainers: existing ephemeral containers "debug" may not be removed\n']
    changed = update(old, lambda p: p["spec"]["ephemeralContainers"][0].update(image="alpine"), "ephemeralcontainers")
    assert changed[0].startswith('spec.ephemeralContainers: existing ephemeral containers "debug" may not be changed')


def test_ephemeral_containers_not_on_a_static_pod():
    old = new_pod(nodeName="n1")
    old["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "x"}
    assert update(old, lambda p: p["spec"]["containers"][0].update(image="nginx:2")) == []
    assert update(old, lambda p: p["spec"].update(ephemeralContainers=[EPHEMERAL]), "ephemeralcontainers") == [
        ": static pods do not support ephemeral containers"]


# ---- deletion, field selectors ---------------------------------------------------------------------

def test_grace_period_is_the_pods_on_a_node_and_zero_elsewhere():
    on_node = new_pod(nodeName="n1", terminationGracePeriodSeconds=45)
    assert S.grace_period(on_node, None) == 45
    assert S.grace_period(on_node, 5) == 5
    assert S.grace_period(new_pod(), None) == 0
    on_node["status"]["phase"] = "Succeeded"
    assert S.grace_period(on_node, None) == 0
    assert S.grace_period(new_pod(nodeName="n1", terminationGracePeriodSeconds=-5), None) == 1


def test_pod_field_selector_values():
    obj = new_pod(nodeName="n1", serviceAccountName="sa", hostNetwork=True)
    obj["status"].update(podIPs=[{"ip": "10.0.0.1"}], nominatedNodeName="n2")
    fields = S.selectable_fields(obj)
    assert fields == {"metadata.name": "p", "metadata.namespace": "ns", "spec.nodeName": "n1", "spec.host": "n1",
                      "spec.restartPolicy": "Always", "spec.schedulerName": "default-scheduler",
                      "spec.serviceAccountName": "sa", "spec.hostNetwork": "true", "status.phase": "Pending",
                      "status.podIP": "10.0.0.1", "status.nominatedNodeName": "n2"}
    assert set(S.field_labels) == set(fields) | {"status.podIPs"}


def test_pod_delete_answers_the_pod_and_put_does_not_create():
    assert S.returns_deleted_object is True and S.allow_create_on_update is False


def test_binding_target_is_a_named_node():
    assert binding_errors({"target": {"kind": "Node", "name": "n1"}}) == []
    found = [f"{e.field}: {e.detail}" for e in binding_errors({"target": {"kind": "Service"}})]
    assert found == ['target.kind: supported values: "Node", "<empty>"', "target.name: "]


def test_pod_write_earns_the_pod_specs_warnings():
    obj = new_pod(nodeSelector={"beta.kubernetes.io/os": "linux"})
    assert S.warnings(None, obj, "m") == [
        'spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead']
