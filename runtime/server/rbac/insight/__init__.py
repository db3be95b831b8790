"""RBAC insight: why a request is allowed or not, who can, what changed, what is risky.

Pure functions over a `PolicySource` (`RBACIndex` is one): no I/O, no
clock. They answer from the code that authorizes requests: decisions come
from `RBACAuthorizer`, rules match through `runtime.server.rbac.rules`, roleRefs
resolve through `runtime.server.rbac.resolver`, never a re-implementation. Results
are the status types of the `insight.<domain>/v1` kinds
(`runtime.models.insight`: one definition for the server, the CLI and the
page), whose `to_dict()` is their JSON (empty fields left out).

Contract:

- `explain(attrs, source, *, cluster_scoped=None) -> AccessExplanationStatus`: the
  authorizer's verdict (`system:masters` included), every binding that
  applies to the user with its role and each rule checked attribute by
  attribute (verb, apiGroup, resource, subresource, resourceName,
  nonResourceURL, namespace), the granting rule, and the near misses (rules
  off by exactly one attribute, RoleBindings of other namespaces, ClusterRoles
  an aggregation does not select, roleRefs that do not resolve).
  `cluster_scoped(api_group, resource)` tells which resources RoleBindings
  can never grant.
- `who_can(verb, resource, *, group, subresource, namespace, name, source)`
  and `who_can_non_resource(verb, path, *, source) -> tuple[SubjectAccess]`:
  every User, Group and ServiceAccount a binding names that the request is
  allowed for, with the grants; `system:masters` always, `privileged`.
- `access_matrix(user, namespace, resources, source) -> AccessMatrixStatus`:
  allowed / denied / allowedByWildcard per resource and verb;
  `resources_named_in_rules(source)` lists what rules name.
- `diff(before, after, subjects=None) -> tuple[SubjectDiff]`: per subject,
  the permissions granted and revoked, per namespace; `aggregate(source)`
  fills in aggregated ClusterRoles' rules first, as the controller would.
- `lint(source, namespaces) -> tuple[LintFinding]`: dangling roleRefs, subjects
  in missing namespaces, rules that never match, risky grants ranked as
  KubiScan does, aggregated rules traced to their origin.
- `terminating_namespace(namespace, remaining, unchecked) -> TerminatingNamespace`
  and `blocker_findings(t)`: a terminating namespace's blockers (which
  objects, which finalizers), as lint findings too.
- `aggregation_graph(source) -> AggregationGraphStatus`: which ClusterRoles
  aggregate which (nodes, edges, the rules each edge brought).

Costs: `explain`, `who_can` and `lint` read the whole policy (a decision
reads only the bindings that may apply); `access_matrix` makes one decision
per cell; `diff` one rules lookup per subject and namespace it names.
"""

from runtime.server.rbac.insight.aggregate import (
    aggregate, aggregation_sources, labels_to_select, policy_objects, selects,
)
from runtime.server.rbac.insight.blockers import blocker_findings, is_terminating, terminating_namespace
from runtime.server.rbac.insight.checks import (
    API_GROUP, NAMESPACE, NON_RESOURCE_URL, RESOURCE, RESOURCE_NAME, SUBRESOURCE, VERB,
    check_rule, with_attribute,
)
from runtime.server.rbac.insight.diff import diff, subjects_in
from runtime.server.rbac.insight.explain import explain, explained_request
from runtime.server.rbac.insight.graph import aggregation_graph
from runtime.server.rbac.insight.lint import (
    NON_RESOURCE_VERBS, RESOURCE_VERBS, SPECIAL_VERBS, finding_sort_key, lint,
)
from runtime.server.rbac.insight.matrix import MATRIX_VERBS, access_matrix, resources_named_in_rules
from runtime.server.rbac.insight.near_miss import (
    AGGREGATION, ATTRIBUTE, CLUSTER_SCOPE, NAMESPACE_KIND, ROLE_REF, ClusterScoped,
)
from runtime.server.rbac.insight.refs import (
    object_ref, probe_user, role_ref, rule_of, subject_of, user_name,
)
from runtime.server.rbac.insight.risk import RISKS, Risk, rule_risks
from runtime.server.rbac.insight.who_can import who_can, who_can_attributes, who_can_non_resource

__all__ = [
    # explain
    "explain", "explained_request", "check_rule", "with_attribute", "ClusterScoped",
    "VERB", "API_GROUP", "RESOURCE", "SUBRESOURCE", "RESOURCE_NAME", "NON_RESOURCE_URL",
    "NAMESPACE", "ATTRIBUTE", "NAMESPACE_KIND", "CLUSTER_SCOPE", "AGGREGATION", "ROLE_REF",
    # who can
    "who_can", "who_can_non_resource", "who_can_attributes",
    # access matrix
    "access_matrix", "resources_named_in_rules", "MATRIX_VERBS",
    # diff and aggregation
    "diff", "subjects_in",
    "aggregate", "aggregation_sources", "labels_to_select", "selects", "policy_objects",
    # lint
    "lint", "finding_sort_key", "Risk", "RISKS", "rule_risks",
    "RESOURCE_VERBS", "NON_RESOURCE_VERBS", "SPECIAL_VERBS",
    "terminating_namespace", "blocker_findings", "is_terminating",
    # aggregation graph
    "aggregation_graph",
    # values
    "object_ref", "role_ref", "subject_of", "rule_of", "user_name", "probe_user",
]
