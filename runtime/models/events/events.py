"""events.k8s.io/v1 Event (Kubernetes' `k8s.io/api/events/v1`): the newer shape of the same report.

It renames core/v1's fields (`involvedObject` is `regarding`, `message` is
`note`, `reportingComponent` is `reportingController`), counts repeats in a
`series`, and keeps core/v1's `source`, `firstTimestamp`, `lastTimestamp`
and `count` as `deprecated*` fields. Descriptions are Kubernetes' own.
"""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from runtime.models.base import K8sModel, int_field
from runtime.models.events.core import EventSource, ObjectReference
from runtime.models.meta import ListMeta, ObjectMeta

__all__ = ["EventSeries", "Event", "EventList"]


class EventSeries(K8sModel):
    """EventSeries contain information on series of events, i.e. thing that was/is happening continuously for
    some time. How often to update the EventSeries is up to the event reporters."""

    count: Optional[int] = int_field(
        bits=32, description="count is the number of occurrences in this series up to the last heartbeat time.")
    last_observed_time: Optional[str] = Field(
        None, description="lastObservedTime is the time when last Event from the series was seen before last "
                          "heartbeat.")


class Event(K8sModel):
    """Event is a report of an event somewhere in the cluster. It generally denotes some state change in the
    system. Events have a limited retention time and triggers and messages may evolve with time.  Event consumers
    should not rely on the timing of an event with a given Reason reflecting a consistent underlying trigger, or
    the continued existence of events with that Reason.  Events should be treated as informative, best-effort,
    supplemental data."""

    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ObjectMeta] = None
    event_time: Optional[str] = Field(
        None, description="eventTime is the time when this Event was first observed. It is required.")
    series: Optional[EventSeries] = Field(
        None, description="series is data about the Event series this event represents or nil if it's a "
                          "singleton Event.")
    reporting_controller: Optional[str] = Field(
        None, description="reportingController is the name of the controller that emitted this Event, e.g. "
                          "`kubernetes.io/kubelet`. This field cannot be empty for new Events.")
    reporting_instance: Optional[str] = Field(
        None, description="reportingInstance is the ID of the controller instance, e.g. `kubelet-xyzf`. This field "
                          "cannot be empty for new Events and it can have at most 128 characters.")
    action: Optional[str] = Field(
        None, description="action is what action was taken/failed regarding to the regarding object. It is "
                          "machine-readable. This field cannot be empty for new Events and it can have at most "
                          "128 characters.")
    reason: Optional[str] = Field(
        None, description="reason is why the action was taken. It is human-readable. This field cannot be empty "
                          "for new Events and it can have at most 128 characters.")
    regarding: Optional[ObjectReference] = Field(
        None, description="regarding contains the object this Event is about.")
    related: Optional[ObjectReference] = Field(
        None, description="related is the optional secondary object for more complex actions.")
    note: Optional[str] = Field(
        None, description="note is a human-readable description of the status of this operation. Maximal length "
                          "of the note is 1kB, but libraries should be prepared to handle values up to 64kB.")
    type: Optional[str] = Field(
        None, description="type is the type of this event (Normal, Warning), new types could be added in the "
                          "future. It is machine-readable. This field cannot be empty for new Events.")
    deprecated_source: Optional[EventSource] = Field(
        None, description="deprecatedSource is the deprecated field assuring backward compatibility with core.v1 "
                          "Event type.")
    deprecated_first_timestamp: Optional[str] = Field(
        None, description="deprecatedFirstTimestamp is the deprecated field assuring backward compatibility with "
                          "core.v1 Event type.")
    deprecated_last_timestamp: Optional[str] = Field(
        None, description="deprecatedLastTimestamp is the deprecated field assuring backward compatibility with "
                          "core.v1 Event type.")
    deprecated_count: Optional[int] = int_field(
        bits=32, description="deprecatedCount is the deprecated field assuring backward compatibility with core.v1 "
                             "Event type.")


class EventList(K8sModel):
    """EventList is a list of Event objects."""

    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ListMeta] = None
    items: Optional[list[Event]] = Field(None, description="items is a list of schema objects.")
