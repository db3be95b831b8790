"""An autojump clock for tests whose server waits on real work: SQLite's threads, a real etcd.

Contract: `QuietClock(busy)` is a `trio.abc.Clock` of virtual time (it
starts at 0 and stands still) that, whenever every task waits, jumps to the
next deadline unless `busy()` says real work is under way; then it lets a
millisecond of real time pass and asks again. `jump(s)` moves it by hand;
`jumps` counts the automatic jumps and `waits` the times it waited.

`track_busy(monkeypatch)` returns such a `busy`: true while a
`trio.to_thread.run_sync` call runs (SQLite's reads and commits) or an
`EtcdStore` made from then on is busy: a call awaits etcd's answer, or an
open watch has not yet delivered the newest revision the stores have seen
(the events of a write are on their way).

Why: trio's autojump `MockClock` assumes that a program whose tasks all wait
has nothing left to do but wait for time. Threads and etcd are real time: a
plain autojump fires timeouts under them. This clock jumps only when the
only thing left is time, so tests keep their virtual timeouts (watch
`timeoutSeconds`, token ages, backoffs) on every store. `MockClock` cannot
be subclassed; trio asks a clock how long to sleep (`deadline_to_sleep_time`)
only when no task can run, which is where this one decides.

Caveat: nothing else may write the etcd while the test runs (each test has
its own prefix; tests run one at a time): a revision written elsewhere
would never reach a watch here, and the clock would stop jumping.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import pytest
import trio

from runtime.server.storage.etcd.store import EtcdStore

__all__ = ["QuietClock", "etcd_busy", "track_busy"]

#: Real seconds to wait before asking again whether the work is done.
_BUSY_WAIT = 0.001


def etcd_busy(stores: list[EtcdStore]) -> bool:
    """Whether a store awaits etcd, or an open watch has not delivered the newest revision seen."""
    stats = [store.statistics() for store in stores]
    newest = max((s.revision for s in stats), default=0)
    return any(s.calls or (s.watchers and s.delivered < newest) for s in stats)


class QuietClock(trio.abc.Clock):
    """Virtual time that jumps when all tasks wait and no real work is under way (see the module doc)."""

    def __init__(self, busy: Callable[[], bool]) -> None:
        self.busy = busy
        self.jumps = 0
        self.waits = 0
        self._now = 0.0

    def start_clock(self) -> None:
        pass

    def current_time(self) -> float:
        return self._now

    def jump(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("time can't go backwards")
        self._now += seconds

    def deadline_to_sleep_time(self, deadline: float) -> float:
        # Called by trio's run loop only when no task can run: every task waits.
        if deadline <= self._now:
            return 0.0
        if self.busy():
            self.waits += 1
            return _BUSY_WAIT
        if deadline == math.inf:
            return 86400.0  # nothing to jump to: wait for I/O
        self.jumps += 1
        self._now = deadline
        return 0.0


def track_busy(monkeypatch: pytest.MonkeyPatch) -> Callable[[], bool]:
    """A `busy()` for `QuietClock`: threads of `trio.to_thread` running, or EtcdStores made from now on
    busy (see the module doc). Undone with the monkeypatch."""
    stores: list[EtcdStore] = []
    threads = [0]
    init, run_sync = EtcdStore.__init__, trio.to_thread.run_sync

    def init_tracked(self: EtcdStore, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        stores.append(self)  # before `open` asks etcd anything: its first call counts too

    async def run_sync_counted(*args: Any, **kwargs: Any) -> Any:
        threads[0] += 1
        try:
            return await run_sync(*args, **kwargs)
        finally:
            threads[0] -= 1

    monkeypatch.setattr(EtcdStore, "__init__", init_tracked)
    monkeypatch.setattr(trio.to_thread, "run_sync", run_sync_counted)
    return lambda: threads[0] > 0 or etcd_busy(stores)
