"""Rate limiters for the work queue: how long an item waits before it is re-queued.

A `RateLimiter` answers `when(item)` with a delay in seconds and records that
the item was asked about; `forget(item)` clears what it tracks for the item
(call it on success or on a permanent failure); `num_requeues(item)` says how
many times the item was requeued since it was last forgotten. Semantics follow
client-go's `util/workqueue/default_rate_limiters.go`:

- `ItemExponentialRateLimiter`: per item, ``base * 2**failures``, capped.
- `BucketRateLimiter`: one token bucket for all items (overall retry speed).
- `MaxOfRateLimiter`: the longest delay of several limiters.
- `default_controller_rate_limiter()`: the two above with client-go's defaults
  (5 ms doubling up to 1000 s per item; 10 qps with a burst of 100 overall).

The limiters are pure except that `BucketRateLimiter` reads the trio clock
(`trio.current_time()`), so a `MockClock` drives it in tests. They hold plain
state and are meant for one trio run (no locks: trio tasks only).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol

import trio

__all__ = [
    "RateLimiter",
    "ItemExponentialRateLimiter",
    "BucketRateLimiter",
    "MaxOfRateLimiter",
    "default_controller_rate_limiter",
]

# Beyond this exponent 2.0**exp overflows a float; the cap applies long before.
_MAX_EXPONENT = 1023


class RateLimiter(Protocol):
    """What the work queue needs from a rate limiter."""

    def when(self, item: Hashable) -> float:
        """Return the delay in seconds before `item` may be re-queued; record the request."""
        ...

    def forget(self, item: Hashable) -> None:
        """Stop tracking `item`: its next `when` starts from scratch."""
        ...

    def num_requeues(self, item: Hashable) -> int:
        """Return how many times `item` was requeued since it was last forgotten."""
        ...


class ItemExponentialRateLimiter:
    """Per-item exponential backoff: the n-th `when(item)` (from 0) returns ``min(base * 2**n, cap)``.

    With the defaults the delays are 5 ms, 10 ms, 20 ms, ... up to 1000 s.
    Raises `ValueError` for a negative `base` or `cap`.

    Caveats:
        Items are tracked until `forget`; a caller that never forgets an item
        keeps its failure count forever (as in client-go).
    """

    def __init__(self, base: float = 0.005, cap: float = 1000.0) -> None:
        if base < 0 or cap < 0:
            raise ValueError(f"base and cap must be >= 0, got base={base} cap={cap}")
        self.base = base
        self.cap = cap
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        """Return ``min(base * 2**failures, cap)`` and count one more failure for `item`."""
        exp = self._failures.get(item, 0)
        self._failures[item] = exp + 1
        return min(self.base * 2.0 ** min(exp, _MAX_EXPONENT), self.cap)

    def forget(self, item: Hashable) -> None:
        """Reset `item`'s failure count."""
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        """Return `item`'s failure count."""
        return self._failures.get(item, 0)


class BucketRateLimiter:
    """A token bucket over all items: `burst` at once, then `qps` per second.

    `when(item)` reserves one token and returns how long the caller must wait
    for it (0.0 while tokens remain). Tokens refill at `qps` per second up to
    `burst`; the bucket starts full. Reservations are never returned, so delays
    grow linearly while callers outpace `qps` (like golang.org/x/time/rate's
    ``Reserve().Delay()``, which client-go uses). Time is `trio.current_time()`.
    It does not track items: `forget` is a no-op and `num_requeues` is 0.
    Raises `ValueError` unless ``qps > 0`` and ``burst >= 1``.
    """

    def __init__(self, qps: float = 10.0, burst: int = 100) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError(f"need qps > 0 and burst >= 1, got qps={qps} burst={burst}")
        self.qps = qps
        self.burst = burst
        self._tokens = float(burst)
        # Read lazily: the limiter may be built outside trio.run.
        self._last: float | None = None

    def when(self, item: Hashable) -> float:
        """Reserve a token; return the seconds until it is available (0.0 if now)."""
        now = trio.current_time()
        last = now if self._last is None else self._last
        if now > last:
            self._tokens = min(float(self.burst), self._tokens + (now - last) * self.qps)
            last = now
        self._last = last
        self._tokens -= 1.0
        # A negative balance is a debt that later reservations queue behind.
        return -self._tokens / self.qps if self._tokens < 0 else 0.0

    def forget(self, item: Hashable) -> None:
        """Do nothing: the bucket is shared by all items."""

    def num_requeues(self, item: Hashable) -> int:
        """Return 0: the bucket does not track items."""
        return 0


class MaxOfRateLimiter:
    """Combines limiters: `when` is the longest of their delays, `num_requeues` the largest count.

    Every limiter is asked on each `when` (each records the request); `forget`
    forgets in all. With no limiters `when` returns 0.0.
    """

    def __init__(self, *limiters: RateLimiter) -> None:
        self.limiters: tuple[RateLimiter, ...] = limiters

    def when(self, item: Hashable) -> float:
        """Return the longest delay any limiter asks for `item`."""
        # A list, not a generator: every limiter must record the request.
        return max([limiter.when(item) for limiter in self.limiters], default=0.0)

    def forget(self, item: Hashable) -> None:
        """Forget `item` in every limiter."""
        for limiter in self.limiters:
            limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        """Return the largest requeue count any limiter reports for `item`."""
        return max([limiter.num_requeues(item) for limiter in self.limiters], default=0)


def default_controller_rate_limiter(
    *,
    base: float = 0.005,
    cap: float = 1000.0,
    qps: float = 10.0,
    burst: int = 100,
) -> MaxOfRateLimiter:
    """Return client-go's default controller limiter: per-item exponential backoff, overall token bucket.

    The bucket only limits retry speed across all items; the per-item part
    backs off a failing item without slowing the others.
    """
    return MaxOfRateLimiter(
        ItemExponentialRateLimiter(base=base, cap=cap),
        BucketRateLimiter(qps=qps, burst=burst),
    )
