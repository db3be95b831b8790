"""Events in Kubernetes' canonical JSON form, as the tests of the event kinds, codecs and recorder use them.

Contract: plain dicts, never modified by the tests that use them (copy
first). `CORE_EVENT` is what client-go's recorder writes (core/v1, Time
in whole seconds); `EVENTS_V1_EVENT` what client-go's events API writes
(events.k8s.io/v1, MicroTime, a series). `core_event(...)` builds a valid
core/v1 event about a Role.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CORE_EVENT", "EVENTS_V1_EVENT", "core_event", "events_v1_event"]

CORE_EVENT: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Event",
    "metadata": {"name": "reader.17a0b1c2d3e4f5a6", "namespace": "ci", "uid": "uid-ev", "resourceVersion": "77",
                 "creationTimestamp": "2024-01-02T03:04:05Z"},
    "involvedObject": {"kind": "Role", "namespace": "ci", "name": "reader", "uid": "uid-reader",
                       "apiVersion": "rbac.authorization.k8s.io/v1", "resourceVersion": "41"},
    "reason": "Synced", "message": "rules aggregated", "source": {"component": "role-controller", "host": "node-1"},
    "firstTimestamp": "2024-01-02T03:04:05Z", "lastTimestamp": "2024-01-02T03:09:05Z", "count": 3,
    "type": "Normal", "related": {"kind": "ClusterRole", "name": "view"},
    "reportingComponent": "role-controller", "reportingInstance": "",
}

EVENTS_V1_EVENT: dict[str, Any] = {
    "apiVersion": "events.k8s.io/v1", "kind": "Event",
    "metadata": {"name": "reader.17a0b1c2d3e4f5a7", "namespace": "ci", "uid": "uid-ev2", "resourceVersion": "78"},
    "eventTime": "2024-01-02T03:04:05.123456Z",
    "series": {"count": 2, "lastObservedTime": "2024-01-02T03:05:05.000001Z"},
    "reportingController": "example.com/role-controller", "reportingInstance": "role-controller-0",
    "action": "Sync", "reason": "Synced", "regarding": {"kind": "Role", "namespace": "ci", "name": "reader"},
    "note": "rules aggregated", "type": "Warning", "deprecatedSource": {},
}


def core_event(name: str = "reader.1", namespace: str = "ci", *, involved: str = "reader",
               involved_namespace: str | None = None, **fields: Any) -> dict[str, Any]:
    """A valid core/v1 event about Role `involved` (in `involved_namespace`, default the event's); `fields` override."""
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": namespace},
            "involvedObject": {"kind": "Role", "apiVersion": "rbac.authorization.k8s.io/v1", "name": involved,
                               "namespace": namespace if involved_namespace is None else involved_namespace},
            "reason": "Synced", "message": "rules aggregated", "type": "Normal",
            "source": {"component": "role-controller"}, "count": 1, **fields}


def events_v1_event(name: str = "reader.2", namespace: str = "ci", **fields: Any) -> dict[str, Any]:
    """A valid events.k8s.io/v1 event about Role `reader` (any group's apiVersion set by the caller); `fields` override."""
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": name, "namespace": namespace},
            "eventTime": "2024-01-02T03:04:05.000000Z", "reportingController": "example.com/role-controller",
            "reportingInstance": "role-controller-0", "action": "Sync", "reason": "Synced", "type": "Normal",
            "regarding": {"kind": "Role", "namespace": namespace, "name": "reader"}, "note": "rules aggregated",
            **fields}
