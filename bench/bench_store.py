"""Store benchmark: writes/s (sequential and concurrent), get/s, list time, per backend.

Run: `python bench/bench_store.py [--dir DIR] [--quick]`. Prints figures; asserts
nothing. The concurrent-write figure shows group commit: 50 trio tasks writing
at once share each SQLite commit (see "mean batch"). The last figure compacts
the history of `COMPACT_KEYS` keys while 50 tasks keep writing: how long the
compaction took, and the longest a write waited meanwhile (a compaction that
holds the writer for its whole run makes every write wait that long); then
`FEW_WRITES` of those keys are written again and all since that compaction
is compacted: what a compaction costs when little changed since the last
one in a large store.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Awaitable, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import trio  # noqa: E402

from runtime.server.storage import Store  # noqa: E402
from runtime.server.storage import MemoryStore  # noqa: E402
from runtime.server.storage.sqlite.store import SqliteStore  # noqa: E402

VALUE = b'{"apiVersion":"rbac.authorization.svc.io/v1","kind":"ClusterRole",' + b"x" * 400 + b"}"
LIST_KEYS = 10_000
TASKS = 50
#: Keys written (twice each) before the compaction that runs under writes.
COMPACT_KEYS = 50_000
#: Writes between the compaction under writes and the next one.
FEW_WRITES = 1_000


def encode(rev: int) -> bytes:
    return VALUE


async def timed(fn: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await fn()
    return time.perf_counter() - start


async def bench(name: str, open_store: Callable[[], Awaitable[Store]], n_seq: int, n_conc: int,
                n_get: int, compact_keys: int) -> None:
    store = await open_store()

    async def sequential() -> None:
        for i in range(n_seq):
            await store.create(f"/seq/{i}", encode)

    async def concurrent() -> None:
        async def writer(t: int) -> None:
            for i in range(n_conc // TASKS):
                await store.create(f"/conc/{t}/{i}", encode)

        async with trio.open_nursery() as nursery:
            for t in range(TASKS):
                nursery.start_soon(writer, t)

    async def gets() -> None:
        for i in range(n_get):
            await store.get(f"/seq/{i % n_seq}")

    async def concurrent_gets() -> None:
        async def reader(t: int) -> None:
            for i in range(n_get // TASKS):
                await store.get(f"/seq/{(t * 7919 + i) % n_seq}")

        async with trio.open_nursery() as nursery:
            for t in range(TASKS):
                nursery.start_soon(reader, t)

    async def fill_list() -> None:
        async def writer(t: int) -> None:
            for i in range(t, LIST_KEYS, TASKS):
                await store.create(f"/list/{i:05d}", encode)

        async with trio.open_nursery() as nursery:
            for t in range(TASKS):
                nursery.start_soon(writer, t)

    t_seq = await timed(sequential)
    before = getattr(store, "statistics")()
    t_conc = await timed(concurrent)
    after = getattr(store, "statistics")()
    t_get = await timed(gets)
    t_cget = await timed(concurrent_gets)
    await fill_list()
    _, list_rev, _ = await store.list("/list/")
    # Churn: update a tenth of the keys so there is history to skip over.
    for i in range(0, LIST_KEYS, 10):
        await store.update(f"/list/{i:05d}", encode, expected_revision=None)
    list_times = []
    for _ in range(5):
        list_times.append(await timed(lambda: store.list("/list/")))
    past_times = []
    for _ in range(3):
        past_times.append(await timed(lambda: store.list("/list/", revision=list_rev)))
    entries, _, _ = await store.list("/list/")
    t_compact = await timed(lambda: store.compact(list_rev + 1))

    print(f"\n{name}")
    print(f"  sequential creates      {n_seq / t_seq:10,.0f} writes/s  ({n_seq} writes)")
    conc_line = f"  {TASKS} concurrent tasks     {n_conc / t_conc:10,.0f} writes/s  ({n_conc} writes)"
    if hasattr(after, "commits"):
        commits = after.commits - before.commits
        conc_line += f"  mean batch {(after.writes - before.writes) / max(commits, 1):.1f}"
        conc_line += f", largest {after.largest_batch}"
    print(conc_line)
    print(f"  get, sequential         {n_get / t_get:10,.0f} gets/s")
    print(f"  get, {TASKS} tasks           {n_get / t_cget:10,.0f} gets/s")
    n = f"{len(entries):,}"
    print(f"  list {n} keys (now)    {statistics.median(list_times) * 1000:8.1f} ms, median of 5")
    print(f"  list {n} keys (past)   {statistics.median(past_times) * 1000:8.1f} ms, median of 3")
    print(f"  compact after churn     {t_compact * 1000:8.1f} ms")
    if compact_keys:
        took, longest, during = await compaction_under_writes(store, compact_keys)
        print(f"  compact {compact_keys:,} keys under writes {took * 1000:8.1f} ms; meanwhile {during:,} writes, "
              f"the longest {longest * 1000:.1f} ms")
        few = min(FEW_WRITES, compact_keys)
        for i in range(0, compact_keys, compact_keys // few):
            await store.update(f"/compact/{i:06d}", encode, expected_revision=None)
        target = await store.current_revision()
        since = target - await store.compacted_revision()  # the writes made during the last one too
        took = await timed(lambda: store.compact(target))
        print(f"  compact {since:,} writes since the last compaction {took * 1000:8.1f} ms")
    await store.aclose()


async def compaction_under_writes(store: Store, keys: int) -> tuple[float, float, int]:
    """Write `keys` keys twice, then compact all of it while TASKS tasks keep writing.

    Returns (the compaction's time, the longest write meanwhile, the writes that ended meanwhile)."""
    async def fill(t: int) -> None:
        for i in range(t, keys, TASKS):
            await store.create(f"/compact/{i:06d}", encode)
            await store.update(f"/compact/{i:06d}", encode, expected_revision=None)

    async with trio.open_nursery() as nursery:
        for t in range(TASKS):
            nursery.start_soon(fill, t)
    target = await store.current_revision()
    spans: list[tuple[float, float]] = []  # each write's (start, end)
    compacting = True

    async def writer(t: int) -> None:
        i = 0
        while compacting:
            start = time.perf_counter()
            await store.create(f"/during/{t}/{i}", encode)
            spans.append((start, time.perf_counter()))
            i += 1

    async with trio.open_nursery() as nursery:
        for t in range(TASKS):
            nursery.start_soon(writer, t)
        await trio.sleep(0.05)  # the writers under way
        began = time.perf_counter()
        await store.compact(target)
        ended = time.perf_counter()
        compacting = False
    overlapping = [end - start for start, end in spans if start < ended and end > began]
    during = sum(1 for _, end in spans if began <= end <= ended)
    return ended - began, max(overlapping, default=0.0), during


async def main(directory: Path, quick: bool) -> None:
    scale = 10 if quick else 1
    await bench("memory", lambda: _memory(), 20_000 // scale, 20_000 // scale, 20_000 // scale,
                COMPACT_KEYS // scale)
    for sync in ("FULL", "NORMAL"):
        path = directory / f"bench-{sync.lower()}.db"
        for p in directory.glob(path.name + "*"):
            p.unlink()
        await bench(f"sqlite synchronous={sync} ({path})",
                    lambda sync=sync, path=path: SqliteStore.open(path, synchronous=sync),
                    2_000 // scale, 10_000 // scale, 10_000 // scale, COMPACT_KEYS // scale)


async def _memory() -> Store:
    return MemoryStore()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, help="where to put the database files (default: a temp dir)")
    parser.add_argument("--quick", action="store_true", help="a tenth of the operations")
    args = parser.parse_args()
    if args.dir:
        args.dir.mkdir(parents=True, exist_ok=True)
        trio.run(main, args.dir, args.quick)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            trio.run(main, Path(tmp), args.quick)
