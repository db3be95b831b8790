"""Pods and what acts on them: core `v1` Pod (its `status`, `binding`, `eviction` and `ephemeralcontainers`), the pod
spec's defaulting and validation that every pod template shares (`podspec_*`), and `policy/v1`
PodDisruptionBudget (which an eviction consults).

Contract: each kind's strategy (`runtime.server.kinds.Strategy`), named in `runtime.server.kinds.STRATEGIES`;
its rules are Kubernetes' (`pkg/apis/*/v1/defaults.go`, `pkg/apis/*/validation`, `pkg/registry/*/*/strategy.go`).
"""

from runtime.server.kinds.pods.pod import PodStrategy
from runtime.server.kinds.pods.pdb import PodDisruptionBudgetStrategy

__all__ = ["PodStrategy", "PodDisruptionBudgetStrategy"]
