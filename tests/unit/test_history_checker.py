"""The history checker (tests/support/history.py) on histories with planted violations, and on good ones."""

from __future__ import annotations

import pytest

from tests.support.history import (
    History, Op, WatchEvent, WatchLog, check, lost_writes, stale_reads, versions_out_of_order, watch_gaps,
)


def good() -> History:
    """Two clients on key a (create, update, delete, re-create) and b; two watches from version 10."""
    ops = [
        Op(1, "create", "a", 0.0, 1.0, "ok", 11, "a1"),
        Op(2, "create", "b", 0.5, 1.5, "ok", 12, "b1"),
        Op(1, "read", "a", 1.1, 1.2, "ok", 11, "a1"),
        Op(2, "update", "a", 2.0, 3.0, "ok", 13, "a2"),
        Op(1, "update", "a", 2.1, 2.9, "failed"),  # a conflict: did not happen
        Op(1, "read", "a", 2.5, 2.6, "ok", 11, "a1"),  # concurrent with the update: the old one is fine
        Op(1, "read", "a", 3.1, 3.2, "ok", 13, "a2"),
        Op(2, "delete", "a", 4.0, 5.0, "ok"),
        Op(1, "read", "a", 5.1, 5.2, "ok", 0, None),
        Op(1, "create", "b", 5.3, 5.4, "failed"),
        Op(2, "update", "b", 5.5, 5.6, "unknown"),  # a timeout: it happened, as the watches show
        Op(1, "create", "a", 6.0, 7.0, "ok", 16, "a3"),
        Op(2, "read", "a", 7.1, 7.2, "ok", 16, "a3"),
    ]
    events = [WatchEvent("ADDED", "a", 11, "a1"), WatchEvent("ADDED", "b", 12, "b1"),
              WatchEvent("MODIFIED", "a", 13, "a2"), WatchEvent("DELETED", "a", 14, "a2"),
              WatchEvent("MODIFIED", "b", 15, "b2"), WatchEvent("ADDED", "a", 16, "a3")]
    return History(ops, [WatchLog("w1", 10, list(events)), WatchLog("w2", 10, list(events))])


def with_ops(history: History, *ops: Op) -> History:
    return History(history.ops + list(ops), history.watches)


def test_a_consistent_history_has_no_violation() -> None:
    assert check(good()) == []


def test_an_acknowledged_update_no_watch_saw_is_a_lost_write() -> None:
    history = with_ops(good(), Op(3, "update", "b", 8.0, 8.1, "ok", 17, "b3"))
    assert [v.split(":")[0] for v in lost_writes(history)] == ["lost_writes"]
    assert "b='b3' at version 17" in lost_writes(history)[0]


def test_an_acknowledged_write_seen_with_another_value_is_a_lost_write() -> None:
    history = with_ops(good(), Op(3, "update", "a", 2.0, 3.0, "ok", 13, "a-other"))
    assert len(lost_writes(history)) == 1


def test_an_acknowledged_delete_no_watch_saw_is_a_lost_write() -> None:
    history = with_ops(good(), Op(3, "delete", "a", 7.5, 8.0, "ok"))
    assert len(lost_writes(history)) == 1 and "delete of a" in lost_writes(history)[0]


def test_an_unknown_or_failed_write_no_watch_saw_is_no_violation() -> None:
    history = with_ops(good(), Op(3, "update", "b", 8.0, 8.1, "unknown"), Op(3, "create", "c", 8.0, 8.1, "failed"))
    assert check(history) == []


def test_a_watch_delivering_a_version_twice_or_backwards_is_out_of_order() -> None:
    history = good()
    history.watches[1].events.insert(2, WatchEvent("ADDED", "a", 11, "a1"))
    assert "watch w2 delivered version 11" in versions_out_of_order(history)[0]


def test_a_write_ordered_after_another_in_time_with_a_lower_version_is_out_of_order() -> None:
    history = good()
    history.ops[3] = Op(2, "update", "a", 2.0, 3.0, "ok", 13, "a2")
    history.ops.append(Op(3, "update", "a", 3.5, 3.6, "ok", 12, "a-late"))
    history.watches[0].events.insert(1, WatchEvent("MODIFIED", "a", 12, "a-late"))
    found = versions_out_of_order(history)
    assert any("version 13) ended before update (client 3, version 12)" in v for v in found)


def test_a_read_older_than_a_write_acknowledged_before_it_began_is_stale() -> None:
    history = with_ops(good(), Op(3, "read", "a", 3.5, 3.6, "ok", 11, "a1"))
    assert stale_reads(history) == ["stale_reads: read of a by client 3 at [3.500, 3.600] returned version 11, "
                                    "older than 13 acknowledged before it began"]


def test_a_not_found_after_an_acknowledged_create_with_no_delete_is_stale() -> None:
    history = with_ops(good(), Op(3, "read", "b", 2.0, 2.1, "ok", 0, None))
    assert len(stale_reads(history)) == 1 and "found nothing" in stale_reads(history)[0]


def test_a_read_of_a_state_never_written_is_a_violation() -> None:
    history = with_ops(good(), Op(3, "read", "a", 3.5, 3.6, "ok", 13, "forged"))
    assert "which no watch saw written" in stale_reads(history)[0]


def test_a_read_concurrent_with_a_write_may_see_either_state() -> None:
    history = with_ops(good(), Op(3, "read", "a", 2.5, 3.5, "ok", 13, "a2"), Op(3, "read", "a", 2.5, 3.5, "ok", 11, "a1"))
    assert stale_reads(history) == []


@pytest.mark.parametrize("dropped", [1, 2, 4])
def test_a_watch_missing_a_version_another_saw_has_a_gap(dropped: int) -> None:
    history = good()
    event = history.watches[1].events.pop(dropped)
    assert watch_gaps(history) == [f"watch_gaps: watch w2 missed {event.key} at versions [{event.version}]"]


def test_watches_disagreeing_on_a_version_is_a_violation() -> None:
    history = good()
    history.watches[1].events[2] = WatchEvent("MODIFIED", "a", 13, "a-other")
    assert any("watches disagree at version 13" in v for v in watch_gaps(history))


def test_a_watch_started_later_is_not_asked_for_earlier_versions() -> None:
    history = good()
    history.watches.append(WatchLog("late", 13, history.watches[0].events[3:]))
    assert check(history) == []
