"""PersistentVolume, PersistentVolumeClaim and StorageClass rules (Kubernetes v1.28's SetDefaults_PersistentVolume,
SetDefaults_PersistentVolumeClaim, SetDefaults_StorageClass, ValidatePersistentVolume(Update),
ValidatePersistentVolumeClaim(Update), ValidateStorageClass(Update), their strategies, the DefaultStorageClass
admission and printers.go), on the strategies."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import trio

from runtime.machinery import errors
from runtime.machinery.errors import BadRequest
from runtime.machinery.options import Body
from runtime.machinery.patch import server_side_apply
from runtime.machinery.patch.schema import schema_for
from runtime.machinery.scheme import Scheme
from runtime.models.catalog import PERSISTENT_VOLUME, PERSISTENT_VOLUME_CLAIM, STORAGE_CLASS
from runtime.models.k8s.core_v1 import PersistentVolume, PersistentVolumeSpec
from runtime.server.kinds.base import AdmissionRequest
from runtime.server.rbac.user import UserInfo

SCHEME = Scheme("k8s.io")
PV = next(t for t in SCHEME.types if t.info is PERSISTENT_VOLUME)
PVC = next(t for t in SCHEME.types if t.info is PERSISTENT_VOLUME_CLAIM)
SC = next(t for t in SCHEME.types if t.info is STORAGE_CLASS)
IMMUTABLE_CLAIM = "Forbidden: spec is immutable after creation except resources.requests for bound claims"


def created(rt: Any, obj: dict[str, Any]) -> dict[str, Any]:
    decoded = rt.strategy.decode(Body(obj), "Strict")[0]
    rt.strategy.default(decoded)
    decoded["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    rt.strategy.prepare_for_create(decoded)
    return decoded


def pv(**spec: Any) -> dict[str, Any]:
    base = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/data"}}
    return created(PV, {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
                        "spec": {**base, **spec}})


def pvc(meta: dict[str, Any] | None = None, status: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    base = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    obj = created(PVC, {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                        "metadata": {"name": "c", "namespace": "d", **(meta or {})}, "spec": {**base, **spec}})
    if status is not None:
        obj["status"] = status
    return obj


def sc(meta: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    return created(SC, {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                        "metadata": {"name": "fast", **(meta or {})}, "provisioner": "example.com/disk", **fields})


def errors_of(rt: Any, obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in rt.strategy.validate(obj)]


def update_errors(rt: Any, new: dict[str, Any], old: dict[str, Any]) -> list[str]:
    return [str(e) for e in rt.strategy.validate_update(new, old)]


# ---- PersistentVolume ---------------------------------------------------------------------------------

def test_pv_defaults_reclaim_policy_retain_volume_mode_filesystem_and_phase_pending():
    obj = pv()
    assert (obj["spec"]["persistentVolumeReclaimPolicy"], obj["spec"]["volumeMode"]) == ("Retain", "Filesystem")
    assert obj["status"] == {"phase": "Pending"}
    assert obj["spec"]["hostPath"] == {"path": "/data", "type": ""}
    assert errors_of(PV, obj) == []


def test_pv_create_resets_the_status_to_pending():
    obj = created(PV, {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
                       "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                                "nfs": {"server": "s", "path": "/x"}}, "status": {"phase": "Bound"}})
    assert obj["status"] == {"phase": "Pending"}


def test_pv_requires_access_modes_capacity_and_a_volume_source():
    obj = created(PV, {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"}, "spec": {}})
    assert errors_of(PV, obj) == [
        "spec.accessModes: Required value", "spec.capacity: Required value",
        'spec.capacity: Unsupported value: core.ResourceList(nil): supported values: "storage"',
        "spec: Required value: must specify a volume type"]


def test_pv_access_modes_are_supported_and_read_write_once_pod_alone():
    assert errors_of(PV, pv(accessModes=["ReadWriteSometimes"])) == [
        'spec.accessModes: Unsupported value: "ReadWriteSometimes": supported values: "ReadOnlyMany", '
        '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"']
    assert errors_of(PV, pv(accessModes=["ReadWriteOncePod", "ReadWriteOnce"])) == [
        "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"]


def test_pv_capacity_is_only_storage_and_positive():
    errs = errors_of(PV, pv(capacity={"storage": "1Gi", "cpu": "1"}))
    assert errs[0].startswith('spec.capacity: Unsupported value: core.ResourceList{"cpu":resource.Quantity{')
    assert errors_of(PV, pv(capacity={"storage": "0"})) == [
        'spec.capacity[storage]: Invalid value: "0": must be greater than zero']


def test_pv_a_bad_quantity_is_the_decoders_400():
    with pytest.raises(BadRequest, match="PersistentVolume in version \"v1\" cannot be handled as a "
                                         "PersistentVolume: quantities must match the regular expression"):
        pv(capacity={"storage": "1 apple"})


def test_pv_allows_one_volume_source_only():
    assert errors_of(PV, pv(nfs={"server": "s", "path": "/x"})) == [
        "spec.nfs: Forbidden: may not specify more than 1 volume type"]


def test_pv_nfs_path_must_be_absolute_and_local_needs_node_affinity():
    obj = pv(hostPath=None, nfs={"server": "s", "path": "x"})
    assert errors_of(PV, obj) == ['spec.nfs.path: Invalid value: "x": must be an absolute path']
    assert errors_of(PV, pv(hostPath=None, local={"path": "/mnt"})) == [
        "spec.nodeAffinity: Required value: Local volume requires node affinity"]


def test_pv_reclaim_policy_and_volume_mode_are_supported():
    assert errors_of(PV, pv(persistentVolumeReclaimPolicy="Keep", volumeMode="Disk")) == [
        'spec.volumeMode: Unsupported value: "Disk": supported values: "Block", "Filesystem"',
        'spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported values: "Delete", "Recycle", '
        '"Retain"']


def test_pv_recycle_is_forbidden_for_a_host_path_of_root():
    assert errors_of(PV, pv(hostPath={"path": "/"}, persistentVolumeReclaimPolicy="Recycle")) == [
        "spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/'"]


def test_pv_volume_source_and_volume_mode_are_immutable():
    old = pv()
    new = pv(hostPath={"path": "/other"}, volumeMode="Block")
    assert update_errors(PV, new, old) == [
        "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation",
        'volumeMode: Invalid value: "Block": field is immutable']


def test_pv_update_without_defaulted_fields_is_defaulted_again():
    old = pv()
    new = copy.deepcopy(old)
    del new["spec"]["persistentVolumeReclaimPolicy"], new["spec"]["volumeMode"]
    PV.strategy.default(new)  # as the registry does first
    PV.strategy.prepare_for_update(new, old)
    assert update_errors(PV, new, old) == []


def test_pv_claim_ref_merges_granularly_under_server_side_apply():
    assert schema_for(PersistentVolumeSpec).fields["claimRef"].node.atomic is False
    common = {"model": PersistentVolume, "api_version": "v1", "now": "2026-01-01T00:00:00Z"}
    base = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"}}
    first = server_side_apply(None, {**base, "spec": {"claimRef": {"namespace": "d", "name": "c"}}},
                              manager="a", force=False, **common)
    second = server_side_apply(first, {**base, "spec": {"claimRef": {"uid": "u1"}}}, manager="b", force=False,
                               **common)
    assert second["spec"]["claimRef"] == {"namespace": "d", "name": "c", "uid": "u1"}


def test_pv_printer_columns_and_cells():
    assert [c["name"] for c in PV.strategy.columns.definitions] == [
        "Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass", "Reason", "Age",
        "VolumeMode"]
    obj = pv(accessModes=["ReadWriteMany", "ReadWriteOnce"], claimRef={"namespace": "d", "name": "c"},
             storageClassName="fast")
    cells = PV.strategy.columns.cells(obj)
    assert cells[1:8] == ["1Gi", "RWO,RWX", "Retain", "Pending", "d/c", "fast", ""]
    assert cells[9] == "Filesystem"


# ---- PersistentVolumeClaim ----------------------------------------------------------------------------

def test_pvc_defaults_volume_mode_and_phase_pending():
    obj = pvc()
    assert (obj["spec"]["volumeMode"], obj["status"]) == ("Filesystem", {"phase": "Pending"})
    assert errors_of(PVC, obj) == []


def test_pvc_requires_access_modes_and_a_storage_request():
    obj = created(PVC, {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                        "metadata": {"name": "c", "namespace": "d"}, "spec": {}})
    assert errors_of(PVC, obj) == ["spec.accessModes: Required value: at least 1 access mode is required",
                                   "spec.resources[storage]: Required value"]


def test_pvc_storage_request_is_positive():
    obj = pvc(resources={"requests": {"storage": "0"}})
    assert errors_of(PVC, obj) == ['spec.resources[storage]: Invalid value: "0": must be greater than zero']


def test_pvc_storage_class_name_is_a_dns_subdomain():
    assert errors_of(PVC, pvc(storageClassName="Fast_Disk"))[0].startswith(
        'spec.storageClassName: Invalid value: "Fast_Disk": a lowercase RFC 1123 subdomain')


def test_pvc_spec_is_immutable_after_creation():
    old = pvc()
    new = pvc(accessModes=["ReadWriteMany"])
    assert update_errors(PVC, new, old) == [f"spec: {IMMUTABLE_CLAIM}"]


def test_pvc_volume_name_may_be_set_once():
    old = pvc()
    bound = pvc(volumeName="pv1")
    assert update_errors(PVC, bound, old) == []
    rebound = pvc(volumeName="pv2")
    assert update_errors(PVC, rebound, bound) == [f"spec: {IMMUTABLE_CLAIM}"]


def test_pvc_storage_request_may_grow_only_when_bound():
    old = pvc(status={"phase": "Pending"})
    bigger = pvc(resources={"requests": {"storage": "2Gi"}}, status={"phase": "Pending"})
    assert update_errors(PVC, bigger, old) == [f"spec: {IMMUTABLE_CLAIM}"]
    bound = pvc(status={"phase": "Bound"})
    grown = pvc(resources={"requests": {"storage": "2Gi"}}, status={"phase": "Bound"})
    assert update_errors(PVC, grown, bound) == []


def test_pvc_storage_request_may_not_shrink():
    old = pvc(resources={"requests": {"storage": "2Gi"}}, status={"phase": "Bound"})
    new = pvc(status={"phase": "Bound"})
    assert update_errors(PVC, new, old) == [
        "spec.resources.requests.storage: Forbidden: field can not be less than previous value"]


def test_pvc_storage_class_may_be_set_once_when_unset():
    assert update_errors(PVC, pvc(storageClassName="fast"), pvc()) == []
    assert update_errors(PVC, pvc(storageClassName="slow"), pvc(storageClassName="fast")) == [
        f"spec: {IMMUTABLE_CLAIM}"]


def test_pvc_beta_storage_class_annotation_is_immutable():
    key = "volume.beta.kubernetes.io/storage-class"
    new = pvc(meta={"annotations": {key: "slow"}})
    old = pvc(meta={"annotations": {key: "fast"}})
    assert update_errors(PVC, new, old) == [f'metadata.annotations.{key}: Invalid value: "slow": field is immutable']


def test_pvc_volume_mode_is_immutable():
    assert update_errors(PVC, pvc(volumeMode="Block"), pvc()) == [
        f"spec: {IMMUTABLE_CLAIM}", 'volumeMode: Invalid value: "Block": field is immutable']


def test_pvc_a_main_write_keeps_the_status():
    old = pvc(status={"phase": "Bound"})
    new = pvc(status={"phase": "Lost"})
    PVC.strategy.default(new)  # as the registry does first
    PVC.strategy.prepare_for_update(new, old)
    assert new["status"] == {"phase": "Bound"}


def test_pvc_printer_shows_the_bound_volume_and_its_status_capacity():
    assert [c["name"] for c in PVC.strategy.columns.definitions] == [
        "Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass", "Age", "VolumeMode"]
    assert PVC.strategy.columns.cells(pvc(storageClassName="fast"))[1:6] == ["Pending", "", "", "", "fast"]
    bound = pvc(volumeName="pv1", status={"phase": "Bound", "capacity": {"storage": "2Gi"},
                                          "accessModes": ["ReadWriteOnce"]})
    assert PVC.strategy.columns.cells(bound)[1:5] == ["Bound", "pv1", "2Gi", "RWO"]


async def _admitted(scheme: Scheme, obj: dict[str, Any]) -> dict[str, Any]:
    rt = next(t for t in scheme.types if t.info is PERSISTENT_VOLUME_CLAIM)
    request = AdmissionRequest(UserInfo("u"), rt, "create", obj, None, False)
    await rt.strategy.admit(None, request)  # type: ignore[arg-type]
    return request.obj


def test_pvc_without_a_class_gets_the_newest_default_storage_class():
    scheme = Scheme("k8s.io")
    classes = next(t for t in scheme.types if t.info is STORAGE_CLASS).strategy
    default = {"storageclass.kubernetes.io/is-default-class": "true"}
    classes.observe_list([
        {"metadata": {"name": "old", "annotations": default, "creationTimestamp": "2026-01-01T00:00:00Z"}},
        {"metadata": {"name": "new", "annotations": default, "creationTimestamp": "2026-01-02T00:00:00Z"}},
        {"metadata": {"name": "plain", "creationTimestamp": "2026-01-03T00:00:00Z"}}])
    obj = trio.run(_admitted, scheme, pvc())
    assert obj["spec"]["storageClassName"] == "new"
    explicit = trio.run(_admitted, scheme, pvc(storageClassName=""))
    assert explicit["spec"]["storageClassName"] == ""


def test_pvc_without_a_default_storage_class_keeps_none():
    assert "storageClassName" not in trio.run(_admitted, Scheme("k8s.io"), pvc())["spec"]


# ---- StorageClass -------------------------------------------------------------------------------------

def test_storage_class_defaults_reclaim_delete_and_binding_immediate():
    obj = sc()
    assert (obj["reclaimPolicy"], obj["volumeBindingMode"]) == ("Delete", "Immediate")
    assert errors_of(SC, obj) == []


def test_storage_class_provisioner_is_required_and_a_qualified_name():
    obj = created(SC, {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "a"}})
    assert errors_of(SC, obj) == ["provisioner: Required value"]
    assert errors_of(SC, sc(provisioner="a/b/c"))[0].startswith('provisioner: Invalid value: "a/b/c"')


def test_storage_class_reclaim_policy_and_binding_mode_are_supported():
    assert errors_of(SC, sc(reclaimPolicy="Recycle", volumeBindingMode="Later")) == [
        'reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"',
        'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"']


def test_storage_class_parameters_provisioner_reclaim_and_binding_are_immutable():
    old = sc(parameters={"type": "ssd"})
    new = sc(parameters={"type": "hdd"}, provisioner="example.com/other", reclaimPolicy="Retain",
             volumeBindingMode="WaitForFirstConsumer")
    assert update_errors(SC, new, old) == [
        "parameters: Forbidden: updates to parameters are forbidden.",
        "provisioner: Forbidden: updates to provisioner are forbidden.",
        "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.",
        'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable']


def test_storage_class_allowed_topologies_need_values_and_unique_keys():
    terms = [{"matchLabelExpressions": [{"key": "zone", "values": []}, {"key": "zone", "values": ["a", "a"]}]}]
    assert errors_of(SC, sc(allowedTopologies=terms)) == [
        "allowedTopologies[0].matchLabelExpressions[0].values: Required value",
        'allowedTopologies[0].matchLabelExpressions[1].values[1]: Duplicate value: "a"',
        'allowedTopologies[0].matchLabelExpressions[1].key: Duplicate value: "zone"']


def test_storage_class_printer_marks_the_default_class():
    assert [c["name"] for c in SC.strategy.columns.definitions] == [
        "Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"]
    obj = sc(meta={"annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}, allowVolumeExpansion=True)
    assert SC.strategy.columns.cells(obj)[:5] == ["fast (default)", "example.com/disk", "Delete", "Immediate", True]


def test_pvc_data_source_and_ref_are_filled_from_each_other_on_create():
    snapshot = {"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "snap"}
    assert pvc(dataSource=snapshot)["spec"]["dataSourceRef"] == snapshot
    assert pvc(dataSourceRef=snapshot)["spec"]["dataSource"] == snapshot
    elsewhere = pvc(dataSourceRef={**snapshot, "namespace": "other"})["spec"]
    assert "dataSource" not in elsewhere and errors_of(PVC, pvc(dataSourceRef={**snapshot, "namespace": "other"})) == []


def test_pvc_data_source_needs_a_group_unless_a_claim_and_must_match_its_ref():
    assert errors_of(PVC, pvc(dataSource={"kind": "VolumeSnapshot", "name": "s"})) == [
        "spec.dataSource: Invalid value: \"VolumeSnapshot\": must be 'PersistentVolumeClaim' when referencing the "
        "default apiGroup",
        "spec.dataSourceRef: Invalid value: \"VolumeSnapshot\": must be 'PersistentVolumeClaim' when referencing the "
        "default apiGroup"]
    mismatch = pvc(dataSource={"kind": "PersistentVolumeClaim", "name": "a"},
                   dataSourceRef={"kind": "PersistentVolumeClaim", "name": "b"})
    assert errors_of(PVC, mismatch) == ["spec: Invalid value: spec.dataSource: must match dataSourceRef"]


def test_pvc_status_capacity_may_not_be_negative():
    obj = pvc(status={"phase": "Bound", "capacity": {"storage": "-2Gi"}})
    assert errors_of(PVC, obj) == ["status.capacity[storage]: Invalid value: -2147483648: must be a valid resource "
                                   "quantity"]


def test_the_beta_storage_class_annotation_is_warned_deprecated():
    meta = {"annotations": {"volume.beta.kubernetes.io/storage-class": "fast"}}
    expected = ['metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; use '
                '"storageClassName" attribute instead']
    assert PVC.strategy.warnings(None, pvc(meta=meta), "m") == expected
    assert PVC.strategy.warnings(None, pvc(), "m") == []
    volume = pv()
    volume["metadata"]["annotations"] = meta["annotations"]
    assert PV.strategy.warnings(None, volume, "m") == expected


def test_pv_node_affinity_requires_node_selector_terms():
    assert errors_of(PV, pv(nodeAffinity={})) == [
        "spec.nodeAffinity.required: Required value: must specify required node constraints"]
    assert errors_of(PV, pv(nodeAffinity={"required": {"nodeSelectorTerms": []}})) == [
        "spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least one node selector term"]
    term = {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-1"]}]}
    assert errors_of(PV, pv(hostPath=None, local={"path": "/mnt"},
                            nodeAffinity={"required": {"nodeSelectorTerms": [term]}})) == []


async def _resized(scheme: Scheme, new: dict[str, Any], old: dict[str, Any]) -> None:
    rt = next(t for t in scheme.types if t.info is PERSISTENT_VOLUME_CLAIM)
    await rt.strategy.admit(None, AdmissionRequest(UserInfo("u"), rt, "update", new, old, False))  # type: ignore


def test_pvc_grows_only_when_bound_to_a_class_that_allows_expansion():
    scheme = Scheme("k8s.io")
    classes = next(t for t in scheme.types if t.info is STORAGE_CLASS).strategy
    classes.observe_list([{"metadata": {"name": "fast"}, "allowVolumeExpansion": True}, {"metadata": {"name": "slow"}}])
    for name, allowed in (("fast", True), ("slow", False)):
        old = pvc(storageClassName=name, status={"phase": "Bound"})
        new = pvc(storageClassName=name, resources={"requests": {"storage": "2Gi"}}, status={"phase": "Bound"})
        if allowed:
            trio.run(_resized, scheme, new, old)
            continue
        with pytest.raises(errors.Forbidden) as caught:
            trio.run(_resized, scheme, new, old)
        assert caught.value.message == ('persistentvolumeclaims "c" is forbidden: only dynamically provisioned pvc can '
                                        "be resized and the storageclass that provisions the pvc must support resize")
    shrunk = pvc(storageClassName="slow", status={"phase": "Bound"})
    trio.run(_resized, scheme, shrunk, pvc(storageClassName="slow", resources={"requests": {"storage": "2Gi"}},
                                           status={"phase": "Bound"}))
