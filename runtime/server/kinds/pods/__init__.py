"""Pods and what acts on them: core `v1` Pod (its `status`, `binding`, `eviction` and `ephemeralcontainers`), the pod
spec's defaulting and validation that every pod template shares (`podspec_*`), and `policy/v1`
PodDisruptionBudget (which an eviction consults).

Modules: `pod` (the Pod's strategy), `podupdate` (what a write may change), `qos`, `podprinter`,
`podconditions`, `binding` and `eviction` (the Pod's action subresources) over `podstore` (what they ask of
the server), `pdb` (the PodDisruptionBudget's strategy), `podspec*` (the pod spec's defaults and rules).

Contract: each kind's strategy (`runtime.server.kinds.Strategy`), named in `runtime.server.kinds.STRATEGIES`;
its rules are Kubernetes' (`pkg/apis/*/v1/defaults.go`, `pkg/apis/*/validation`, `pkg/registry/*/*/strategy.go`).
"""

from runtime.server.kinds.pods.pod import PodStrategy
from runtime.server.kinds.pods.pdb import PodDisruptionBudgetStrategy

__all__ = ["PodStrategy", "PodDisruptionBudgetStrategy"]
