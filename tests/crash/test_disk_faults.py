"""A full or read-only disk under SQLite: writes answer 500 with a Status that says so, reads go on, and
writes succeed again once space returns (or the file is writable again); nothing half-written remains.

The full disk is real: the server runs over a small tmpfs of its own
(`tests.support.smalldisk`), which the test fills and empties. The
read-only database is SQLite's own read-only state (`PRAGMA query_only` on
the store's writer connection): the write path gets the SQLITE_READONLY
error a file or file system turned read-only gives. A file system cannot be
made read-only under a process that holds files open for writing (the
kernel refuses with EBUSY), so that is the honest stand-in.
"""

from __future__ import annotations

import sqlite3

import trio

from runtime.server.storage.sqlite import store as sqlite
from tests.support.objects import cr
from tests.support.server import start_in_process
from tests.support.serverproc import admin_client, spawn_server
from tests.support.smalldisk import fill, mount_view, small_disk_wrapper

URL = "/apis/rbac.authorization.svc.io/v1/clusterroles"


async def test_a_full_disk_answers_500_saying_so_and_writes_resume_when_space_returns(tmp_path):
    data_dir, kubeconfig = tmp_path / "data", tmp_path / "admin.kubeconfig"
    proc, url = await spawn_server(data_dir, "--controllers", "false", "--kubeconfig-out", str(kubeconfig),
                                   wrapper=small_disk_wrapper(data_dir, "24m"))
    try:
        disk = mount_view(proc.pid, data_dir)
        async with admin_client(data_dir, url, kubeconfig=kubeconfig) as client:
            assert (await client.post(URL, json=cr("before"))).status_code == 201
            filler = disk / "filler"
            assert fill(filler) > 0
            created, refused = [], None
            for i in range(3000):  # the WAL's free pages first, then the disk's (none)
                r = await client.post(URL, json=cr(f"while-full-{i}"))
                if r.status_code != 201:
                    refused = (f"while-full-{i}", r)
                    break
                created.append(f"while-full-{i}")
            assert refused is not None, "3000 writes fitted on a full disk"
            name, r = refused
            status = r.json()
            assert r.status_code == 500 and status["kind"] == "Status" and status["reason"] == "InternalError"
            assert "database or disk is full" in status["message"]
            assert "the disk holding the database is full" in status["message"]
            # Reads go on (the watch cache serves them), the refused write is not there.
            assert (await client.get(f"{URL}/before")).status_code == 200
            assert (await client.get(f"{URL}/{name}")).status_code == 404
            again = await client.post(URL, json=cr("still-full"))
            assert again.status_code == 500
            filler.unlink()  # space returns
            assert (await client.post(URL, json=cr("after"))).status_code == 201
            listed = {o["metadata"]["name"] for o in (await client.get(URL)).json()["items"]}
            assert {"before", "after", *created} <= listed and name not in listed
        with sqlite3.connect(disk / "state.db") as conn:  # a reader beside the server
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        proc.terminate()
        with trio.fail_after(60):
            await proc.wait()


async def test_a_read_only_database_answers_500_saying_so_and_writes_resume_when_writable(nursery, tmp_path,
                                                                                          monkeypatch):
    srv = await start_in_process(nursery, tmp_path, store="sqlite")
    read_only = [False]
    real = sqlite.apply_batch

    def apply_batch(conn, batch, head, **options):
        conn.execute(f"PRAGMA query_only={int(read_only[0])}")  # the write connection: SQLite's read-only switch
        return real(conn, batch, head, **options)

    monkeypatch.setattr(sqlite, "apply_batch", apply_batch)  # each group commit's transaction
    async with srv.client() as client:
        assert (await client.post(URL, json=cr("before"))).status_code == 201
        read_only[0] = True
        r = await client.post(URL, json=cr("refused"))
        status = r.json()
        assert r.status_code == 500 and status["reason"] == "InternalError"
        assert "attempt to write a readonly database" in status["message"]
        assert "read-only; writes fail until it is writable" in status["message"]
        r = await client.patch(f"{URL}/before", json={"metadata": {"labels": {"a": "b"}}},
                               headers={"Content-Type": "application/merge-patch+json"})
        assert r.status_code == 500
        assert (await client.get(f"{URL}/before")).json()["metadata"].get("labels") is None
        read_only[0] = False
        assert (await client.post(URL, json=cr("after"))).status_code == 201
        assert (await client.get(f"{URL}/refused")).status_code == 404
