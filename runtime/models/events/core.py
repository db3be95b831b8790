"""core/v1 Event and the references it shares with events.k8s.io/v1 (Kubernetes' `k8s.io/api/core/v1`).

An Event reports something that happened to one object (`involvedObject`):
why (`reason`, machine-readable), what (`message`, for people), who said so
(`source`, `reportingComponent`), how often (`count` between
`firstTimestamp` and `lastTimestamp`, or a `series`). Descriptions are
Kubernetes' own, shortened.
"""

from __future__ import annotations

from typing import Optional

from pydantic import ConfigDict, Field

from runtime.models.base import K8sModel, int_field
from runtime.models.meta import ListMeta, ObjectMeta

__all__ = ["ObjectReference", "EventSource", "EventSeries", "Event", "EventList", "EVENT_TYPES"]

#: The two event types (corev1.EventTypeNormal, EventTypeWarning): the only `type` values a server accepts.
EVENT_TYPES = ("Normal", "Warning")


class ObjectReference(K8sModel):
    """ObjectReference contains enough information to let you inspect or modify the referred object."""

    # Atomic as in Kubernetes (+structType=atomic): owned and replaced as one field by apply.
    model_config = ConfigDict(json_schema_extra={"x-kubernetes-map-type": "atomic"})

    kind: Optional[str] = Field(None, description="Kind of the referent.")
    namespace: Optional[str] = Field(None, description="Namespace of the referent.")
    name: Optional[str] = Field(None, description="Name of the referent.")
    uid: Optional[str] = Field(None, description="UID of the referent.")
    api_version: Optional[str] = Field(None, description="API version of the referent.")
    resource_version: Optional[str] = Field(
        None, description="Specific resourceVersion to which this reference is made, if any.")
    field_path: Optional[str] = Field(
        None, description="If referring to a piece of an object instead of an entire object, this string should "
                          "contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2].")


class EventSource(K8sModel):
    """EventSource contains information for an event."""

    component: Optional[str] = Field(None, description="Component from which the event is generated.")
    host: Optional[str] = Field(None, description="Node name on which the event is generated.")


class EventSeries(K8sModel):
    """EventSeries contain information on series of events, i.e. thing that was/is happening continuously for
    some time."""

    count: Optional[int] = int_field(
        bits=32, description="Number of occurrences in this series up to the last heartbeat time")
    last_observed_time: Optional[str] = Field(None, description="Time of the last occurrence observed (MicroTime)")


class Event(K8sModel):
    """Event is a report of an event somewhere in the cluster.  Events have a limited retention time and triggers
    and messages may evolve with time.  Event consumers should not rely on the timing of an event with a given
    Reason reflecting a consistent underlying trigger, or the continued existence of events with that Reason.
    Events should be treated as informative, best-effort, supplemental data."""

    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ObjectMeta] = None
    involved_object: Optional[ObjectReference] = Field(None, description="The object that this event is about.")
    reason: Optional[str] = Field(
        None, description="This should be a short, machine understandable string that gives the reason for the "
                          "transition into the object's current status.")
    message: Optional[str] = Field(
        None, description="A human-readable description of the status of this operation.")
    source: Optional[EventSource] = Field(
        None, description="The component reporting this event. Should be a short machine understandable string.")
    first_timestamp: Optional[str] = Field(
        None, description="The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)")
    last_timestamp: Optional[str] = Field(
        None, description="The time at which the most recent occurrence of this event was recorded.")
    count: Optional[int] = int_field(
        bits=32, description="The number of times this event has occurred.")
    type: Optional[str] = Field(
        None, description="Type of this event (Normal, Warning), new types could be added in the future")
    event_time: Optional[str] = Field(None, description="Time when this Event was first observed (MicroTime).")
    series: Optional[EventSeries] = Field(
        None, description="Data about the Event series this event represents or nil if it's a singleton Event.")
    action: Optional[str] = Field(
        None, description="What action was taken/failed regarding to the Regarding object.")
    related: Optional[ObjectReference] = Field(
        None, description="Optional secondary object for more complex actions.")
    reporting_component: Optional[str] = Field(
        None, description="Name of the controller that emitted this Event, e.g. `kubernetes.io/kubelet`.")
    reporting_instance: Optional[str] = Field(
        None, description="ID of the controller instance, e.g. `kubelet-xyzf`.")


class EventList(K8sModel):
    """EventList is a list of events."""

    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ListMeta] = None
    items: Optional[list[Event]] = Field(None, description="List of events")
