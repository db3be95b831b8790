"""The compactor: drops history older than the retention window, as kube-apiserver's compactor does.

`run_compactor(store, interval, retention)` runs until cancelled. Every
`interval` s it compacts the store's log at the newest revision that is at
least `retention` s old, so that history younger than the window always
stays. A mark (t, R) records that at time t every write up to R had
happened: once t is `retention` old, events up to R are too. A failed
compaction is logged and retried at the next tick; it never stops the server.
"""

from __future__ import annotations

import logging
from collections import deque

import trio

from runtime.storage.base import Store

__all__ = ["run_compactor"]

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
