"""Pods and what acts on them: core `v1` Pod (its `status`, `binding`, `eviction` and `ephemeralcontainers`), the pod
spec's defaulting and validation that every pod template shares (`podspec_*`), and `policy/v1`
PodDisruptionBudget (which an eviction consults).

Modules: `pod` (the Pod's strategy), `podupdate` (what a write may change), `podannotations` (the
annotations a Pod's writes are checked for), `qos`, `podprinter`, `podconditions`, `binding` and `eviction`
(the Pod's action subresources) over `podstore` (what they ask of the server), `pdb` (the
PodDisruptionBudget's strategy), `podspec` and its parts `podspec_*` (the pod spec's defaults, rules and
warnings).

Contract: each kind's strategy (`runtime.server.kinds.Strategy`), named in `runtime.server.kinds.STRATEGIES`;
its rules are Kubernetes' (`pkg/apis/*/v1/defaults.go`, `pkg/apis/*/validation`, `pkg/registry/*/*/strategy.go`),
each listed in its module's doc. Besides `__all__`, two modules are the surface the other kinds' packages use:
`podspec` (a pod template's defaults, validation and warnings: apps, batch) and `podspec_common` (the small
rules of names, ports, protocols and paths: services); the other modules are internal to this package.
"""

from runtime.server.kinds.pods.pod import PodStrategy
from runtime.server.kinds.pods.pdb import PodDisruptionBudgetStrategy

__all__ = ["PodStrategy", "PodDisruptionBudgetStrategy"]
