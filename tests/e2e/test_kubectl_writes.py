"""Writes done right, driven by the real kubectl: apply (client- and server-side), patch, dry run, replace."""

from __future__ import annotations

import json

GROUP = "rbac.authorization.k8s.io"


def role_yaml(name: str, verbs: list[str], labels: dict[str, str] | None = None) -> str:
    lines = [f"apiVersion: {GROUP}/v1", "kind: ClusterRole", "metadata:", f"  name: {name}"]
    if labels:
        lines.append("  labels:")
        lines += [f"    {k}: {json.dumps(v)}" for k, v in labels.items()]
    lines += ["rules:", '- apiGroups: [""]', "  resources: [namespaces]", f"  verbs: {json.dumps(verbs)}"]
    return "\n".join(lines) + "\n"


async def get(kubectl, name: str) -> dict:
    return json.loads((await kubectl("get", "clusterrole", name, "-o", "json", "--show-managed-fields")).out)


def managers(obj: dict) -> set[tuple[str, str]]:
    return {(e["manager"], e["operation"]) for e in obj["metadata"].get("managedFields", [])}


async def store_state(kubectl) -> tuple[str, str]:
    """The store's revision and every ClusterRole, as kubectl lists them."""
    listed = json.loads((await kubectl("get", "clusterroles", "-o", "json")).out)
    return listed["metadata"]["resourceVersion"], json.dumps(listed["items"], sort_keys=True)


async def test_client_side_apply_keeps_the_last_applied_annotation_and_merges_three_ways(kubectl, tmp_path):
    path = tmp_path / "role.yaml"
    path.write_text(role_yaml("csa", ["get"], {"a": "1"}))
    assert "created" in (await kubectl("apply", "-f", str(path))).out
    obj = await get(kubectl, "csa")
    last = json.loads(obj["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
    assert last["metadata"]["labels"] == {"a": "1"}
    assert ("kubectl-client-side-apply", "Update") in managers(obj)
    await kubectl("label", "clusterrole", "csa", "other=kept")  # another writer's field
    path.write_text(role_yaml("csa", ["get", "list"], {"b": "2"}))
    assert "configured" in (await kubectl("apply", "-f", str(path))).out
    obj = await get(kubectl, "csa")
    assert obj["rules"][0]["verbs"] == ["get", "list"]
    assert obj["metadata"]["labels"] == {"b": "2", "other": "kept"}  # a removed (last applied), other kept
    assert "unchanged" in (await kubectl("apply", "-f", str(path))).out


async def test_server_side_apply_with_two_managers_a_conflict_and_force_conflicts(kubectl, tmp_path):
    mine, theirs, labels = tmp_path / "mine.yaml", tmp_path / "theirs.yaml", tmp_path / "labels.yaml"
    mine.write_text(role_yaml("ssa", ["get"]))
    theirs.write_text(role_yaml("ssa", ["watch"]))
    labels.write_text(f"apiVersion: {GROUP}/v1\nkind: ClusterRole\nmetadata:\n  name: ssa\n  labels:\n    team: x\n")
    assert "serverside-applied" in (await kubectl("apply", "--server-side", "-f", str(mine))).out
    await kubectl("apply", "--server-side", "--field-manager=labeller", "-f", str(labels))
    obj = await get(kubectl, "ssa")
    assert {("kubectl", "Apply"), ("labeller", "Apply")} <= managers(obj)
    assert obj["metadata"]["labels"] == {"team": "x"} and obj["rules"][0]["verbs"] == ["get"]
    clash = await kubectl("apply", "--server-side", "--field-manager=rival", "-f", str(theirs), check=False)
    assert clash.code != 0
    assert "conflict" in clash.err.lower() and '"kubectl"' in clash.err and ".rules" in clash.err
    assert (await get(kubectl, "ssa"))["rules"][0]["verbs"] == ["get"]
    await kubectl("apply", "--server-side", "--field-manager=rival", "--force-conflicts", "-f", str(theirs))
    obj = await get(kubectl, "ssa")
    assert obj["rules"][0]["verbs"] == ["watch"] and obj["metadata"]["labels"] == {"team": "x"}
    owners = {e["manager"]: e["fieldsV1"] for e in obj["metadata"]["managedFields"]}
    assert "f:rules" in owners["rival"] and "f:rules" not in owners.get("kubectl", {})


async def test_server_side_apply_after_client_side_apply(kubectl, tmp_path):
    path = tmp_path / "role.yaml"
    path.write_text(role_yaml("upgrade", ["get"]))
    await kubectl("apply", "-f", str(path))
    path.write_text(role_yaml("upgrade", ["get", "list"]))
    assert "serverside-applied" in (await kubectl("apply", "--server-side", "-f", str(path))).out
    assert (await get(kubectl, "upgrade"))["rules"][0]["verbs"] == ["get", "list"]


async def test_kubectl_patch_merge_json_and_strategic(kubectl):
    await kubectl("create", "clusterrole", "patched", "--verb=get", "--resource=namespaces")
    await kubectl("patch", "clusterrole", "patched", "--type", "merge", "-p", '{"metadata":{"labels":{"m":"1"}}}')
    await kubectl("patch", "clusterrole", "patched", "--type", "json",
                  "-p", '[{"op":"add","path":"/metadata/labels/j","value":"2"}]')
    await kubectl("patch", "clusterrole", "patched", "--type", "strategic",
                  "-p", '{"metadata":{"finalizers":["example.com/a"]}}')
    await kubectl("patch", "clusterrole", "patched", "--type", "strategic",
                  "-p", '{"metadata":{"finalizers":["example.com/b"]}}')
    obj = await get(kubectl, "patched")
    assert obj["metadata"]["labels"] == {"m": "1", "j": "2"}
    # A set merge; patch items first when the live order says nothing (Kubernetes' mergeSortedSlice).
    assert obj["metadata"]["finalizers"] == ["example.com/b", "example.com/a"]
    assert ("kubectl-patch", "Update") in managers(obj)
    failed = await kubectl("patch", "clusterrole", "patched", "--type", "json",
                           "-p", '[{"op":"test","path":"/metadata/labels/m","value":"9"}]', check=False)
    assert failed.code != 0 and "test failed" in failed.err
    await kubectl("patch", "clusterrole", "patched", "--type", "json", "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')
    assert "finalizers" not in (await get(kubectl, "patched"))["metadata"]


async def test_create_dry_run_server_stores_nothing(kubectl, tmp_path):
    path = tmp_path / "role.yaml"
    path.write_text(role_yaml("dry", ["get"]))
    before = await store_state(kubectl)
    out = (await kubectl("create", "-f", str(path), "--dry-run=server", "-o", "json")).out
    assert json.loads(out)["metadata"]["name"] == "dry" and json.loads(out)["metadata"]["uid"]
    typed = await kubectl("create", "clusterrole", "dry2", "--verb=get", "--resource=namespaces", "--dry-run=server")
    assert "(server dry run)" in typed.out
    assert await store_state(kubectl) == before
    missing = await kubectl("get", "clusterrole", "dry", check=False)
    assert missing.code != 0 and "NotFound" in missing.err


async def test_delete_dry_run_server_deletes_nothing(kubectl):
    await kubectl("create", "clusterrole", "keep", "--verb=get", "--resource=namespaces")
    before = await store_state(kubectl)
    out = (await kubectl("delete", "clusterrole", "keep", "--dry-run=server")).out
    assert "deleted (server dry run)" in out
    assert await store_state(kubectl) == before


async def test_apply_dry_run_server_changes_nothing(kubectl, tmp_path):
    path = tmp_path / "role.yaml"
    path.write_text(role_yaml("applied", ["get"]))
    await kubectl("apply", "-f", str(path))
    before = await store_state(kubectl)
    path.write_text(role_yaml("applied", ["list"]))
    await kubectl("apply", "-f", str(path), "--dry-run=server")
    await kubectl("apply", "--server-side", "--force-conflicts", "-f", str(path), "--dry-run=server")
    path.write_text(role_yaml("never", ["list"]))
    await kubectl("apply", "-f", str(path), "--dry-run=server")
    assert await store_state(kubectl) == before


async def test_replace_updates_and_records_kubectl_replace(kubectl, tmp_path):
    path = tmp_path / "role.yaml"
    path.write_text(role_yaml("replaced", ["get"]))
    await kubectl("create", "-f", str(path))
    path.write_text(role_yaml("replaced", ["get", "watch"]))
    before = await store_state(kubectl)
    assert "(server dry run)" in (await kubectl("replace", "-f", str(path), "--dry-run=server")).out
    assert await store_state(kubectl) == before
    assert "replaced" in (await kubectl("replace", "-f", str(path))).out
    obj = await get(kubectl, "replaced")
    assert obj["rules"][0]["verbs"] == ["get", "watch"] and "generation" not in obj["metadata"]
    assert ("kubectl-replace", "Update") in managers(obj)


async def test_field_validation_strict_from_kubectl(kubectl, tmp_path):
    path = tmp_path / "role.yaml"
    path.write_text(role_yaml("strict", ["get"]) + "bogus: true\n")
    failed = await kubectl("create", "-f", str(path), "--validate=strict", check=False)
    assert failed.code != 0 and "bogus" in failed.err
    warned = await kubectl("create", "-f", str(path), "--validate=warn")
    assert "bogus" in warned.err
    assert "bogus" not in json.dumps(await get(kubectl, "strict"))
