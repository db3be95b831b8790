"""A Pod's quality of service class, as Kubernetes computes it at creation (`pkg/apis/core/helper/qos` GetPodQOS).

Over the containers and init containers (ephemeral containers have no
resources), counting only `cpu` and `memory` and only positive quantities:

- no request and no limit anywhere: `BestEffort`;
- every container limits both cpu and memory, and the summed requests
  equal the summed limits for each resource: `Guaranteed`;
- else `Burstable`.

A quantity that does not parse is left out (validation refuses it anyway).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from runtime.machinery.quantity import QuantityError, parse_quantity

__all__ = ["pod_qos_class"]

_COMPUTE = ("cpu", "memory")


def _positive(resources: dict[str, Any]) -> dict[str, Fraction]:
    """The positive cpu and memory quantities of a requests or limits map."""
    out: dict[str, Fraction] = {}
    for name, text in (resources or {}).items():
        if name not in _COMPUTE:
            continue
        try:
            value = parse_quantity(str(text)).value
        except QuantityError:
            continue
        if value > 0:
            out[name] = value
    return out


def pod_qos_class(spec: dict[str, Any]) -> str:
    """`Guaranteed`, `Burstable` or `BestEffort` for a pod spec (see the module doc)."""
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True
    for container in [*(spec.get("containers") or ()), *(spec.get("initContainers") or ())]:
        resources = container.get("resources") or {}
        for name, value in _positive(resources.get("requests") or {}).items():
            requests[name] = requests.get(name, Fraction(0)) + value
        found = _positive(resources.get("limits") or {})
        for name, value in found.items():
            limits[name] = limits.get(name, Fraction(0)) + value
        if not set(_COMPUTE) <= found.keys():
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and all(limits.get(name) == value for name, value in requests.items()) \
            and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"
