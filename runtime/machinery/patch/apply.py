"""Server-side apply: merge an apply configuration and track who owns what.

`server_side_apply(live, applied, manager=..., force=...)` follows apiserver's
fieldmanager over structured-merge-diff's `merge.Updater.Apply`:

1. The configuration must be of the served kind and version
   (400 `invalid object type: ...`) and must not carry `metadata.managedFields`.
2. It is merged over the live object (None: create) per the schema: granular
   maps and structs per key, map lists per key (`ownerReferences` by uid), set
   lists per value, atomic lists (`rules`, `subjects`) replaced.
3. The manager's `Apply` entry becomes exactly the configuration's fields.
   Fields it applied last time and no longer applies are removed from the
   object, unless another manager (Apply or Update) also owns them.
4. Fields the result adds or changes that other managers own are conflicts:
   without `force`, `ApplyConflict` (409) in Kubernetes' words
   (`Apply failed with 1 conflict: conflict with "kubectl-client-side-apply"
   using rbac.authorization.k8s.io/v1: .rules`); with `force`, the others lose
   them. Values the result leaves unchanged are shared, not conflicts.

Kubernetes' extra layers kept: a live object with no managed fields first has
its fields recorded for `before-first-apply`; manager `kubectl`'s
conflicts on fields of the `kubectl.kubernetes.io/last-applied-configuration`
annotation are forgiven (upgrade from client-side apply) and, for manager
`kubectl`, that annotation, when present, is rewritten to the configuration.
The entry's `time` moves only when the object changed.

Internal to `runtime.machinery.patch`: imported by its modules only.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from runtime.machinery.patch.errors import ApplyConflict, CorruptManagedFields, FieldConflict, MalformedPatch, PatchError
from runtime.machinery.patch.fieldpath import FieldSet, path_string
from runtime.machinery.patch.json_patch import json_equal
from runtime.machinery.patch.managed_fields import (
    STRIPPED_FIELDS, Managed, ManagerKey, Ownership, decode_managed_fields, record_update, reconcile,
    set_managed_fields, strip_meta, without_managed_fields,
)
from runtime.machinery.patch.schema import Node, merge_node
from runtime.machinery.patch.walks import MISSING, compare, ensure_named_fields, merge, remove_items, to_field_set

__all__ = ["server_side_apply", "conflict_message", "LAST_APPLIED_ANNOTATION", "BEFORE_FIRST_APPLY"]

LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
BEFORE_FIRST_APPLY = "before-first-apply"


def server_side_apply(live: dict[str, Any] | None, applied: dict[str, Any], *, manager: str, model: type,
                      force: bool, api_version: str, now: str, kind: str | None = None,
                      subresource: str = "") -> dict[str, Any]:
    """Apply `applied` for `manager`; return the new object with updated `metadata.managedFields`.

    `live` is the stored object or None (create); `model` the kind's pydantic
    model (its class name is the kind unless `kind` is given); `api_version`
    the served group/version; `now` an RFC 3339 time; `subresource` names the
    subresource applied to (recorded in the entry). Inputs are not modified.

    Raises ApplyConflict (409) listing each conflicting field and its owner;
    MalformedPatch for a configuration of another kind or version or one
    carrying managedFields, PatchNotApplicable for a malformed list (duplicate
    keys, an item without its keys), CorruptManagedFields for stored managed
    fields that do not decode.
    """
    kind = kind or model.__name__
    if applied.get("apiVersion") != api_version or applied.get("kind") != kind:
        raise MalformedPatch(f"invalid object type: {_gvk(applied)}")
    if (applied.get("metadata") or {}).get("managedFields") is not None:
        raise MalformedPatch("metadata.managedFields must be nil")
    node = merge_node(model)
    try:
        managed = decode_managed_fields(((live or {}).get("metadata") or {}).get("managedFields"))
    except PatchError as e:
        raise CorruptManagedFields(f"failed to decode managed fields: {e.message}") from None
    current = without_managed_fields(live)
    config = copy.deepcopy(applied)
    applier = ManagerKey(manager, "Apply", subresource=subresource)
    if live is not None and not managed:
        # apiserver's skipNonAppliedManager: attribute what exists to a placeholder manager
        managed = record_update({}, current, node, {}, ManagerKey(BEFORE_FIRST_APPLY, "Update", api_version),
                                api_version, now)
    try:
        result, managed = _apply(current, config, node, managed, applier, api_version, now, force)
    except ApplyConflict as conflict:
        allowed = _forgiven_conflicts(live, manager, node, api_version)
        if allowed is None:
            raise
        remaining = tuple(c for c in conflict.conflicts if c.field not in allowed)
        if remaining:
            raise ApplyConflict(conflict_message(remaining), remaining) from None
        result, managed = _apply(current, config, node, managed, applier, api_version, now, True)
    if manager == "kubectl":
        _sync_last_applied(result, applied)
    return set_managed_fields(result, managed)


def _apply(current: dict[str, Any], config: dict[str, Any], node: Node, managed: Managed,
           applier: ManagerKey, api_version: str, now: str, force: bool) -> tuple[dict[str, Any], Managed]:
    """structured-merge-diff's Updater.Apply plus apiserver's time and strip layers."""
    merged = merge(current, config, node)
    merged = {} if merged is MISSING else merged
    previous = managed.get(applier)
    applied_fields = to_field_set(config, node, strict=True)
    managers = {**managed, applier: Ownership(applied_fields, api_version, previous.time if previous else None)}
    if previous is not None:
        merged = _prune(merged, node, managers, previous.fields)
    managers, conflicts, _ = reconcile(current, merged, node, managers, applier, force=force)
    if conflicts and not force:
        found = tuple(FieldConflict(key.printed(), path_string(path))
                      for key in sorted(conflicts, key=ManagerKey.identifier) for path in conflicts[key])
        raise ApplyConflict(conflict_message(found), found)
    merged = _drop_nulls(merged)
    owned = strip_meta(applied_fields)
    changed = not json_equal(merged, current)
    time = now if changed else (previous.time if previous else None)
    managers = {k: v for k, v in managers.items() if k != applier}
    if owned:
        managers[applier] = Ownership(owned, api_version, time)
    return merged, managers


def _prune(merged: dict[str, Any], node: Node, managers: Managed, last: FieldSet) -> dict[str, Any]:
    """Remove what the applier applied last time and no longer does, unless someone owns it.

    structured-merge-diff's prune, addBackOwnedItems and addBackDanglingItems.
    """
    last_set = ensure_named_fields(last, node)
    pruned = _or_empty(remove_items(merged, node, last_set))
    owned = STRIPPED_FIELDS  # never prune name, uid and the like, even if the config omits them
    for ownership in managers.values():
        owned = owned | ownership.fields
    owned = ensure_named_fields(owned, node)
    merged_set = ensure_named_fields(to_field_set(merged, node), node)
    pruned_set = ensure_named_fields(to_field_set(pruned, node), node)
    pruned = _or_empty(remove_items(merged, node, merged_set - (pruned_set | owned)))
    pruned_set = ensure_named_fields(to_field_set(pruned, node), node)
    return _or_empty(remove_items(merged, node, (merged_set - pruned_set) & last_set))


def _or_empty(value: Any) -> dict[str, Any]:
    return {} if value is MISSING else value


def conflict_message(conflicts: tuple[FieldConflict, ...]) -> str:
    """apiserver's message for apply conflicts (internal.NewConflictError)."""
    if len(conflicts) == 1:
        return f"Apply failed with 1 conflict: conflict with {conflicts[0].manager}: {conflicts[0].field}"
    lines: list[str] = []
    by_manager: dict[str, list[str]] = {}
    for c in conflicts:
        by_manager.setdefault(c.manager, []).append(c.field)
    for manager_text, fields in by_manager.items():
        lines.append(f"conflicts with {manager_text}:")
        lines.extend(f"- {f}" for f in fields)
    return f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)


def _forgiven_conflicts(live: dict[str, Any] | None, manager: str, node: Node,
                        api_version: str) -> set[str] | None:
    """Fields manager `kubectl` may take over from client-side apply (lastAppliedManager).

    The fields of the last-applied annotation (same API version) whose values
    the live object still has; None when the rule does not apply.
    """
    if live is None or manager != "kubectl":
        return None
    raw = ((live.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED_ANNOTATION)
    if not raw:
        return None
    try:
        last_applied = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(last_applied, dict) or last_applied.get("apiVersion") != api_version:
        return None
    try:
        fields = to_field_set(last_applied, node, strict=True)
    except PatchError:
        return None
    drift = compare(last_applied, without_managed_fields(live), node)
    return set((fields - drift.modified - drift.added - drift.removed).strings())


def _sync_last_applied(result: dict[str, Any], applied: dict[str, Any]) -> None:
    """Keep an existing last-applied annotation equal to what kubectl applied (lastAppliedUpdater)."""
    annotations = (result.get("metadata") or {}).get("annotations")
    if not isinstance(annotations, dict) or LAST_APPLIED_ANNOTATION not in annotations:
        return
    config = copy.deepcopy(applied)
    config_annotations = (config.get("metadata") or {}).get("annotations")
    if isinstance(config_annotations, dict):
        config_annotations.pop(LAST_APPLIED_ANNOTATION, None)
        if not config_annotations:
            del config["metadata"]["annotations"]
    # as Go's json.Encoder writes it: compact, sorted keys, trailing newline
    annotations[LAST_APPLIED_ANNOTATION] = json.dumps(config, separators=(",", ":"), sort_keys=True) + "\n"


def _drop_nulls(value: Any) -> Any:
    """An applied `null` leaves the field unset, as the typed round trip in Kubernetes does."""
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _gvk(obj: dict[str, Any]) -> str:
    """A kind as Go prints schema.GroupVersionKind: `group/version, Kind=Kind`."""
    api_version = str(obj.get("apiVersion") or "")
    group, _, version = api_version.rpartition("/")
    return f"{group}/{version}, Kind={obj.get('kind') or ''}"
