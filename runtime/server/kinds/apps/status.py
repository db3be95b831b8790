"""The status of the apps kinds: what a write of `status` must hold (`Validate<Kind>StatusUpdate`) and how
Kubernetes writes a status back.

A `StatusRules` names a kind's status counters:

- `zeros`: the fields Go writes even when 0 (no `omitempty`: a ReplicaSet's
  `replicas`, a DaemonSet's four `...NumberScheduled`/`numberReady`): a new
  object's status is these at 0 (its strategy's PrepareForCreate resets the
  status), and a status write keeps them;
- `counts`: each must be >= 0 (`status.replicas: Invalid value: -1: must be
  greater than or equal to 0`), in the kind's order (`observedGeneration` and
  `collisionCount` among them);
- `bounded`: (field, bound, message) pairs, e.g. `readyReplicas` over
  `replicas` is `cannot be greater than status.replicas`;
- `collisionCount` may not decrease (`cannot be decremented`).

Internal to `runtime.server.kinds.apps`: imported by its modules only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import invalid, nonnegative

__all__ = ["StatusRules", "OVER_REPLICAS"]

OVER_REPLICAS = "cannot be greater than status.replicas"


def _count(status: dict[str, Any], name: str) -> int:
    value = status.get(name)
    return value if isinstance(value, int) else 0


@dataclass(frozen=True)
class StatusRules:
    """A kind's status counters (see the module doc)."""

    zeros: tuple[str, ...]
    counts: tuple[str, ...]
    bounded: tuple[tuple[str, str, str], ...] = ()

    def new_status(self) -> dict[str, Any]:
        """A created object's status: Go's zero status, as JSON writes it."""
        return {name: 0 for name in self.zeros}

    def written(self, status: Any) -> dict[str, Any]:
        """A written status as Kubernetes stores it: the zero fields filled in."""
        status = dict(status) if isinstance(status, dict) else {}
        for name in self.zeros:
            if status.get(name) is None:
                status[name] = 0
        return status

    def errors(self, status: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        """The status rules of a status write (`old`: the status stored before it)."""
        errs: list[FieldError] = []
        for name in self.counts:
            errs += nonnegative(status.get(name), f"status.{name}")
        for name, bound, message in self.bounded:
            if _count(status, name) > _count(status, bound):
                errs.append(invalid(f"status.{name}", _count(status, name), message))
        new_count, old_count = status.get("collisionCount"), old.get("collisionCount")
        if isinstance(old_count, int) and (new_count is None or (isinstance(new_count, int) and new_count < old_count)):
            errs.append(invalid("status.collisionCount", new_count or 0, "cannot be decremented"))
        return errs
