"""Builders of RBAC objects (roles, bindings, rules, an index) for the RBAC authorizer and insight tests: pure,
no server."""

from __future__ import annotations

from runtime.server.rbac import ALL_AUTHENTICATED, RBACIndex, UserInfo

DOMAIN = "svc.io"
RBAC = f"rbac.authorization.{DOMAIN}"
API_VERSION = f"{RBAC}/v1"

ALICE = UserInfo("alice", groups=(ALL_AUTHENTICATED,))


def rule(verbs, resources=(), groups=("",), names=(), urls=()):
    out = {"verbs": list(verbs)}
    if resources:
        out["apiGroups"] = list(groups)
        out["resources"] = list(resources)
    if names:
        out["resourceNames"] = list(names)
    if urls:
        out["nonResourceURLs"] = list(urls)
    return out


def cluster_role(name, rules=(), labels=None, selectors=None):
    meta = {"name": name}
    if labels:
        meta["labels"] = dict(labels)
    role = {"apiVersion": API_VERSION, "kind": "ClusterRole", "metadata": meta, "rules": list(rules)}
    if selectors is not None:
        role["aggregationRule"] = {"clusterRoleSelectors": list(selectors)}
    return role


def role(ns, name, rules=()):
    return {"apiVersion": API_VERSION, "kind": "Role",
            "metadata": {"name": name, "namespace": ns}, "rules": list(rules)}


def user(name):
    return {"kind": "User", "apiGroup": RBAC, "name": name}


def group(name):
    return {"kind": "Group", "apiGroup": RBAC, "name": name}


def sa(name, namespace=None):
    s = {"kind": "ServiceAccount", "name": name}
    if namespace is not None:
        s["namespace"] = namespace
    return s


def crb(name, role_name, subjects, kind="ClusterRole"):
    return {"apiVersion": API_VERSION, "kind": "ClusterRoleBinding", "metadata": {"name": name},
            "roleRef": {"apiGroup": RBAC, "kind": kind, "name": role_name},
            "subjects": list(subjects)}


def rb(ns, name, role_name, subjects, kind="Role"):
    return {"apiVersion": API_VERSION, "kind": "RoleBinding",
            "metadata": {"name": name, "namespace": ns},
            "roleRef": {"apiGroup": RBAC, "kind": kind, "name": role_name},
            "subjects": list(subjects)}


def index(*objects):
    return RBACIndex(objects)


def cluster_scoped(group_name, resource):
    """The test server's scopes: nodes, namespaces and the cluster-wide RBAC kinds."""
    return resource in ("nodes", "namespaces", "clusterroles", "clusterrolebindings")
