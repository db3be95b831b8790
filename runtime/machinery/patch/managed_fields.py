"""Field ownership (`metadata.managedFields`) for non-apply writes, and its encoding.

`update_managed_fields(old, new, manager=...)` is what apiserver's fieldmanager
does on create, update and non-apply patch: the fields this write adds or
changes become owned by `manager` (an `Update` entry for the write's API
version), leave every other manager's entry, and fields the write removes
leave all entries. Entries left empty are dropped. Layers reproduced from
`k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager` (internal/):

- the managed fields sent with the write are used when they decode and are
  not empty, else the stored ones; `managedFields: []` or `[{}]` resets them;
  a subresource write (`status`) always keeps the stored ones;
- an existing object with no managed fields stays untracked (so a reset
  sticks); a create is always tracked;
- `apiVersion`, `kind`, `metadata.name/namespace/uid/resourceVersion/
  generation/creationTimestamp/selfLink/managedFields` are never owned;
- the entry's `time` moves only when the write changed something it owns.

Entries are identified as Kubernetes does: manager name, operation, the API
version for `Update` entries, and subresource. Encoded entries are sorted
(Apply before Update, then by time, manager, API version).

Caveats: no cap on the number of Update managers (Kubernetes folds the oldest
beyond 10 into `ancient-changes`); no reset fields (status vs spec).

Internal to `runtime.machinery.patch`: imported by its modules only.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from runtime.machinery.patch.created import created_fields_v1
from runtime.machinery.patch.errors import CorruptManagedFields, PatchError
from runtime.machinery.patch.fieldpath import FieldSet, PathElement
from runtime.machinery.patch.schema import Node, merge_node
from runtime.machinery.patch.walks import compare, to_field_set
from runtime.machinery.validation.gofmt import go_quote

__all__ = [
    "ManagerKey", "Ownership", "Managed", "STRIPPED_FIELDS", "fields_of", "decode_managed_fields",
    "encode_managed_fields", "update_managed_fields", "manager_from_user_agent", "strip_meta",
    "without_managed_fields", "record_update", "reconcile", "set_managed_fields",
]

_F = PathElement.field

STRIPPED_FIELDS = FieldSet.of([
    (_F("apiVersion"),), (_F("kind"),), (_F("metadata"),),
    (_F("metadata"), _F("name")), (_F("metadata"), _F("namespace")),
    (_F("metadata"), _F("creationTimestamp")), (_F("metadata"), _F("selfLink")),
    (_F("metadata"), _F("uid")), (_F("metadata"), _F("clusterName")),
    (_F("metadata"), _F("generation")), (_F("metadata"), _F("managedFields")),
    (_F("metadata"), _F("resourceVersion")),
])
"""Paths no manager owns (apiserver's stripMetaManager)."""


@dataclass(frozen=True)
class ManagerKey:
    """Who owns an entry: manager, operation, API version (Update only), subresource."""

    manager: str
    operation: str
    api_version: str = ""
    subresource: str = ""

    def identifier(self) -> str:
        """The JSON identifier apiserver keys managers by (and sorts conflicts by)."""
        entry: dict[str, str] = {"manager": self.manager, "operation": self.operation}
        if self.api_version:
            entry["apiVersion"] = self.api_version
        if self.subresource:
            entry["subresource"] = self.subresource
        return json.dumps(entry, separators=(",", ":"))

    def printed(self) -> str:
        """The manager as conflict messages print it: `"kubectl" ` or `"x" using v1`."""
        text = json.dumps(self.manager)
        if self.subresource:
            text += f" with subresource {go_quote(self.subresource)}"
        if self.operation == "Update":
            text += f" using {self.api_version}"
        return text


@dataclass(frozen=True)
class Ownership:
    """The fields one manager owns, at which API version, last changed when."""

    fields: FieldSet
    api_version: str
    time: str | None = None


Managed = dict[ManagerKey, Ownership]


def manager_from_user_agent(user_agent: str) -> str:
    """The default field manager for a request: the User-Agent up to its first `/`.

    `kubectl/v1.32.0 (linux/amd64) kubernetes/abc` gives `kubectl`.
    """
    return user_agent.split("/", 1)[0]


def fields_of(obj: dict[str, Any], model: type) -> FieldSet:
    """The fields `obj` (an object or apply configuration) sets, minus the never-owned ones."""
    return strip_meta(to_field_set(_without_managed_fields_view(obj), merge_node(model)))


def strip_meta(fields: FieldSet) -> FieldSet:
    """`fields` without apiVersion, kind, metadata and its server-set fields (exact paths only)."""
    return fields - STRIPPED_FIELDS


def without_managed_fields(obj: dict[str, Any] | None) -> dict[str, Any]:
    """A deep copy of `obj` ({} for None) without `metadata.managedFields`."""
    out = copy.deepcopy(obj) if obj else {}
    meta = out.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    return out


def _without_managed_fields_view(obj: dict[str, Any] | None) -> dict[str, Any]:
    """`obj` ({} for None) without `metadata.managedFields`: a new top level and metadata, everything below
    shared with `obj` (for reading, or for replacing `metadata` entries only)."""
    if not obj:
        return {}
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return dict(obj)
    return dict(obj, metadata={k: v for k, v in meta.items() if k != "managedFields"})


def decode_managed_fields(entries: Any) -> Managed:
    """Decode `metadata.managedFields`. Raises CorruptManagedFields with apiserver's words when invalid."""
    managed: Managed = {}
    if entries is None:
        return managed
    if not isinstance(entries, list):
        raise CorruptManagedFields("managedFields must be a list")
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise CorruptManagedFields(f"managed fields entry {i} must be an object")
        operation = entry.get("operation")
        if operation not in ("Apply", "Update"):
            raise CorruptManagedFields("operation must be `Apply` or `Update`")
        api_version = entry.get("apiVersion") or ""
        if not api_version:
            raise CorruptManagedFields("apiVersion must not be empty")
        fields_type = entry.get("fieldsType") or ""
        if fields_type != "FieldsV1":
            raise CorruptManagedFields(f"invalid fieldsType {go_quote(fields_type)} in managed fields entry {i}"
                             if fields_type else f"missing fieldsType in managed fields entry {i}")
        key = ManagerKey(str(entry.get("manager") or ""), operation,
                         api_version if operation == "Update" else "", str(entry.get("subresource") or ""))
        managed[key] = Ownership(FieldSet.from_fields_v1(entry.get("fieldsV1")), api_version, entry.get("time"))
    return managed


def encode_managed_fields(managed: Managed) -> list[dict[str, Any]]:
    """Managed fields as `metadata.managedFields` entries, in apiserver's order."""
    entries = []
    for key, owned in managed.items():
        entry: dict[str, Any] = {"manager": key.manager, "operation": key.operation,
                                 "apiVersion": owned.api_version}
        if owned.time:
            entry["time"] = owned.time
        entry["fieldsType"] = "FieldsV1"
        entry["fieldsV1"] = owned.fields.to_fields_v1()
        if key.subresource:
            entry["subresource"] = key.subresource
        entries.append(entry)
    entries.sort(key=lambda e: (e["operation"], e.get("time") or "", e["manager"], e["apiVersion"],
                                e.get("subresource", "")))
    return entries


def set_managed_fields(obj: dict[str, Any], managed: Managed) -> dict[str, Any]:
    """`obj` (modified in place and returned) with `managed` encoded, or without the key if empty."""
    meta = obj.setdefault("metadata", {})
    if managed:
        meta["managedFields"] = encode_managed_fields(managed)
    else:
        meta.pop("managedFields", None)
    return obj


def reconcile(old: Any, new: Any, node: Node, managed: Managed, writer: ManagerKey | None,
              *, force: bool) -> tuple[Managed, dict[ManagerKey, FieldSet], Any]:
    """structured-merge-diff's Updater.update: take changed fields from every other manager.

    Returns the new managers, the conflicts (fields others own that the write
    adds or changes, per manager) and the comparison. With `force` false and
    conflicts, `managed` is returned unchanged for the caller to report them.
    """
    comparison = compare(old, new, node)
    changed = comparison.added | comparison.modified
    conflicts: dict[ManagerKey, FieldSet] = {}
    for key, owned in managed.items():
        if key != writer and owned.fields & changed:
            conflicts[key] = owned.fields & changed
    if conflicts and not force:
        return managed, conflicts, comparison
    out: Managed = {}
    for key, owned in managed.items():
        fields = owned.fields
        if key != writer:
            fields = fields - changed - comparison.removed
        if fields:
            out[key] = Ownership(fields, owned.api_version, owned.time)
    return out, conflicts, comparison


def record_update(old: dict[str, Any], new: dict[str, Any], node: Node, managed: Managed,
                  key: ManagerKey, api_version: str, now: str) -> Managed:
    """Ownership after an Update by `key` (managedFieldsUpdater + stripMeta + Updater.Update)."""
    managed, _, comparison = reconcile(old, new, node, managed, None, force=True)
    own = strip_meta((comparison.added | comparison.modified) - comparison.removed)
    if own:
        previous = managed.get(key)
        if previous is not None:
            own = own | previous.fields
        managed = {**managed, key: Ownership(own, api_version, now)}
    return managed


def update_managed_fields(old: dict[str, Any] | None, new: dict[str, Any], *, manager: str,
                          operation: str = "Update", model: type, api_version: str, now: str,
                          subresource: str = "") -> dict[str, Any]:
    """Return `new` with a new `metadata` whose `managedFields` records this write by `manager`.

    The top level and `metadata` are new dicts; everything below them is
    `new`'s own (not copied: this runs on every write).

    `old` is the stored object (None on create), `new` the object about to be
    stored, `api_version` the version it was written at, `now` an RFC 3339
    time, `subresource` the subresource written (e.g. `status`, recorded in
    the entry). Fields this write adds or changes become `manager`'s; see the
    module doc for the rules. Never raises for bad managed fields: as
    apiserver does, it falls back to the stored ones, and leaves the object
    as sent if those do not decode either.
    """
    stored = ((old or {}).get("metadata") or {}).get("managedFields")
    sent = (new.get("metadata") or {}).get("managedFields")
    try:
        if subresource:  # a subresource write cannot set managed fields
            managed = decode_managed_fields(stored)
        elif _is_reset(sent):
            managed = {}
        else:
            managed = _decode_or_empty(sent) or decode_managed_fields(stored)
    except PatchError:
        return dict(new, metadata=dict(new.get("metadata") or {}))
    result = _without_managed_fields_view(new)
    if not managed and old is not None:
        return result  # an existing object without managed fields stays untracked
    node = merge_node(model)
    if old is None and not managed and not subresource and operation == "Update":
        return _record_create(result, node, manager, api_version, now)
    key = ManagerKey(manager, operation, api_version if operation == "Update" else "", subresource)
    managed = record_update(_without_managed_fields_view(old), result, node, managed, key, api_version, now)
    return set_managed_fields(result, managed)


def _record_create(obj: dict[str, Any], node: Node, manager: str, api_version: str, now: str) -> dict[str, Any]:
    """`obj` with the one entry a create records (what `record_update` gives from nothing, without its paths)."""
    fields = created_fields_v1(obj, node)
    if not fields:
        return set_managed_fields(obj, {})
    entry: dict[str, Any] = {"manager": manager, "operation": "Update", "apiVersion": api_version}
    if now:
        entry["time"] = now
    entry["fieldsType"] = "FieldsV1"
    entry["fieldsV1"] = fields
    obj.setdefault("metadata", {})["managedFields"] = [entry]
    return obj


def _decode_or_empty(entries: Any) -> Managed:
    try:
        return decode_managed_fields(entries)
    except PatchError:
        return {}


def _is_reset(entries: Any) -> bool:
    """`managedFields: []` or `[{}]` asks to clear ownership (apiserver isResetManagedFields)."""
    return isinstance(entries, list) and (len(entries) == 0 or (len(entries) == 1 and entries[0] == {}))
