"""Core `PersistentVolume`: a piece of storage in the cluster (Kubernetes' `pkg/registry/core/persistentvolume`).

- Defaults (`SetDefaults_PersistentVolume`): `persistentVolumeReclaimPolicy`
  Retain, `volumeMode` Filesystem, `status.phase` Pending (a create resets
  the status to it: PrepareForCreate clears it, the decoder defaults it);
  a hostPath's `type` "" (`SetDefaults_HostPathVolumeSource`).
- Validation (`ValidatePersistentVolume`): the name is a DNS subdomain;
  `accessModes` required and supported (`volumes`); `capacity` required,
  only `storage`, a positive quantity; `storageClassName` a DNS subdomain;
  `volumeMode` and `persistentVolumeReclaimPolicy` supported; exactly one
  volume source ("must specify a volume type", "may not specify more than 1
  volume type"), checked for hostPath, nfs, local (which requires
  `nodeAffinity`, whose `required` has a node selector term) and csi;
  Recycle is forbidden for a hostPath of `/`.
- Update (`ValidatePersistentVolumeUpdate`): the volume source is immutable
  (`spec.persistentvolumesource`), so is `volumeMode` (path `volumeMode`, as
  Kubernetes); a set `nodeAffinity` may not change.
- A write with the beta class annotation is warned it is deprecated.
- `status` subresource; a PUT of a missing volume is 404. Field selectors:
  `metadata.name` (and `metadata.namespace`, empty), as Kubernetes' default.
- `kubectl get`: NAME CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM
  STORAGECLASS REASON AGE, `-o wide` VOLUMEMODE (printPersistentVolume;
  STATUS is Terminating once deleted).
"""

from __future__ import annotations

import posixpath
from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import forbidden, invalid, not_supported, required
from runtime.models.k8s.core_v1 import PersistentVolumeSpec, PersistentVolumeStatus
from runtime.server.kinds.columns import doc_column
from runtime.server.kinds.cluster.resources import basic_resource_errors, go_resource_list, quantity
from runtime.server.kinds.cluster.stored import ClusterStrategy
from runtime.server.kinds.cluster.volumes import (
    access_mode_errors, access_modes_text, beta_class_warnings, class_name_errors, storage_class_of,
    volume_mode_errors,
)
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column
from runtime.server.kinds.pods.podspec_common import exactly_one_of
from runtime.server.kinds.subresources import StatusSubresource

__all__ = ["PersistentVolumeStrategy", "VOLUME_SOURCES"]

#: The volume sources of a PersistentVolumeSpec, in the order Kubernetes checks them.
VOLUME_SOURCES = ("hostPath", "gcePersistentDisk", "awsElasticBlockStore", "glusterfs", "flocker", "nfs", "rbd",
                  "quobyte", "cephfs", "storageos", "iscsi", "cinder", "fc", "flexVolume", "azureFile",
                  "vsphereVolume", "photonPersistentDisk", "portworxVolume", "azureDisk", "scaleIO", "local", "csi")
_RECLAIM_POLICIES = ["Delete", "Recycle", "Retain"]
_HOST_PATH_TYPES = ["", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate",
                    "Socket"]
_IMMUTABLE = "field is immutable"


def no_backsteps(path_value: str, path: str) -> list[FieldError]:
    """`validatePathNoBacksteps`: no `..` element."""
    return [invalid(path, path_value, "must not contain '..'")] if ".." in path_value.split("/") else []


def _host_path_errors(source: dict[str, Any], path: str) -> list[FieldError]:
    if not source.get("path"):
        return [required(f"{path}.path")]
    errs = no_backsteps(source["path"], f"{path}.path")
    kind = source.get("type")
    if kind is not None and kind not in _HOST_PATH_TYPES:
        errs.append(not_supported(f"{path}.type", kind, _HOST_PATH_TYPES))
    return errs


def _nfs_errors(source: dict[str, Any], path: str) -> list[FieldError]:
    errs = [] if source.get("server") else [required(f"{path}.server")]
    nfs_path = source.get("path") or ""
    if not nfs_path:
        errs.append(required(f"{path}.path"))
    if not nfs_path.startswith("/"):
        errs.append(invalid(f"{path}.path", nfs_path, "must be an absolute path"))
    return errs


def _local_errors(source: dict[str, Any], path: str) -> list[FieldError]:
    if not source.get("path"):
        return [required(f"{path}.path")]
    return no_backsteps(source["path"], f"{path}.path")


def _csi_errors(source: dict[str, Any], path: str) -> list[FieldError]:
    errs = [] if source.get("driver") else [required(f"{path}.driver")]
    return errs + ([] if source.get("volumeHandle") else [required(f"{path}.volumeHandle")])


_SOURCE_RULES = {"hostPath": _host_path_errors, "nfs": _nfs_errors, "local": _local_errors, "csi": _csi_errors}


def _source_errors(spec: dict[str, Any]) -> list[FieldError]:
    def source_errors(name: str, source: Any) -> list[FieldError]:
        rule = _SOURCE_RULES.get(name)
        errs = rule(source, f"spec.{name}") if rule is not None else []
        if name == "local" and spec.get("nodeAffinity") is None:
            errs.append(required("spec.nodeAffinity", "Local volume requires node affinity"))
        return errs

    return exactly_one_of(spec, VOLUME_SOURCES, "spec", "volume type", source_errors)


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta, spec, status = obj["metadata"], obj.get("spec") or {}, obj.get("status") or {}
    claim = spec.get("claimRef")
    claim_text = f"{claim.get('namespace', '')}/{claim.get('name', '')}" if claim is not None else ""
    capacity = (spec.get("capacity") or {}).get("storage")
    phase = "Terminating" if meta.get("deletionTimestamp") else status.get("phase", "")
    return [meta.get("name", ""), str(quantity(capacity)) if capacity is not None else "0",
            access_modes_text(spec.get("accessModes")), spec.get("persistentVolumeReclaimPolicy", ""), phase,
            claim_text, storage_class_of(obj), status.get("reason", ""), age(meta.get("creationTimestamp")),
            spec.get("volumeMode") or "<unset>"]


_COLUMNS = Columns((
    NAME_COLUMN,
    doc_column("Capacity", PersistentVolumeSpec, "capacity"),
    doc_column("Access Modes", PersistentVolumeSpec, "accessModes"),
    doc_column("Reclaim Policy", PersistentVolumeSpec, "persistentVolumeReclaimPolicy"),
    doc_column("Status", PersistentVolumeStatus, "phase"),
    doc_column("Claim", PersistentVolumeSpec, "claimRef"),
    column("StorageClass", "StorageClass of the pv"),
    doc_column("Reason", PersistentVolumeStatus, "reason"),
    AGE_COLUMN,
    doc_column("VolumeMode", PersistentVolumeSpec, "volumeMode", priority=1),
), _cells)


class PersistentVolumeStrategy(ClusterStrategy):
    """See the module doc."""

    name_rule = "dns-subdomain"
    allow_create_on_update = False
    subresources = {"status": StatusSubresource()}
    resource_maps = ("spec.capacity",)
    initial_status = {"phase": "Pending"}
    columns = _COLUMNS

    def default(self, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        spec.setdefault("volumeMode", "Filesystem")
        if isinstance(spec.get("hostPath"), dict):
            spec["hostPath"].setdefault("type", "")
        status = obj.setdefault("status", {})
        if not status.get("phase"):
            status["phase"] = "Pending"

    def warnings(self, old: dict[str, Any] | None, new: dict[str, Any], manager: str) -> list[str]:
        return beta_class_warnings(new)

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        spec = obj.get("spec") or {}
        modes = spec.get("accessModes") or []
        errs = [] if modes else [required("spec.accessModes")]
        errs += access_mode_errors(modes, "spec.accessModes")
        capacity = spec.get("capacity") or {}
        if not capacity:
            errs.append(required("spec.capacity"))
        if "storage" not in capacity or len(capacity) > 1:
            errs.append(not_supported("spec.capacity", go_resource_list(capacity), ["storage"]))
        for name, value in sorted(capacity.items()):
            at = f"spec.capacity[{name}]"
            errs += basic_resource_errors(value, at)
            if quantity(value).value <= 0:
                errs.append(invalid(at, value, "must be greater than zero"))
        errs += class_name_errors(spec.get("storageClassName"), "spec.storageClassName")
        errs += volume_mode_errors(spec, "spec.volumeMode")
        policy = spec.get("persistentVolumeReclaimPolicy") or ""
        if policy not in _RECLAIM_POLICIES:
            errs.append(not_supported("spec.persistentVolumeReclaimPolicy", policy, _RECLAIM_POLICIES))
        errs += _source_errors(spec)
        host_path = (spec.get("hostPath") or {}).get("path")
        if host_path and posixpath.normpath(host_path) in ("/", "//") and policy == "Recycle":
            errs.append(forbidden("spec.persistentVolumeReclaimPolicy",
                                  "may not be 'recycle' for a hostPath mount of '/'"))
        affinity = spec.get("nodeAffinity")
        if affinity is not None and affinity.get("required") is None:
            errs.append(required("spec.nodeAffinity.required", "must specify required node constraints"))
        elif affinity is not None and not affinity["required"].get("nodeSelectorTerms"):
            errs.append(required("spec.nodeAffinity.required.nodeSelectorTerms",
                                 "must have at least one node selector term"))
        return errs

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        errs = self.validate(new)
        if any(spec.get(name) != old_spec.get(name) for name in VOLUME_SOURCES):
            errs.append(forbidden("spec.persistentvolumesource",
                                  "spec.persistentvolumesource is immutable after creation"))
        if spec.get("volumeMode") != old_spec.get("volumeMode"):
            errs.append(invalid("volumeMode", spec.get("volumeMode"), _IMMUTABLE))
        if old_spec.get("nodeAffinity") is not None and spec.get("nodeAffinity") != old_spec["nodeAffinity"]:
            errs.append(invalid("nodeAffinity", spec.get("nodeAffinity"), _IMMUTABLE))
        return errs
