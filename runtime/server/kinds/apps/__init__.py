"""The `apps/v1` kinds: Deployment, StatefulSet, ReplicaSet (each with `status` and `scale`), DaemonSet and
ControllerRevision.

Contract: each kind's strategy (`runtime.server.kinds.Strategy`), named in `runtime.server.kinds.STRATEGIES`;
its rules are Kubernetes' (`pkg/apis/*/v1/defaults.go`, `pkg/apis/*/validation`, `pkg/registry/*/*/strategy.go`).
"""

from runtime.server.kinds.apps.deployment import DeploymentStrategy
from runtime.server.kinds.apps.statefulset import StatefulSetStrategy
from runtime.server.kinds.apps.replicaset import ReplicaSetStrategy
from runtime.server.kinds.apps.daemonset import DaemonSetStrategy
from runtime.server.kinds.apps.controllerrevision import ControllerRevisionStrategy

__all__ = ["DeploymentStrategy", "StatefulSetStrategy", "ReplicaSetStrategy", "DaemonSetStrategy", "ControllerRevisionStrategy"]
