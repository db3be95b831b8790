"""RBAC authorization for miniplane, as kube-apiserver's RBAC authorizer does it.

Pure library: no I/O except `bootstrap.load_bootstrap_policy` reading the
policy file. Objects are Kubernetes JSON dicts (ClusterRole, Role,
ClusterRoleBinding, RoleBinding of `rbac.authorization.<domain>/v1`).

Contract:

- `UserInfo` / `Attributes` (frozen) describe who asks what (`Attributes` is
  the request's `RequestInfo` plus the user);
  `resource_attributes` / `non_resource_attributes` build them.
- `RBACAuthorizer(source).authorize(attrs) -> Decision`: `system:masters`
  first, then ClusterRoleBindings, then RoleBindings of the request
  namespace; first matching rule wins, reason text as Kubernetes writes it.
  RBAC never denies (`allowed=False` is "no opinion"); bad policy data
  (unresolvable roleRef, unknown subject kind) becomes `evaluation_error`,
  never an exception.
- `RoleSource` is what the authorizer reads; `RBACIndex` implements it in
  memory (`upsert` / `remove` / `replace`), indexing bindings by subject so a
  decision costs O(bindings that may apply), not O(all bindings).
  `PolicySource` (also implemented by `RBACIndex`) adds listing everything.
- `aggregate_rules(role, roles)`: the rules an aggregated ClusterRole holds,
  as the aggregation controller computes them (`same_rules` compares lists).
- `runtime.server.rbac.insight` (a subpackage, imported on its own): explain a
  decision, who can, access matrix, policy diff and lint.
- `rules_for(user, namespace, source)` feeds SelfSubjectRulesReview.
- `covers`, `confirm_no_escalation`, `escalate_attributes`,
  `bind_attributes`, `escalation_allowed`: escalation prevention (see
  `runtime.server.rbac.escalation` for the order of checks the registry makes).
- `describe_forbidden(attrs)` / `forbidden_status_message(attrs, reason)`:
  Kubernetes' 403 messages.
- `load_bootstrap_policy(domain)`, `reconcile_role`, `reconcile_binding`:
  the default roles and bindings, and their start-up reconciliation.
"""

from runtime.server.rbac.aggregation import aggregate_rules, aggregation_selectors, same_rules
from runtime.server.rbac.attributes import (
    Attributes, RequestInfo, SelectorRequirement, non_resource_attributes, resource_attributes,
)
from runtime.server.rbac.authorizer import Decision, RBACAuthorizer
from runtime.server.rbac.bootstrap import (
    AUTOUPDATE_ANNOTATION, BOOTSTRAPPING_LABEL, default_policy_path, load_bootstrap_policy,
    parse_bootstrap_policy, reconcile, reconcile_binding, reconcile_role,
)
from runtime.server.rbac.describe import describe_forbidden, forbidden_status_message
from runtime.server.rbac.escalation import (
    AGGREGATION_RULE_FORBIDDEN, FULL_AUTHORITY_RULES, bind_attributes, breakdown_rule,
    compact_rules, compact_string, confirm_no_escalation, covers, escalate_attributes,
    escalation_allowed,
)
from runtime.server.rbac.index import IndexStatistics, RBACIndex
from runtime.server.rbac.resolver import BindingSource, policy_rules_for, resolve_role_ref, visit_rules_for
from runtime.server.rbac.rules import rule_allows, rules_allow
from runtime.server.rbac.rules_review import rules_for
from runtime.server.rbac.source import PolicySource, RoleSource
from runtime.server.rbac.subjects import applies_to_user, describe_subject, subject_problem
from runtime.server.rbac.user import (
    ALL_AUTHENTICATED, ALL_SERVICE_ACCOUNTS, ALL_UNAUTHENTICATED, ANONYMOUS, SYSTEM_MASTERS,
    UserInfo, service_account_groups, service_account_user, service_account_username,
    split_service_account_username,
)

__all__ = [
    # who asks what
    "UserInfo", "RequestInfo", "Attributes", "SelectorRequirement",
    "resource_attributes", "non_resource_attributes",
    "SYSTEM_MASTERS", "ALL_AUTHENTICATED", "ALL_UNAUTHENTICATED", "ANONYMOUS",
    "ALL_SERVICE_ACCOUNTS", "service_account_username", "split_service_account_username",
    "service_account_groups", "service_account_user",
    # deciding
    "RoleSource", "PolicySource", "RBACIndex", "IndexStatistics", "RBACAuthorizer", "Decision",
    "rule_allows", "rules_allow", "applies_to_user", "subject_problem", "describe_subject",
    "BindingSource", "resolve_role_ref", "visit_rules_for", "policy_rules_for",
    # aggregation
    "aggregate_rules", "aggregation_selectors", "same_rules",
    # rules review
    "rules_for",
    # escalation
    "covers", "breakdown_rule", "compact_rules", "compact_string", "confirm_no_escalation",
    "escalation_allowed", "escalate_attributes", "bind_attributes",
    "FULL_AUTHORITY_RULES", "AGGREGATION_RULE_FORBIDDEN",
    # messages
    "describe_forbidden", "forbidden_status_message",
    # bootstrap
    "load_bootstrap_policy", "parse_bootstrap_policy", "default_policy_path",
    "reconcile_role", "reconcile_binding", "reconcile", "AUTOUPDATE_ANNOTATION", "BOOTSTRAPPING_LABEL",
]
