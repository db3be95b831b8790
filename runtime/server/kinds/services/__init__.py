"""Services and where they lead: core `v1` Service (its ClusterIP and NodePort allocation), Endpoints and
`discovery.k8s.io/v1` EndpointSlice.

Contract: each kind's strategy (`runtime.server.kinds.Strategy`), named in `runtime.server.kinds.STRATEGIES`;
its rules are Kubernetes' (`pkg/apis/*/v1/defaults.go`, `pkg/apis/*/validation`, `pkg/registry/*/*/strategy.go`).
`ServiceRanges` is what Services allocate from (the server's `--service-cluster-ip-range` and
`--service-node-port-range`): the registry holds one (`PolicyContext.service_ranges`), the Service strategy's
admission reserves each IP and node port as a store key of its own (`reservations`).

Modules, one concept each: `service` (the Service's strategy), `service_defaults` (its defaults and linked
fields), `service_validation` (ValidateService, and the port rules Endpoints and EndpointSlice share),
`service_allocation` (IPs and node ports taken on create and update) over `reservations` (each a store key)
and `ranges`; `endpoints` and `endpointslice` (their strategies). Printer columns take their descriptions
from the models (`runtime.server.kinds.columns.doc_column`).
The surface is `__all__` (`runtime.server.kinds.base` names `ranges.ServiceRanges` in
annotations only); the modules are internal to this package.
"""

from runtime.server.kinds.services.ranges import DEFAULT_CLUSTER_IP_RANGE, DEFAULT_NODE_PORT_RANGE, ServiceRanges
from runtime.server.kinds.services.service import ServiceStrategy
from runtime.server.kinds.services.endpoints import EndpointsStrategy
from runtime.server.kinds.services.endpointslice import EndpointSliceStrategy

__all__ = ["ServiceStrategy", "EndpointsStrategy", "EndpointSliceStrategy", "ServiceRanges",
           "DEFAULT_CLUSTER_IP_RANGE", "DEFAULT_NODE_PORT_RANGE"]
