"""Event correlation, as client-go's `tools/record/events_cache.go`: count repeats, combine similar events, drop spam.

`EventCorrelator.correlate(event)` takes a new core/v1 event (a dict, as
`runtime.controller.recorder.EventRecorder` makes it) and says what to write:

1. Aggregation (`EventAggregator`): events alike but for their message
   (same source, involved object, type, reason, reporting controller and
   instance) are counted by distinct message; from the `max_events`-th
   (10) distinct message seen within `max_interval` (600 s) of the previous
   similar one, they become one event whose message is
   `(combined from similar events): <message>`.
2. Observation (`eventLogger`): an event identical to one already written
   (same source, involved object and field path, type, reason, message), last
   seen less than `identical_interval` (600 s) ago, becomes a patch of that
   event (`count`, `lastTimestamp`, `message`) instead of a new one.
3. Spam filter (`EventSourceObjectSpamFilter`): a token bucket per source and
   involved object (burst 25, one token back every 300 s); an event finding
   the bucket empty is skipped.

`update_state(written)` records what the server answered (name,
resourceVersion, count), so the next identical event patches it.

Pure: no I/O; time is `clock()` (seconds, default `time.time`), passed in
so that tests drive it. Each cache keeps the `cache_size` (4096) most
recently used keys.

Caveats:
    client-go patches an identical event however long ago it was seen (its
    cache has no expiry; a patch of an event gone with its TTL falls back to
    a create). Here an identical event last seen more than
    `identical_interval` ago starts a new event, as the 10-minute window of
    Kubernetes' documentation says. As in client-go, an event the spam filter
    skips still counts in the observation cache (the next written repeat
    carries the skipped ones in its count).
"""

from __future__ import annotations

import copy
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Generic, Hashable, TypeVar

__all__ = ["EventCorrelator", "Correlation", "TokenBucket", "COMBINED_PREFIX", "format_time", "unique_suffix"]

#: The message prefix of an event that stands for several similar ones (client-go's `EventAggregatorByReasonMessageFunc`).
COMBINED_PREFIX = "(combined from similar events): "

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def format_time(seconds: float) -> str:
    """A `metav1.Time` (RFC 3339, whole seconds, UTC) of a clock reading."""
    return datetime.fromtimestamp(int(seconds), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def unique_suffix(seconds: float, last: int) -> int:
    """client-go's `%x` of `UnixNano()`, made unique: never `last` or below (two events in one nanosecond)."""
    return max(int(seconds * 1e9), last + 1)


class _LRU(Generic[K, V]):
    """A mapping that keeps its `size` most recently used keys (client-go's `lru.Cache`)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._data: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._data.get(key)
        if value is not None:
            self._data.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self._size:
            self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


class TokenBucket:
    """A passive token bucket (client-go's `NewTokenBucketPassiveRateLimiter`): full at first, `qps` tokens back a second.

    `try_accept(now)` takes a token when there is one and says whether it did.
    """

    def __init__(self, qps: float, burst: int, now: float) -> None:
        self.qps, self.burst = qps, burst
        self._tokens, self._last = float(burst), now

    def try_accept(self, now: float) -> bool:
        self._tokens = min(float(self.burst), self._tokens + max(0.0, now - self._last) * self.qps)
        self._last = max(self._last, now)
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False


@dataclass(frozen=True)
class Correlation:
    """What to do with an event: write `event` (a create, or with `patch` a patch of the event it names), or `skip`."""

    event: dict[str, Any] | None
    patch: dict[str, Any] | None = None
    skip: bool = False


@dataclass
class _Aggregate:
    messages: set[str]
    last: float


@dataclass
class _Observation:
    count: int
    first_timestamp: str
    name: str
    resource_version: str
    seen: float


def _source(event: dict[str, Any]) -> tuple[str, str]:
    source = event.get("source") or {}
    return source.get("component") or "", source.get("host") or ""


def _object(event: dict[str, Any]) -> tuple[str, ...]:
    ref = event.get("involvedObject") or {}
    return tuple(ref.get(k) or "" for k in ("kind", "namespace", "name", "uid", "apiVersion"))


def _event_key(event: dict[str, Any]) -> tuple[str, ...]:
    """client-go's `getEventKey`: what makes two events identical."""
    field_path = (event.get("involvedObject") or {}).get("fieldPath") or ""
    return (*_source(event), *_object(event), field_path, event.get("type") or "", event.get("reason") or "",
            event.get("message") or "")


def _aggregate_key(event: dict[str, Any]) -> tuple[str, ...]:
    """client-go's `EventAggregatorByReasonFunc`: what makes two events similar (the message aside)."""
    return (*_source(event), *_object(event), event.get("type") or "", event.get("reason") or "",
            event.get("reportingComponent") or "", event.get("reportingInstance") or "")


def _spam_key(event: dict[str, Any]) -> tuple[str, ...]:
    """client-go's `getSpamKey`: one bucket per source and involved object."""
    return (*_source(event), *_object(event))


class EventCorrelator:
    """Aggregation, observation and spam filtering of the events of one broadcaster (see the module doc)."""

    def __init__(self, *, clock: Callable[[], float] = time.time, max_events: int = 10, max_interval: float = 600.0,
                 identical_interval: float = 600.0, spam_burst: int = 25, spam_qps: float = 1 / 300,
                 cache_size: int = 4096) -> None:
        self.clock = clock
        self.max_events, self.max_interval, self.identical_interval = max_events, max_interval, identical_interval
        self.spam_burst, self.spam_qps = spam_burst, spam_qps
        self._aggregates: _LRU[tuple[str, ...], _Aggregate] = _LRU(cache_size)
        self._observations: _LRU[tuple[str, ...], _Observation] = _LRU(cache_size)
        self._buckets: _LRU[tuple[str, ...], TokenBucket] = _LRU(cache_size)
        self._last_suffix = 0

    def next_suffix(self, now: float) -> int:
        """A unique, increasing event name suffix for clock reading `now` (nanoseconds), shared by the events a
        recorder makes and the combined ones made here, so that their names never clash."""
        self._last_suffix = unique_suffix(now, self._last_suffix)
        return self._last_suffix

    def correlate(self, event: dict[str, Any]) -> Correlation:
        """What to write for the new `event` (left unchanged): a create, a patch, or nothing (spam)."""
        now = self.clock()
        aggregated, key = self._aggregate(event, now)
        observed, patch = self._observe(aggregated, key, now)
        if not self._accept(observed, now):
            return Correlation(None, skip=True)
        return Correlation(observed, patch)

    def update_state(self, written: dict[str, Any]) -> None:
        """Remember the event the server answered (its name, resourceVersion and count) for the next repeat."""
        meta = written.get("metadata") or {}
        self._observations.put(_event_key(written), _Observation(
            int(written.get("count") or 0), written.get("firstTimestamp") or "", meta.get("name") or "",
            meta.get("resourceVersion") or "", self.clock()))

    def _aggregate(self, event: dict[str, Any], now: float) -> tuple[dict[str, Any], tuple[str, ...]]:
        """client-go's `EventAggregate`: the event, or the combined one, and the key it is observed under."""
        key = _aggregate_key(event)
        record = self._aggregates.get(key)
        if record is None or now - record.last > self.max_interval:
            record = _Aggregate(set(), now)
        record.messages.add(event.get("message") or "")
        record.last = now
        self._aggregates.put(key, record)
        if len(record.messages) < self.max_events:
            return event, _event_key(event)
        record.messages.pop()  # do not grow the set past the threshold
        suffix = self.next_suffix(now)
        involved = event.get("involvedObject") or {}
        stamp = format_time(now)
        combined = {
            "apiVersion": event.get("apiVersion", "v1"), "kind": event.get("kind", "Event"),
            "metadata": {"name": f"{involved.get('name', '')}.{suffix:x}",
                         "namespace": (event.get("metadata") or {}).get("namespace") or ""},
            "involvedObject": copy.deepcopy(involved), "reason": event.get("reason"),
            "message": COMBINED_PREFIX + (event.get("message") or ""), "source": copy.deepcopy(event.get("source")),
            "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1, "type": event.get("type"),
            "reportingComponent": event.get("reportingComponent") or "",
            "reportingInstance": event.get("reportingInstance") or "",
        }
        return combined, key

    def _observe(self, event: dict[str, Any], key: tuple[str, ...], now: float
                 ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """client-go's `eventObserve`: a repeat of a written event becomes a patch of it."""
        observed = copy.deepcopy(event)
        last = self._observations.get(key)
        patch = None
        if last is not None and last.count > 0 and now - last.seen <= self.identical_interval:
            meta = observed.setdefault("metadata", {})
            meta["name"] = last.name
            if last.resource_version:
                meta["resourceVersion"] = last.resource_version
            observed["firstTimestamp"] = last.first_timestamp
            observed["count"] = last.count + 1
            patch = {"count": observed["count"], "lastTimestamp": observed.get("lastTimestamp"),
                     "message": observed.get("message")}
        meta = observed.get("metadata") or {}
        self._observations.put(key, _Observation(int(observed.get("count") or 0),
                                                 observed.get("firstTimestamp") or "", meta.get("name") or "",
                                                 meta.get("resourceVersion") or "", now))
        return observed, patch

    def _accept(self, event: dict[str, Any], now: float) -> bool:
        """client-go's `EventSourceObjectSpamFilter.Filter`, inverted: True when the event may be written."""
        key = _spam_key(event)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = TokenBucket(self.spam_qps, self.spam_burst, now)
        accepted = bucket.try_accept(now)
        self._buckets.put(key, bucket)
        return accepted
