"""A pod spec's volumes as Kubernetes validates them (`ValidateVolumes`, `validateVolumeSource`).

- names: required, DNS-1123 labels, unique (`Duplicate value`); a volume
  with an error is not one a mount may name;
- exactly one source: none is `Required value: must specify a volume type`
  at the volume, a second `Forbidden: may not specify more than 1 volume
  type` at the second's field;
- the sources' own rules: `emptyDir.sizeLimit` not negative; `hostPath.path`
  required, without `..`, `type` one of Kubernetes'; `secret.secretName` and
  `configMap.name` required, modes within 0-0777, items' key and relative
  path; `persistentVolumeClaim.claimName` required; `downwardAPI` items
  (path, exactly one of `fieldRef` and `resourceFieldRef`, fieldRef's
  supported paths); `projected` sources (one kind each, no path twice, a
  service account token at least 10 minutes); `nfs`, `gitRepo`, `iscsi`
  (the required fields), `csi.driver`; `ephemeral.volumeClaimTemplate`
  required, its metadata labels and annotations only (`cannot be set`), its
  spec a claim's (the PersistentVolumeClaim kind's `claim_spec_errors`); the
  other in-tree sources' required fields.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import duplicate, forbidden, invalid, not_supported, required, too_long
from runtime.server.kinds.cluster.persistentvolumeclaim import claim_spec_errors
from runtime.server.kinds.pods.podspec_common import (
    annotation_map, dns_label, exactly_one_of, file_mode, inclusive_range, label_map, local_descending_path,
    local_non_reserved_path, no_backsteps, qualified_name, quantity, subdomain_errors,
)
from runtime.server.kinds.pods.podspec_defaults import VOLUME_SOURCES

__all__ = ["validate_volumes", "downward_field_ref", "resource_field_ref", "VOLUME_FIELD_PATHS"]

#: `validVolumeDownwardAPIFieldPathExpressions`.
VOLUME_FIELD_PATHS = ("metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace",
                      "metadata.uid")
#: The v1 Pod's field labels the downward API converts (`ConvertDownwardAPIFieldLabel`).
_POD_FIELD_LABELS = frozenset({
    "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid",
    "spec.nodeName", "spec.restartPolicy", "spec.serviceAccountName", "spec.schedulerName", "status.phase",
    "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"})
#: ObjectMeta's fields besides labels and annotations, in the struct's order (what a template may not set),
#: and the names Kubernetes writes for them (the Go field's name with its first letter lowered).
_TEMPLATE_META_FIELDS = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
                         "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences",
                         "finalizers", "managedFields")
_META_ERROR_NAMES = {"uid": "uID"}
_HOST_PATH_TYPES = ("", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate",
                    "Socket")
_RESOURCE_PATHS = ("limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu",
                   "requests.ephemeral-storage", "requests.memory")
_CPU_DIVISORS = ("1m", "1")
_BYTE_DIVISORS = ("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei")
#: Where Kubernetes writes a source's own errors, and a second source's, when not at the JSON name (its
#: typos included: `downwarAPI`).
_ERROR_PATHS = {"gcePersistentDisk": "persistentDisk"}
_SECOND_SOURCE_PATHS = {"cephfs": "cephFS", "downwardAPI": "downwarAPI"}
#: The required fields of the in-tree sources a pod author rarely writes (their first-order rules only).
_REQUIRED = {
    "gcePersistentDisk": ("pdName",), "awsElasticBlockStore": ("volumeID",), "glusterfs": ("endpoints", "path"),
    "rbd": ("monitors", "image"), "cinder": ("volumeID",), "cephfs": ("monitors",), "flexVolume": ("driver",),
    "azureFile": ("secretName", "shareName"), "vsphereVolume": ("volumePath",), "photonPersistentDisk": ("pdID",),
    "portworxVolume": ("volumeID",), "azureDisk": ("diskName", "diskURI"), "storageos": ("volumeName",),
    "scaleIO": ("gateway", "system", "volumeName"), "quobyte": ("volume",),
}


def _key_to_path(item: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not item.get("key"):
        errs.append(required(f"{path}.key"))
    if not item.get("path"):
        errs.append(required(f"{path}.path"))
    errs += local_non_reserved_path(item.get("path") or "", f"{path}.path")
    return errs + file_mode(item.get("mode"), f"{path}.mode")


def _items(source: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, item in enumerate(source.get("items") or []):
        errs += _key_to_path(item, f"{path}.items[{i}]")
    return errs


def _convert_field_label(api_version: str, label: str) -> tuple[str, str]:
    """`ConvertDownwardAPIFieldLabel`: the internal field path, or "" and the conversion's error."""
    if api_version != "v1":
        return "", f"unsupported pod version: {api_version}"
    if (parts := _subscripted(label)) is not None:
        if parts[0] in ("metadata.annotations", "metadata.labels"):
            return label, ""
        return "", f"field label does not support subscript: {label}"
    if label == "spec.host":
        return "spec.nodeName", ""  # old v1 clients' name for it
    return (label, "") if label in _POD_FIELD_LABELS else ("", f"field label not supported: {label}")


def _subscripted(field_path: str) -> tuple[str, str] | None:
    """`fieldpath.SplitMaybeSubscriptedPath`: `metadata.labels['app']` is (`metadata.labels`, `app`)."""
    if not field_path.endswith("']"):
        return None
    base, sep, key = field_path[:-2].partition("['")
    return (base, key) if sep and base else None


def downward_field_ref(ref: dict[str, Any], supported: tuple[str, ...], path: str) -> list[FieldError]:
    """`validateObjectFieldSelector`: apiVersion and fieldPath required, a field label of a v1 Pod that is one
    of `supported`, or a label or annotation subscript (`metadata.labels['app']`) whose key is qualified."""
    if not ref.get("apiVersion"):
        return [required(f"{path}.apiVersion")]
    field_path = ref.get("fieldPath") or ""
    if not field_path:
        return [required(f"{path}.fieldPath")]
    internal, problem = _convert_field_label(ref["apiVersion"], field_path)
    if problem:
        return [invalid(f"{path}.fieldPath", field_path, f"error converting fieldPath: {problem}")]
    if (parts := _subscripted(internal)) is not None:
        base, key = parts
        return qualified_name(key.lower() if base == "metadata.annotations" else key, path)
    if internal not in supported:
        return [not_supported(f"{path}.fieldPath", internal, list(supported))]
    return []


def resource_field_ref(ref: dict[str, Any], path: str, *, volume: bool) -> list[FieldError]:
    """`validateContainerResourceFieldSelector`: containerName (in a volume), a supported resource, a divisor
    its resource supports."""
    errs: list[FieldError] = []
    resource = ref.get("resource") or ""
    if volume and not ref.get("containerName"):
        errs.append(required(f"{path}.containerName"))
    elif not resource:
        errs.append(required(f"{path}.resource"))
    elif resource not in _RESOURCE_PATHS and not resource.startswith(("requests.hugepages-", "limits.hugepages-")):
        errs.append(not_supported(f"{path}.resource", resource, list(_RESOURCE_PATHS)))
    if ref.get("divisor") is None:
        return errs
    divisor, bad = quantity(ref["divisor"], f"{path}.divisor")
    if divisor is None or divisor.value == 0:
        return errs + bad
    shown = str(divisor)
    if resource in ("limits.cpu", "requests.cpu") and shown not in _CPU_DIVISORS:
        errs.append(invalid(f"{path}.divisor", resource,
                            "only divisor's values 1m and 1 are supported with the cpu resource"))
    kinds = {"limits.memory": "memory", "requests.memory": "memory",
             "limits.ephemeral-storage": "local ephemeral storage",
             "requests.ephemeral-storage": "local ephemeral storage"}
    if resource.startswith(("requests.hugepages-", "limits.hugepages-")):
        kinds[resource] = "hugepages"
    if resource in kinds and shown not in _BYTE_DIVISORS:
        errs.append(invalid(f"{path}.divisor", resource, "only divisor's values " + ", ".join(_BYTE_DIVISORS)
                            + f" are supported with the {kinds[resource]} resource"))
    return errs


def _downward_file(item: dict[str, Any], path: str) -> list[FieldError]:
    """`validateDownwardAPIVolumeFile` (its errors at the volume's path, as Kubernetes writes them)."""
    errs: list[FieldError] = []
    if not item.get("path"):
        errs.append(required(f"{path}.path"))
    errs += local_non_reserved_path(item.get("path") or "", f"{path}.path")
    if item.get("fieldRef") is not None:
        errs += downward_field_ref(item["fieldRef"], VOLUME_FIELD_PATHS, f"{path}.fieldRef")
        if item.get("resourceFieldRef") is not None:
            errs.append(invalid(path, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
    elif item.get("resourceFieldRef") is not None:
        errs += resource_field_ref(item["resourceFieldRef"], f"{path}.resourceFieldRef", volume=True)
    else:
        errs.append(required(path, "one of fieldRef and resourceFieldRef is required"))
    return errs + file_mode(item.get("mode"), f"{path}.mode")


def _projected(source: dict[str, Any], path: str) -> list[FieldError]:
    errs = file_mode(source.get("defaultMode"), f"{path}.defaultMode")
    seen: set[str] = set()

    def claim(item_path: str, shown: Any) -> None:
        if item_path in seen:
            errs.append(invalid(path, shown, "conflicting duplicate paths"))
        seen.add(item_path)

    for i, projection in enumerate(source.get("sources") or []):
        at = f"{path}.sources[{i}]"
        kinds = 0
        for kind in ("secret", "configMap"):
            if (ref := projection.get(kind)) is not None:
                kinds += 1
                if not ref.get("name"):
                    errs.append(required(f"{at}.{kind}.name"))
                for j, item in enumerate(ref.get("items") or []):
                    errs += _key_to_path(item, f"{at}.{kind}.items[{j}]")
                    if item.get("path"):
                        claim(item["path"], ref.get("name") or "")
        if (downward := projection.get("downwardAPI")) is not None:
            kinds += 1
            for item in downward.get("items") or []:
                errs += _downward_file(item, f"{at}.downwardAPI")
                if item.get("path"):
                    claim(item["path"], item["path"])
        if (token := projection.get("serviceAccountToken")) is not None:
            kinds += 1
            seconds = token.get("expirationSeconds") or 0
            if seconds < 600:
                errs.append(invalid(f"{at}.serviceAccountToken.expirationSeconds", seconds,
                                    "may not specify a duration less than 10 minutes"))
            if seconds > 1 << 32:
                errs.append(invalid(f"{at}.serviceAccountToken.expirationSeconds", seconds,
                                    "may not specify a duration larger than 2^32 seconds"))
            if not token.get("path"):
                errs.append(required(f"{path}.path"))
            else:
                errs += local_non_reserved_path(token["path"], f"{path}.path")
        if projection.get("clusterTrustBundle") is not None:
            kinds += 1
        if kinds > 1:
            errs.append(forbidden(at, "may not specify more than 1 volume type per source"))
    return errs


def _claim_template(template: dict[str, Any], path: str) -> list[FieldError]:
    """`ValidatePersistentVolumeClaimTemplate`: metadata of labels and annotations only, the claim's spec."""
    meta = template.get("metadata") or {}
    errs = annotation_map(meta.get("annotations"), f"{path}.metadata.annotations")
    errs += label_map(meta.get("labels"), f"{path}.metadata.labels")
    errs += [forbidden(f"{path}.metadata.{_META_ERROR_NAMES.get(key, key)}", "cannot be set")
             for key in _TEMPLATE_META_FIELDS if meta.get(key) not in (None, "", 0)]
    return errs + claim_spec_errors(template.get("spec") or {}, f"{path}.spec")


def _source_errors(kind: str, source: dict[str, Any], path: str) -> list[FieldError]:
    """One source's own rules (`validate<Source>VolumeSource`)."""
    errs: list[FieldError] = []
    if kind == "emptyDir":
        if source.get("sizeLimit") is not None:
            size, bad = quantity(source["sizeLimit"], f"{path}.sizeLimit")
            errs += bad
            if size is not None and size.value < 0:
                errs.append(forbidden(f"{path}.sizeLimit", "SizeLimit field must be a valid resource quantity"))
    elif kind == "hostPath":
        if not source.get("path"):
            return [required(f"{path}.path")]
        errs += no_backsteps(source["path"], f"{path}.path")
        if source.get("type") is not None and source["type"] not in _HOST_PATH_TYPES:
            errs.append(not_supported(f"{path}.type", source["type"], list(_HOST_PATH_TYPES)))
    elif kind in ("secret", "configMap"):
        name_key = "secretName" if kind == "secret" else "name"
        if not source.get(name_key):
            errs.append(required(f"{path}.{name_key}"))
        errs += file_mode(source.get("defaultMode"), f"{path}.defaultMode")
        errs += _items(source, path)
    elif kind == "persistentVolumeClaim":
        if not source.get("claimName"):
            errs.append(required(f"{path}.claimName"))
    elif kind == "downwardAPI":
        errs += file_mode(source.get("defaultMode"), f"{path}.defaultMode")
        for item in source.get("items") or []:
            errs += _downward_file(item, path)
    elif kind == "projected":
        errs += _projected(source, path)
    elif kind == "nfs":
        for key in ("server", "path"):
            if not source.get(key):
                errs.append(required(f"{path}.{key}"))
        if not (source.get("path") or "").startswith("/"):
            errs.append(invalid(f"{path}.path", source.get("path") or "", "must be an absolute path"))
    elif kind == "gitRepo":
        if not source.get("repository"):
            errs.append(required(f"{path}.repository"))
        errs += local_descending_path(source.get("directory") or "", f"{path}.directory")
    elif kind == "iscsi":
        for key in ("targetPortal", "iqn"):
            if not source.get(key):
                errs.append(required(f"{path}.{key}"))
        if not 0 <= (source.get("lun") or 0) <= 255:
            errs.append(invalid(f"{path}.lun", source["lun"], inclusive_range(0, 255)))
    elif kind == "csi":  # ValidateCSIDriverName
        driver = source.get("driver") or ""
        if not driver:
            errs.append(required(f"{path}.driver"))
        if len(driver) > 63:
            errs.append(too_long(f"{path}.driver", 63))
        errs += [invalid(f"{path}.driver", driver, msg) for msg in subdomain_errors(driver.lower())]
    elif kind == "ephemeral":
        if source.get("volumeClaimTemplate") is None:
            errs.append(required(f"{path}.volumeClaimTemplate"))
        else:
            errs += _claim_template(source["volumeClaimTemplate"], f"{path}.volumeClaimTemplate")
    else:
        if kind == "quobyte" and not source.get("registry"):
            errs.append(required(f"{path}.registry", "must be a host:port pair or multiple pairs separated by commas"))
        errs += [required(f"{path}.{key}") for key in _REQUIRED.get(kind, ()) if not source.get(key)]
    return errs


def _volume_source(volume: dict[str, Any], path: str) -> list[FieldError]:
    return exactly_one_of(volume, VOLUME_SOURCES, path, "volume type",
                          lambda kind, source: _source_errors(kind, source, f"{path}.{_ERROR_PATHS.get(kind, kind)}"),
                          _SECOND_SOURCE_PATHS)


def validate_volumes(volumes: list[dict[str, Any]], path: str) -> tuple[dict[str, dict[str, Any]], list[FieldError]]:
    """`ValidateVolumes`: the errors, and the valid volumes by name (the ones mounts may name)."""
    errs: list[FieldError] = []
    valid: dict[str, dict[str, Any]] = {}
    for i, volume in enumerate(volumes):
        at = f"{path}[{i}]"
        name = volume.get("name") or ""
        problems = _volume_source(volume, at)
        problems += [required(f"{at}.name")] if not name else dns_label(name, f"{at}.name")
        if name in valid:
            problems.append(duplicate(f"{at}.name", name))
        if problems:
            errs += problems
        else:
            valid[name] = volume
    return valid, errs

