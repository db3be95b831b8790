"""printPod's cells and columns, and GetPodQOS (Kubernetes v1.28 `pkg/printers/internalversion/printers.go`,
`pkg/apis/core/helper/qos`)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from runtime.server.kinds.pods.podprinter import POD_COLUMNS, pod_cells
from runtime.server.kinds.pods.qos import pod_qos_class


def ago(minutes: int) -> str:
    return (datetime.now(timezone.utc) - timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod(status: dict[str, Any], containers: int = 1, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p", "creationTimestamp": ago(5)},
            "spec": {"containers": [{"name": f"c{i}"} for i in range(containers)], **spec}, "status": status}


def cells(obj: dict[str, Any]) -> list[Any]:
    return pod_cells(obj)


def test_columns_are_kubectls_and_the_wide_ones_priority_one():
    names = [(c["name"], c["priority"]) for c in POD_COLUMNS.definitions]
    assert names == [("Name", 0), ("Ready", 0), ("Status", 0), ("Restarts", 0), ("Age", 0), ("IP", 1), ("Node", 1),
                     ("Nominated Node", 1), ("Readiness Gates", 1)]


def test_ready_counts_ready_running_containers():
    status = {"phase": "Running", "containerStatuses": [
        {"name": "c0", "ready": True, "state": {"running": {}}}, {"name": "c1", "ready": False, "state": {"running": {}}}]}
    assert cells(pod(status, containers=2))[1:3] == ["1/2", "Running"]


def test_status_is_the_waiting_reason():
    status = {"phase": "Pending", "containerStatuses": [{"name": "c0", "state": {"waiting": {"reason": "ErrImagePull"}}}]}
    assert cells(pod(status))[2] == "ErrImagePull"


def test_status_is_exit_code_without_a_terminated_reason():
    status = {"phase": "Failed", "containerStatuses": [{"name": "c0", "state": {"terminated": {"exitCode": 3}}}]}
    assert cells(pod(status))[2] == "ExitCode:3"


def test_status_while_initializing():
    status = {"phase": "Pending", "initContainerStatuses": [
        {"name": "i0", "state": {"waiting": {"reason": "PodInitializing"}}}]}
    assert cells(pod(status, initContainers=[{"name": "i0"}]))[2] == "Init:0/1"
    status["initContainerStatuses"][0]["state"] = {"terminated": {"exitCode": 2}}
    assert cells(pod(status, initContainers=[{"name": "i0"}]))[2] == "Init:ExitCode:2"


def test_status_scheduling_gated_and_terminating():
    gated = pod({"phase": "Pending", "conditions": [{"type": "PodScheduled", "reason": "SchedulingGated"}]})
    assert cells(gated)[2] == "SchedulingGated"
    gated["metadata"]["deletionTimestamp"] = ago(0)
    assert cells(gated)[2] == "Terminating"


def test_completed_with_a_running_container_is_running_or_not_ready():
    status = {"phase": "Running", "containerStatuses": [
        {"name": "c0", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
        {"name": "c1", "ready": True, "state": {"running": {}}}]}
    assert cells(pod(status, containers=2))[2] == "NotReady"
    status["conditions"] = [{"type": "Ready", "status": "True"}]
    assert cells(pod(status, containers=2))[2] == "Running"


def test_restarts_say_when_the_last_one_ended():
    status = {"phase": "Running", "containerStatuses": [
        {"name": "c0", "restartCount": 2, "lastState": {"terminated": {"finishedAt": ago(3)}}, "state": {"running": {}}}]}
    assert cells(pod(status))[3] == "2 (3m ago)"
    assert cells(pod({"phase": "Pending"}))[3] == "0"


def test_wide_cells_ip_node_nominated_node_and_readiness_gates():
    status = {"phase": "Running", "podIPs": [{"ip": "10.0.0.1"}], "conditions": [{"type": "x", "status": "True"}]}
    obj = pod(status, nodeName="n1", readinessGates=[{"conditionType": "x"}, {"conditionType": "y"}])
    assert cells(obj)[5:] == ["10.0.0.1", "n1", "<none>", "1/2"]
    assert cells(pod({"phase": "Pending"}))[5:] == ["<none>", "<none>", "<none>", "<none>"]


def resources(requests: dict[str, str] | None = None, limits: dict[str, str] | None = None) -> dict[str, Any]:
    return {"name": "c", "resources": {k: v for k, v in (("requests", requests), ("limits", limits)) if v}}


def test_qos_best_effort_without_requests_or_limits():
    assert pod_qos_class({"containers": [resources()]}) == "BestEffort"


def test_qos_guaranteed_when_limits_equal_requests_for_cpu_and_memory():
    both = {"cpu": "500m", "memory": "1Gi"}
    assert pod_qos_class({"containers": [resources(both, both)]}) == "Guaranteed"
    assert pod_qos_class({"containers": [resources({"cpu": "0.5", "memory": "1024Mi"}, both)]}) == "Guaranteed"


def test_qos_burstable_otherwise():
    assert pod_qos_class({"containers": [resources({"cpu": "100m"})]}) == "Burstable"
    assert pod_qos_class({"containers": [resources({"cpu": "100m", "memory": "1Gi"},
                                                   {"cpu": "200m", "memory": "1Gi"})]}) == "Burstable"
    assert pod_qos_class({"containers": [resources(limits={"cpu": "1", "memory": "1Gi"}), resources()]}) == "Burstable"


def test_qos_ignores_zero_and_other_resources():
    assert pod_qos_class({"containers": [resources({"cpu": "0", "ephemeral-storage": "1Gi"})]}) == "BestEffort"
