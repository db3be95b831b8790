"""What a platform engineer meets with the real kubectl, each as Kubernetes answers it.

Found by exploring miniplane with kubectl 1.32: namespace labels and field
selectors, emptied label maps, namespace status rules, the Lease table and
the verbose health endpoints.
"""

from __future__ import annotations

import json

NAME_LABEL = "kubernetes.io/metadata.name"


async def test_a_created_namespace_carries_its_name_as_the_metadata_name_label(kubectl):
    await kubectl("create", "namespace", "team-a")
    shown = await kubectl("get", "namespace", "team-a", "--show-labels", "--no-headers")
    assert f"{NAME_LABEL}=team-a" in shown.out
    selected = await kubectl("get", "namespaces", "-l", f"{NAME_LABEL}=team-a", "-o", "name")
    assert selected.out.split() == ["namespace/team-a"]


async def test_the_metadata_name_label_of_a_namespace_cannot_be_removed_or_changed(kubectl):
    await kubectl("create", "namespace", "team-b")
    await kubectl("label", "namespace", "team-b", f"{NAME_LABEL}-")
    await kubectl("label", "namespace", "team-b", f"{NAME_LABEL}=other", "--overwrite")
    labels = json.loads((await kubectl("get", "namespace", "team-b", "-o", "json")).out)["metadata"]["labels"]
    assert labels == {NAME_LABEL: "team-b"}


async def test_namespaces_are_selected_by_status_phase(kubectl):
    await kubectl("create", "namespace", "team-c")
    active = await kubectl("get", "namespaces", "--field-selector", "status.phase=Active", "-o", "name")
    assert "namespace/team-c" in active.out.split()
    none = await kubectl("get", "namespaces", "--field-selector", "status.phase=Terminating", "-o", "name")
    assert none.out.strip() == ""


async def test_namespaces_have_no_metadata_namespace_field_label(kubectl):
    got = await kubectl("get", "namespaces", "--field-selector", "metadata.namespace=x", check=False)
    assert got.code != 0 and "field label not supported: metadata.namespace" in got.err


async def test_removing_the_last_label_and_annotation_leaves_neither_map_nor_their_managers(kubectl):
    await kubectl("create", "clusterrole", "tidy", "--verb=get", "--resource=namespaces")
    await kubectl("label", "clusterrole", "tidy", "a=1")
    await kubectl("annotate", "clusterrole", "tidy", "n=1")
    await kubectl("label", "clusterrole", "tidy", "a-")
    await kubectl("annotate", "clusterrole", "tidy", "n-")
    shown = await kubectl("get", "clusterrole", "tidy", "-o", "json", "--show-managed-fields")
    meta = json.loads(shown.out)["metadata"]
    assert "labels" not in meta and "annotations" not in meta
    # A manager left owning nothing is dropped, as Kubernetes' field manager does.
    assert [e["manager"] for e in meta["managedFields"]] == ["kubectl-create"]


async def test_a_json_patch_adding_an_empty_label_map_changes_nothing(kubectl):
    await kubectl("create", "clusterrole", "same", "--verb=get", "--resource=namespaces")
    before = json.loads((await kubectl("get", "clusterrole", "same", "-o", "json")).out)["metadata"]
    await kubectl("patch", "clusterrole", "same", "--type=json", "-p",
                  '[{"op": "add", "path": "/metadata/labels", "value": {}}]')
    after = json.loads((await kubectl("get", "clusterrole", "same", "-o", "json")).out)["metadata"]
    assert "labels" not in after and after["resourceVersion"] == before["resourceVersion"]


async def test_a_live_namespace_status_may_only_be_active(kubectl):
    await kubectl("create", "namespace", "team-d")
    got = await kubectl("patch", "namespace", "team-d", "--subresource=status", "--type=merge",
                        "-p", '{"status": {"phase": "Terminating"}}', check=False)
    assert got.code != 0
    assert ('The Namespace "team-d" is invalid: status.Phase: Invalid value: "Terminating": '
            "may only be 'Active' if `deletionTimestamp` is empty") in got.err
    phase = await kubectl("get", "namespace", "team-d", "-o", "jsonpath={.status.phase}")
    assert phase.out == "Active"


async def test_get_leases_prints_the_holder_column(kubectl):
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
             "metadata": {"name": "leader", "namespace": "default"},
             "spec": {"holderIdentity": "replica-1", "leaseDurationSeconds": 15}}
    await kubectl("create", "-f", "-", stdin=json.dumps(lease).encode())
    table = (await kubectl("get", "leases", "-n", "default")).out.splitlines()
    assert table[0].split() == ["NAME", "HOLDER", "AGE"]
    assert table[1].split()[:2] == ["leader", "replica-1"]


async def test_get_raw_readyz_verbose_lists_each_check(kubectl):
    got = await kubectl("get", "--raw", "/readyz?verbose")
    assert got.out.splitlines() == ["[+]ping ok", "[+]log ok", "readyz check passed"]
    excluded = await kubectl("get", "--raw", "/livez?verbose&exclude=log&exclude=etcd")
    assert excluded.out.splitlines() == [
        "[+]ping ok", "[+]log excluded: ok",
        'warn: some health checks cannot be excluded: no matches for "etcd"', "livez check passed"]


async def test_get_raw_of_one_health_check_answers_ok(kubectl):
    assert (await kubectl("get", "--raw", "/healthz/ping")).out == "ok"
    missing = await kubectl("get", "--raw", "/readyz/nope", check=False)
    assert missing.code != 0 and "NotFound" in missing.err


async def test_a_namespace_viewer_can_describe_the_namespace(kubectl):
    # kubectl describe namespace also lists resourcequotas and limitranges: a 404 it skips, a 403 fails it.
    await kubectl("create", "namespace", "team-v")
    await kubectl("create", "rolebinding", "vera-views", "--clusterrole=system:aggregate-to-view", "--user=vera",
                  "-n", "team-v")
    described = await kubectl("describe", "namespace", "team-v", "--as", "vera")
    assert "Status:       Active" in described.out
