"""The memory scavenger (`api.serving.memory_release`): trims after activity once quiet, rarely under load, never
when idle."""

from __future__ import annotations

import trio

from api.serving.memory_release import release_free_memory, run_memory_release, trim_available


async def scavenge(activity: list[tuple[float, bool]], until: float) -> list[float]:
    """Run the scavenger against a timeline of (time, busy) changes; return when it trimmed."""
    trims: list[float] = []
    state = {"busy": False}
    start = trio.current_time()

    async def trim() -> None:
        trims.append(trio.current_time() - start)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: run_memory_release(lambda: not state["busy"], trim=trim))
        for at, busy in activity:
            await trio.sleep_until(start + at)
            state["busy"] = busy
        await trio.sleep_until(start + until)
        nursery.cancel_scope.cancel()
    return trims


async def test_an_idle_server_is_never_trimmed(autojump_clock):
    assert await scavenge([], until=600) == []


async def test_a_burst_is_trimmed_once_the_server_is_quiet_again(autojump_clock):
    trims = await scavenge([(10, True), (20, False)], until=300)
    assert len(trims) == 1 and 20 <= trims[0] <= 22


async def test_sustained_load_is_trimmed_at_most_once_a_minute(autojump_clock):
    trims = await scavenge([(1, True)], until=600)
    assert 9 <= len(trims) <= 10 and all(b - a >= 60 for a, b in zip(trims, trims[1:]))


def test_the_c_library_gives_memory_back_where_it_can():
    assert trim_available()  # Linux with glibc: the promise the load test checks
    assert release_free_memory() in (True, False)
