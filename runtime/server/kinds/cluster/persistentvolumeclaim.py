"""Core `PersistentVolumeClaim`: a request for storage (Kubernetes' `pkg/registry/core/persistentvolumeclaim`).

- Defaults (`SetDefaults_PersistentVolumeClaim`, `..Spec`): `volumeMode`
  Filesystem, `status.phase` Pending (a create resets the status to it).
- Validation (`ValidatePersistentVolumeClaim`): the name is a DNS
  subdomain; `accessModes` required ("at least 1 access mode is required")
  and supported; `selector` a label selector; `resources.requests.storage`
  required and positive (path `spec.resources[storage]`, as Kubernetes);
  `storageClassName` a DNS subdomain; `volumeMode` supported; a
  `dataSource` or `dataSourceRef` has a kind and a name, a PersistentVolumeClaim
  unless it names an apiGroup, and the two agree unless the ref names a
  namespace. A create fills the one of them not set from the other
  (`NormalizeDataSources`).
- Update (`ValidatePersistentVolumeClaimUpdate`): the spec is immutable
  except `volumeName` while it is unset (binding) and the storage request
  of a Bound claim ("spec is immutable after creation except
  resources.requests for bound claims"), which may not shrink; a
  `storageClassName` may be set once when it was unset and the beta class
  annotation absent; the beta class annotation is immutable; `volumeMode`
  is immutable (path `volumeMode`).
- Status writes (`ValidatePersistentVolumeClaimStatusUpdate`): capacity
  quantities are not negative.
- Admission (DefaultStorageClass): a claim created without a class (nor the
  beta annotation) gets the default StorageClass, when there is one;
  (PersistentVolumeClaimResize): a bound claim's storage request grows only
  when its StorageClass has `allowVolumeExpansion` (403 "only dynamically
  provisioned pvc can be resized and the storageclass that provisions the
  pvc must support resize").
- `status` subresource; a PUT of a missing claim is 404.
- `kubectl get`: NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS AGE,
  `-o wide` VOLUMEMODE (printPersistentVolumeClaim: capacity and access
  modes from the status once bound, STATUS Terminating once deleted).
"""

from __future__ import annotations

import copy
from typing import Any

from runtime.machinery import errors
from runtime.machinery.validation import FieldError, label_selector_errors
from runtime.machinery.validation.fielderrors import forbidden, invalid, required
from runtime.machinery.validation.gofmt import GoText
from runtime.machinery.validation.names import dns1123_label_errors
from runtime.models.k8s.core_v1 import PersistentVolumeClaimSpec, PersistentVolumeClaimStatus
from runtime.models.k8s.storage_v1 import StorageClass
from runtime.server.kinds.base import AdmissionRequest, PolicyContext
from runtime.server.kinds.columns import doc_column
from runtime.server.kinds.cluster.resources import basic_resource_errors, quantity, quantity_value_errors
from runtime.server.kinds.cluster.storageclass import StorageClassStrategy
from runtime.server.kinds.cluster.stored import ClusterStrategy
from runtime.server.kinds.cluster.volumes import (
    BETA_STORAGE_CLASS, access_mode_errors, access_modes_text, beta_class_warnings, class_name_errors,
    storage_class_of, subdomain_errors, volume_mode_errors,
)
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column
from runtime.server.kinds.subresources import StatusSubresource

__all__ = ["PersistentVolumeClaimStrategy", "claim_spec_errors"]

_IMMUTABLE_SPEC = "spec is immutable after creation except resources.requests for bound claims"


def _storage_request(spec: dict[str, Any]) -> str | None:
    return ((spec.get("resources") or {}).get("requests") or {}).get("storage")


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta, spec, status = obj["metadata"], obj.get("spec") or {}, obj.get("status") or {}
    phase = "Terminating" if meta.get("deletionTimestamp") else status.get("phase", "")
    capacity = modes = ""
    if spec.get("volumeName"):
        modes = access_modes_text(status.get("accessModes"))
        stored = (status.get("capacity") or {}).get("storage")
        capacity = str(quantity(stored)) if stored is not None else "0"
    return [meta.get("name", ""), phase, spec.get("volumeName", ""), capacity, modes, storage_class_of(obj),
            age(meta.get("creationTimestamp")), spec.get("volumeMode") or "<unset>"]


_COLUMNS = Columns((
    NAME_COLUMN,
    doc_column("Status", PersistentVolumeClaimStatus, "phase"),
    doc_column("Volume", PersistentVolumeClaimSpec, "volumeName"),
    doc_column("Capacity", PersistentVolumeClaimStatus, "capacity"),
    doc_column("Access Modes", PersistentVolumeClaimStatus, "accessModes"),
    column("StorageClass", "StorageClass of the pvc"),
    AGE_COLUMN,
    doc_column("VolumeMode", PersistentVolumeClaimSpec, "volumeMode", priority=1),
), _cells)


def _data_source_errors(ref: dict[str, Any], path: str) -> list[FieldError]:
    """`validateDataSource` / `validateDataSourceRef`."""
    errs = [required(f"{path}.{field}") for field in ("name", "kind") if not ref.get(field)]
    group = ref.get("apiGroup") or ""
    if not group and ref.get("kind") != "PersistentVolumeClaim":
        errs.append(invalid(path, ref.get("kind", ""), "must be 'PersistentVolumeClaim' when referencing the default "
                                                       "apiGroup"))
    if group:
        errs += [invalid(f"{path}.apiGroup", group, msg) for msg in subdomain_errors(group)]
    if ref.get("namespace"):
        errs += [invalid(f"{path}.namespace", ref["namespace"], msg) for msg in dns1123_label_errors(ref["namespace"])]
    return errs


def _data_sources_errors(spec: dict[str, Any], path: str) -> list[FieldError]:
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    errs = _data_source_errors(source, f"{path}.dataSource") if source is not None else []
    if ref is not None:
        errs += _data_source_errors(ref, f"{path}.dataSourceRef")
    shown = GoText(f"{path}.dataSource")
    if ref is not None and ref.get("namespace"):
        if source is not None:
            errs.append(invalid(path, shown, "may not be specified when dataSourceRef.namespace is specified"))
    elif source is not None and ref is not None and (
            (source.get("apiGroup") or "", source.get("kind"), source.get("name"))
            != (ref.get("apiGroup") or "", ref.get("kind"), ref.get("name"))):
        errs.append(invalid(path, shown, "must match dataSourceRef"))
    return errs


def normalize_data_sources(spec: dict[str, Any]) -> None:
    """`NormalizeDataSources` (AnyVolumeDataSource, on in v1.28): `dataSource` and `dataSourceRef` say the
    same unless both are set (or the ref names another namespace)."""
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    fields = ("apiGroup", "kind", "name")
    if source is not None and ref is None:
        spec["dataSourceRef"] = {k: source[k] for k in fields if source.get(k) is not None}
    elif ref is not None and source is None and not ref.get("namespace"):
        spec["dataSource"] = {k: ref[k] for k in fields if ref.get(k) is not None}


def claim_spec_errors(spec: dict[str, Any], path: str) -> list[FieldError]:
    """`ValidatePersistentVolumeClaimSpec` at `path` (a StatefulSet's claim templates share it)."""
    modes = spec.get("accessModes") or []
    errs = [] if modes else [required(f"{path}.accessModes", "at least 1 access mode is required")]
    if spec.get("selector") is not None:
        errs += label_selector_errors(spec["selector"], f"{path}.selector")
    errs += access_mode_errors(modes, f"{path}.accessModes")
    storage = _storage_request(spec)
    at = f"{path}.resources[storage]"
    if storage is None:
        errs.append(required(at))
    elif quantity(storage).value <= 0:
        errs.append(invalid(at, storage, "must be greater than zero"))
    else:
        errs += quantity_value_errors("storage", storage, at)
    errs += class_name_errors(spec.get("storageClassName"), f"{path}.storageClassName")
    errs += volume_mode_errors(spec, f"{path}.volumeMode")
    return errs + _data_sources_errors(spec, path)


def _class_set_from_unset(old: dict[str, Any], new_spec: dict[str, Any], old_spec: dict[str, Any]) -> bool:
    """`validateStorageClassUpgradeFromNil`: a class may be set once when none was (nor the beta annotation)."""
    annotations = old["metadata"].get("annotations") or {}
    return (BETA_STORAGE_CLASS not in annotations and old_spec.get("storageClassName") is None
            and new_spec.get("storageClassName") is not None)


def _class_from_annotation(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """`validateStorageClassUpgradeFromAnnotation`: the beta annotation may become `storageClassName` (same
    class, the annotation kept)."""
    old_ann = old["metadata"].get("annotations") or {}
    new_ann = new["metadata"].get("annotations") or {}
    old_class, new_class = (old.get("spec") or {}).get("storageClassName"), (new.get("spec") or {}).get(
        "storageClassName")
    return (BETA_STORAGE_CLASS in old_ann and BETA_STORAGE_CLASS in new_ann and old_class is None
            and new_class is not None and old_ann[BETA_STORAGE_CLASS] == new_class
            and new_ann[BETA_STORAGE_CLASS] == new_class)


class PersistentVolumeClaimStrategy(ClusterStrategy):
    """See the module doc."""

    name_rule = "dns-subdomain"
    allow_create_on_update = False
    subresources = {"status": StatusSubresource()}
    resource_maps = ("spec.resources.requests", "spec.resources.limits", "status.capacity",
                     "status.allocatedResources")
    initial_status = {"phase": "Pending"}
    columns = _COLUMNS

    def default(self, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("volumeMode", "Filesystem")
        status = obj.setdefault("status", {})
        if not status.get("phase"):
            status["phase"] = "Pending"

    def _classes(self) -> StorageClassStrategy | None:
        classes = self.scheme.by_model(StorageClass)
        strategy = classes.strategy if classes is not None else None
        return strategy if isinstance(strategy, StorageClassStrategy) else None

    async def admit(self, policy: PolicyContext, request: AdmissionRequest) -> None:
        """Kubernetes' DefaultStorageClass admission (a new claim without a class gets the default one) and
        PersistentVolumeClaimResize (a bound claim grows only when its class allows volume expansion)."""
        obj, classes = request.obj, self._classes()
        spec = obj.setdefault("spec", {})
        if request.operation == "update" and request.old is not None:
            self._check_resize(obj, request.old, classes)
            return
        if (request.operation != "create" or spec.get("storageClassName") is not None
                or BETA_STORAGE_CLASS in (obj["metadata"].get("annotations") or {})):
            return
        name = classes.default_class() if classes is not None else None
        if name is not None:
            spec["storageClassName"] = name

    def _check_resize(self, new: dict[str, Any], old: dict[str, Any], classes: StorageClassStrategy | None) -> None:
        new_size, old_size = _storage_request(new.get("spec") or {}), _storage_request(old.get("spec") or {})
        if new_size is None or old_size is None or quantity(new_size) <= quantity(old_size):
            return
        if (old.get("status") or {}).get("phase") != "Bound":
            return  # the spec's validation refuses it (422), which Kubernetes answers before this admission
        name, old_name = storage_class_of(new), storage_class_of(old)
        if not name or name != old_name or classes is None or name not in classes.expandable:
            rt = self.rt
            claim = new["metadata"].get("name", "")
            raise errors.Forbidden(f'{rt.group_resource} "{claim}" is forbidden: only dynamically provisioned pvc can '
                                   "be resized and the storageclass that provisions the pvc must support resize",
                                   name=claim, group=rt.group, kind=rt.plural)

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        super().prepare_for_create(obj)
        normalize_data_sources(obj.setdefault("spec", {}))

    def warnings(self, old: dict[str, Any] | None, new: dict[str, Any], manager: str) -> list[str]:
        return beta_class_warnings(new)

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        errs = claim_spec_errors(obj.get("spec") or {}, "spec")
        capacity = (obj.get("status") or {}).get("capacity") or {}
        for name, value in sorted(capacity.items()):
            errs += basic_resource_errors(value, f"status.capacity[{name}]")
        return errs

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        errs = self.validate(new)
        new_spec = copy.deepcopy(new.get("spec") or {})
        old_spec = copy.deepcopy(old.get("spec") or {})
        if not old_spec.get("volumeName"):
            old_spec["volumeName"] = new_spec.get("volumeName")  # binding sets it once
            if old_spec["volumeName"] is None:
                del old_spec["volumeName"]
        old_ann = old["metadata"].get("annotations") or {}
        new_ann = new["metadata"].get("annotations") or {}
        if _class_from_annotation(old, new):
            new_spec.pop("storageClassName", None)
        else:
            if new_ann.get(BETA_STORAGE_CLASS, "") != old_ann.get(BETA_STORAGE_CLASS, ""):
                errs.append(invalid(f"metadata.annotations.{BETA_STORAGE_CLASS}", new_ann.get(BETA_STORAGE_CLASS, ""),
                                    "field is immutable"))
            if _class_set_from_unset(old, new_spec, old_spec):
                new_spec.pop("storageClassName", None)
        if (new.get("status") or {}).get("phase") == "Bound" and _storage_request(new_spec) is not None:
            new_spec["resources"]["requests"]["storage"] = _storage_request(old_spec)
            if new_spec["resources"]["requests"]["storage"] is None:
                del new_spec["resources"]["requests"]["storage"]
        if new_spec != old_spec:
            errs.append(forbidden("spec", _IMMUTABLE_SPEC))
        new_size, old_size = _storage_request(new.get("spec") or {}), _storage_request(old.get("spec") or {})
        if new_size is not None and old_size is not None and quantity(new_size) < quantity(old_size):
            errs.append(forbidden("spec.resources.requests.storage", "field can not be less than previous value"))
        if (new.get("spec") or {}).get("volumeMode") != (old.get("spec") or {}).get("volumeMode"):
            errs.append(invalid("volumeMode", (new.get("spec") or {}).get("volumeMode"), "field is immutable"))
        return errs
