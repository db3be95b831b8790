"""Core `LimitRange`: bounds and defaults of a namespace's resources (Kubernetes' `pkg/registry/core/limitrange`).

- Defaults (`SetDefaults_LimitRangeItem`), for `type: Container` items: a
  missing `default` is the `max`, a missing `defaultRequest` the `default`,
  else the `min` (what the LimitRanger admission then applies to containers).
- Validation (`ValidateLimitRange`): the name is a DNS subdomain; each
  item's `type` is a qualified name, Pod, Container or PersistentVolumeClaim
  unless domain-prefixed ("must be a standard limit type or fully
  qualified"), no type twice; resource names are container resources for
  Pod and Container items, resource names otherwise; a Pod item has no
  `default` nor `defaultRequest`; a PersistentVolumeClaim item has a min or
  max storage; per resource min <= defaultRequest <= default <= max, min <=
  max, `maxLimitRequestRatio` >= 1 and <= max/min, and a resource that may
  not be overcommitted (extended, hugepages) has default == defaultRequest.
  Messages are Kubernetes' (`min value 2 is greater than max value 1`);
  values are shown as Go prints a Quantity.
- A PUT of a missing LimitRange creates it (Kubernetes' strategy allows it).
- `kubectl get`: NAME CREATED AT (printLimitRange).
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import duplicate, forbidden, invalid, required
from runtime.machinery.validation.names import qualified_name_errors
from runtime.server.kinds.cluster.resources import (
    container_resource_name_errors, go_quantity, quantity, resource_name_errors,
)
from runtime.server.kinds.cluster.stored import ClusterStrategy

__all__ = ["LimitRangeStrategy", "LIMIT_TYPES"]

LIMIT_TYPES = ("Pod", "Container", "PersistentVolumeClaim")
_MAPS = ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio")


def _type_errors(kind: str, path: str) -> list[FieldError]:
    errs = [invalid(path, kind, msg) for msg in qualified_name_errors(kind)]
    if not errs and "/" not in kind and kind not in LIMIT_TYPES:
        errs.append(invalid(path, kind, "must be a standard limit type or fully qualified"))
    return errs


def _overcommit_allowed(name: str) -> bool:
    """`helper.IsOvercommitAllowed`: native resources but hugepages."""
    native = "/" not in name or "kubernetes.io/" in name
    return native and not name.startswith("hugepages-")


def _pair_errors(name: str, maps: dict[str, dict[str, str]], at: str) -> list[FieldError]:
    """The order rules of one resource across an item's maps (Kubernetes' order of checks)."""
    lo, hi = maps["min"].get(name), maps["max"].get(name)
    dflt, request = maps["default"].get(name), maps["defaultRequest"].get(name)
    ratio = maps["maxLimitRequestRatio"].get(name)
    q = {k: quantity(v) for k, v in (("min", lo), ("max", hi), ("default", dflt), ("request", request),
                                     ("ratio", ratio)) if v is not None}

    def err(field: str, shown: str, detail: str) -> FieldError:
        return invalid(f"{at}.{field}[{name}]", go_quantity(shown), detail)

    errs = []
    if lo is not None and hi is not None and q["min"] > q["max"]:
        errs.append(err("min", lo, f"min value {lo} is greater than max value {hi}"))
    if request is not None and lo is not None and q["min"] > q["request"]:
        errs.append(err("defaultRequest", request, f"min value {lo} is greater than default request value {request}"))
    if request is not None and hi is not None and q["request"] > q["max"]:
        errs.append(err("defaultRequest", request, f"default request value {request} is greater than max value {hi}"))
    if request is not None and dflt is not None and q["request"] > q["default"]:
        errs.append(err("defaultRequest", request,
                        f"default request value {request} is greater than default limit value {dflt}"))
    if dflt is not None and lo is not None and q["min"] > q["default"]:
        errs.append(err("default", lo, f"min value {lo} is greater than default value {dflt}"))
    if dflt is not None and hi is not None and q["default"] > q["max"]:
        errs.append(err("default", hi, f"default value {dflt} is greater than max value {hi}"))
    if ratio is not None and q["ratio"].value < 1:
        errs.append(err("maxLimitRequestRatio", ratio, f"ratio {ratio} is less than 1"))
    if ratio is not None and lo is not None and hi is not None and q["min"].value > 0:
        limit = q["max"].milli() / q["min"].milli()
        if q["ratio"].milli() / 1000 > limit:
            errs.append(err("maxLimitRequestRatio", ratio, f"ratio {ratio} is greater than max/min = {limit:f}"))
    if not _overcommit_allowed(name) and dflt is not None and request is not None and q["default"] != q["request"]:
        errs.append(err("defaultRequest", request,
                        f"default value {dflt} must equal to defaultRequest value {request} in {name}"))
    return errs


def _item_errors(item: dict[str, Any], at: str, seen: set[str]) -> list[FieldError]:
    kind = item.get("type", "")
    errs = _type_errors(kind, f"{at}.type")
    if kind in seen:
        errs.append(duplicate(f"{at}.type", kind))
    seen.add(kind)
    name_errors = container_resource_name_errors if kind in ("Pod", "Container") else resource_name_errors
    maps: dict[str, dict[str, str]] = {field: {} for field in _MAPS}
    for field in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
        values = item.get(field) or {}
        if kind == "Pod" and field in ("default", "defaultRequest"):
            if values:
                errs.append(forbidden(f"{at}.{field}", "may not be specified when `type` is 'Pod'"))
            continue
        for name in sorted(values):
            errs += name_errors(name, f"{at}.{field}[{name}]")
        maps[field] = values
        if field == "defaultRequest" and kind == "PersistentVolumeClaim" and not (
                "storage" in maps["min"] or "storage" in maps["max"]):
            errs.append(required(f"{at}.limits",
                                 "either minimum or maximum storage value is required, but neither was provided"))
    for name in sorted(set().union(*maps.values())):
        errs += _pair_errors(name, maps, at)
    return errs


class LimitRangeStrategy(ClusterStrategy):
    """See the module doc."""

    name_rule = "dns-subdomain"
    resource_maps = tuple(f"spec.limits[].{field}" for field in _MAPS)

    def default(self, obj: dict[str, Any]) -> None:
        for item in (obj.get("spec") or {}).get("limits") or []:
            if item.get("type") != "Container":
                continue
            dflt = dict(item.get("default") or {})
            request = dict(item.get("defaultRequest") or {})
            for name, value in (item.get("max") or {}).items():
                dflt.setdefault(name, value)
            for name, value in dflt.items():
                request.setdefault(name, value)
            for name, value in (item.get("min") or {}).items():
                request.setdefault(name, value)
            if dflt:
                item["default"] = dflt
            if request:
                item["defaultRequest"] = request

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        errs: list[FieldError] = []
        seen: set[str] = set()
        for i, item in enumerate((obj.get("spec") or {}).get("limits") or []):
            errs += _item_errors(item, f"spec.limits[{i}]", seen)
        return errs
