"""`miniplane serve --workers 2`: a worker killed with -9 mid-write is restarted and loses no acknowledged write;
SIGTERM or SIGINT to the parent stops every worker cleanly; a parent killed with -9 takes its workers along."""

from __future__ import annotations

import os
import signal
import sqlite3
from pathlib import Path

import httpx
import pytest
import trio

from tests.support.serverproc import admin_client, spawn_workers, wait_exited, worker_pids

GROUP = "/apis/rbac.authorization.svc.io/v1"


async def _restarted(parent: int, killed: int, count: int) -> list[int]:
    """The workers once `count` of them run again, `killed` not among them (a child becoming ready:
    the one wait these tests poll for)."""
    with trio.fail_after(120):
        while True:
            pids = worker_pids(parent)
            if len(pids) == count and killed not in pids:
                return pids
            await trio.sleep(0.05)


async def test_a_worker_killed_mid_write_is_restarted_and_no_acknowledged_write_is_lost(tmp_path):
    data_dir = tmp_path / "data"
    parent, url, pids = await spawn_workers(data_dir, 2, "--controllers", "false")
    acknowledged: list[str] = []
    failed = [0]
    phase = {"before": trio.Event(), "after": trio.Event()}
    killed_at = [0]

    async def writer(n: int, client: httpx.AsyncClient) -> None:
        for i in range(100_000):
            name = f"w-{n}-{i}"
            try:
                r = await client.post(f"{GROUP}/clusterroles", json={
                    "apiVersion": "rbac.authorization.svc.io/v1", "kind": "ClusterRole",
                    "metadata": {"name": name}, "rules": []})
            except httpx.HTTPError:
                failed[0] += 1  # a connection to the killed worker: its write may or may not have landed
                continue
            if r.status_code == 201:
                acknowledged.append(name)
            if len(acknowledged) >= 300:
                phase["before"].set()
            if killed_at[0] and len(acknowledged) >= killed_at[0] + 200:
                phase["after"].set()

    try:
        async with admin_client(data_dir, url) as client:
            async with trio.open_nursery() as nursery:
                for n in range(8):
                    nursery.start_soon(writer, n, client)
                with trio.fail_after(120):
                    await phase["before"].wait()
                killed_at[0] = len(acknowledged)
                victim = pids[0]  # the primary: its restart runs the bootstrap again while the other serves
                os.kill(victim, signal.SIGKILL)  # mid-stream: eight writers are sending
                with trio.fail_after(120):
                    await phase["after"].wait()  # the other worker serves while the victim is down
                    pids = await _restarted(parent.pid, victim, 2)
                nursery.cancel_scope.cancel()
            listed = (await client.get(f"{GROUP}/clusterroles")).json()
        names = {item["metadata"]["name"] for item in listed["items"]}
        missing = [n for n in acknowledged if n not in names]
        assert not missing, f"{len(missing)} acknowledged creates lost, e.g. {missing[:5]}"
        assert len(acknowledged) >= 500 and victim not in pids
    finally:
        parent.send_signal(signal.SIGTERM)
        with trio.fail_after(60):
            await parent.wait()
    assert parent.returncode == 0
    with sqlite3.connect(data_dir / "state.db") as conn:  # no half-written page or row
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_a_signal_to_the_parent_stops_every_worker(tmp_path, signum):
    parent, _, pids = await spawn_workers(tmp_path / "data", 2, "--controllers", "false")
    parent.send_signal(signum)
    with trio.fail_after(60):
        await parent.wait()
        for pid in pids:
            await wait_exited(pid)
    assert parent.returncode == 0


async def test_workers_stop_when_their_parent_is_killed(tmp_path):
    parent, _, pids = await spawn_workers(tmp_path / "data", 2, "--controllers", "false")
    parent.kill()
    await parent.wait()
    with trio.fail_after(60):
        for pid in pids:
            await wait_exited(pid)
    assert not any(Path(f"/proc/{pid}/status").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text()
                   for pid in pids)
