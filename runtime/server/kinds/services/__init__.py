"""Services and where they lead: core `v1` Service (its ClusterIP and NodePort allocation), Endpoints and
`discovery.k8s.io/v1` EndpointSlice.

Contract: each kind's strategy (`runtime.server.kinds.Strategy`), named in `runtime.server.kinds.STRATEGIES`;
its rules are Kubernetes' (`pkg/apis/*/v1/defaults.go`, `pkg/apis/*/validation`, `pkg/registry/*/*/strategy.go`).
"""

from runtime.server.kinds.services.service import ServiceStrategy
from runtime.server.kinds.services.endpoints import EndpointsStrategy
from runtime.server.kinds.services.endpointslice import EndpointSliceStrategy

__all__ = ["ServiceStrategy", "EndpointsStrategy", "EndpointSliceStrategy"]
