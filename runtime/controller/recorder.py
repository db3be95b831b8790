"""Recording events: what a controller did, as core/v1 Events that `kubectl describe` and `kubectl events` show.

client-go's `tools/record` in trio form. An `EventBroadcaster` owns one
bounded queue and writes through one client; its `EventRecorder`s (one per
component name) put events on the queue and never block::

    recorder = manager.event_recorder("team-x-rolebindings")
    recorder.event(namespace, "Normal", "Created", "created rolebinding team-x-view")
    recorder.eventf(role, "Warning", "Invalid", "rule %d has no verbs", 3)

An event about `obj` (a dict in Kubernetes' JSON form or a model instance)
is named `<obj name>.<hex nanoseconds>` and lives in the object's namespace
(`default` for cluster-scoped objects). Its `involvedObject` names the
object (kind, apiVersion, name, namespace, uid, resourceVersion); `source`
and `reportingComponent` are the recorder's name (`source.host` and
`reportingInstance` its `host`); `firstTimestamp` and `lastTimestamp` are
the time of the call, `count` 1.

The broadcaster's `run()` (the manager runs it) takes events off the queue
in order, correlates them (`runtime.controller.eventcorrelation`: repeats patch the
first event's `count` and `lastTimestamp`, similar events are combined,
spam per object is dropped) and writes them. A write that cannot reach the
server (transport errors, 429, 5xx, timeouts) is retried, every
`retry_interval` seconds (the first wait randomized), up to `max_tries`
times; one the server refuses (a 4xx Status) is logged and dropped, and a
patch of an event that is gone becomes a create, as in client-go. On stop,
what is still queued is written for at most `flush_timeout` seconds.

Caveats:
    A full queue (`queue_size`, 1000) drops the event with a log line:
    recording never slows a reconcile. Events are best effort: one dropped,
    skipped as spam or refused is not retried. The recorder's clock (wall
    time by default) stamps the events and drives correlation; pass `clock`
    to control it.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass
from typing import Any, Callable

import trio
from pydantic import BaseModel

from runtime.machinery import errors
from runtime.client.interface import STRATEGIC_MERGE_PATCH, Client, ClientError
from runtime.controller.eventcorrelation import Correlation, EventCorrelator, format_time
from runtime.models.events.core import EVENT_TYPES
from runtime.machinery.scheme import ResourceType, Scheme

__all__ = ["EventBroadcaster", "EventRecorder", "EventBroadcasterStatistics", "reference_of", "EVENT_TYPES"]

log = logging.getLogger(__name__)

#: Status errors worth another try: the server is busy, failing or slow, not refusing the event.
_TRANSIENT = (errors.TooManyRequests, errors.InternalError, errors.ServiceUnavailable, errors.Timeout)
_REFERENCE_FIELDS = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion")


@dataclass(frozen=True)
class EventBroadcasterStatistics:
    """Events queued now, and since the start: created, patched, dropped (queue full), skipped (spam), failed."""

    queued: int
    created: int
    patched: int
    dropped: int
    skipped: int
    failed: int


def reference_of(obj: Any, scheme: Scheme | None = None) -> dict[str, str]:
    """The `ObjectReference` of `obj` (a dict or a model instance): kind, namespace, name, uid, apiVersion, resourceVersion.

    A model instance without apiVersion and kind gets those of its kind in
    `scheme`. Empty fields are left out. Raises ValueError when the kind,
    apiVersion or name is unknown, TypeError for anything but a dict or model.
    """
    if isinstance(obj, BaseModel):
        data = obj.model_dump(by_alias=True, exclude_none=True, mode="json")
        rt = scheme.by_model(type(obj)) if scheme is not None else None
        if rt is not None:
            data.setdefault("apiVersion", rt.api_version)
            data.setdefault("kind", rt.kind)
    elif isinstance(obj, dict):
        data = obj
    else:
        raise TypeError(f"expected a dict or a model instance, got {type(obj).__name__}")
    meta = data.get("metadata") or {}
    ref = {"kind": data.get("kind"), "apiVersion": data.get("apiVersion"), **meta}
    if not ref.get("kind") or not ref.get("apiVersion") or not ref.get("name"):
        raise ValueError("an event needs an object with apiVersion, kind and metadata.name")
    return {field: str(ref[field]) for field in _REFERENCE_FIELDS if ref.get(field)}


class EventRecorder:
    """Records events about objects on behalf of one component (client-go's `record.EventRecorder`).

    Made by `EventBroadcaster.recorder(name)` (or `Manager.event_recorder`).
    Calls are sync and never block: the event is queued for the broadcaster.
    """

    def __init__(self, broadcaster: "EventBroadcaster", name: str, host: str = "") -> None:
        self.broadcaster = broadcaster
        self.name = name
        self.host = host

    def event(self, obj: Any, type: str, reason: str, message: str) -> None:
        """Record an event of `type` (Normal or Warning) about `obj`, with a `reason` and a `message`.

        Raises ValueError for another type or an object without kind,
        apiVersion or name (a programming error, as client-go logs it). A full
        queue drops the event with a log line.
        """
        if type not in EVENT_TYPES:
            raise ValueError(f"unsupported event type: {type!r} (want one of {', '.join(EVENT_TYPES)})")
        ref = reference_of(obj, self.broadcaster.client.scheme)
        now = self.broadcaster.clock()
        stamp = format_time(now)
        source = {"component": self.name, **({"host": self.host} if self.host else {})}
        self.broadcaster.enqueue({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{ref['name']}.{self.broadcaster.next_suffix(now):x}",
                         "namespace": ref.get("namespace") or "default"},
            "involvedObject": ref, "reason": reason, "message": message, "source": source,
            "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1, "type": type,
            "reportingComponent": self.name, "reportingInstance": self.host,
        })

    def eventf(self, obj: Any, type: str, reason: str, message_format: str, *args: Any) -> None:
        """`event` with the message `message_format % args` (Go's `Eventf`, printf-style)."""
        self.event(obj, type, reason, message_format % args if args else message_format)


class EventBroadcaster:
    """One queue of events and the task that writes them through `client` (see the module doc).

    `recorder(name)` returns that component's recorder (one per name and
    host); `run()` writes until cancelled. Events recorded before `run()`
    starts wait in the queue.
    """

    def __init__(self, client: Client, *, queue_size: int = 1000, clock: Callable[[], float] = time.time,
                 correlator: EventCorrelator | None = None, max_tries: int = 12, retry_interval: float = 10.0,
                 flush_timeout: float = 1.0) -> None:
        self.client = client
        self.clock = clock
        self.correlator = correlator if correlator is not None else EventCorrelator(clock=clock)
        self.max_tries, self.retry_interval, self.flush_timeout = max_tries, retry_interval, flush_timeout
        # Bounded: a full queue drops events rather than holding reconciles or memory.
        self._send, self._receive = trio.open_memory_channel[dict[str, Any]](queue_size)
        self._recorders: dict[tuple[str, str], EventRecorder] = {}
        self._counts = {"created": 0, "patched": 0, "dropped": 0, "skipped": 0, "failed": 0}

    def recorder(self, name: str, *, host: str = "") -> EventRecorder:
        """The recorder of component `name` (on `host`, shown as the event's source host)."""
        return self._recorders.setdefault((name, host), EventRecorder(self, name, host))

    def next_suffix(self, now: float) -> int:
        """A unique, increasing name suffix for an event made at clock reading `now` (the correlator's)."""
        return self.correlator.next_suffix(now)

    def enqueue(self, event: dict[str, Any]) -> bool:
        """Queue a complete core/v1 event for writing; False (and a log line) when the queue is full."""
        try:
            self._send.send_nowait(event)
        except trio.WouldBlock:
            self._counts["dropped"] += 1
            ref = event.get("involvedObject") or {}
            log.warning("event queue full: dropped event %s %s about %s %s/%s: %s", event.get("type"),
                        event.get("reason"), ref.get("kind"), ref.get("namespace", ""), ref.get("name"),
                        event.get("message"))
            return False
        return True

    def statistics(self) -> EventBroadcasterStatistics:
        return EventBroadcasterStatistics(self._send.statistics().current_buffer_used, **self._counts)

    @property
    def _rt(self) -> ResourceType:
        rt = self.client.scheme.by_api_version_kind("v1", "Event")
        if rt is None:
            raise RuntimeError("the client's scheme serves no core/v1 Event")
        return rt

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Write queued events in order until cancelled; started() at once. On cancel, flush (see the module doc)."""
        task_status.started()
        writing: Correlation | None = None
        try:
            while True:
                writing = self.correlator.correlate(await self._receive.receive())
                await self._deliver(writing, self.max_tries)
                writing = None
        finally:
            with trio.move_on_after(self.flush_timeout) as flush:
                flush.shield = True
                if writing is not None:  # cancelled while writing it
                    await self._deliver(writing, 1)
                while True:
                    try:
                        event = self._receive.receive_nowait()
                    except trio.WouldBlock:
                        break
                    await self.record(event, tries=1)

    async def record(self, event: dict[str, Any], *, tries: int | None = None) -> None:
        """Correlate one event and write it (create or patch), retrying what may succeed later (`tries`, default
        `max_tries`); a write the server refuses is logged and counted as failed, never raised."""
        await self._deliver(self.correlator.correlate(event), self.max_tries if tries is None else tries)

    async def _deliver(self, correlation: Correlation, tries: int) -> None:
        if correlation.skip or correlation.event is None:
            self._counts["skipped"] += 1
            return
        for attempt in range(tries):
            try:
                written = await self._write(correlation.event, correlation.patch)
            except errors.StatusError as exc:
                if not isinstance(exc, _TRANSIENT):
                    self._refused(correlation.event, exc)
                    return
                failure: Exception = exc
            except ClientError as exc:
                failure = exc
            else:
                self.correlator.update_state(written)
                return
            if attempt + 1 < tries:
                delay = self.retry_interval * (random.random() if attempt == 0 else 1.0)
                log.error("unable to write event %s (retry in %.1fs): %s", _describe(correlation.event), delay,
                          failure)
                await trio.sleep(delay)
        self._counts["failed"] += 1
        log.error("unable to write event %s after %d tries; dropped", _describe(correlation.event), tries)

    async def _write(self, event: dict[str, Any], patch: dict[str, Any] | None) -> dict[str, Any]:
        meta = event["metadata"]
        if patch is not None:
            try:
                patched = await self.client.patch(self._rt, meta["name"], patch, patch_type=STRATEGIC_MERGE_PATCH,
                                                  namespace=meta["namespace"])
            except errors.NotFound:
                pass  # gone (its time to live ran out): write it anew
            else:
                self._counts["patched"] += 1
                return patched
        fresh = dict(event, metadata={k: v for k, v in meta.items() if k != "resourceVersion"})
        created = await self.client.create(fresh)
        self._counts["created"] += 1
        return created

    def _refused(self, event: dict[str, Any], exc: errors.StatusError) -> None:
        self._counts["failed"] += 1
        # An event in a namespace being deleted, or one already written, is expected now and then.
        expected = isinstance(exc, errors.AlreadyExists) or "being terminated" in str(exc)
        (log.debug if expected else log.error)("server rejected event %s (will not retry): %s",
                                               _describe(event), exc)


def _describe(event: dict[str, Any]) -> str:
    ref = event.get("involvedObject") or {}
    where = f"{ref.get('namespace')}/{ref.get('name')}" if ref.get("namespace") else ref.get("name")
    return f"{(event.get('metadata') or {}).get('name')} ({event.get('type')} {event.get('reason')} {ref.get('kind')} {where})"
