"""Events: core/v1 `Event` (what `kubectl describe` and `kubectl events` read) and events.k8s.io/v1 `Event`.

Contract: two modules, one per API group, so that each model is named in
OpenAPI as Kubernetes names it (`io.k8s.api.core.v1.Event`,
`io.k8s.api.events.v1.Event`): `core` holds core/v1 `Event`, `EventList`
and the shared `ObjectReference`, `EventSource`, `EventSeries`; `events`
holds events.k8s.io/v1 `Event`, `EventList` and `EventSeries`, exported here
as `EventsV1Event`, `EventsV1EventList`, `EventsV1EventSeries` (the names of
the official Python client). Times are strings: `Time` in whole seconds
(`2024-05-01T12:00:00Z`), `MicroTime` with microseconds
(`2024-05-01T12:00:00.123456Z`).
"""

from runtime.models.events.core import Event, EventList, EventSeries, EventSource, ObjectReference
from runtime.models.events.events import (
    Event as EventsV1Event, EventList as EventsV1EventList, EventSeries as EventsV1EventSeries,
)

__all__ = ["ObjectReference", "EventSource", "EventSeries", "Event", "EventList",
           "EventsV1Event", "EventsV1EventList", "EventsV1EventSeries"]
