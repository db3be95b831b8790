"""What PersistentVolumes and PersistentVolumeClaims share (Kubernetes' core validation and helpers).

- Access modes (`supportedAccessModes`): ReadOnlyMany, ReadWriteMany,
  ReadWriteOnce, ReadWriteOncePod; ReadWriteOncePod with another is forbidden.
- Volume modes: Block, Filesystem (the default, `SetDefaults_*`).
- A class name is a DNS subdomain (`ValidateClassName`).
- Printing: `access_modes_text` (`helper.GetAccessModesAsString`: RWO, ROX,
  RWX, RWOP in that order) and `storage_class_of` (the beta annotation
  `volume.beta.kubernetes.io/storage-class` wins over `spec.storageClassName`);
  a write with that annotation is warned it is deprecated.
"""

from __future__ import annotations

import re
from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import forbidden, invalid, not_supported
from runtime.machinery.validation.names import DNS1123_SUBDOMAIN_MSG

__all__ = ["ACCESS_MODES", "VOLUME_MODES", "BETA_STORAGE_CLASS", "access_mode_errors", "volume_mode_errors",
           "class_name_errors", "subdomain_errors", "beta_class_warnings", "access_modes_text", "storage_class_of"]

ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
VOLUME_MODES = ["Block", "Filesystem"]
#: The annotation that named a claim's or volume's class before `storageClassName`.
BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_SHORT_MODES = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
                ("ReadWriteOncePod", "RWOP"))


def subdomain_errors(value: str) -> list[str]:
    """apimachinery's `IsDNS1123Subdomain` messages for `value`."""
    errs = ["must be no more than 253 characters"] if len(value) > 253 else []
    if not _SUBDOMAIN.fullmatch(value):
        errs.append(DNS1123_SUBDOMAIN_MSG)
    return errs


def access_mode_errors(modes: list[str], path: str) -> list[FieldError]:
    """Each mode supported; ReadWriteOncePod alone."""
    errs = [not_supported(path, mode, ACCESS_MODES) for mode in modes if mode not in ACCESS_MODES]
    if "ReadWriteOncePod" in modes and any(mode != "ReadWriteOncePod" for mode in modes):
        errs.append(forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return errs


def volume_mode_errors(spec: dict[str, Any], path: str) -> list[FieldError]:
    mode = spec.get("volumeMode")
    return [not_supported(path, mode, VOLUME_MODES)] if mode is not None and mode not in VOLUME_MODES else []


def class_name_errors(name: str | None, path: str) -> list[FieldError]:
    """A non-empty class name must be a DNS subdomain."""
    return [invalid(path, name, msg) for msg in subdomain_errors(name)] if name else []


def beta_class_warnings(obj: dict[str, Any]) -> list[str]:
    """`GetWarningsForPersistentVolume(Claim)`: the beta class annotation is deprecated."""
    if BETA_STORAGE_CLASS not in (obj["metadata"].get("annotations") or {}):
        return []
    return [f'metadata.annotations[{BETA_STORAGE_CLASS}]: deprecated since v1.8; use "storageClassName" attribute '
            "instead"]


def access_modes_text(modes: list[str] | None) -> str:
    """`GetAccessModesAsString`: `RWO,ROX`."""
    present = set(modes or ())
    return ",".join(short for mode, short in _SHORT_MODES if mode in present)


def storage_class_of(obj: dict[str, Any]) -> str:
    """`GetPersistentVolumeClass` / `GetPersistentVolumeClaimClass`."""
    annotations = obj["metadata"].get("annotations") or {}
    if BETA_STORAGE_CLASS in annotations:
        return annotations[BETA_STORAGE_CLASS]
    return (obj.get("spec") or {}).get("storageClassName") or ""
