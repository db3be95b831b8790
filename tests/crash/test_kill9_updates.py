"""Crash safety of updates and deletes: kill -9 the server amid streams of both, then restart.

Every update that got a 200 is in the log at the resourceVersion it was
answered with, with its content; the object's current state is that update
or a later one; every delete that got a 200 stays deleted.
"""

from __future__ import annotations

import signal
from pathlib import Path

import httpx
import trio

from tests.support.serverproc import admin_client, spawn_server

GROUP = "/apis/rbac.authorization.svc.io/v1"
URL = f"{GROUP}/clusterroles"
MERGE = {"Content-Type": "application/merge-patch+json"}
WORKERS, OBJECTS = 8, 6
#: Objects with j % 3 == 0 are deleted once they reach this sequence number.
DELETE_AT = 15


async def _start(data_dir: Path) -> tuple[trio.Process, str]:
    return await spawn_server(data_dir, "--store", "sqlite", "--controllers", "false")


async def test_every_acknowledged_update_and_delete_survives_sigkill(tmp_path):
    data_dir = tmp_path / "data"
    proc, url = await _start(data_dir)
    names = [f"obj-{w}-{j}" for w in range(WORKERS) for j in range(OBJECTS)]
    updates: dict[str, list[tuple[int, int]]] = {name: [] for name in names}  # name -> [(seq, rv)] acknowledged
    deleted: set[str] = set()
    deleting: set[str] = set()  # a delete was sent (it may have committed unacknowledged)
    acknowledged = [0]
    enough = trio.Event()  # 600 writes and 8 deletes acknowledged: time to kill

    def count_one() -> None:
        acknowledged[0] += 1
        if acknowledged[0] >= 600 and len(deleted) >= 8:
            enough.set()

    async def worker(w: int, client: httpx.AsyncClient) -> None:
        mine = [f"obj-{w}-{j}" for j in range(OBJECTS)]
        try:
            for seq in range(1, 100_000):
                for j, name in enumerate(mine):
                    if name in deleted:
                        continue
                    if j % 3 == 0 and seq == DELETE_AT:
                        deleting.add(name)
                        r = await client.delete(f"{URL}/{name}")
                        if r.status_code == 200:
                            deleted.add(name)
                            count_one()
                        continue
                    r = await client.patch(f"{URL}/{name}", headers=MERGE,
                                           json={"metadata": {"annotations": {"seq": str(seq)}}})
                    if r.status_code == 200:
                        updates[name].append((seq, int(r.json()["metadata"]["resourceVersion"])))
                        count_one()
        except httpx.HTTPError:
            return  # the server is gone

    async with admin_client(data_dir, url) as client:
        for name in names:
            r = await client.post(URL, json={"apiVersion": "rbac.authorization.svc.io/v1", "kind": "ClusterRole",
                                             "metadata": {"name": name, "annotations": {"seq": "0"}}, "rules": []})
            assert r.status_code == 201, r.text
        async with trio.open_nursery() as nursery:
            for w in range(WORKERS):
                nursery.start_soon(worker, w, client)
            with trio.fail_after(120):
                await enough.wait()
            proc.send_signal(signal.SIGKILL)  # mid-stream: updates and deletes are in flight
        await proc.wait()
    assert proc.returncode == -signal.SIGKILL

    proc, url = await _start(data_dir)
    try:
        async with admin_client(data_dir, url) as client:
            for name in names:
                r = await client.get(f"{URL}/{name}")
                if name in deleted:
                    assert r.status_code == 404, f"{name}: acknowledged delete lost"
                    continue
                if r.status_code == 404 and name in deleting:
                    continue  # its delete was in flight at the kill, and committed
                assert r.status_code == 200, r.text
                meta = r.json()["metadata"]
                if updates[name]:
                    last_seq, last_rv = updates[name][-1]
                    # The last acknowledged update, or a later one that committed before the kill.
                    assert int(meta["resourceVersion"]) >= last_rv
                    assert int(meta["annotations"]["seq"]) >= last_seq
                    if int(meta["resourceVersion"]) == last_rv:
                        assert meta["annotations"]["seq"] == str(last_seq)
            # Every acknowledged update is in the log, at its resourceVersion, with its content.
            lost = []
            for name, acked in updates.items():
                for seq, rv in acked:
                    r = await client.get(URL, params={"resourceVersion": str(rv), "resourceVersionMatch": "Exact",
                                                      "fieldSelector": f"metadata.name={name}"})
                    assert r.status_code == 200, r.text
                    items = r.json()["items"]
                    if not items or items[0]["metadata"]["resourceVersion"] != str(rv) or \
                            items[0]["metadata"]["annotations"]["seq"] != str(seq):
                        lost.append((name, seq, rv))
            assert not lost, f"{len(lost)} acknowledged updates lost, e.g. {lost[:5]}"
            assert sum(len(a) for a in updates.values()) >= 500 and len(deleted) >= 8
    finally:
        proc.kill()
        await proc.wait()
