"""The compactors: drop old history from the store's log, as kube-apiserver's compactor does.

`run_compactor(store, interval, retention)` (a store of this process:
memory, sqlite) runs until cancelled. Every `interval` s it compacts the
store's log at the newest revision that is at least `retention` s old, so
that history younger than the window always stays. A mark (t, R) records
that at time t every write up to R had happened: once t is `retention` old,
events up to R are too.

`run_shared_compactor(store, interval)` (etcd, which several servers share)
is kube-apiserver's compactor: every `interval` s each server takes part in
one txn on a key in etcd (`EtcdStore.compact_in_turn`); the one that wins
compacts at the revision it saw one interval earlier, so one compaction
happens per interval however many servers run, and etcd keeps between one
and two intervals of history.

A failed compaction is logged and retried at the next tick; it never stops
the server.
"""

from __future__ import annotations

import logging
from collections import deque

import trio

from runtime.server.storage.base import Store
from runtime.server.storage.etcd.store import EtcdStore

__all__ = ["run_compactor", "run_shared_compactor"]

log = logging.getLogger(__name__)


async def run_compactor(store: Store, interval: float, retention: float) -> None:
    """Compact `store` every `interval` s, keeping `retention` s of history (see the module doc)."""
    marks: deque[tuple[float, int]] = deque([(trio.current_time(), await store.current_revision())])
    while True:
        await trio.sleep(interval)
        now = trio.current_time()
        try:
            marks.append((now, await store.current_revision()))
            target = None
            while marks and marks[0][0] <= now - retention:
                target = marks.popleft()[1]
            if target is None or target <= await store.compacted_revision():
                continue
            await store.compact(target)
        except Exception:
            log.exception("compaction failed; retrying in %g s", interval)


async def run_shared_compactor(store: EtcdStore, interval: float) -> None:
    """Take part in compacting etcd every `interval` s with every server sharing it (see the module doc)."""
    turn, revision = 0, 0
    while True:
        await trio.sleep(interval)
        try:
            turn, revision = await store.compact_in_turn(turn, revision)
        except Exception:
            log.exception("etcd compaction failed; retrying in %g s", interval)
