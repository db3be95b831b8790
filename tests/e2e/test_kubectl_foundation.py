"""The foundation's acceptance: the real kubectl drives every kind through the server."""

from __future__ import annotations

import json

CLUSTER_ROLE = """
apiVersion: {group}/v1
kind: ClusterRole
metadata:
  name: from-file
rules:
- apiGroups: [""]
  resources: ["namespaces"]
  verbs: {verbs}
"""


async def test_get_lists_the_bootstrap_cluster_roles(kubectl):
    out = (await kubectl("get", "clusterroles")).out
    assert "cluster-admin" in out and "NAME" in out


async def test_get_o_yaml_shows_the_object(kubectl):
    out = (await kubectl("get", "clusterrole", "cluster-admin", "-o", "yaml")).out
    assert "kind: ClusterRole" in out and "name: cluster-admin" in out


async def test_create_replace_delete_from_file(kubectl, tmp_path):
    path = tmp_path / "cr.yaml"
    path.write_text(CLUSTER_ROLE.format(group="rbac.authorization.k8s.io", verbs='["get"]'))
    assert "created" in (await kubectl("create", "-f", str(path))).out
    path.write_text(CLUSTER_ROLE.format(group="rbac.authorization.k8s.io", verbs='["get", "list"]'))
    assert "replaced" in (await kubectl("replace", "-f", str(path))).out
    got = json.loads((await kubectl("get", "clusterrole", "from-file", "-o", "json")).out)
    assert got["rules"][0]["verbs"] == ["get", "list"]
    assert "deleted" in (await kubectl("delete", "-f", str(path))).out
    missing = await kubectl("get", "clusterrole", "from-file", check=False)
    assert missing.code != 0 and "NotFound" in missing.err


async def test_explain_clusterrole(kubectl):
    out = (await kubectl("explain", "clusterrole")).out
    assert "KIND:       ClusterRole" in out and "rules" in out


async def test_typed_create_commands_for_all_five_kinds(kubectl):
    await kubectl("create", "namespace", "team-a")
    await kubectl("create", "clusterrole", "ns-get", "--verb=get", "--resource=namespaces")
    await kubectl("create", "clusterrolebinding", "ns-get", "--clusterrole=ns-get", "--user=bob")
    await kubectl("create", "role", "reader", "--verb=get,list", "--resource=roles", "-n", "team-a")
    await kubectl("create", "rolebinding", "alice", "--role=reader", "--user=alice", "-n", "team-a")
    role = json.loads((await kubectl("get", "role", "reader", "-n", "team-a", "-o", "json")).out)
    assert role["rules"] == [{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"],
                              "verbs": ["get", "list"]}]
    binding = json.loads((await kubectl("get", "clusterrolebinding", "ns-get", "-o", "json")).out)
    assert binding["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}]
    assert "team-a" in (await kubectl("get", "namespaces")).out
    wide = (await kubectl("get", "rolebindings", "-n", "team-a", "-o", "wide")).out
    assert "Role/reader" in wide and "alice" in wide
    await kubectl("delete", "rolebinding", "alice", "-n", "team-a")
    await kubectl("delete", "clusterrolebinding", "ns-get")


async def test_generic_commands_work_under_the_svc_io_domain(kubectl_svc, tmp_path):
    path = tmp_path / "cr.yaml"
    path.write_text(CLUSTER_ROLE.format(group="rbac.authorization.svc.io", verbs='["get"]'))
    assert "created" in (await kubectl_svc("create", "-f", str(path))).out
    out = (await kubectl_svc("get", "clusterroles.rbac.authorization.svc.io")).out
    assert "from-file" in out
    assert "deleted" in (await kubectl_svc("delete", "clusterroles.rbac.authorization.svc.io", "from-file")).out
