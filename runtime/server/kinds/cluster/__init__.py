"""The cluster's and namespaces' plumbing kinds: Node, PersistentVolume, PersistentVolumeClaim, LimitRange,
ResourceQuota (core `v1`), Ingress, IngressClass, NetworkPolicy (`networking.<domain>/v1`), PriorityClass
(`scheduling.<domain>/v1`) and StorageClass (`storage.<domain>/v1`).

Contract: each kind's strategy (`runtime.server.kinds.Strategy`), named in `runtime.server.kinds.STRATEGIES`;
its rules are Kubernetes' (`pkg/apis/*/v1/defaults.go`, `pkg/apis/*/validation`, `pkg/registry/*/*/strategy.go`).
"""

from runtime.server.kinds.cluster.node import NodeStrategy
from runtime.server.kinds.cluster.storage import PersistentVolumeStrategy, PersistentVolumeClaimStrategy, StorageClassStrategy
from runtime.server.kinds.cluster.limits import LimitRangeStrategy, ResourceQuotaStrategy
from runtime.server.kinds.cluster.networking import IngressStrategy, IngressClassStrategy, NetworkPolicyStrategy
from runtime.server.kinds.cluster.scheduling import PriorityClassStrategy

__all__ = ["NodeStrategy", "PersistentVolumeStrategy", "PersistentVolumeClaimStrategy", "LimitRangeStrategy", "ResourceQuotaStrategy", "IngressStrategy", "IngressClassStrategy", "NetworkPolicyStrategy", "PriorityClassStrategy", "StorageClassStrategy"]
