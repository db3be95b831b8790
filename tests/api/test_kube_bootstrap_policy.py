"""The bootstrap policy is Kubernetes' own, rule for rule (issue 16).

Kubernetes' bootstrap fixtures (tests/fixtures/kubernetes, with their origin)
are compared with manifests/bootstrap-policy.yaml loaded for `--api-domain
k8s.io`: every role and binding kept equals Kubernetes', and those left out
are the ones listed in the manifest's header (about components this server
does not run). Reviews about kinds the server does not serve answer as
Kubernetes does.
"""

from __future__ import annotations

from pathlib import Path

import trio
import yaml

from runtime.client.http import open_http_client
from runtime.client.kubeconfig import load_kubeconfig
from runtime.server.rbac import load_bootstrap_policy
from runtime.controller.testing import wait_for_object
from tests.support.rbac import bind, namespaces, ok, token_file, user
from tests.support.server import start_in_process

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "kubernetes"

LEFT_OUT = {
    "system:heapster", "system:kube-aggregator", "system:kube-controller-manager", "system:kube-dns",
    "system:kube-scheduler", "system:volume-scheduler", "system:kubelet-api-admin", "system:node",
    "system:node-bootstrapper", "system:node-problem-detector", "system:node-proxier",
    "system:persistent-volume-provisioner", "system:service-account-issuer-discovery",
    "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
    "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
    "system:certificates.k8s.io:kube-apiserver-client-approver",
    "system:certificates.k8s.io:kube-apiserver-client-kubelet-approver",
    "system:certificates.k8s.io:kubelet-serving-approver",
    "system:certificates.k8s.io:legacy-unknown-approver",
}


def kubernetes(kind: str) -> dict[str, dict]:
    """Kubernetes' fixture objects of `kind` by name, as a server stores them (no creationTimestamp, rules [])."""
    path = FIXTURES / ("cluster-roles.yaml" if kind == "ClusterRole" else "cluster-role-bindings.yaml")
    out = {}
    for item in yaml.safe_load(path.read_text())["items"]:
        item["metadata"].pop("creationTimestamp", None)
        if kind == "ClusterRole":
            item["rules"] = item.get("rules") or []
        out[item["metadata"]["name"]] = item
    return out


def ours(kind: str) -> dict[str, dict]:
    return {o["metadata"]["name"]: o for o in load_bootstrap_policy("k8s.io") if o["kind"] == kind}


def test_bootstrap_policy_equals_kubernetes_rule_for_rule_under_k8s_io():
    for kind in ("ClusterRole", "ClusterRoleBinding"):
        theirs, mine = kubernetes(kind), ours(kind)
        assert set(mine) <= set(theirs), f"{kind}s Kubernetes does not bootstrap: {set(mine) - set(theirs)}"
        for name, obj in mine.items():
            assert obj == theirs[name], name
        assert set(theirs) - set(mine) <= LEFT_OUT
    assert set(kubernetes("ClusterRole")) - set(ours("ClusterRole")) == LEFT_OUT
    kept = {"cluster-admin", "admin", "edit", "view", "system:aggregate-to-admin", "system:aggregate-to-edit",
            "system:aggregate-to-view", "system:discovery", "system:basic-user", "system:public-info-viewer",
            "system:monitoring", "system:auth-delegator"}
    assert set(ours("ClusterRole")) == kept
    assert set(ours("ClusterRoleBinding")) == {"cluster-admin", "system:basic-user", "system:discovery",
                                                "system:public-info-viewer", "system:monitoring"}


def aggregated(role: dict | None) -> bool:
    return bool(role) and bool(role.get("rules"))


async def allowed(c, srv, user_name: str, verb: str, resource: str, namespace: str, group: str = "") -> bool:
    spec = {"user": user_name, "resourceAttributes": {"verb": verb, "resource": resource, "group": group,
                                                      "namespace": namespace}}
    body = {"apiVersion": f"authorization.{srv.domain}/v1", "kind": "SubjectAccessReview", "spec": spec}
    return (await ok(await c.post(f"/apis/authorization.{srv.domain}/v1/subjectaccessreviews", json=body),
                     201))["status"]["allowed"]


async def test_reviews_about_pods_answer_as_kubernetes_view_gets_pods_edit_creates_them(nursery, tmp_path):
    srv = await start_in_process(nursery, tmp_path, token_auth_file=token_file(tmp_path), controllers=True)
    with trio.fail_after(30):
        async with open_http_client(load_kubeconfig(srv.kubeconfig), transport=srv.transport) as client:
            for name in ("view", "edit", "admin"):
                await wait_for_object(client, client.scheme.by_kind("ClusterRole"), name, aggregated)
    await namespaces(srv, "a")
    await bind(srv, "alice-view", "ClusterRole", "view", [user("alice")], namespace="a")
    await bind(srv, "bob-edit", "ClusterRole", "edit", [user("bob")], namespace="a")
    rbac = f"rbac.authorization.{srv.domain}"
    async with srv.client() as c:
        assert await allowed(c, srv, "alice", "get", "pods", "a")
        assert not await allowed(c, srv, "alice", "create", "pods", "a")
        assert await allowed(c, srv, "bob", "create", "pods", "a")
        # Kubernetes' view reads neither roles, rolebindings nor secrets; edit reads secrets, not roles.
        for resource, group in (("roles", rbac), ("rolebindings", rbac), ("secrets", "")):
            assert not await allowed(c, srv, "alice", "list", resource, "a", group)
        assert await allowed(c, srv, "bob", "get", "secrets", "a")
        assert not await allowed(c, srv, "bob", "list", "roles", "a", rbac)
    async with srv.client(token="alice-token") as alice:
        assert (await alice.get(f"{srv.rbac}/namespaces/a/roles")).status_code == 403
