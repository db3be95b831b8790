"""core/v1 `Event` and events.k8s.io/v1 `Event` (Kubernetes' `pkg/registry/core/event`, `pkg/apis/core/validation/events.go`).

Both are namespaced, every stored verb, short name `ev`; names may be any
path segment (core/v1, as Kubernetes' common ObjectMeta check) or must be a
DNS subdomain (events.k8s.io/v1). They are stored apart: an event written
through one group is not seen through the other (Kubernetes keeps one store
and converts; see Caveats).

- Validation (`ValidateEventCreate`/`ValidateEventUpdate`), on the core/v1
  shape (events.k8s.io/v1 objects are checked as Kubernetes checks them:
  converted, so error paths use core/v1 names, `involvedObject`,
  `message`, `reportingController`):

  - every event (`legacyValidateEvent`): without `eventTime`, the event's
    namespace must be the involved object's (or `default`/empty when that has
    none); with `eventTime`, an involved object without namespace needs the
    event in `default` or `kube-system`, and `reportingController` (a
    qualified name), `reportingInstance`, `action` and `reason` are required,
    the last three at most 128 characters, `message` at most 1024; the
    namespace must be a DNS subdomain;
  - events.k8s.io/v1 also (strict): `eventTime` required, `type` Normal or
    Warning, a `series` with `count` >= 2 and `lastObservedTime`, and the
    deprecated fields (`deprecatedSource`, `deprecatedFirstTimestamp`,
    `deprecatedLastTimestamp`, `deprecatedCount`) unset; on update the
    content (everything but metadata and series) is immutable.
- Field selectors (`EventToSelectableFields`): core/v1 `involvedObject.kind`,
  `.namespace`, `.name`, `.uid`, `.apiVersion`, `.resourceVersion`,
  `.fieldPath`, `reason`, `reportingComponent`, `source` (the source
  component, else the reporting controller), `type`, `metadata.name`,
  `metadata.namespace`; events.k8s.io/v1 the same with `regarding.*` and
  `reportingController` (Kubernetes' field label conversion).
- Table (`printEvent`): Last Seen, Type, Reason, Object (`kind/name`,
  lower-case kind), Message; with `-o wide` also Subobject, Source, First
  Seen, Count, Name. Times as kubectl's short durations.
- Spec changes do not count generations.

Caveats:
    The two groups do not share objects. The time to live (`--event-ttl`,
    one hour) is the `controllers.eventttl` controller's, not the store's.
"""

from __future__ import annotations

from typing import Any, Callable

from runtime.models.catalog import CORE_EVENT, EVENTS_EVENT
from runtime.models.events.core import EVENT_TYPES
from runtime.server.kinds.base import Strategy
from runtime.server.kinds.parts import FIELD_LABEL_NOT_SUPPORTED
from runtime.server.kinds.columns import NAME_COLUMN, Columns, age, column
from runtime.machinery.validation import FieldError, validate_object_meta
from runtime.machinery.validation.fielderrors import invalid, required
from runtime.machinery.validation.names import (
    DNS1123_SUBDOMAIN_MSG, is_dns1123_subdomain, qualified_name_errors, validate_object_meta_update,
)

__all__ = ["EVENT_KINDS", "CoreEventStrategy", "EventsV1EventStrategy", "as_core_event"]

#: Both event kinds (what the event TTL controller expires).
EVENT_KINDS = (CORE_EVENT, EVENTS_EVENT)

# pkg/apis/core/validation/events.go
_REPORTING_INSTANCE_LIMIT = 128
_ACTION_LIMIT = 128
_REASON_LIMIT = 128
_NOTE_LIMIT = 1024
_NO_INVOLVED_NAMESPACE = ("default", "kube-system")  # NamespaceDefault, NamespaceSystem


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))  # Go's len(s)


def as_core_event(event: dict[str, Any]) -> dict[str, Any]:
    """The core/v1 shape of an events.k8s.io/v1 event (Kubernetes' `Convert_v1_Event_To_core_Event`)."""
    return {
        "metadata": event.get("metadata") or {}, "involvedObject": event.get("regarding") or {},
        "reason": event.get("reason"), "message": event.get("note"), "source": event.get("deprecatedSource") or {},
        "firstTimestamp": event.get("deprecatedFirstTimestamp"),
        "lastTimestamp": event.get("deprecatedLastTimestamp"), "count": event.get("deprecatedCount"),
        "type": event.get("type"), "eventTime": event.get("eventTime"), "series": event.get("series"),
        "action": event.get("action"), "related": event.get("related"),
        "reportingComponent": event.get("reportingController"), "reportingInstance": event.get("reportingInstance"),
    }


# ---- validation (on the core/v1 shape) -----------------------------------------------------------

def _legacy_errors(event: dict[str, Any]) -> list[FieldError]:
    """`legacyValidateEvent`: what every event must satisfy, whichever group wrote it."""
    errs: list[FieldError] = []
    namespace = (event.get("metadata") or {}).get("namespace") or ""
    involved = (event.get("involvedObject") or {}).get("namespace") or ""
    if not event.get("eventTime"):
        if (not involved and namespace not in ("", "default")) or (involved and namespace != involved):
            errs.append(invalid("involvedObject.namespace", involved, "does not match event.namespace"))
    else:
        if not involved and namespace not in _NO_INVOLVED_NAMESPACE:
            errs.append(invalid("involvedObject.namespace", involved, "does not match event.namespace"))
        controller = event.get("reportingComponent") or ""
        if not controller:
            errs.append(required("reportingController"))
        errs.extend(invalid("reportingController", controller, p) for p in qualified_name_errors(controller))
        for path, limit in (("reportingInstance", _REPORTING_INSTANCE_LIMIT), ("action", _ACTION_LIMIT),
                            ("reason", _REASON_LIMIT)):
            value = event.get(path) or ""
            if not value:
                errs.append(required(path))
            if _size(value) > limit:
                errs.append(invalid(path, "", f"can have at most {limit} characters"))
        if _size(event.get("message") or "") > _NOTE_LIMIT:
            errs.append(invalid("message", "", f"can have at most {_NOTE_LIMIT} characters"))
    if not is_dns1123_subdomain(namespace):
        if len(namespace) > 253:
            errs.append(invalid("namespace", namespace, "must be no more than 253 characters"))
        errs.append(invalid("namespace", namespace, DNS1123_SUBDOMAIN_MSG))
    return errs


def _series_errors(event: dict[str, Any]) -> list[FieldError]:
    series = event.get("series")
    if series is None:
        return []
    errs: list[FieldError] = []
    if (series.get("count") or 0) < 2:
        errs.append(invalid("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        errs.append(required("series.lastObservedTime"))
    return errs


def _strict_errors(event: dict[str, Any]) -> list[FieldError]:
    """What `ValidateEventCreate` adds for events.k8s.io/v1 after ObjectMeta and the series."""
    errs: list[FieldError] = []
    if not event.get("eventTime"):
        errs.append(required("eventTime"))
    if event.get("type") not in EVENT_TYPES:
        errs.append(invalid("type", "", f"has invalid value: {event.get('type') or ''}"))
    for path in ("firstTimestamp", "lastTimestamp"):
        if event.get(path):
            errs.append(invalid(path, "", "needs to be unset"))
    if event.get("count"):
        errs.append(invalid("count", "", "needs to be unset"))
    source = event.get("source") or {}
    if source.get("component") or source.get("host"):
        errs.append(invalid("source", "", "needs to be unset"))
    return errs


#: The fields `ValidateEventUpdate` keeps immutable (events.k8s.io/v1), in its order.
_IMMUTABLE = ("involvedObject", "reason", "message", "source", "firstTimestamp", "lastTimestamp", "count", "type",
              "eventTime", "action", "related", "reportingComponent", "reportingInstance")
_INTERNAL_PATHS = {"reportingComponent": "reportingController"}


def _semantic(value: Any) -> Any:
    """Go's zero values are absent: "" and 0 equal a missing field, an empty struct a missing one."""
    if isinstance(value, dict):
        kept = {k: _semantic(v) for k, v in value.items()}
        kept = {k: v for k, v in kept.items() if v is not None}
        return kept or None
    return None if value in ("", 0, None, []) and value is not False else value


# ---- fields and columns --------------------------------------------------------------------------

_OBJECT_REFERENCE = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")


def _selectable(event: dict[str, Any], prefix: str, controller_label: str) -> dict[str, str]:
    """`EventToSelectableFields` of a core/v1-shaped event, the involved object under `prefix`."""
    meta, involved = event.get("metadata") or {}, event.get("involvedObject") or {}
    controller = event.get("reportingComponent") or ""
    fields = {f"{prefix}.{key}": involved.get(key) or "" for key in _OBJECT_REFERENCE}
    fields.update({
        "reason": event.get("reason") or "", controller_label: controller,
        "source": (event.get("source") or {}).get("component") or controller, "type": event.get("type") or "",
        "metadata.name": meta.get("name") or "", "metadata.namespace": meta.get("namespace") or "",
    })
    return fields


def _labels(prefix: str, controller_label: str) -> tuple[str, ...]:
    return ("metadata.name", "metadata.namespace", *(f"{prefix}.{key}" for key in _OBJECT_REFERENCE), "reason",
            controller_label, "source", "type")


def _since(timestamp: str | None) -> str:
    """kubectl's short duration since a Time or MicroTime (`<unknown>` without one)."""
    if timestamp and len(timestamp) > 20 and timestamp[19] in ".,":
        timestamp = timestamp[:19] + "Z"  # a MicroTime: whole seconds are enough for a duration
    return age(timestamp)


def _source(event: dict[str, Any]) -> str:
    """`formatEventSource`: the component (else the reporting controller), `, host` when there is one."""
    source = event.get("source") or {}
    component = source.get("component") or event.get("reportingComponent") or ""
    host = source.get("host") or event.get("reportingInstance") or ""
    return f"{component}, {host}" if host else component


def _cells(event: dict[str, Any]) -> list[Any]:
    """`printEvent` with Wide (the server sends every column; kubectl hides the priority ones)."""
    first = _since(event.get("firstTimestamp")) if event.get("firstTimestamp") else _since(event.get("eventTime"))
    last = _since(event.get("lastTimestamp")) if event.get("lastTimestamp") else first
    count = event.get("count") or 0
    series = event.get("series")
    if series is not None:
        last, count = _since(series.get("lastObservedTime")), series.get("count") or 0
    elif count == 0:
        count = 1  # singleton events of the new API carry no count
    involved = event.get("involvedObject") or {}
    kind = (involved.get("kind") or "").lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    return [last, event.get("type") or "", event.get("reason") or "", target, involved.get("fieldPath") or "",
            _source(event), (event.get("message") or "").strip(), first, count,
            (event.get("metadata") or {}).get("name", "")]


def _columns(cells: Callable[[dict[str, Any]], list[Any]]) -> Columns:
    return Columns((
        column("Last Seen", "The time at which the most recent occurrence of this event was recorded."),
        column("Type", "Type of this event (Normal, Warning), new types could be added in the future"),
        column("Reason", "This should be a short, machine understandable string that gives the reason for the "
                         "transition into the object's current status."),
        column("Object", "The object that this event is about."),
        column("Subobject", "If referring to a piece of an object instead of an entire object, this string should "
                            "contain a valid JSON/Go field access statement, such as "
                            "desiredState.manifest.containers[2].", priority=1),
        column("Source", "The component reporting this event. Should be a short machine understandable string.",
               priority=1),
        column("Message", "A human-readable description of the status of this operation."),
        column("First Seen", "The time at which the event was first recorded. (Time of server receipt is in "
                             "TypeMeta.)", priority=1),
        column("Count", "The number of times this event has occurred.", priority=1),
        {**NAME_COLUMN, "priority": 1},
    ), cells)


# ---- the strategies ------------------------------------------------------------------------------

class CoreEventStrategy(Strategy):
    """core/v1 Event: see the module doc."""

    field_labels = _labels("involvedObject", "reportingComponent")
    field_label_error = FIELD_LABEL_NOT_SUPPORTED  # AddFieldLabelConversionsForEvent (core/v1)
    columns = _columns(_cells)

    def validate(self, obj: dict[str, Any]) -> list[FieldError]:
        # Kubernetes validates the event first, then ObjectMeta (names: any path segment).
        meta = validate_object_meta(obj.get("metadata") or {}, namespaced=True, name_rule=self.name_rule,
                                    kube_finalizers=self.kube_finalizers)
        return _legacy_errors(obj) + meta

    def selectable_fields(self, obj: dict[str, Any]) -> dict[str, str]:
        return _selectable(obj, "involvedObject", "reportingComponent")


class EventsV1EventStrategy(Strategy):
    """events.k8s.io/v1 Event: see the module doc."""

    name_rule = "dns-subdomain"
    field_labels = _labels("regarding", "reportingController")
    field_label_error = FIELD_LABEL_NOT_SUPPORTED  # events.k8s.io/v1's AddFieldLabelConversionsForEvent
    columns = _columns(lambda obj: _cells(as_core_event(obj)))

    def validate(self, obj: dict[str, Any]) -> list[FieldError]:
        event = as_core_event(obj)
        meta = validate_object_meta(event["metadata"], namespaced=True, name_rule=self.name_rule,
                                    kube_finalizers=self.kube_finalizers)
        return _legacy_errors(event) + meta + _series_errors(event) + _strict_errors(event)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        event, before = as_core_event(new), as_core_event(old)
        errs = _legacy_errors(event) + validate_object_meta(event["metadata"], namespaced=True,
                                                            name_rule=self.name_rule,
                                                            kube_finalizers=self.kube_finalizers)
        errs += validate_object_meta_update(event["metadata"], before["metadata"])
        if event.get("series") != before.get("series"):
            errs += _series_errors(event)
        for path in _IMMUTABLE:
            if _semantic(event.get(path)) != _semantic(before.get(path)):
                errs.append(invalid(_INTERNAL_PATHS.get(path, path), event.get(path), "field is immutable"))
        return errs

    def selectable_fields(self, obj: dict[str, Any]) -> dict[str, str]:
        return _selectable(as_core_event(obj), "regarding", "reportingController")
