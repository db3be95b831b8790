"""The cluster's and namespaces' plumbing kinds: Node, PersistentVolume, PersistentVolumeClaim, LimitRange,
ResourceQuota (core `v1`), Ingress, IngressClass, NetworkPolicy (`networking.<domain>/v1`), PriorityClass
(`scheduling.<domain>/v1`) and StorageClass (`storage.<domain>/v1`).

Contract: each kind's strategy (`runtime.server.kinds.Strategy`), named in `runtime.server.kinds.STRATEGIES`;
its rules are Kubernetes' (`pkg/apis/*/v1/defaults.go`, `pkg/apis/*/validation`, `pkg/registry/*/*/strategy.go`,
`printers.go`), each module's docstring lists them. One module per kind; what several share:
`stored` (their base: quantities decoded canonically, defaults on every write), `resources` (resource names
and quantities), `volumes` (access and volume modes, classes), `netrules` (ports, CIDRs, hosts),
`defaultclass` (a StorageClass's or IngressClass's default, which claims and Ingresses take).
Also exported for the quota and limit admission: `LIMIT_TYPES`, `QUOTA_SCOPES`, `quantity`,
`is_standard_quota_resource`; for the bootstrap: `SYSTEM_PRIORITY_CLASSES`; for claim templates:
`claim_spec_errors`.
"""

from runtime.server.kinds.cluster.ingress import IngressStrategy
from runtime.server.kinds.cluster.ingressclass import IngressClassStrategy
from runtime.server.kinds.cluster.limitrange import LIMIT_TYPES, LimitRangeStrategy
from runtime.server.kinds.cluster.networkpolicy import NetworkPolicyStrategy
from runtime.server.kinds.cluster.node import NodeStrategy
from runtime.server.kinds.cluster.persistentvolume import PersistentVolumeStrategy
from runtime.server.kinds.cluster.persistentvolumeclaim import PersistentVolumeClaimStrategy, claim_spec_errors
from runtime.server.kinds.cluster.priorityclass import SYSTEM_PRIORITY_CLASSES, PriorityClassStrategy
from runtime.server.kinds.cluster.resourcequota import QUOTA_SCOPES, ResourceQuotaStrategy
from runtime.server.kinds.cluster.resources import is_standard_quota_resource, quantity
from runtime.server.kinds.cluster.storageclass import StorageClassStrategy

__all__ = ["NodeStrategy", "PersistentVolumeStrategy", "PersistentVolumeClaimStrategy", "LimitRangeStrategy",
           "ResourceQuotaStrategy", "IngressStrategy", "IngressClassStrategy", "NetworkPolicyStrategy",
           "PriorityClassStrategy", "StorageClassStrategy", "SYSTEM_PRIORITY_CLASSES", "LIMIT_TYPES",
           "QUOTA_SCOPES", "quantity", "is_standard_quota_resource", "claim_spec_errors"]
