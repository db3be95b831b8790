"""A batch of writes (`runtime.server.storage.sqlite.batch.apply_batch`) commits what the same writes commit
one batch each: the same events, outcomes, rows of the log and latest keys, for any run of creates, updates
(with and without an expected revision) and deletes over a few keys, the same key several times in one
batch, a write refused (its key there or not, its revision not the latest) or whose encoder fails taking
no revision. The batch reads its keys in one statement and writes each table's rows in one: the overlay of
the writes before it in the batch is what a later write of the same key sees.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runtime.server.storage.group_commit import Write
from runtime.server.storage.sqlite.batch import apply_batch
from runtime.server.storage.sqlite.store import SqliteStore

KEYS = ["/a", "/b", "/c"]
#: (op, key, expected revision: None, or an offset from the head when the write is applied, encoder fails:
#: one write in four, so that most runs of writes get far)
_ops = st.tuples(st.sampled_from(["create", "update", "delete"]), st.sampled_from(KEYS),
                 st.one_of(st.none(), st.integers(min_value=-3, max_value=0)),
                 st.sampled_from([False, False, False, True]))


def _empty_log(path: Path) -> sqlite3.Connection:
    async def made() -> None:
        await (await SqliteStore.open(path)).aclose()
    trio.run(made)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    return conn


def _writes(ops: list[tuple[str, str, int | None, bool]], head: int) -> list[Write]:
    def encoder(key: str, fails: bool) -> Any:
        def encode(rev: int) -> bytes:
            if fails:
                raise ValueError("the encoder fails")
            return f"{key}@{rev}".encode()
        return encode
    return [Write(op, key, None if op == "delete" else encoder(key, fails),
                  None if expected is None else max(0, head + expected))
            for op, key, expected, fails in ops]


def _state(conn: sqlite3.Connection) -> tuple[list[Any], list[Any]]:
    return (conn.execute("SELECT * FROM kv ORDER BY rev").fetchall(),
            conn.execute("SELECT * FROM latest ORDER BY key").fetchall())


def _outcome(outcome: tuple[Any, BaseException | None]) -> Any:
    result, error = outcome
    return type(error).__name__ if error is not None else result


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.lists(_ops, max_size=4), ops=st.lists(_ops, min_size=1, max_size=12))
def test_a_batch_commits_what_its_writes_commit_one_batch_each(tmp_path_factory: Any, seed: list[Any],
                                                               ops: list[Any]) -> None:
    tmp = tmp_path_factory.mktemp("batch")
    together, apart = _empty_log(tmp / "together.db"), _empty_log(tmp / "apart.db")
    heads = {}
    for name, conn in (("together", together), ("apart", apart)):
        head = 0
        for w in _writes(seed, head):  # the same history before, one write at a time
            head = apply_batch(conn, [w], head)[0]
        heads[name] = head
    head = heads["together"]
    batch_head, batch_events, batch_outcomes = apply_batch(together, _writes(ops, head), head)
    events, outcomes = [], []
    for w in _writes(ops, head):  # expected revisions fixed against the same head as the batch's
        head, more, done = apply_batch(apart, [w], head)
        events += more
        outcomes += done
    assert batch_head == head
    assert batch_events == events
    assert [_outcome(o) for o in batch_outcomes] == [_outcome(o) for o in outcomes]
    assert _state(together) == _state(apart)
    together.close()
    apart.close()
