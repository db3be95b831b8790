"""Rate limiters follow client-go's default_rate_limiters.go (time from trio's MockClock)."""

from __future__ import annotations

import pytest
import trio
from trio.testing import MockClock

from runtime.controller.ratelimit import (
    BucketRateLimiter,
    ItemExponentialRateLimiter,
    MaxOfRateLimiter,
    default_controller_rate_limiter,
)


def test_exponential_delay_doubles_per_failure_of_an_item() -> None:
    limiter = ItemExponentialRateLimiter()
    delays = [limiter.when("a") for _ in range(4)]
    assert delays == pytest.approx([0.005, 0.010, 0.020, 0.040])
    assert limiter.num_requeues("a") == 4


def test_exponential_backoff_is_tracked_per_item() -> None:
    limiter = ItemExponentialRateLimiter(base=0.005, cap=1000.0)
    limiter.when("a")
    limiter.when("a")
    assert limiter.when("b") == pytest.approx(0.005)
    assert limiter.num_requeues("a") == 2
    assert limiter.num_requeues("b") == 1


def test_exponential_delay_is_capped() -> None:
    limiter = ItemExponentialRateLimiter(base=1.0, cap=5.0)
    assert [limiter.when("a") for _ in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]


def test_exponential_delay_never_overflows() -> None:
    limiter = ItemExponentialRateLimiter(base=0.005, cap=1000.0)
    for _ in range(5000):
        delay = limiter.when("a")
    assert delay == 1000.0


def test_forget_resets_exponential_backoff() -> None:
    limiter = ItemExponentialRateLimiter()
    for _ in range(3):
        limiter.when("a")
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == pytest.approx(0.005)


async def test_bucket_allows_burst_then_spaces_by_qps(autojump_clock: MockClock) -> None:
    limiter = BucketRateLimiter(qps=10, burst=3)
    assert [limiter.when(i) for i in range(3)] == [0.0, 0.0, 0.0]
    # The bucket is empty: each further token is one more 1/qps away.
    assert [limiter.when(i) for i in range(3)] == pytest.approx([0.1, 0.2, 0.3])


async def test_bucket_refills_at_qps(autojump_clock: MockClock) -> None:
    limiter = BucketRateLimiter(qps=10, burst=2)
    limiter.when("a")
    limiter.when("a")
    await trio.sleep(0.1)
    assert limiter.when("a") == 0.0
    assert limiter.when("a") == pytest.approx(0.1)


async def test_bucket_refill_is_capped_at_burst(autojump_clock: MockClock) -> None:
    limiter = BucketRateLimiter(qps=10, burst=2)
    limiter.when("a")
    await trio.sleep(100)
    assert [limiter.when("a") for _ in range(3)] == pytest.approx([0.0, 0.0, 0.1])


async def test_bucket_does_not_track_items(autojump_clock: MockClock) -> None:
    limiter = BucketRateLimiter(qps=1, burst=1)
    limiter.when("a")
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == pytest.approx(1.0)


async def test_max_of_returns_the_longest_delay(autojump_clock: MockClock) -> None:
    limiter = MaxOfRateLimiter(
        ItemExponentialRateLimiter(base=1.0, cap=100.0), BucketRateLimiter(qps=1, burst=1)
    )
    assert limiter.when("a") == 1.0  # exponential 1.0, bucket 0.0
    assert limiter.when("a") == 2.0  # exponential 2.0, bucket 1.0
    assert limiter.when("b") == 2.0  # exponential 1.0, bucket 2.0
    assert limiter.num_requeues("a") == 2


async def test_max_of_forgets_in_every_limiter(autojump_clock: MockClock) -> None:
    first, second = ItemExponentialRateLimiter(), ItemExponentialRateLimiter(base=1.0)
    limiter = MaxOfRateLimiter(first, second)
    limiter.when("a")
    limiter.forget("a")
    assert (first.num_requeues("a"), second.num_requeues("a")) == (0, 0)


def test_max_of_nothing_never_delays() -> None:
    assert MaxOfRateLimiter().when("a") == 0.0
    assert MaxOfRateLimiter().num_requeues("a") == 0


async def test_default_controller_rate_limiter_uses_client_go_defaults(
    autojump_clock: MockClock,
) -> None:
    limiter = default_controller_rate_limiter()
    exponential, bucket = limiter.limiters
    assert isinstance(exponential, ItemExponentialRateLimiter)
    assert (exponential.base, exponential.cap) == (0.005, 1000.0)
    assert isinstance(bucket, BucketRateLimiter)
    assert (bucket.qps, bucket.burst) == (10, 100)
    assert [limiter.when("a") for _ in range(3)] == pytest.approx([0.005, 0.010, 0.020])


@pytest.mark.parametrize(
    "make",
    [
        lambda: ItemExponentialRateLimiter(base=-1.0),
        lambda: ItemExponentialRateLimiter(cap=-1.0),
        lambda: BucketRateLimiter(qps=0),
        lambda: BucketRateLimiter(burst=0),
    ],
)
def test_invalid_limiter_parameters_are_rejected(make) -> None:
    with pytest.raises(ValueError):
        make()
