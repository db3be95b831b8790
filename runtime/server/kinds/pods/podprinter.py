"""`kubectl get pods`: Kubernetes' printPod (`pkg/printers/internalversion/printers.go`).

Columns NAME READY STATUS RESTARTS AGE, and with `-o wide` IP NODE
NOMINATED NODE READINESS GATES. The cells:

- READY: ready containers / containers (restartable init containers,
  sidecars, count among them once started);
- STATUS: the phase, or `status.reason`; `SchedulingGated` while the
  PodScheduled condition says so; while initializing `Init:<reason>`,
  `Init:ExitCode:N`, `Init:Signal:N` or `Init:i/n`; then the last
  container's waiting or terminated reason (`ExitCode:N`, `Signal:N`
  without one), `Completed` turned back to `Running` (or `NotReady`) while a
  container still runs; `Terminating` once deleted (`Unknown` for a pod on
  an unreachable node);
- RESTARTS: the restart count, with `(<age> ago)` of the last termination;
- the wide cells: the first pod IP, the node, the nominated node (each
  `<none>` when unset), and true readiness gates / readiness gates.
"""

from __future__ import annotations

from typing import Any

from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column

__all__ = ["POD_COLUMNS", "pod_cells"]

_NONE = "<none>"
#: The reason a node controller gives a pod on a node it lost (Kubernetes' NodeUnreachablePodReason).
_NODE_LOST = "NodeLost"

_WIDE = (
    ("IP", "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated."),
    ("Node", "NodeName is a request to schedule this pod onto a specific node. If it is non-empty, the scheduler "
             "simply schedules this pod onto that node, assuming that it fits resource requirements."),
    ("Nominated Node", "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be "
                       "scheduled right away as preemption victims receive their graceful termination periods. This "
                       "field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to "
                       "place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to "
                       "give the resources on this node to a higher priority pod that is created after preemption. As "
                       "a result, this field may be different than PodSpec.nodeName when the pod is scheduled."),
    ("Readiness Gates", "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when "
                        "all its containers are ready AND all conditions specified in the readiness gates have status "
                        "equal to \"True\" More info: "
                        "https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates"),
)


def _restartable(container: dict[str, Any] | None) -> bool:
    return bool(container) and container.get("restartPolicy") == "Always"  # type: ignore[union-attr]


def _finished(status: dict[str, Any]) -> str:
    """When the container's last run ended ("" if it did not)."""
    return ((status.get("lastState") or {}).get("terminated") or {}).get("finishedAt") or ""


def _terminated_reason(terminated: dict[str, Any], prefix: str = "") -> str:
    if terminated.get("reason"):
        return prefix + terminated["reason"]
    if terminated.get("signal"):
        return f"{prefix}Signal:{terminated['signal']}"
    return f"{prefix}ExitCode:{terminated.get('exitCode') or 0}"


def _condition_true(conditions: list[dict[str, Any]], kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True" for c in conditions)


def pod_cells(pod: dict[str, Any]) -> list[Any]:
    """One pod's row (see the module doc)."""
    meta, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
    conditions = status.get("conditions") or []
    init_specs = {c.get("name"): c for c in spec.get("initContainers") or ()}
    total = len(spec.get("containers") or ()) + sum(1 for c in init_specs.values() if _restartable(c))
    ready = restarts = sidecar_restarts = 0
    last_restart = sidecar_last = ""
    reason = status.get("reason") or status.get("phase") or ""
    if any(c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated" for c in conditions):
        reason = "SchedulingGated"
    initializing = False
    init_statuses = status.get("initContainerStatuses") or []
    for i, container in enumerate(init_statuses):
        restarts += int(container.get("restartCount") or 0)
        last_restart = max(last_restart, _finished(container))
        sidecar = _restartable(init_specs.get(container.get("name")))
        if sidecar:
            sidecar_restarts += int(container.get("restartCount") or 0)
            sidecar_last = max(sidecar_last, _finished(container))
        state = container.get("state") or {}
        terminated, waiting = state.get("terminated"), state.get("waiting")
        if terminated is not None and int(terminated.get("exitCode") or 0) == 0:
            continue
        if sidecar and container.get("started"):
            ready += 1 if container.get("ready") else 0
            continue
        if terminated is not None:
            reason = _terminated_reason(terminated, "Init:")
        elif waiting and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            reason = "Init:" + waiting["reason"]
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break
    if not initializing or _condition_true(conditions, "Initialized"):
        restarts, last_restart = sidecar_restarts, sidecar_last
        running = False
        for container in reversed(status.get("containerStatuses") or []):
            restarts += int(container.get("restartCount") or 0)
            last_restart = max(last_restart, _finished(container))
            state = container.get("state") or {}
            waiting, terminated = state.get("waiting"), state.get("terminated")
            if waiting and waiting.get("reason"):
                reason = waiting["reason"]
            elif terminated is not None:
                reason = _terminated_reason(terminated)
            elif container.get("ready") and state.get("running") is not None:
                running = True
                ready += 1
        if reason == "Completed" and running:
            reason = "Running" if _condition_true(conditions, "Ready") else "NotReady"
    if meta.get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == _NODE_LOST else "Terminating"
    shown = str(restarts)
    if restarts and last_restart:
        shown = f"{restarts} ({age(last_restart)} ago)"
    ips = status.get("podIPs") or []
    gates = spec.get("readinessGates") or []
    gates_cell = _NONE
    if gates:
        by_type = {}
        for c in conditions:
            by_type.setdefault(c.get("type"), c)  # the first condition of a type counts, as Kubernetes'
        true = sum(1 for g in gates if (by_type.get(g.get("conditionType")) or {}).get("status") == "True")
        gates_cell = f"{true}/{len(gates)}"
    return [meta.get("name", ""), f"{ready}/{total}", reason, shown, age(meta.get("creationTimestamp")),
            (ips[0].get("ip") if ips else "") or _NONE, spec.get("nodeName") or _NONE,
            status.get("nominatedNodeName") or _NONE, gates_cell]


POD_COLUMNS = Columns((
    NAME_COLUMN,
    column("Ready", "The aggregate readiness state of this pod for accepting traffic."),
    column("Status", "The aggregate status of the containers in this pod."),
    column("Restarts", "The number of times the containers in this pod have been restarted and when the last "
                       "container in this pod has restarted."),
    AGE_COLUMN,
    *(column(name, doc, priority=1) for name, doc in _WIDE),
), pod_cells)
