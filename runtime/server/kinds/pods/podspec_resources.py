"""A container's resources as Kubernetes validates them (`ValidateContainerResourceRequirements`,
`validateContainerResourceName`, `ValidateResourceQuantityValue`).

- names: qualified names; without a domain, a standard container resource
  (`cpu`, `memory`, `ephemeral-storage`, `hugepages-<size>`), else `must be
  a standard resource type or fully qualified` / `must be a standard
  resource for containers`; with one, a `kubernetes.io/` name or an
  extended resource (`example.com/gpu`);
- quantities: parseable (Kubernetes' message), not negative, whole for
  extended resources, hugepages a multiple of their page size;
- requests at most their limits (`must be less than or equal to cpu limit
  of 1`), and equal to them for resources that cannot be overcommitted
  (extended resources, hugepages), whose limits are required;
- hugepages only beside cpu or memory.

Paths as Kubernetes writes them: a name's or a quantity's error at
`resources.limits[cpu]`, a request over its limit at `resources.requests`.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.quantity import Quantity, QuantityError
from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import NONNEGATIVE, forbidden, invalid, required
from runtime.machinery.validation.labels import label_key_errors
from runtime.server.kinds.pods.podspec_common import cached_quantity, quantity

__all__ = ["validate_resources", "STANDARD_CONTAINER_RESOURCES"]

STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
#: helper.IsStandardResourceName's names (besides hugepages-*): what a quota or a container may name.
_STANDARD = STANDARD_CONTAINER_RESOURCES | {
    "requests.cpu", "requests.memory", "requests.ephemeral-storage", "limits.cpu", "limits.memory",
    "limits.ephemeral-storage", "pods", "services", "replicationcontrollers", "resourcequotas", "secrets",
    "configmaps", "persistentvolumeclaims", "requests.storage", "services.nodeports", "services.loadbalancers",
    "storage",
}
_HUGEPAGES = "hugepages-"


def _native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _extended(name: str) -> bool:
    """helper.IsExtendedResourceName: not native, not `requests.`-prefixed, and `requests.<name>` qualified."""
    return not _native(name) and not name.startswith("requests.") and not label_key_errors("requests." + name)


def _overcommittable(name: str) -> bool:
    return _native(name) and not name.startswith(_HUGEPAGES)


def _name_errors(name: str, path: str) -> list[FieldError]:
    errs = [invalid(path, name, msg) for msg in label_key_errors(name)]
    if errs:
        return errs
    if "/" not in name:
        if name not in _STANDARD and not name.startswith(_HUGEPAGES):
            errs.append(invalid(path, name, "must be a standard resource type or fully qualified"))
        if name not in STANDARD_CONTAINER_RESOURCES and not name.startswith(_HUGEPAGES):
            errs.append(invalid(path, name, "must be a standard resource for containers"))
    elif not _native(name) and not _extended(name):
        errs.append(invalid(path, name, "doesn't follow extended resource name standard"))
    return errs


def _quantity_errors(name: str, value: Any, path: str) -> tuple[Quantity | None, list[FieldError]]:
    parsed, errs = quantity(value, path)
    if parsed is None:
        return None, errs
    if parsed.value < 0:
        errs.append(invalid(path, str(parsed), NONNEGATIVE))
    if _extended(name) and (parsed.value * 1000) % 1000 != 0:
        errs.append(invalid(path, str(parsed), "must be an integer"))
    if name.startswith(_HUGEPAGES):
        try:
            page = cached_quantity(name[len(_HUGEPAGES):]).value
        except QuantityError:
            page = 0
        if page <= 0 or parsed.value % page != 0:
            errs.append(invalid(path, str(parsed), f"{parsed} is not positive integer multiple of {name}"))
    return parsed, errs


def validate_resources(resources: dict[str, Any], path: str) -> list[FieldError]:
    """`ValidateContainerResourceRequirements` at `path` (`spec.containers[0].resources`)."""
    errs: list[FieldError] = []
    limits_path, requests_path = f"{path}.limits", f"{path}.requests"
    limits: dict[str, Quantity | None] = {}
    cpu_or_memory = hugepages = False
    for name, value in (resources.get("limits") or {}).items():
        at = f"{limits_path}[{name}]"
        errs += _name_errors(name, at)
        limits[name], bad = _quantity_errors(name, value, at)
        errs += bad
        hugepages |= name.startswith(_HUGEPAGES)
        cpu_or_memory |= name in ("cpu", "memory")
    for name, value in (resources.get("requests") or {}).items():
        at = f"{requests_path}[{name}]"
        errs += _name_errors(name, at)
        request, bad = _quantity_errors(name, value, at)
        errs += bad
        hugepages |= name.startswith(_HUGEPAGES)
        cpu_or_memory |= name in ("cpu", "memory")
        if name in limits:
            limit = limits[name]
            if request is None or limit is None:
                continue
            if request.value != limit.value and not _overcommittable(name):
                errs.append(invalid(requests_path, str(request), f"must be equal to {name} limit of {limit}"))
            elif request.value > limit.value:
                errs.append(invalid(requests_path, str(request),
                                    f"must be less than or equal to {name} limit of {limit}"))
        elif not _overcommittable(name):
            errs.append(required(limits_path, "Limit must be set for non overcommitable resources"))
    if hugepages and not cpu_or_memory:
        errs.append(forbidden(path, "HugePages require cpu or memory"))
    return errs
