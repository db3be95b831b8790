"""Escalation prevention: nobody grants permissions they do not hold.

As Kubernetes' `validation.Covers` / `ConfirmNoEscalation` and the RBAC
registry's policy-based storage. The checks the registry makes, in order:

Creating or updating a Role or ClusterRole (namespace = the Role's
namespace, "" for a ClusterRole):

1. `escalation_allowed(user)` (member of `system:masters`): allowed;
2. the authorizer allows `escalate_attributes(user, ...)`, i.e. verb
   `escalate` on `roles`/`clusterroles` of the rbac group, with the role's
   name and namespace: allowed;
3. on update, when only `metadata.ownerReferences`/`metadata.finalizers`
   change: allowed (Kubernetes' `IsOnlyMutatingGCFields`);
4. `confirm_no_escalation(user, namespace, role["rules"], source)`; a message
   means 403 Forbidden with `<resource>.<group> "<name>" is forbidden: <message>`;
5. a ClusterRole with an `aggregationRule` also needs
   `confirm_no_escalation(user, "", FULL_AUTHORITY_RULES, source)` to pass,
   else Forbidden with `AGGREGATION_RULE_FORBIDDEN`.

Creating or updating a RoleBinding or ClusterRoleBinding (namespace = the
binding's namespace, "" for a ClusterRoleBinding):

1. `escalation_allowed(user)`: allowed;
2. (update) only GC fields change: allowed;
3. the authorizer allows `bind_attributes(user, roleRef, namespace)`, i.e.
   verb `bind` on `roles`/`clusterroles` named by the roleRef: allowed;
4. `resolve_role_ref(roleRef, namespace, source)`; an error is Forbidden;
5. `confirm_no_escalation(user, namespace, those rules, source)`.

All functions here are pure (they read the `RoleSource`).

Internal to `runtime.server.rbac`: imported by its modules only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from runtime.machinery.validation.gofmt import go_quote, go_quote_list
from runtime.server.rbac.attributes import Attributes, resource_attributes
from runtime.server.rbac.resolver import policy_rules_for
from runtime.server.rbac.rules import RuleDict
from runtime.server.rbac.rules_review import FULL_AUTHORITY_RULES
from runtime.server.rbac.source import RoleSource
from runtime.server.rbac.user import SYSTEM_MASTERS, UserInfo

__all__ = [
    "breakdown_rule", "covers", "compact_rules", "compact_string",
    "confirm_no_escalation", "escalation_allowed", "escalate_attributes", "bind_attributes",
    "FULL_AUTHORITY_RULES", "AGGREGATION_RULE_FORBIDDEN",
]

AGGREGATION_RULE_FORBIDDEN = "must have cluster-admin privileges to use the aggregationRule"


def breakdown_rule(rule: RuleDict) -> list[dict[str, list[str]]]:
    """Return `rule` split into rules of one group, one resource, one verb and at most one name.

    Non-resource URLs combine with verbs only. As Kubernetes' `BreakdownRule`.
    """
    out: list[dict[str, list[str]]] = []
    verbs = rule.get("verbs") or ()
    names = rule.get("resourceNames") or ()
    for group in rule.get("apiGroups") or ():
        for resource in rule.get("resources") or ():
            for verb in verbs:
                if names:
                    for name in names:
                        out.append({"apiGroups": [group], "resources": [resource],
                                    "verbs": [verb], "resourceNames": [name]})
                else:
                    out.append({"apiGroups": [group], "resources": [resource], "verbs": [verb]})
    for url in rule.get("nonResourceURLs") or ():
        for verb in verbs:
            out.append({"nonResourceURLs": [url], "verbs": [verb]})
    return out


def _has_all(owned: Iterable[str], wanted: Iterable[str]) -> bool:
    have = set(owned)
    return all(w in have for w in wanted)


def _resources_cover_all(owned: Sequence[str], wanted: Sequence[str]) -> bool:
    if "*" in owned or _has_all(owned, wanted):
        return True
    for path in wanted:
        if path in owned:
            continue
        if "/" not in path:
            return False
        if "*/" + path.split("/", 1)[1] not in owned:
            return False
    return True


def _url_covers(owner: str, path: str) -> bool:
    return owner == path or (owner.endswith("*") and path.startswith(owner.rstrip("*")))


def _urls_cover_all(owned: Sequence[str], wanted: Sequence[str]) -> bool:
    return all(any(_url_covers(o, p) for o in owned) for p in wanted)


def _rule_covers(owner: RuleDict, sub: RuleDict) -> bool:
    owner_verbs = owner.get("verbs") or ()
    owner_groups = owner.get("apiGroups") or ()
    owner_names = owner.get("resourceNames") or ()
    sub_names = sub.get("resourceNames") or ()
    if not ("*" in owner_verbs or _has_all(owner_verbs, sub.get("verbs") or ())):
        return False
    if not ("*" in owner_groups or _has_all(owner_groups, sub.get("apiGroups") or ())):
        return False
    if not _resources_cover_all(owner.get("resources") or (), sub.get("resources") or ()):
        return False
    if not _urls_cover_all(owner.get("nonResourceURLs") or (), sub.get("nonResourceURLs") or ()):
        return False
    if not sub_names:
        return not owner_names
    return not owner_names or _has_all(owner_names, sub_names)


def covers(owner_rules: Iterable[RuleDict],
           requested_rules: Iterable[RuleDict]) -> tuple[bool, list[dict[str, list[str]]]]:
    """Return `(covered, missing)`: whether `owner_rules` allow all `requested_rules`.

    `missing` lists the broken-down requested rules (see `breakdown_rule`) no
    owner rule covers. As `k8s.io/component-helpers/auth/rbac/validation.Covers`.
    """
    owners = list(owner_rules)
    missing: list[dict[str, list[str]]] = []
    for rule in requested_rules:
        for sub in breakdown_rule(rule):
            if not any(_rule_covers(o, sub) for o in owners):
                missing.append(sub)
    return not missing, missing


def compact_rules(rules: Iterable[RuleDict]) -> list[dict[str, list[str]]]:
    """Return `rules` with simple ones (one group, one resource, at most one name) merged by verb.

    As Kubernetes' `CompactRules`: other rules are kept as they are, first.
    """
    compacted: list[dict[str, list[str]]] = []
    simple: dict[tuple[str, str, bool, str], dict[str, list[str]]] = {}
    for rule in rules:
        groups = rule.get("apiGroups") or ()
        resources = rule.get("resources") or ()
        names = rule.get("resourceNames") or ()
        other = [k for k, v in rule.items()
                 if v and k not in ("apiGroups", "resources", "verbs", "resourceNames")]
        if len(names) > 1 or other or len(groups) != 1 or len(resources) != 1:
            compacted.append({k: list(v) for k, v in rule.items() if v})
            continue
        key = (groups[0], resources[0], bool(names), names[0] if names else "")
        existing = simple.get(key)
        if existing is None:
            simple[key] = {k: list(v) for k, v in rule.items() if v}
            simple[key].setdefault("verbs", [])
        else:
            existing["verbs"].extend(rule.get("verbs") or ())
    compacted.extend(simple.values())
    return compacted


def compact_string(rule: RuleDict) -> str:
    """Return Kubernetes' `CompactString` of a rule: `{APIGroups:["g"], Resources:["r"], Verbs:["get"]}`."""
    parts = []
    for field, label in (("apiGroups", "APIGroups"), ("resources", "Resources"),
                         ("nonResourceURLs", "NonResourceURLs"),
                         ("resourceNames", "ResourceNames"), ("verbs", "Verbs")):
        values = rule.get(field)
        if values:
            parts.append(f"{label}:{go_quote_list(values)}")
    return "{" + ", ".join(parts) + "}"


def confirm_no_escalation(user: UserInfo, namespace: str, rules: Iterable[RuleDict],
                          source: RoleSource) -> str | None:
    """Return None when `user` holds every one of `rules` in `namespace`, else the refusal message.

    The message is Kubernetes' `ConfirmNoEscalation` text::

        user "bob" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:
        {APIGroups:["rbac.authorization.k8s.io"], Resources:["roles"], Verbs:["delete"]}

    (missing rules compacted, one per line, sorted; `; resolution errors: [...]`
    appended when resolving the user's own rules met errors). Does not
    special-case `system:masters`; check `escalation_allowed` first.
    """
    owner_rules, error = policy_rules_for(user, namespace, source)
    ok, missing = covers(owner_rules, rules)
    if ok:
        return None
    descriptions = sorted({compact_string(r) for r in compact_rules(missing)})
    message = (f"user {go_quote(user.name)} (groups={go_quote_list(user.groups)}) "
               f"is attempting to grant RBAC permissions not currently held:\n"
               + "\n".join(descriptions))
    if error:
        message += f"; resolution errors: [{error}]"
    return message


def escalation_allowed(user: UserInfo) -> bool:
    """Return whether `user` may escalate without checks (member of `system:masters`)."""
    return SYSTEM_MASTERS in user.groups


def escalate_attributes(user: UserInfo, *, api_group: str, resource: str,
                        namespace: str = "", name: str = "") -> Attributes:
    """Return the `escalate` check for writing a role: verb `escalate` on `roles`/`clusterroles`.

    `api_group` is the rbac group (`rbac.authorization.<domain>`); the API
    version is `*`, as Kubernetes' `RoleEscalationAuthorized` asks.
    """
    return resource_attributes(user, "escalate", resource, api_group=api_group,
                               api_version="*", namespace=namespace, name=name)


def bind_attributes(user: UserInfo, role_ref: Mapping[str, Any],
                    binding_namespace: str) -> Attributes | None:
    """Return the `bind` check for a binding's roleRef, None for a roleRef kind that cannot be bound.

    Verb `bind` on `clusterroles` (kind ClusterRole) or `roles` (kind Role),
    named `roleRef.name`, in group `roleRef.apiGroup`, in the binding's
    namespace ("" for a ClusterRoleBinding), as Kubernetes' `BindingAuthorized`.
    """
    kind = role_ref.get("kind")
    if kind == "ClusterRole":
        resource = "clusterroles"
    elif kind == "Role":
        resource = "roles"
    else:
        return None
    return resource_attributes(user, "bind", resource, api_group=role_ref.get("apiGroup") or "",
                               namespace=binding_namespace, name=role_ref.get("name") or "")
