"""Status conditions: apimachinery's `meta.SetStatusCondition` and friends, on dicts and `Condition` models.

A list of conditions (an object's `status.conditions`) holds at most one
condition per `type`. The functions change the list in place and work on
a list of dicts (Kubernetes' JSON form) or of `runtime.models.Condition`
models; a condition given in the other form is converted to the list's.

The rule that matters: `lastTransitionTime` says when `status` last changed.
`set_status_condition` sets it (to now, unless the new condition carries
one) when it adds a condition or changes its status, and keeps it
otherwise, so a controller may set the same condition on every reconcile::

    changed = set_status_condition(team.status.conditions, Condition(
        type="Ready", status="True", reason="Reconciled", observed_generation=team.metadata.generation))
    if changed:
        await client.update(team, subresource="status")
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Union

from runtime.models.meta import Condition

__all__ = ["set_status_condition", "remove_status_condition", "find_status_condition",
           "is_status_condition_true", "is_status_condition_false"]

#: A condition in either form.
AnyCondition = Union[dict[str, Any], Condition]
#: The fields `set_status_condition` copies onto an existing condition (metav1.Condition's, but type and time).
_FIELDS = ("reason", "message", "observedGeneration")


def _now() -> str:
    # metav1.Time marshals to whole seconds, RFC 3339 in UTC.
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _as_dict(condition: AnyCondition) -> dict[str, Any]:
    return condition.to_dict() if isinstance(condition, Condition) else dict(condition)


def _like(items: list[Any], condition: dict[str, Any], model: bool) -> AnyCondition:
    """`condition` in the form of the list's items (a model list stays models; an empty list takes `new`'s)."""
    as_model = isinstance(items[0], Condition) if items else model
    return Condition.model_validate(condition) if as_model else condition


def _get(condition: AnyCondition, field: str) -> Any:
    return _as_dict(condition).get(field)


def find_status_condition(conditions: list[Any], condition_type: str) -> AnyCondition | None:
    """The condition of that type in `conditions` (the list's own item: change it to change the list), or None."""
    return next((c for c in conditions if _get(c, "type") == condition_type), None)


def set_status_condition(conditions: list[Any], new: AnyCondition) -> bool:
    """Put `new` into `conditions` (in place); return whether anything changed.

    Missing type: appended, `lastTransitionTime` now unless `new` carries one.
    Present: `status` changed ⇒ `lastTransitionTime` is `new`'s or now, else
    kept; `reason`, `message` and `observedGeneration` take `new`'s values.
    """
    wanted = _as_dict(new)
    index = next((i for i, c in enumerate(conditions) if _get(c, "type") == wanted.get("type")), None)
    if index is None:
        wanted.setdefault("lastTransitionTime", _now())
        conditions.append(_like(conditions, wanted, isinstance(new, Condition)))
        return True
    current = _as_dict(conditions[index])
    merged = dict(current)
    if current.get("status") != wanted.get("status"):
        merged["status"] = wanted.get("status")
        merged["lastTransitionTime"] = wanted.get("lastTransitionTime") or _now()
    for field in _FIELDS:
        merged[field] = wanted.get(field)
    merged = {k: v for k, v in merged.items() if v is not None}
    if merged == current:
        return False
    item = conditions[index]
    if isinstance(item, Condition):  # in place, as Go's pointer is: a reference held to it sees the change
        for name, value in Condition.model_validate(merged):
            setattr(item, name, value)
    else:
        item.clear()
        item.update(merged)
    return True


def remove_status_condition(conditions: list[Any], condition_type: str) -> bool:
    """Remove the condition of that type from `conditions` (in place); return whether there was one."""
    kept = [c for c in conditions if _get(c, "type") != condition_type]
    removed = len(kept) != len(conditions)
    conditions[:] = kept
    return removed


def is_status_condition_true(conditions: list[Any], condition_type: str) -> bool:
    """Whether the condition of that type is present with status True."""
    found = find_status_condition(conditions, condition_type)
    return found is not None and _get(found, "status") == "True"


def is_status_condition_false(conditions: list[Any], condition_type: str) -> bool:
    """Whether the condition of that type is present with status False."""
    found = find_status_condition(conditions, condition_type)
    return found is not None and _get(found, "status") == "False"
