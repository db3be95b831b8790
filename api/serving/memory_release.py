"""Giving freed memory back to the operating system, as Go's runtime scavenger does for kube-apiserver.

Python frees objects into its allocator and glibc's, which keep the pages:
after a burst (hundreds of TLS connections, large bodies, lists) the
server's resident memory stays at its peak though nothing uses it. glibc's
`malloc_trim(0)` returns those free pages. `run_memory_release` calls it in a
worker thread (ctypes releases the GIL) after activity, once the server is
quiet (`is_quiet()` on two looks `quiet_check` seconds apart), at most every
`min_interval` seconds, and at least every `max_interval` seconds under
sustained activity (a trim briefly holds glibc's arena locks, so a busy
server pays it rarely); an idle server is never trimmed twice.

`release_free_memory()` trims once; both are no-ops where glibc is absent.

Internal to `api.serving`: imported by its modules only.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Awaitable, Callable

import trio

__all__ = ["release_free_memory", "run_memory_release", "trim_available"]


def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        return ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim
        return None


_TRIM = _malloc_trim()


def trim_available() -> bool:
    """Whether this process's C library can give free memory back (glibc)."""
    return _TRIM is not None


def release_free_memory() -> bool:
    """Give the C heap's free pages back to the operating system; returns whether any were (glibc's word)."""
    return bool(_TRIM(0)) if _TRIM is not None else False


async def _trim_in_thread() -> None:
    await trio.to_thread.run_sync(release_free_memory)


async def run_memory_release(is_quiet: Callable[[], bool], *, quiet_check: float = 0.5, min_interval: float = 5.0,
                        max_interval: float = 60.0,
                        trim: Callable[[], Awaitable[object]] = _trim_in_thread) -> None:
    """Trim as described in the module doc until cancelled (`trim` is replaceable for tests)."""
    last = trio.current_time()
    busy = False  # activity seen since the last trim
    quiet_looks = 0
    while True:
        await trio.sleep(quiet_check)
        if is_quiet():
            quiet_looks += 1
        else:
            quiet_looks, busy = 0, True
        since = trio.current_time() - last
        if busy and since >= min_interval and (quiet_looks >= 2 or since >= max_interval):
            await trim()
            last, busy = trio.current_time(), False
