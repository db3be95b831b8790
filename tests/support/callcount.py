"""How many Python function calls an awaited operation makes, and which: for counting tests and profiles.

Contract: `await count_calls(operation)` awaits `operation()` (an async function of no argument) with a
profile function on this thread and returns a `CallCount`: `calls`, the Python function calls (a
coroutine or generator resumed counts as a call, as the interpreter reports it: each resumption runs
Python code again), `builtin_calls` (calls into C functions), and `result`, what the operation returned.
Every task of the trio run that runs meanwhile is counted (the server's tasks serving the request: that
is the point). `await profile_calls(operation)` does the same under cProfile and returns the `pstats.Stats`
with `top_functions(stats, n)`: the n Python functions called most, as (calls, "file:line(function)") pairs.

Counts are deterministic: trio reverses each batch of runnable tasks at random (its scheduler's
`random.Random`, `trio._core._run._r`: "each task can appear before/after any other task"), which moved
a GET's count between 800 and 1,000 calls, and a fewest-of-20 bound failed once in a loaded run.
`count_calls(operation, seed=N)` seeds that random first (N: 0 unless given), so one seed gives one
count on every run, whatever the load; a caller wanting the best order takes the fewest over a few seeds.
It begins once every other task is blocked, so that no work begun before (the last steps of an answer
already written) is counted.

Caveats: counts are of this interpreter (CPython's version changes them a little); a garbage collection
that runs a `__del__` during the window counts its calls too, so a caller measuring a bound collects
first.
"""

from __future__ import annotations

import cProfile
import gc
import pstats
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable

import trio
import trio.testing

__all__ = ["CallCount", "count_calls", "profile_calls", "top_functions"]

#: trio's scheduler's random (private: no public seam orders trio's batches; trio and pytest-trio register
#: this same object with Hypothesis, which seeds it for its deterministic runs).
_SCHEDULER_RANDOM = trio._core._run._r

ROOT = str(Path(__file__).resolve().parents[2])


@dataclass(frozen=True)
class CallCount:
    calls: int
    builtin_calls: int
    result: Any


async def count_calls(operation: Callable[[], Awaitable[Any]], *, seed: int = 0) -> CallCount:
    """`operation()` awaited, its Python and builtin calls counted, trio's scheduling seeded with `seed`
    (see the module doc)."""
    counts = {"call": 0, "c_call": 0}

    def profiler(frame: Any, event: str, arg: Any) -> None:
        if event in counts:
            counts[event] += 1
    await trio.testing.wait_all_tasks_blocked()  # what ran before (an answer's last steps) is not counted here
    gc.collect()
    _SCHEDULER_RANDOM.seed(seed)
    sys.setprofile(profiler)
    try:
        result = await operation()
    finally:
        sys.setprofile(None)
    # The profile function saw its own `sys.setprofile(None)` as a builtin call.
    return CallCount(counts["call"], counts["c_call"] - 1, result)


async def profile_calls(operation: Callable[[], Awaitable[Any]]) -> pstats.Stats:
    """`operation()` awaited under cProfile: its stats."""
    profile = cProfile.Profile()
    gc.collect()
    profile.enable()
    try:
        await operation()
    finally:
        profile.disable()
    return pstats.Stats(profile)


def top_functions(stats: pstats.Stats, n: int = 25, *, builtins: bool = False) -> list[tuple[int, str]]:
    """The `n` functions of `stats` called most: (calls, "file:line(function)"), paths short; Python
    functions only unless `builtins`."""
    rows = []
    for (file, line, function), (_, calls, *_rest) in stats.stats.items():  # type: ignore[attr-defined]
        if file == "~" and not builtins:
            continue
        file = file.replace(ROOT + "/", "")
        site = file.rsplit("site-packages/", 1)[-1]
        rows.append((calls, f"{site}:{line}({function})"))
    rows.sort(key=lambda row: (-row[0], row[1]))
    return rows[:n]
