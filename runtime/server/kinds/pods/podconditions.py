"""A Pod's conditions as the API server writes them (Kubernetes' `podutil.UpdatePodCondition`, IsPodReady).

`set_pod_condition` puts a condition of its type in `status.conditions`
(appended, or replacing the one of that type); `lastTransitionTime` is now,
unless the status did not change (the old time stays). `pod_ready`: the
Ready condition is True.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

__all__ = ["set_pod_condition", "pod_ready", "now_rfc3339"]


def now_rfc3339() -> str:
    """Now, as metav1.Time writes it (UTC, seconds)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def set_pod_condition(pod: dict[str, Any], condition: dict[str, Any]) -> None:
    """UpdatePodCondition on `pod` (see the module doc)."""
    conditions = pod.setdefault("status", {}).setdefault("conditions", [])
    condition = dict(condition, lastTransitionTime=now_rfc3339())
    for i, old in enumerate(conditions):
        if old.get("type") == condition["type"]:
            if old.get("status") == condition["status"] and old.get("lastTransitionTime"):
                condition["lastTransitionTime"] = old["lastTransitionTime"]
            conditions[i] = condition
            return
    conditions.append(condition)


def pod_ready(pod: dict[str, Any]) -> bool:
    """IsPodReady: the Ready condition is True."""
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or ())
