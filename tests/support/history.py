"""A history checker for several clients writing and reading a few keys through several servers.

Contract: a test records every operation as an `Op` (client, kind, key,
real start and end times, outcome, the version and value it wrote or read)
and every watch as a `WatchLog` (the version it started from, its events in
the order received, across re-watches); `check(History(ops, watches))`
returns the violations found, each a line saying which rule broke and where
(empty: the history is consistent). Values are unique per write (each write
sends a fresh token), versions are resourceVersions (etcd revisions).

The rules (what "consistent" means here, for a store with one global
revision and linearizable writes and reads, as etcd's):

1. `lost_writes`: every acknowledged create or update is in the watched log
   at the version it was answered with, with its value; every acknowledged
   delete matches a DELETED event of its key.
2. `versions_out_of_order`: every watch delivers increasing versions (each
   event once, in revision order); of two acknowledged writes of one key, the
   one that ended before the other began has the lower version.
3. `stale_reads`: a read returns a state that was written (a version and
   value in the log), and not one older than a write of its key acknowledged
   before the read began (a 404 only if a delete came after that write).
4. `watch_gaps`: every watch sees, for every key, every version after its
   start: none missing between two it saw (the log is the union of all
   watches, so a version one watch saw and another missed is a gap).

The log: the union of every watch's events (two watches that disagree on a
version's event is a violation of rule 4). Watches must start before the
first write and run until after the last (a test writes a sentinel and
waits for every watch to see it). No library fits (PyPI has no
linearizability checker; Knossos, Elle, Porcupine are Clojure and Go), so
this is small and tested on planted violations (tests/unit/test_history_checker.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Op", "WatchEvent", "WatchLog", "History", "check", "lost_writes", "versions_out_of_order",
           "stale_reads", "watch_gaps"]

Outcome = Literal["ok", "failed", "unknown"]


@dataclass(frozen=True)
class Op:
    """One operation as a client saw it.

    kind: create | update | delete | read. outcome: ok (acknowledged),
    failed (refused: it did not happen, e.g. 409, 404), unknown (timeout,
    5xx: it may have happened). version/value: for an ok create or update,
    what it wrote; for an ok read, what it read (version 0, value None: not
    found); otherwise 0 and None.
    """

    client: int
    kind: Literal["create", "update", "delete", "read"]
    key: str
    start: float
    end: float
    outcome: Outcome
    version: int = 0
    value: str | None = None


@dataclass(frozen=True)
class WatchEvent:
    type: Literal["ADDED", "MODIFIED", "DELETED"]
    key: str
    version: int
    value: str | None


@dataclass
class WatchLog:
    """A watch's events in the order received (re-watches from the last version included)."""

    name: str
    start_version: int
    events: list[WatchEvent] = field(default_factory=list)


@dataclass
class History:
    ops: list[Op]
    watches: list[WatchLog]


def _log(history: History) -> tuple[dict[str, dict[int, WatchEvent]], list[str]]:
    """Every key's events by version, the union of all watches; and the disagreements between watches."""
    log: dict[str, dict[int, WatchEvent]] = {}
    problems = []
    for watch in history.watches:
        for event in watch.events:
            known = log.setdefault(event.key, {}).setdefault(event.version, event)
            if known != event:
                problems.append(f"watch_gaps: watches disagree at version {event.version}: {known} vs {event}"
                                f" ({watch.name})")
    return log, problems


def _delete_versions(log: dict[str, dict[int, WatchEvent]], key: str) -> list[int]:
    return sorted(v for v, e in log.get(key, {}).items() if e.type == "DELETED")


def _write_versions(history: History, log: dict[str, dict[int, WatchEvent]]) -> list[tuple[Op, int]]:
    """Acknowledged writes with the version each committed at (a delete: the first DELETED of its key
    after every version acknowledged before it began; None-matched deletes are left out)."""
    ops = [op for op in history.ops if op.outcome == "ok" and op.kind != "read"]
    out: list[tuple[Op, int]] = [(op, op.version) for op in ops if op.kind != "delete"]
    for op in ops:
        if op.kind == "delete":
            before = max((v for o, v in out if o.key == op.key and o.end < op.start), default=0)
            found = next((v for v in _delete_versions(log, op.key) if v > before), None)
            if found is not None:
                out.append((op, found))
    return out


def lost_writes(history: History) -> list[str]:
    log, _ = _log(history)
    found = []
    for op in history.ops:
        if op.outcome != "ok" or op.kind == "read":
            continue
        events = log.get(op.key, {})
        if op.kind == "delete":
            before = max((o.version for o in history.ops if o.outcome == "ok" and o.kind in ("create", "update")
                          and o.key == op.key and o.end < op.start), default=0)
            if not any(v > before for v in _delete_versions(log, op.key)):
                found.append(f"lost_writes: acknowledged delete of {op.key} by client {op.client} "
                             f"at [{op.start:.3f}, {op.end:.3f}] is in no watch")
            continue
        event = events.get(op.version)
        wanted = "ADDED" if op.kind == "create" else "MODIFIED"
        if event is None or event.type != wanted or event.value != op.value:
            found.append(f"lost_writes: acknowledged {op.kind} of {op.key}={op.value!r} at version {op.version} "
                         f"by client {op.client}: the watches saw {event}")
    return found


def versions_out_of_order(history: History) -> list[str]:
    found = []
    for watch in history.watches:
        last = watch.start_version
        for event in watch.events:
            if event.version <= last:
                found.append(f"versions_out_of_order: watch {watch.name} delivered version {event.version} "
                             f"({event.type} {event.key}) after {last}")
            last = max(last, event.version)
    log, _ = _log(history)
    writes = _write_versions(history, log)
    for a, va in writes:
        for b, vb in writes:
            if a.key == b.key and a.end < b.start and va >= vb:
                found.append(f"versions_out_of_order: {a.kind} of {a.key} (client {a.client}, version {va}) ended "
                             f"before {b.kind} (client {b.client}, version {vb}) began")
    return found


def stale_reads(history: History) -> list[str]:
    log, _ = _log(history)
    writes = _write_versions(history, log)
    found = []
    for op in history.ops:
        if op.kind != "read" or op.outcome != "ok":
            continue
        prior = [(w, v) for w, v in writes if w.key == op.key and w.end < op.start]
        floor, last_kind = max(((v, w.kind) for w, v in prior), default=(0, ""))
        where = f"read of {op.key} by client {op.client} at [{op.start:.3f}, {op.end:.3f}]"
        if op.version:
            event = log.get(op.key, {}).get(op.version)
            if event is None or event.type == "DELETED" or event.value != op.value:
                found.append(f"stale_reads: {where} returned version {op.version}={op.value!r}, "
                             f"which no watch saw written")
            elif op.version < floor:
                found.append(f"stale_reads: {where} returned version {op.version}, older than {floor} "
                             f"acknowledged before it began")
        elif floor and last_kind != "delete" and not any(v > floor for v in _delete_versions(log, op.key)):
            found.append(f"stale_reads: {where} found nothing, but version {floor} was acknowledged "
                         f"before it began and no delete followed")
    return found


def watch_gaps(history: History) -> list[str]:
    log, found = _log(history)
    for watch in history.watches:
        seen: dict[str, set[int]] = {}
        for event in watch.events:
            seen.setdefault(event.key, set()).add(event.version)
        for key, events in log.items():
            missing = sorted(v for v in events if v > watch.start_version and v not in seen.get(key, set()))
            if missing:
                found.append(f"watch_gaps: watch {watch.name} missed {key} at versions {missing[:5]}")
    return found


def check(history: History) -> list[str]:
    """Every violation of the four rules (see the module doc); empty when the history is consistent."""
    return lost_writes(history) + versions_out_of_order(history) + stale_reads(history) + watch_gaps(history)
