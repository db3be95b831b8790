"""Event time to live: an event goes `ttl` seconds (one hour) after it was last written, as with kube-apiserver's `--event-ttl`.

Kubernetes gives every event write an etcd lease of `--event-ttl`; here a
controller per event kind (core/v1 and events.k8s.io/v1, see
`runtime.models.catalog`'s `CORE_EVENT`, `EVENTS_EVENT`) does the same over the API:

- a write of an event the controller sees happen (a new resourceVersion of
  a cached event) sets its expiry to `ttl` from now;
- an event first seen (at start, or just created) expires `ttl` after its
  last write as the server recorded it: the latest of
  `metadata.creationTimestamp` and its `managedFields` times, read on
  `wall_clock`;
- each event is reconciled again when it expires (`Result(requeue_after=)`:
  one timer per event, no scan of all events), then deleted with its
  resourceVersion as precondition, so a write in between keeps it (and
  brings the key back with a new expiry).

Expiries are kept in memory on the trio clock, so `autojump_clock` drives
them in tests.

Caveats:
    An event written while no controller ran gets its expiry from the
    recorded write times, which are as accurate as the server's clock and the
    managed fields (a write that changes none of its manager's fields keeps
    that manager's time).
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Any, Callable

import trio

from runtime.machinery import errors
from runtime.client.interface import Client, ObjectKey, object_meta
from runtime.controller.controller import Result
from runtime.controller.informer import Informer
from runtime.models.catalog import CORE_EVENT, EVENTS_EVENT
from runtime.controller.manager import Manager

__all__ = ["DEFAULT_TTL", "EventTTLController", "last_write", "setup"]

#: kube-apiserver's default `--event-ttl`: one hour.
DEFAULT_TTL = 3600.0


def _seconds(timestamp: str) -> float | None:
    try:
        moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()


def last_write(obj: dict[str, Any]) -> float | None:
    """When the server last wrote `obj` as it recorded it (seconds since the epoch), None if it says nothing.

    The latest of `metadata.creationTimestamp` and the `time` of each
    `metadata.managedFields` entry.
    """
    meta = object_meta(obj)
    stamps = [meta.get("creationTimestamp") or ""] + [(e or {}).get("time") or "" for e in meta.get("managedFields")
                                                      or []]
    times = [t for t in (_seconds(s) for s in stamps if s) if t is not None]
    return max(times) if times else None


class EventTTLController:
    """Deletes the events of one kind `ttl` seconds after their last write (see the module doc)."""

    def __init__(self, client: Client, events: Informer, ttl: float = DEFAULT_TTL, *,
                 wall_clock: Callable[[], float] = time.time) -> None:
        if ttl <= 0:
            raise ValueError("the event ttl must be positive")
        self.client = client
        self.events = events
        self.rt = events.kind
        self.ttl = ttl
        self.wall_clock = wall_clock
        #: key -> (resourceVersion, expiry on the trio clock)
        self._expiries: dict[ObjectKey, tuple[str, float]] = {}

    def remaining(self, event: dict[str, Any]) -> float:
        """Seconds left to an event first seen now: `ttl` less the time since its recorded last write (>= 0)."""
        written = last_write(event)
        if written is None:
            return self.ttl
        return min(self.ttl, max(0.0, self.ttl - (self.wall_clock() - written)))

    async def reconcile(self, key: ObjectKey) -> Result | None:
        event = self.events.get(key)
        if event is None:
            self._expiries.pop(key, None)
            return None
        version = object_meta(event).get("resourceVersion") or ""
        now = trio.current_time()
        known = self._expiries.get(key)
        if known is None:
            expiry = now + self.remaining(event)
        elif known[0] != version:
            expiry = now + self.ttl  # written again, and seen as it happened
        else:
            expiry = known[1]
        self._expiries[key] = (version, expiry)
        if expiry > now:
            return Result(requeue_after=expiry - now)
        try:
            await self.client.delete(self.rt, key.name, namespace=key.namespace,
                                     preconditions={"resourceVersion": version})
        except errors.NotFound:
            pass
        except errors.Conflict:
            return None  # written meanwhile: that write's event brings the key back with a new expiry
        self._expiries.pop(key, None)
        return None


def setup(manager: Manager, ttl: float = DEFAULT_TTL) -> list[EventTTLController]:
    """Add one event TTL controller per served event kind to `manager` (events go `ttl` seconds after their last write)."""
    controllers = []
    for rt in manager.scheme.types:
        if rt.info not in (CORE_EVENT, EVENTS_EVENT):
            continue
        controller = EventTTLController(manager.client, manager.informers.informer(rt), ttl)
        manager.controller(f"event-ttl-{rt.group_resource}").for_(rt).complete(controller.reconcile)
        controllers.append(controller)
    return controllers
