"""`SortedObjects`: one kind's objects at one revision, sorted by key, read a page at a time.

A page is found by bisecting the sorted keys, so it costs O(log n + page)
whatever the size of the collection; `count_after` (the `remainingItemCount`
of a page) costs O(log n). The watch cache hands these out for its current
state and for its snapshots (`KindCache.view`); nothing is copied.

Caveats:
    A view of the current state reads the cache's live key list: use it
    without awaiting in between (the cache changes only between checkpoints).

Internal to `runtime.server.watchcache`: imported by its modules only.
"""

from __future__ import annotations

import bisect
from typing import Callable

from runtime.machinery.storedobject import StoredObject

__all__ = ["SortedObjects", "prefix_end"]


def prefix_end(prefix: str) -> str:
    """A string above every key that starts with `prefix` (keys are text)."""
    return prefix + "\U0010ffff"


class SortedObjects:
    """Objects sorted by key: `keys` (sorted) and `at(i)`, the object of `keys[i]`."""

    __slots__ = ("keys", "at")

    def __init__(self, keys: list[str], at: Callable[[int], StoredObject]) -> None:
        self.keys = keys
        self.at = at

    def _bounds(self, prefix: str, start_after: str) -> tuple[int, int]:
        keys = self.keys
        lo = bisect.bisect_right(keys, start_after) if start_after and start_after >= prefix \
            else bisect.bisect_left(keys, prefix)
        return lo, bisect.bisect_left(keys, prefix_end(prefix), lo)

    def page(self, prefix: str, start_after: str = "", limit: int = 0) -> tuple[list[StoredObject], bool]:
        """Up to `limit` (0: all) objects under `prefix` with keys > `start_after`; and whether more remain."""
        lo, hi = self._bounds(prefix, start_after)
        end = min(hi, lo + limit) if limit else hi
        at = self.at
        return [at(i) for i in range(lo, end)], end < hi

    def count_after(self, prefix: str, key: str) -> int:
        """How many objects under `prefix` have keys > `key`."""
        lo, hi = self._bounds(prefix, key)
        return hi - lo
