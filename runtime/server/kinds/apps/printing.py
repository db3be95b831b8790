"""What the apps kinds' `kubectl get` columns share (`pkg/printers/internalversion/printers.go`).

- `container_cells`: `layoutContainerCells`, the template's container names
  and images, each joined by commas (the `-o wide` CONTAINERS and IMAGES);
- `format_selector`: `metav1.FormatLabelSelector` (`app=web`, `<none>` when
  it selects everything or nothing, `<error>` when it does not convert);
- `format_labels`: `labels.FormatLabels` (a DaemonSet's NODE SELECTOR:
  `k=v` sorted by key, `<none>` when empty);
- the column definitions several kinds print (`CONTAINERS`, `IMAGES`).

Internal to `runtime.server.kinds.apps`: imported by its modules only.
"""

from __future__ import annotations

from typing import Any

from runtime.server.kinds.apps.rules import as_selector
from runtime.server.kinds.columns import column

__all__ = ["container_cells", "format_selector", "format_labels", "count", "CONTAINERS_COLUMN", "IMAGES_COLUMN",
           "READY_DOC"]

CONTAINERS_COLUMN = column("Containers", "Names of each container in the template.", priority=1)
IMAGES_COLUMN = column("Images", "Images referenced by each container in the template.", priority=1)
READY_DOC = "Number of the pod with ready state"


def container_cells(obj: dict[str, Any]) -> list[str]:
    """[names, images] of the template's containers, each comma-joined."""
    containers = (((obj.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
    return [",".join(c.get("name") or "" for c in containers), ",".join(c.get("image") or "" for c in containers)]


def format_selector(selector: dict[str, Any] | None) -> str:
    """`metav1.FormatLabelSelector`."""
    parsed = as_selector(selector)
    if parsed is None:
        return "<error>"
    return str(parsed) or "<none>"


def format_labels(labels: dict[str, str] | None) -> str:
    """`labels.FormatLabels`."""
    return ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items())) or "<none>"


def count(section: Any, name: str) -> int:
    """An int32 counter of a spec or status (0 when unset, as Go's zero value)."""
    value = (section or {}).get(name) if isinstance(section, dict) else None
    return value if isinstance(value, int) else 0
