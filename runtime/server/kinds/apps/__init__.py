"""The `apps/v1` kinds: Deployment, StatefulSet, ReplicaSet (each with `status` and `scale`), DaemonSet and
ControllerRevision.

Contract: each kind's strategy (`runtime.server.kinds.Strategy`), named in `runtime.server.kinds.STRATEGIES`;
its rules are Kubernetes' v1.28 (`pkg/apis/apps/v1/defaults.go`, `pkg/apis/apps/validation`,
`pkg/registry/apps/<kind>/strategy.go`, the printers), each listed in its module's doc.

Modules, one concept each: a module per kind (`deployment`, `statefulset`,
`replicaset`, `daemonset`, `controllerrevision`); `workload`, what the four
kinds with a pod template share (defaults on every write, status reset,
generation, immutable selector, no create on update); `rules`, the shared
validation rules (selector, template, int-or-percent); `status`, the status
counters' rules; `scale`, the autoscaling/v1 Scale view; `printing`, the
shared printer cells; `gosyntax`, bad values as Go's `%#v` prints them. Pod
templates are defaulted and validated by `runtime.server.kinds.pods.podspec`.
"""

from runtime.server.kinds.apps.deployment import DeploymentStrategy
from runtime.server.kinds.apps.statefulset import StatefulSetStrategy
from runtime.server.kinds.apps.replicaset import ReplicaSetStrategy
from runtime.server.kinds.apps.daemonset import DaemonSetStrategy
from runtime.server.kinds.apps.controllerrevision import ControllerRevisionStrategy

__all__ = ["DeploymentStrategy", "StatefulSetStrategy", "ReplicaSetStrategy", "DaemonSetStrategy",
           "ControllerRevisionStrategy"]
