"""Every write the SQLite store acknowledged survives a kill -9 of its process."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from runtime.server.storage.sqlite.store import SqliteStore

REPO = Path(__file__).resolve().parents[2]

# Eight trio tasks create keys forever (so commits are grouped), printing each
# acknowledged write as "revision key" only after create() returned.
WRITER = """
import sys
sys.path.insert(0, sys.argv[3])
import trio
from runtime.server.storage.sqlite.store import SqliteStore

async def main(path, synchronous):
    store = await SqliteStore.open(path, synchronous=synchronous)

    async def writer(n):
        i = 0
        while True:
            key = f"/crash/{n}/{i}"
            entry = await store.create(key, lambda rev, key=key: f"{key}@{rev}".encode())
            print(entry.mod_revision, key, flush=True)
            i += 1

    async with trio.open_nursery() as nursery:
        for n in range(8):
            nursery.start_soon(writer, n)

trio.run(main, sys.argv[1], sys.argv[2])
"""

ACKS_BEFORE_KILL = 400


async def _run_and_kill(tmp_path: Path, db: Path, synchronous: str) -> tuple[bytes, int]:
    """Start the writer, SIGKILL it mid-stream. Returns (all its stdout, its return code)."""
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    with open(tmp_path / "writer.err", "wb") as err:
        proc = await trio.lowlevel.open_process(
            [sys.executable, str(script), str(db), synchronous, str(REPO)],
            stdout=subprocess.PIPE, stderr=err)
    out = b""
    # A guard against a hung child, not a timing assertion.
    with trio.move_on_after(120):
        while out.count(b"\n") < ACKS_BEFORE_KILL:
            chunk = await proc.stdout.receive_some()
            if not chunk:
                break
            out += chunk
    proc.send_signal(signal.SIGKILL)
    await proc.wait()
    while chunk := await proc.stdout.receive_some():  # printed before the kill: acknowledged too
        out += chunk
    await proc.stdout.aclose()
    return out, proc.returncode


@pytest.mark.parametrize("synchronous", ["FULL", "NORMAL"])
async def test_acknowledged_writes_survive_kill_9(tmp_path: Path, synchronous: str) -> None:
    db = tmp_path / "crash.db"
    out, returncode = await _run_and_kill(tmp_path, db, synchronous)
    assert returncode == -signal.SIGKILL, (tmp_path / "writer.err").read_text()
    lines = out.split(b"\n")[:-1]  # a torn last line was never fully acknowledged
    acked = {key: int(rev) for rev, key in (line.decode().split() for line in lines)}
    assert len(acked) >= ACKS_BEFORE_KILL

    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    store = await SqliteStore.open(db)
    entries, head, _ = await store.list("/crash/")
    stored = {e.key: (e.mod_revision, e.value) for e in entries}
    assert head >= max(acked.values())
    for key, rev in acked.items():
        assert stored[key] == (rev, f"{key}@{rev}".encode())
    await store.aclose()
