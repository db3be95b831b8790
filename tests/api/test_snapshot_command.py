"""`miniplane snapshot save|restore|status` against a running server's data directory.

The server runs in process on SQLite; the command runs as the user runs it
(`api.cli.main`), on a worker thread, while a client keeps writing.
"""

from __future__ import annotations

import pytest
import trio

from api.cli import main
from tests.support.objects import cr
from tests.support.server import start_in_process

# The test snapshots SQLite: it runs on that store only.
pytestmark = pytest.mark.stores("sqlite")

URL = "/apis/rbac.authorization.svc.io/v1/clusterroles"


async def test_a_snapshot_of_a_running_server_restores_into_a_new_data_directory_that_serves_it(
        nursery, tmp_path, capsys):
    srv = await start_in_process(nursery, tmp_path / "old", store="sqlite")
    snapshot = tmp_path / "backup.db"
    async with srv.client() as client:
        versions = {}
        for i in range(20):
            r = await client.post(URL, json=cr(f"kept-{i}"))
            versions[f"kept-{i}"] = r.json()["metadata"]["resourceVersion"]
        writing = trio.Event()
        done = []

        async def write() -> None:
            i = 0
            while True:
                assert (await client.post(URL, json=cr(f"during-{i}"))).status_code == 201
                done.append(i)
                writing.set()
                i += 1

        async with trio.open_nursery() as writers:
            writers.start_soon(write)
            await writing.wait()
            code = await trio.to_thread.run_sync(main, ["snapshot", "save", str(snapshot), "--data-dir",
                                                        str(srv.data_dir)])
            writers.cancel_scope.cancel()
    assert code == 0
    saved = capsys.readouterr().out
    assert saved.startswith(f"Snapshot saved at {snapshot}: revision ")
    revision = int(saved.split("revision ", 1)[1].split(",", 1)[0])

    assert main(["snapshot", "status", str(snapshot)]) == 0
    assert f"is sound: revision {revision}," in capsys.readouterr().out
    new_dir = tmp_path / "new" / "data"
    assert main(["snapshot", "restore", str(snapshot), "--data-dir", str(new_dir)]) == 0
    assert main(["snapshot", "restore", str(snapshot), "--data-dir", str(new_dir)]) == 1  # never over a store
    assert "exists: restore into a new data directory" in capsys.readouterr().err

    restored = await start_in_process(nursery, tmp_path / "new", store="sqlite")
    async with restored.client() as client:
        listed = (await client.get(URL)).json()
        assert int(listed["metadata"]["resourceVersion"]) == revision
        items = {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in listed["items"]}
        assert {name: items.get(name) for name in versions} == versions
        during = sorted(int(name.split("-")[1]) for name in items if name.startswith("during-"))
        assert during == list(range(len(during)))  # a prefix of the writes: the store at one revision
        created = await client.post(URL, json=cr("after-restore"))
        assert int(created.json()["metadata"]["resourceVersion"]) > revision


def test_a_snapshot_of_a_data_directory_without_a_sqlite_store_says_so(tmp_path, capsys):
    assert main(["snapshot", "save", str(tmp_path / "s.db"), "--data-dir", str(tmp_path)]) == 1
    assert "an etcd store is saved with `etcdctl snapshot save`" in capsys.readouterr().err
