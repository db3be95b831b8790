"""ClusterRole aggregation for the server's RBAC modules: `runtime.machinery.rbacaggregation`'s functions.

They live below the server, where the aggregation controller over HTTP reaches them without loading
the server's RBAC (`miniplane controllers`); this module keeps their name inside `runtime.server.rbac`
for its importers (the RBAC package, its insight, the test env).
"""

from runtime.machinery.rbacaggregation import aggregate_rules, aggregation_selectors, same_rules

__all__ = ["aggregation_selectors", "aggregate_rules", "same_rules"]
