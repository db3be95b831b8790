"""`storage/v1` `StorageClass`: a class of dynamically provisioned volumes (Kubernetes'
`pkg/registry/storage/storageclass`), cluster-scoped.

- Defaults (`SetDefaults_StorageClass`): `reclaimPolicy` Delete,
  `volumeBindingMode` Immediate.
- Validation (`ValidateStorageClass`): the name is a DNS subdomain;
  `provisioner` required, a qualified name (lowercased); `parameters` at most
  512 keys, no empty key, 256 KiB at most in all; `reclaimPolicy` Delete or
  Retain; `volumeBindingMode` Immediate or WaitForFirstConsumer;
  `allowedTopologies` terms have keys that are label names, each with values,
  no duplicate values or keys, no duplicate terms.
- Update (`ValidateStorageClassUpdate`): `parameters`, `provisioner` and
  `reclaimPolicy` may not change ("updates to parameters are forbidden."),
  nor `volumeBindingMode` ("field is immutable").
- The default class: `storageclass.kubernetes.io/is-default-class: "true"`
  (or the beta annotation); the strategy follows which classes are default
  (`default_class`: the newest, as Kubernetes' DefaultStorageClass admission
  picks for a claim without a class), and which allow volume expansion
  (`expandable`, which the PersistentVolumeClaimResize admission asks). A
  PUT of a missing class is 404.
- `kubectl get`: NAME PROVISIONER RECLAIMPOLICY VOLUMEBINDINGMODE
  ALLOWVOLUMEEXPANSION AGE, the default class named `<name> (default)`.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import duplicate, forbidden, invalid, not_supported, required, too_long
from runtime.machinery.validation.names import qualified_name_errors
from runtime.models.k8s.storage_v1 import StorageClass
from runtime.server.kinds.cluster.defaultclass import DefaultClasses
from runtime.server.kinds.columns import doc_column
from runtime.server.kinds.cluster.stored import ClusterStrategy
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age
from runtime.server.kinds.parts import SchemeObserver

__all__ = ["StorageClassStrategy", "DEFAULT_CLASS_ANNOTATIONS", "is_default_class"]

DEFAULT_CLASS_ANNOTATIONS = ("storageclass.kubernetes.io/is-default-class",
                             "storageclass.beta.kubernetes.io/is-default-class")
_RECLAIM = ["Delete", "Retain"]
_BINDING = ["Immediate", "WaitForFirstConsumer"]
_MAX_PARAMETERS = 512
_MAX_PARAMETERS_SIZE = 256 * 1024


def is_default_class(obj: dict[str, Any]) -> bool:
    """`storageutil.IsDefaultAnnotation`."""
    annotations = obj["metadata"].get("annotations") or {}
    return any(annotations.get(key) == "true" for key in DEFAULT_CLASS_ANNOTATIONS)


def _parameters_errors(params: dict[str, str]) -> list[FieldError]:
    if len(params) > _MAX_PARAMETERS:
        return [too_long("parameters", _MAX_PARAMETERS)]
    errs = [invalid("parameters", key, "field can not be empty.") for key in params if not key]
    if sum(len(k.encode()) + len(v.encode()) for k, v in params.items()) > _MAX_PARAMETERS_SIZE:
        errs.append(too_long("parameters", _MAX_PARAMETERS_SIZE))
    return errs


def _topology_errors(terms: list[dict[str, Any]]) -> list[FieldError]:
    errs: list[FieldError] = []
    seen_terms: list[dict[str, set[str]]] = []
    for i, term in enumerate(terms):
        at = f"allowedTopologies[{i}].matchLabelExpressions"
        expressions: dict[str, set[str]] = {}
        for j, expr in enumerate(term.get("matchLabelExpressions") or []):
            values, key = expr.get("values") or [], expr.get("key", "")
            if not values:
                errs.append(required(f"{at}[{j}].values"))
            kept: set[str] = set()
            for k, value in enumerate(values):
                if value in kept:
                    errs.append(duplicate(f"{at}[{j}].values[{k}]", value))
                kept.add(value)
            errs += [invalid(f"{at}[{j}].key", key, msg) for msg in qualified_name_errors(key)]
            if key in expressions:
                errs.append(duplicate(f"{at}[{j}].key", key))
            expressions[key] = kept
        errs += [duplicate(at, "") for seen in seen_terms if seen == expressions]
        seen_terms.append(expressions)
    return errs


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta = obj["metadata"]
    name = meta.get("name", "") + (" (default)" if is_default_class(obj) else "")
    return [name, obj.get("provisioner", ""), obj.get("reclaimPolicy") or "Delete",
            obj.get("volumeBindingMode") or "Immediate", bool(obj.get("allowVolumeExpansion")),
            age(meta.get("creationTimestamp"))]


_COLUMNS = Columns((
    NAME_COLUMN,
    doc_column("Provisioner", StorageClass, "provisioner"),
    doc_column("ReclaimPolicy", StorageClass, "reclaimPolicy"),
    doc_column("VolumeBindingMode", StorageClass, "volumeBindingMode"),
    doc_column("AllowVolumeExpansion", StorageClass, "allowVolumeExpansion"),
    AGE_COLUMN,
), _cells)


class StorageClassStrategy(ClusterStrategy, SchemeObserver):
    """See the module doc."""

    name_rule = "dns-subdomain"
    allow_create_on_update = False
    columns = _COLUMNS

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        #: The default classes the watch cache holds.
        self.defaults = DefaultClasses(is_default_class)
        #: The classes the watch cache holds that allow volume expansion.
        self.expandable: set[str] = set()

    def observe(self, event_type: str, obj: dict[str, Any]) -> None:
        self.defaults.observe(event_type, obj)
        name = obj["metadata"].get("name", "")
        if event_type != "DELETED" and obj.get("allowVolumeExpansion"):
            self.expandable.add(name)
        else:
            self.expandable.discard(name)

    def observe_list(self, objs: list[dict[str, Any]]) -> None:
        self.defaults.replace(objs)
        self.expandable = {o["metadata"].get("name", "") for o in objs if o.get("allowVolumeExpansion")}

    def default_class(self) -> str | None:
        """The default class a claim without one gets (`DefaultClasses.newest`)."""
        return self.defaults.newest()

    def default(self, obj: dict[str, Any]) -> None:
        if obj.get("reclaimPolicy") is None:
            obj["reclaimPolicy"] = "Delete"
        if obj.get("volumeBindingMode") is None:
            obj["volumeBindingMode"] = "Immediate"

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        provisioner = obj.get("provisioner") or ""
        errs = [] if provisioner else [required("provisioner")]
        if provisioner:
            errs += [invalid("provisioner", provisioner.lower(), msg)
                     for msg in qualified_name_errors(provisioner.lower())]
        errs += _parameters_errors(obj.get("parameters") or {})
        policy = obj.get("reclaimPolicy") or ""
        if policy and policy not in _RECLAIM:
            errs.append(not_supported("reclaimPolicy", policy, _RECLAIM))
        mode = obj.get("volumeBindingMode")
        if mode is None:
            errs.append(required("volumeBindingMode"))
        elif mode not in _BINDING:
            errs.append(not_supported("volumeBindingMode", mode, _BINDING))
        return errs + _topology_errors(obj.get("allowedTopologies") or [])

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        errs = self.validate(new)
        if (new.get("parameters") or {}) != (old.get("parameters") or {}):
            errs.append(forbidden("parameters", "updates to parameters are forbidden."))
        if new.get("provisioner") != old.get("provisioner"):
            errs.append(forbidden("provisioner", "updates to provisioner are forbidden."))
        if new.get("reclaimPolicy") != old.get("reclaimPolicy"):
            errs.append(forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."))
        if new.get("volumeBindingMode") != old.get("volumeBindingMode"):
            errs.append(invalid("volumeBindingMode", new.get("volumeBindingMode"), "field is immutable"))
        return errs
