"""Crash safety: kill -9 the server (on SQLite, on etcd) in the middle of a stream of creates; every 201 survives."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx
import trio

from tests.support.serverproc import admin_client, spawn_server

GROUP = "/apis/rbac.authorization.svc.io/v1"


async def _start(data_dir: Path, store_args: list[str]) -> tuple[trio.Process, str]:
    return await spawn_server(data_dir, *store_args, "--controllers", "false")


async def test_every_acknowledged_create_survives_sigkill(tmp_path, store_args):
    data_dir = tmp_path / "data"
    proc, url = await _start(data_dir, store_args)
    acknowledged: list[str] = []
    enough = trio.Event()  # 300 creates acknowledged: time to kill

    async def writer(worker: int, client: httpx.AsyncClient) -> None:
        for i in range(10_000):
            name = f"crash-{worker}-{i}"
            body = {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "ClusterRole",
                    "metadata": {"name": name}, "rules": []}
            try:
                r = await client.post(f"{GROUP}/clusterroles", json=body)
            except httpx.HTTPError:
                return  # the server is gone
            if r.status_code == 201:
                acknowledged.append(name)
                if len(acknowledged) >= 300:
                    enough.set()

    async with admin_client(data_dir, url) as client:
        async with trio.open_nursery() as nursery:
            for worker in range(8):
                nursery.start_soon(writer, worker, client)
            with trio.fail_after(120):
                await enough.wait()
            proc.send_signal(signal.SIGKILL)  # mid-stream: writers are still sending
        await proc.wait()
    assert proc.returncode == -signal.SIGKILL

    proc, url = await _start(data_dir, store_args)
    try:
        async with admin_client(data_dir, url) as client:
            listed = (await client.get(f"{GROUP}/clusterroles")).json()
        names = {item["metadata"]["name"] for item in listed["items"]}
        # No half object: every one stored is whole, as it was written.
        assert all(item["rules"] == [] and item["metadata"]["uid"] for item in listed["items"]
                   if item["metadata"]["name"].startswith("crash-"))
        missing = [n for n in acknowledged if n not in names]
        assert not missing, f"{len(missing)} acknowledged creates lost, e.g. {missing[:5]}"
        assert len(acknowledged) >= 300
    finally:
        proc.kill()
        await proc.wait()


async def test_sigterm_stops_the_server_cleanly(tmp_path):
    proc, url = await _start(tmp_path / "data", ["--store", "sqlite"])
    proc.send_signal(signal.SIGTERM)
    with trio.fail_after(30):
        await proc.wait()
    assert proc.returncode == 0
