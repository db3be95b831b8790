"""Watch: the spec's start semantics over the watch cache, bookmarks and timeouts.

| resourceVersion | start |
| unset | synthetic ADDED for the current state (consistent), then changes |
| "0"   | synthetic ADDED for the cache's state, then changes |
| N     | every change after N (410 Gone as an ERROR event when N is no longer kept) |

`sendInitialEvents=true` (with resourceVersionMatch=NotOlderThan) sends the
state first, then a BOOKMARK annotated `k8s.io/initial-events-end: "true"`
when bookmarks are allowed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, AsyncIterator

import trio

from runtime import errors
from runtime.objects import StoredObject
from runtime.registry.listing import validate_list_options
from runtime.registry.options import ListOptions
from runtime.scheme import ResourceType
from runtime.watchcache import TooOld, Watcher

if TYPE_CHECKING:
    from runtime.registry.registry import Registry

__all__ = ["WatchStream", "open_watch", "BOOKMARK_INTERVAL"]

#: How often an idle watch that allows bookmarks gets one (Kubernetes: about a minute).
BOOKMARK_INTERVAL = 5.0


@dataclass
class WatchStream:
    """An open watch. Iterate for `(type, object)`: object is a StoredObject, or a dict
    for BOOKMARK and ERROR events. Ends at the timeout, or when the server closes it."""

    rt: ResourceType
    watcher: Watcher | None
    timeout: float
    error: dict[str, Any] | None = None
    initial_end_revision: int | None = None

    def bookmark(self, revision: int, *, initial_end: bool = False) -> dict[str, Any]:
        meta: dict[str, Any] = {"resourceVersion": str(revision)}
        if initial_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        return {"kind": self.rt.kind, "apiVersion": self.rt.api_version, "metadata": meta}

    async def __aiter__(self) -> AsyncIterator[tuple[str, StoredObject | dict[str, Any]]]:
        if self.error is not None:
            yield "ERROR", self.error
            return
        assert self.watcher is not None
        pending_initial = self.initial_end_revision
        initial_left = self.watcher.initial_count
        last_revision = 0
        with trio.move_on_after(self.timeout):
            try:
                while True:
                    if pending_initial is not None and initial_left == 0:
                        yield "BOOKMARK", self.bookmark(pending_initial, initial_end=True)
                        pending_initial = None
                    item = None
                    interval = BOOKMARK_INTERVAL if self.watcher.bookmarks else math.inf
                    with trio.move_on_after(interval):
                        item = await self.watcher.events.receive()
                    if item is None:
                        cache_rev = self.watcher._cache.revision
                        if cache_rev > last_revision:
                            last_revision = cache_rev
                            yield "BOOKMARK", self.bookmark(cache_rev)
                        continue
                    event_type, payload = item
                    initial_left -= 1
                    if event_type == "BOOKMARK":
                        yield "BOOKMARK", self.bookmark(int(payload))
                        continue
                    last_revision = max(last_revision, payload.revision)
                    yield event_type, payload
            except trio.EndOfChannel:
                if self.watcher.gone:
                    yield "ERROR", errors.Gone("the watch cache was reset; relist").status()
            finally:
                self.watcher.close()


def _gone(requested: int, oldest: int) -> dict[str, Any]:
    return errors.Expired(f"too old resource version: {requested} ({oldest + 1})").status() | {
        "reason": "Expired", "code": 410}


async def open_watch(registry: "Registry", rt: ResourceType, namespace: str, opts: ListOptions) -> WatchStream:
    from runtime.registry.registry import parse_resource_version
    validate_list_options(opts, watch=True)
    match = registry.matcher(rt, namespace, opts)
    timeout = float(opts.timeout_seconds) if opts.timeout_seconds else math.inf
    rv = opts.resource_version
    cache = registry.kind_cache(rt)
    send_initial = opts.send_initial_events
    if send_initial is None:
        send_initial = rv in (None, "", "0")
    after: int | None = None
    if rv in (None, ""):
        await registry.cache.wait_fresh()
    elif rv != "0":
        after = parse_resource_version(rv)
        if after > registry.cache.revision:
            # A watch from the future waits (up to its timeout) for that version.
            if not await registry.cache.wait_for(after, timeout=min(timeout, 60.0)):
                raise errors.ResourceVersionTooLarge(
                    f"Too large resource version: {after}, current: {registry.cache.revision}", retry_after=1)
    try:
        if send_initial:
            if after is not None and after > registry.cache.revision:
                await registry.cache.wait_for(after)
            watcher = cache.watch(match, after_revision=None, initial=True, bookmarks=opts.allow_watch_bookmarks)
        else:
            watcher = cache.watch(match, after_revision=after, initial=False, bookmarks=opts.allow_watch_bookmarks)
    except TooOld as exc:
        return WatchStream(rt, None, timeout, error=_gone(exc.requested, exc.oldest))
    initial_end = registry.cache.revision if (opts.send_initial_events and opts.allow_watch_bookmarks) else None
    return WatchStream(rt, watcher, timeout, initial_end_revision=initial_end)
