"""MemoryStore's own rules beyond the conformance suite: what a compaction costs, and that it loses nothing.

Compaction trims only the keys written since the last compaction (it takes
the log's rows since then, counted by `statistics().compacted_rows`), the
log keeps only the rows after the compacted revision, and writes go on
between its turns. The property test checks it against a plain model: a
list of every write, read at any revision still readable, and the events a
watch from the compacted revision replays.
"""

from __future__ import annotations

import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from runtime.server.storage import MemoryStore
from runtime.server.storage.memory import COMPACT_TURN


def val(text: str):
    return lambda rev: f"{text}@{rev}".encode()


async def test_a_compaction_looks_only_at_the_writes_since_the_last_one() -> None:
    store = MemoryStore()
    for i in range(1000):
        await store.create(f"/k/{i:04}", val("v"))
    await store.compact(await store.current_revision())
    assert store.statistics().compacted_rows == 1000
    for i in range(0, 50, 5):  # ten keys written twice, one deleted
        entry = await store.update(f"/k/{i:04}", val("w"), expected_revision=None)
        await store.update(f"/k/{i:04}", val("x"), expected_revision=entry.mod_revision)
    await store.delete("/k/0045", expected_revision=None)
    await store.compact(await store.current_revision())
    stats = store.statistics()
    assert stats.compacted_rows == 1000 + 21  # ten keys written twice and a delete, not the 1,000 keys again
    assert (stats.keys, stats.rows) == (999, 0)  # the log keeps only rows after the compacted revision
    page = await store.list("/k/")
    assert len(page.entries) == 999 and page.entries[0].value.startswith(b"x@")


async def test_a_key_deleted_before_the_compacted_revision_is_gone_from_lists_at_any_revision() -> None:
    store = MemoryStore()
    await store.create("/k/a", val("a"))
    await store.create("/k/b", val("b"))
    await store.delete("/k/a", expected_revision=None)
    await store.compact(await store.current_revision())
    assert [e.key for e in (await store.list("/k/", revision=3)).entries] == ["/k/b"]
    await store.create("/k/a", val("again"))  # a key deleted and compacted away can be made again
    assert [(e.key, e.create_revision) for e in (await store.list("/k/")).entries] == [("/k/a", 4), ("/k/b", 2)]


async def test_writes_go_on_between_a_compactions_turns_and_a_cancelled_one_still_trims_every_key() -> None:
    store = MemoryStore()
    keys = 3 * COMPACT_TURN
    for i in range(keys):
        await store.create(f"/k/{i:05}", val("a"))
        await store.update(f"/k/{i:05}", val("b"), expected_revision=None)
    target = await store.current_revision()
    written: list[int] = []
    compaction = trio.CancelScope()

    async def writer() -> None:
        while True:
            written.append((await store.create(f"/w/{len(written)}", val("w"))).mod_revision)
            if await store.compacted_revision() == target:
                compaction.cancel()  # mid-way: its turns are shielded, so it still trims every key

    async with trio.open_nursery() as nursery:
        nursery.start_soon(writer)
        await trio.lowlevel.checkpoint()
        with compaction:
            await store.compact(target)
        nursery.cancel_scope.cancel()
    assert compaction.cancel_called
    assert len(written) >= 2 * keys // COMPACT_TURN - 1  # the writer ran between the turns
    assert await store.compacted_revision() == target
    # Every key of /k/ keeps one row; the writer's keys, made after the target, keep theirs.
    assert store.statistics().history_rows == keys + len((await store.list("/w/")).entries)
    page = await store.list("/k/", revision=target)
    assert len(page.entries) == keys and all(e.value.startswith(b"b@") for e in page.entries)


_KEYS = ["/k/a", "/k/b", "/k/c", "/k/d"]
_OPS = st.lists(st.one_of(
    st.tuples(st.just("put"), st.sampled_from(_KEYS)),
    st.tuples(st.just("delete"), st.sampled_from(_KEYS)),
    st.tuples(st.just("compact"), st.floats(0, 1)),
), max_size=40)


@settings(max_examples=150, deadline=None)
@given(_OPS)
def test_compactions_between_writes_keep_every_readable_revision_as_the_writes_left_it(ops) -> None:
    trio.run(_check_against_model, ops)


async def _check_against_model(ops: list[tuple]) -> None:
    store = MemoryStore()
    writes: list[tuple[int, str, bytes | None]] = []  # the model: every write, (revision, key, value)

    def state_at(revision: int) -> dict[str, bytes]:
        state: dict[str, bytes] = {}
        for rev, key, value in writes:
            if rev <= revision:
                if value is None:
                    state.pop(key, None)
                else:
                    state[key] = value
        return state

    for op, arg in ops:
        now = await store.current_revision()
        if op == "put":
            if arg in state_at(now):
                entry = await store.update(arg, val(arg), expected_revision=None)
            else:
                entry = await store.create(arg, val(arg))
            writes.append((entry.mod_revision, arg, entry.value))
        elif op == "delete" and arg in state_at(now):
            await store.delete(arg, expected_revision=None)
            writes.append((now + 1, arg, None))
        elif op == "compact":
            await store.compact(int(arg * now))
    now, compacted = await store.current_revision(), await store.compacted_revision()
    for revision in range(compacted, now + 1):
        page = await store.list("/k/", revision=revision)
        assert {e.key: e.value for e in page.entries} == state_at(revision)
    expected = [(rev, key) for rev, key, _ in writes if rev > compacted]
    replayed = []
    if expected:
        async for event in store.watch("/k/", after_revision=compacted):
            replayed.append((event.revision, event.key))
            if len(replayed) == len(expected):
                break
    assert replayed == expected
    assert store.statistics().rows == len(expected)
