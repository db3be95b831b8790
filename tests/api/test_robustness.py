"""Robustness under load and failure, through the HTTP app in process, real HTTPS where the connection
matters (disconnects, shutdown, stalled bodies, oversized heads), and the registry where HTTP cannot reach.

- Concurrency: contended writes to one object lose nothing, create/delete of
  one name and delete against finalizer removal stay consistent, creates
  racing their namespace's deletion leave no orphans, and every watcher sees
  every revision once, in order, under concurrent writers.
- Failure: clients that disconnect mid-watch or mid-list leave no watcher or
  task behind, shutdown ends open watches, store errors answer 500 and the
  server recovers, corrupt rows are contained, malformed or oversized
  requests answer 4xx.
- Memory: the watch history is bounded in bytes, slow watchers are cut off
  (and resume without loss), the RBAC index forgets deleted bindings, the
  namespace gate forgets idle namespaces.

Tests that wait in trio time run on the MockClock (`autojump_clock`); the
ones over SQLite (worker threads) use the real clock with generous guards
(`store_clock`: the autojump clock for memory and etcd, the real one for SQLite).
The concurrency tests run on every store (tests/api/conftest.py); those of
SQLite's own failures on SQLite only.
"""

from __future__ import annotations

import json
import logging
import random
import sqlite3
import ssl
from collections import Counter

import httpx
import pytest
import trio

from api import assembly as server_module
from api.codecs import MAX_NESTING
from runtime import errors
from runtime.rbac.user import UserInfo
from runtime.registry import Registry
from runtime.requests import Body
from runtime.requests import ListOptions
from runtime.scheme import Scheme
from runtime.storage import MemoryStore
from runtime.client_http import open_http_client
from runtime.kubeconfig import load_kubeconfig
from runtime.testing import wait_for_object
from tests.support.server import Server, start_in_process, start_server

RBAC = "rbac.authorization.svc.io/v1"
MERGE = {"Content-Type": "application/merge-patch+json"}
ADMIN = UserInfo("admin", groups=("system:masters",))


def cr(name: str, **meta) -> dict:
    return {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": name, **meta}, "rules": []}


def role(name: str, **meta) -> dict:
    return {"apiVersion": RBAC, "kind": "Role", "metadata": {"name": name, **meta}, "rules": []}


async def create(c: httpx.AsyncClient, srv: Server, name: str, **meta) -> dict:
    r = await c.post(f"{srv.rbac}/clusterroles", json=cr(name, **meta))
    assert r.status_code == 201, r.text
    return r.json()


def count_tasks() -> int:
    """Every task running in this trio run (the server's included)."""
    def walk(task: trio.lowlevel.Task) -> int:
        return 1 + sum(walk(child) for nursery in task.child_nurseries for child in nursery.child_tasks)
    return walk(trio.lowlevel.current_root_task())


class Captured:
    """The Registry a `serve()` made, captured by patching its constructor."""

    registry: Registry | None = None


@pytest.fixture
def captured(monkeypatch) -> Captured:
    got = Captured()

    class Recording(Registry):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            got.registry = self

    monkeypatch.setattr(server_module, "Registry", Recording)
    return got


@pytest.fixture
def store_clock(store_under_test, autojump_clock):
    """The autojump clock for the memory store (and etcd's, which waits for etcd); None (the real clock)
    for SQLite, whose work runs in threads the MockClock cannot see (it would jump past their timeouts)."""
    return None if store_under_test == "sqlite" else autojump_clock


async def settle(predicate, *, step: float = 0.05, limit: float = 30.0) -> None:
    """Wait (trio time) until `predicate()` holds; fail after `limit` s.

    Polls: only for what a real server notices about its sockets (a closed connection), where no event
    reaches the test; on the MockClock the polling costs no real time.
    """
    with trio.fail_after(limit):
        while not predicate():
            await trio.sleep(step)


# ---- 1. concurrent writes ---------------------------------------------------------------------

async def test_fifty_concurrent_merge_patches_of_one_object_all_apply(nursery, tmp_path, store_clock):
    srv = await start_in_process(nursery, tmp_path)
    async with srv.client() as c:
        await create(c, srv, "contended")
        codes: Counter[int] = Counter()

        async def patch(i: int) -> None:
            r = await c.patch(f"{srv.rbac}/clusterroles/contended",
                              json={"metadata": {"annotations": {f"writer-{i}": str(i)}}}, headers=MERGE)
            codes[r.status_code] += 1

        async with trio.open_nursery() as writers:
            for i in range(50):
                writers.start_soon(patch, i)
        final = (await c.get(f"{srv.rbac}/clusterroles/contended")).json()
    # An unconditional patch is retried on conflicts (GuaranteedUpdate): never a 409, never lost.
    assert codes == {200: 50}
    assert final["metadata"]["annotations"] == {f"writer-{i}": str(i) for i in range(50)}


async def test_fifty_concurrent_counter_increments_lose_no_update(nursery, tmp_path, store_clock):
    srv = await start_in_process(nursery, tmp_path)
    url = f"{srv.rbac}/clusterroles/counter"
    async with srv.client() as c:
        await create(c, srv, "counter", annotations={"count": "0"})
        won: list[tuple[int, int]] = []  # (count written, resourceVersion answered)

        async def increment() -> None:
            while True:  # optimistic concurrency: read, write conditionally, retry on 409
                meta = (await c.get(url)).json()["metadata"]
                count = int(meta["annotations"]["count"]) + 1
                r = await c.patch(url, headers=MERGE, json={"metadata": {
                    "resourceVersion": meta["resourceVersion"], "annotations": {"count": str(count)}}})
                if r.status_code == 200:
                    won.append((count, int(r.json()["metadata"]["resourceVersion"])))
                    return
                assert r.status_code == 409, r.text
                # The client's jittered backoff: the behaviour under test (trio's clock; real for SQLite).
                await trio.sleep(random.uniform(0, 0.02))

        async with trio.open_nursery() as writers:
            for _ in range(50):
                writers.start_soon(increment)
        final = (await c.get(url)).json()["metadata"]
    assert final["annotations"]["count"] == "50"
    # Each increment won exactly one value, and the revisions order them the same way.
    assert sorted(count for count, _ in won) == list(range(1, 51))
    assert [count for count, _ in sorted(won, key=lambda w: w[1])] == list(range(1, 51))


async def test_concurrent_creates_and_deletes_of_one_name_stay_consistent(nursery, tmp_path, autojump_clock):
    srv = await start_in_process(nursery, tmp_path)
    url = f"{srv.rbac}/clusterroles"
    async with srv.client() as c:
        start = (await c.get(url)).json()["metadata"]["resourceVersion"]
        codes: Counter[tuple[str, int]] = Counter()

        async def churn() -> None:
            for i in range(20):
                if i % 2 == 0:
                    r = await c.post(url, json=cr("churn"))
                    codes["create", r.status_code] += 1
                else:
                    r = await c.delete(f"{url}/churn")
                    codes["delete", r.status_code] += 1

        async with trio.open_nursery() as workers:
            for _ in range(10):
                workers.start_soon(churn)
        exists = (await c.get(f"{url}/churn")).status_code == 200
        end = (await c.get(url)).json()["metadata"]["resourceVersion"]
        async with c.stream("GET", url, params={"watch": "1", "resourceVersion": start,
                                                "fieldSelector": "metadata.name=churn", "timeoutSeconds": "1"}) as r:
            events = [json.loads(line) async for line in r.aiter_lines() if line]
    assert set(codes) <= {("create", 201), ("create", 409), ("delete", 200), ("delete", 404)}
    created, deleted = codes["create", 201], codes["delete", 200]
    assert created - deleted == (1 if exists else 0)
    types = [e["type"] for e in events]
    # One object's history alternates ADDED / DELETED, one event per successful call, in order.
    assert types == ["ADDED", "DELETED"] * deleted + (["ADDED"] if exists else [])
    revisions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert revisions == sorted(set(revisions)) and revisions[-1] <= int(end)


@pytest.mark.parametrize("delete_first", [True, False])
async def test_a_delete_racing_the_removal_of_the_last_finalizer_always_removes_the_object(
        nursery, tmp_path, delete_first, autojump_clock):
    srv = await start_in_process(nursery, tmp_path)
    url = f"{srv.rbac}/clusterroles"
    names = [f"held-{i}" for i in range(20)]
    async with srv.client() as c:
        for name in names:
            await create(c, srv, name, finalizers=["example.com/hold"])
        codes: Counter[tuple[str, int]] = Counter()

        async def delete(name: str) -> None:
            r = await c.delete(f"{url}/{name}")
            codes["delete", r.status_code] += 1

        async def release(name: str) -> None:
            r = await c.patch(f"{url}/{name}", json={"metadata": {"finalizers": None}}, headers=MERGE)
            codes["release", r.status_code] += 1

        async with trio.open_nursery() as racers:
            for name in names:
                first, second = (delete, release) if delete_first else (release, delete)
                racers.start_soon(first, name)
                racers.start_soon(second, name)
        left = [n for n in names if (await c.get(f"{url}/{n}")).status_code != 404]
    # Whichever lands first, the object ends up gone: no terminating object without finalizers stays.
    assert left == []
    assert set(codes) <= {("delete", 200), ("delete", 404), ("release", 200), ("release", 404)}
    assert sum(n for (verb, _), n in codes.items() if verb == "delete") == len(names)


async def test_creates_racing_their_namespace_deletion_leave_no_orphans(nursery, tmp_path, store_clock):
    srv = await start_in_process(nursery, tmp_path, controllers=True)
    codes: Counter[int] = Counter()
    async with srv.client() as c, \
            open_http_client(load_kubeconfig(srv.kubeconfig), transport=srv.transport) as client:
        for round_ in range(6):
            ns = f"race-{round_}"
            r = await c.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                         "metadata": {"name": ns}})
            assert r.status_code == 201, r.text
            made, under_way = 0, trio.Event()

            async def creator(worker: int) -> None:
                nonlocal made
                for i in range(10_000):
                    r = await c.post(f"{srv.rbac}/namespaces/{ns}/roles", json=role(f"r-{worker}-{i}"))
                    codes[r.status_code] += 1
                    if r.status_code in (403, 404):  # terminating (or already gone): refused from now on
                        return
                    assert r.status_code == 201, r.text
                    made += 1
                    if made >= 8 * (round_ % 3 + 1):  # the delete comes later each round, creates under way
                        under_way.set()

            async with trio.open_nursery() as creators:
                for worker in range(8):
                    creators.start_soon(creator, worker)
                await under_way.wait()
                r = await c.delete(f"/api/v1/namespaces/{ns}")
                assert r.status_code == 200, r.text
            with trio.fail_after(60):
                await wait_for_object(client, client.scheme.by_kind("Namespace"), ns, lambda o: o is None)
            left = (await c.get(f"{srv.rbac}/namespaces/{ns}/roles")).json()["items"]
            assert [o["metadata"]["name"] for o in left] == [], f"orphans in deleted namespace {ns}"
    assert codes[201] > 0 and codes[403] > 0


@pytest.mark.stores("memory")  # its own store, or none
async def test_the_namespace_gate_makes_a_closing_delete_wait_for_creates_under_way(autojump_clock):
    from runtime.registry.namespace_gate import NamespaceGate
    gate, order = NamespaceGate(), []

    async def create_slowly(task_status=trio.TASK_STATUS_IGNORED) -> None:
        async with gate.creating("ns"):
            task_status.started()
            await trio.sleep(5)
            order.append("created")

    async def close() -> None:
        async with gate.closing("ns"):
            order.append("closed")

    async with trio.open_nursery() as tasks:
        await tasks.start(create_slowly)
        tasks.start_soon(close)
    assert order == ["created", "closed"] and len(gate) == 0


@pytest.mark.stores("memory")  # its own store, or none
async def test_the_namespace_gate_holds_creates_while_a_namespace_closes(autojump_clock):
    from runtime.registry.namespace_gate import NamespaceGate
    gate, order = NamespaceGate(), []

    async def close(task_status=trio.TASK_STATUS_IGNORED) -> None:
        async with gate.closing("ns"):
            task_status.started()
            await trio.sleep(5)
            order.append("closed")

    async def create() -> None:
        async with gate.creating("ns"):
            order.append("created")

    async def create_elsewhere() -> None:
        async with gate.creating("other"):  # other namespaces are not held up
            order.append("elsewhere")

    async with trio.open_nursery() as tasks:
        await tasks.start(close)
        tasks.start_soon(create)
        tasks.start_soon(create_elsewhere)
    assert order == ["elsewhere", "closed", "created"] and len(gate) == 0


async def test_every_watcher_sees_every_revision_once_in_order_under_concurrent_writers(nursery, tmp_path,
                                                                                        store_clock):
    srv = await start_in_process(nursery, tmp_path)
    url = f"{srv.rbac}/clusterroles"
    async with srv.client() as c:
        start = int((await c.get(url)).json()["metadata"]["resourceVersion"])
        seen: dict[int, list[int]] = {}
        caught_up = [trio.Event() for _ in range(4)]
        final = 0  # the last revision written, once known

        def check(i: int) -> None:
            if final and seen[i] and seen[i][-1] >= final:
                caught_up[i].set()

        async def watcher(i: int, task_status=trio.TASK_STATUS_IGNORED) -> None:
            got = seen[i] = []
            async with c.stream("GET", url, params={"watch": "1", "resourceVersion": str(start)},
                                timeout=httpx.Timeout(30, read=None)) as r:
                task_status.started()
                async for line in r.aiter_lines():
                    if line:
                        got.append(int(json.loads(line)["object"]["metadata"]["resourceVersion"]))
                        check(i)

        async def writer(w: int) -> None:
            for i in range(15):
                name = f"w{w}-{i}"
                assert (await c.post(url, json=cr(name))).status_code == 201
                r = await c.patch(f"{url}/{name}", json={"metadata": {"labels": {"n": str(i)}}}, headers=MERGE)
                assert r.status_code == 200, r.text
                if i % 3 == 0:
                    assert (await c.delete(f"{url}/{name}")).status_code == 200

        async with trio.open_nursery() as group:
            for i in range(4):
                await group.start(watcher, i)
            async with trio.open_nursery() as writers:
                for w in range(6):
                    writers.start_soon(writer, w)
            final = int((await create(c, srv, "final-marker"))["metadata"]["resourceVersion"])
            with trio.fail_after(120):
                for i, event in enumerate(caught_up):
                    check(i)
                    await event.wait()
            group.cancel_scope.cancel()
    # Only this test writes, and only ClusterRoles: every revision after the start is one of its events.
    expected = list(range(start + 1, final + 1))
    assert len(expected) == 6 * (15 * 2 + 5) + 1
    for i, revisions in seen.items():
        assert revisions == expected, f"watcher {i}: out of order, repeated or missing revisions"


# ---- 2. disconnects and shutdown --------------------------------------------------------------

async def test_clients_that_disconnect_mid_watch_leave_no_watcher_or_task(nursery, tmp_path, captured,
                                                                          autojump_clock):
    srv = await start_server(nursery, tmp_path)  # real HTTPS: the server must notice the connection close
    roles = captured.registry.kind_cache(captured.registry.scheme.by_kind("ClusterRole"))
    async with srv.client() as c:
        await create(c, srv, "seen")
    await trio.sleep(1)  # mock time: the server sees that client's connection close
    watchers, tasks = roles.watchers, count_tasks()
    for bookmarks in ("false", "true"):
        for _ in range(10):
            async with srv.client() as c:  # its own connection, closed on leaving
                async with c.stream("GET", f"{srv.rbac}/clusterroles",
                                    params={"watch": "1", "allowWatchBookmarks": bookmarks}) as r:
                    async for line in r.aiter_lines():
                        if line:
                            break  # one event, then hang up with the stream open
                    assert roles.watchers == watchers + 1
    await settle(lambda: roles.watchers == watchers and count_tasks() <= tasks)


async def test_a_client_that_disconnects_mid_list_stream_leaves_no_task(nursery, tmp_path, captured, autojump_clock):
    srv = await start_server(nursery, tmp_path)  # real HTTPS: the server must notice the connection close
    registry = captured.registry
    rt = registry.scheme.by_kind("ClusterRole")
    big = "x" * 1000
    for i in range(3000):
        await registry.create(ADMIN, rt, "", Body(cr(f"bulk-{i:05}", annotations={"pad": big})))
    await trio.sleep(1)  # mock time: the writes' background work settles before counting tasks
    tasks = count_tasks()
    for _ in range(5):
        async with srv.client() as c:
            async with c.stream("GET", f"{srv.rbac}/clusterroles") as r:
                assert r.status_code == 200
                async for chunk in r.aiter_raw():
                    assert chunk
                    break  # the first piece of a ~4 MB list, then hang up
    await settle(lambda: count_tasks() <= tasks)
    async with srv.client() as c:  # and the server still answers
        assert len((await c.get(f"{srv.rbac}/clusterroles", params={"limit": "10"})).json()["items"]) == 10


async def test_shutdown_with_open_watches_ends_them_and_returns(tmp_path, autojump_clock):
    stopped = trio.Event()
    ended: list[str] = []
    server_scope = trio.CancelScope()

    async def run_server(task_status=trio.TASK_STATUS_IGNORED) -> None:
        with server_scope:
            async with trio.open_nursery() as inner:
                task_status.started(await start_server(inner, tmp_path))  # real HTTPS: Hypercorn's graceful stop
                await trio.sleep_forever()
        stopped.set()

    async def watch(srv: Server, task_status=trio.TASK_STATUS_IGNORED) -> None:
        try:
            async with srv.client() as c:
                async with c.stream("GET", f"{srv.rbac}/clusterroles", params={"watch": "1"},
                                    timeout=httpx.Timeout(30, read=None)) as r:
                    task_status.started()
                    async for _ in r.aiter_lines():
                        pass
            ended.append("closed")
        except httpx.HTTPError as exc:
            ended.append(type(exc).__name__)

    async with trio.open_nursery() as outer:
        srv = await outer.start(run_server)
        for _ in range(5):
            await outer.start(watch, srv)
        server_scope.cancel()
        with trio.fail_after(30):  # trio time: hypercorn's 2 s grace, then the watches are cut
            await stopped.wait()
        await settle(lambda: len(ended) == 5)
    assert len(ended) == 5


# ---- 3. store failures ------------------------------------------------------------------------

class FlakyStore(MemoryStore):
    """A MemoryStore whose listed operations fail like SQLite on a failing disk, while `failing` names them."""

    def __init__(self) -> None:
        super().__init__()
        self.failing: set[str] = set()
        self.break_watch = 0  # the next N store watches fail at their next event

    def _check(self, op: str) -> None:
        if op in self.failing:
            raise sqlite3.OperationalError("disk I/O error")

    async def create(self, key, encode):
        self._check("create")
        return await super().create(key, encode)

    async def update(self, key, encode, *, expected_revision):
        self._check("update")
        return await super().update(key, encode, expected_revision=expected_revision)

    async def delete(self, key, *, expected_revision):
        self._check("delete")
        return await super().delete(key, expected_revision=expected_revision)

    async def get(self, key):
        self._check("get")
        return await super().get(key)

    async def list(self, prefix, **options):
        self._check("list")
        return await super().list(prefix, **options)

    follow = None  # no hand-over at commit: every event goes through `watch`, where it may break

    async def watch(self, prefix, *, after_revision):
        async for event in super().watch(prefix, after_revision=after_revision):
            if self.break_watch:
                self.break_watch -= 1
                raise sqlite3.OperationalError("disk I/O error")
            yield event


@pytest.fixture
def flaky(monkeypatch) -> FlakyStore:
    store = FlakyStore()

    async def open_store(kind, path=None):
        return store

    monkeypatch.setattr(server_module, "open_store", open_store)
    return store


@pytest.mark.stores("memory")  # its own store, or none
async def test_store_errors_answer_500_statuses_and_the_server_recovers(nursery, tmp_path, flaky, caplog,
                                                                        autojump_clock):
    srv = await start_in_process(nursery, tmp_path)
    url = f"{srv.rbac}/clusterroles"
    caplog.set_level(logging.CRITICAL, logger="api.app")  # the 500s are logged with their traceback
    async with srv.client() as c:
        await create(c, srv, "kept")
        flaky.failing = {"create", "update", "delete", "get", "list"}
        answers = [
            await c.post(url, json=cr("new")),
            await c.put(f"{url}/kept", json=cr("kept", labels={"a": "b"})),
            await c.patch(f"{url}/kept", json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE),
            await c.delete(f"{url}/kept"),
        ]
        for r in answers:
            assert r.status_code == 500, r.text
            status = r.json()
            assert status["kind"] == "Status" and status["reason"] == "InternalError"
            assert "disk I/O error" in status["message"]
        # Reads the watch cache answers still work while the store fails.
        assert (await c.get(f"{url}/kept")).status_code == 200
        flaky.failing = set()
        assert (await c.post(url, json=cr("new"))).status_code == 201
        r = await c.patch(f"{url}/kept", json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE)
        assert r.status_code == 200
        assert (await c.delete(f"{url}/new")).status_code == 200
        assert (await c.get(f"{url}/kept")).json()["metadata"]["labels"] == {"a": "b"}


@pytest.mark.stores("memory")  # its own store, or none
async def test_the_watch_cache_resumes_after_its_store_watch_fails(nursery, tmp_path, flaky, caplog, autojump_clock):
    srv = await start_in_process(nursery, tmp_path)
    cache = srv.registry.cache
    caplog.set_level(logging.CRITICAL, logger="runtime.watchcache.cache")
    async with srv.client() as c:
        flaky.break_watch = 3  # three failures in a row: backoff, then resume where it stopped
        for i in range(5):
            await create(c, srv, f"after-failure-{i}")
        await settle(lambda: cache.revision == flaky.statistics().revision)
        names = [o["metadata"]["name"] for o in (await c.get(f"{srv.rbac}/clusterroles")).json()["items"]]
        assert {f"after-failure-{i}" for i in range(5)} <= set(names)
        # Watches are fed again: a change made now reaches a new watcher.
        rv = (await c.get(f"{srv.rbac}/clusterroles")).json()["metadata"]["resourceVersion"]
        await create(c, srv, "later")
        async with c.stream("GET", f"{srv.rbac}/clusterroles", params={
                "watch": "1", "resourceVersion": rv, "timeoutSeconds": "1"}) as r:
            events = [json.loads(line) async for line in r.aiter_lines() if line]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "later")]


@pytest.mark.stores("sqlite")  # SQLite's own failures
async def test_a_failed_group_commit_fails_only_its_writes_and_the_next_one_succeeds(nursery, tmp_path,
                                                                                   monkeypatch, caplog):
    from runtime.storage.sqlite import SqliteStore
    srv = await start_in_process(nursery, tmp_path, store="sqlite")
    real = SqliteStore._apply_batch
    failures = [1]

    def apply_batch(self, batch, head):
        if failures[0]:
            failures[0] -= 1
            raise sqlite3.OperationalError("disk I/O error")
        return real(self, batch, head)

    monkeypatch.setattr(SqliteStore, "_apply_batch", apply_batch)
    caplog.set_level(logging.CRITICAL, logger="api.app")
    url = f"{srv.rbac}/clusterroles"
    async with srv.client() as c:
        before = int((await c.get(url)).json()["metadata"]["resourceVersion"])
        failed = await c.post(url, json=cr("lost"))
        assert failed.status_code == 500 and "disk I/O error" in failed.json()["message"]
        created = await create(c, srv, "next")
        # The failed batch used no revision: the next write takes the very next one.
        assert int(created["metadata"]["resourceVersion"]) == before + 1
        assert (await c.get(f"{url}/lost")).status_code == 404
        listed = (await c.get(url, params={"resourceVersion": str(before + 1), "resourceVersionMatch": "Exact"}))
        assert "next" in [o["metadata"]["name"] for o in listed.json()["items"]]


@pytest.mark.stores("sqlite")  # SQLite's own failures
async def test_a_commit_that_lands_but_reports_an_error_does_not_wedge_the_store(nursery, tmp_path, monkeypatch,
                                                                                caplog):
    from runtime.storage.sqlite import SqliteStore
    srv = await start_in_process(nursery, tmp_path, store="sqlite")
    real = SqliteStore._apply_batch
    failures = [1]

    def apply_batch(self, batch, head):
        result = real(self, batch, head)  # committed...
        if failures[0]:
            failures[0] -= 1
            raise sqlite3.OperationalError("disk I/O error")  # ...but reported as failed
        return result

    monkeypatch.setattr(SqliteStore, "_apply_batch", apply_batch)
    caplog.set_level(logging.CRITICAL, logger="api.app")
    url = f"{srv.rbac}/clusterroles"
    async with srv.client() as c:
        before = int((await c.get(url)).json()["metadata"]["resourceVersion"])
        async with c.stream("GET", url, params={"watch": "1", "resourceVersion": str(before)},
                            timeout=httpx.Timeout(30, read=None)) as watch:
            assert (await c.post(url, json=cr("unknown-outcome"))).status_code == 500
            # Later writes take the next revisions (no collision with the landed one) ...
            created = await create(c, srv, "next")
            assert int(created["metadata"]["resourceVersion"]) == before + 2
            # ... and watchers see both writes, in order.
            lines = watch.aiter_lines()
            seen = []
            with trio.fail_after(30):
                while len(seen) < 2:
                    line = await lines.__anext__()
                    if line:
                        seen.append(json.loads(line)["object"]["metadata"]["name"])
    assert seen == ["unknown-outcome", "next"]


@pytest.mark.stores("sqlite")  # SQLite's own failures
async def test_corrupt_rows_in_the_log_are_contained(nursery, tmp_path):
    scheme = Scheme()
    key = scheme.by_kind("ClusterRole").storage_key
    first = trio.CancelScope()
    done = trio.Event()

    async def run_first(task_status=trio.TASK_STATUS_IGNORED) -> None:
        with first:
            async with trio.open_nursery() as inner:
                task_status.started(await start_in_process(inner, tmp_path, store="sqlite"))
                await trio.sleep_forever()
        done.set()

    srv = await nursery.start(run_first)
    async with srv.client() as c:
        await create(c, srv, "fine")
        await create(c, srv, "victim")
    first.cancel()
    await done.wait()

    # Damage the log behind the server's back: an update of "victim" that is not JSON, a new key holding
    # a JSON array, and a row with no value at all.
    db = sqlite3.connect(tmp_path / "data" / "state.db")
    with db:
        head = db.execute("SELECT max(rev) FROM kv").fetchone()[0]
        create_rev, prev_rev = db.execute(
            "SELECT k.create_rev, k.rev FROM latest AS l JOIN kv AS k ON k.rev = l.rev WHERE l.key = ?",
            (key(None, "victim"),)).fetchone()
        db.execute("INSERT INTO kv VALUES (?, ?, ?, 0, ?, ?)",
                   (head + 1, key(None, "victim"), b'{"metadata": broken', create_rev, prev_rev))
        db.execute("UPDATE latest SET rev = ? WHERE key = ?", (head + 1, key(None, "victim")))
        for rev, name, value in ((head + 2, "array", b"[1, 2, 3]"), (head + 3, "null", None)):
            db.execute("INSERT INTO kv VALUES (?, ?, ?, 0, ?, NULL)", (rev, key(None, name), value, rev))
            db.execute("INSERT INTO latest(key, rev) VALUES (?, ?)", (key(None, name), rev))
    db.close()

    srv = await start_in_process(nursery, tmp_path, store="sqlite")
    url = f"{srv.rbac}/clusterroles"
    async with srv.client() as c:
        for name in ("victim", "array", "null"):
            r = await c.get(f"{url}/{name}")
            assert r.status_code == 500 and "corrupt object" in r.json()["message"], r.text
        listed = await c.get(url)
        assert listed.status_code == 200
        names = {o["metadata"]["name"] for o in listed.json()["items"]}
        assert "fine" in names and not names & {"victim", "array", "null"}
        # An exact list at a past revision is read from the log: the corrupt row is a 500, not a crash.
        r = await c.get(url, params={"resourceVersion": str(head + 1), "resourceVersionMatch": "Exact"})
        assert r.status_code == 500 and "corrupt object" in r.json()["message"]
        # A watch replaying the damaged log (older than the cache's history): victim turned unreadable
        # is DELETED, the others were never readable and are not shown.
        async with c.stream("GET", url, params={"watch": "1", "resourceVersion": str(head),
                                                "timeoutSeconds": "1"}) as r:
            events = [json.loads(line) async for line in r.aiter_lines() if line]
        assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("DELETED", "victim")]
        assert (await c.post(url, json=cr("still-writable"))).status_code == 201
        assert (await c.get(f"{url}/fine")).status_code == 200


def nested(depth: int, leaf: str = "1") -> str:
    return '{"a":' * depth + leaf + "}" * depth


@pytest.mark.parametrize("content_type,body", [
    ("application/json", b'{"apiVersion": "rbac.authorization.svc.io/v1", "kind": "Cluster'),
    ("application/json", b'{"apiVersion":"rbac.authorization.svc.io/v1","kind":"ClusterRole",'
                         b'"metadata":{"name":"\xff\xfe"}}'),
    ("application/yaml", b"apiVersion: rbac.authorization.svc.io/v1\nkind: ClusterRole\nmetadata: {name: \xff}\n"),
    ("application/json", nested(10_000).encode()),
    ("application/json", b"[" * 100_000 + b"]" * 100_000),
    ("application/yaml", b"a: " + b"[" * 10_000 + b"]" * 10_000),
    ("application/json", ('{"apiVersion":"rbac.authorization.svc.io/v1","kind":"ClusterRole","metadata":{"name":"d"},'
                          f'"x":{nested(MAX_NESTING)}}}').encode()),
    ("application/vnd.kubernetes.protobuf", b"k8s\x00\x0a\x02\x0a"),
], ids=["truncated", "invalid-utf8-json", "invalid-utf8-yaml", "json-10k-deep", "array-100k-deep",
        "yaml-10k-deep", "just-too-deep", "truncated-protobuf"])
async def test_malformed_bodies_are_400(server, content_type, body):
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", content=body, headers={"Content-Type": content_type})
        assert r.status_code == 400, r.text
        assert r.json()["reason"] == "BadRequest"
        assert (await c.get("/healthz")).status_code == 200


@pytest.mark.parametrize("patch_type,body", [
    ("application/strategic-merge-patch+json", '{"x":' + nested(MAX_NESTING - 1) + "}"),
    ("application/merge-patch+json", '{"x":' + nested(MAX_NESTING - 1) + "}"),
    ("application/json-patch+json", '[{"op":"add","path":"/metadata/labels","value":' + nested(MAX_NESTING - 2) + "}]"),
    ("application/apply-patch+yaml", '{"apiVersion":"rbac.authorization.svc.io/v1","kind":"ClusterRole",'
                                     '"metadata":{"name":"deep"},"x":' + nested(MAX_NESTING - 1) + "}"),
    ("application/strategic-merge-patch+json", '{"x":' + nested(MAX_NESTING) + "}"),
])
async def test_deeply_nested_patches_are_answered_not_500(server, patch_type, body):
    # Patch engines, copies and validation all recurse: at the nesting limit they must still answer.
    async with server.client() as c:
        await create(c, server, "deep")
        r = await c.patch(f"{server.rbac}/clusterroles/deep", content=body.encode(),
                          headers={"Content-Type": patch_type}, params={"fieldManager": "m"})
        assert r.status_code < 500, r.text


async def test_escaped_lone_surrogates_become_replacement_characters(server):
    body = b'{"apiVersion":"rbac.authorization.svc.io/v1","kind":"ClusterRole",' \
           b'"metadata":{"name":"s","annotations":{"k":"a\\ud800b"}}}'
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", content=body, headers={"Content-Type": "application/json"})
        assert r.status_code == 201, r.text
        assert r.json()["metadata"]["annotations"] == {"k": "a\ufffdb"}


async def raw_request(srv: Server, data: bytes, *, wait: float) -> bytes:
    """Send `data` over a fresh TLS connection and return what arrives within `wait` s (trio time)."""
    host, port = srv.url.split("://", 1)[1].rsplit(":", 1)
    ctx = ssl.create_default_context(cadata=srv.ca_pem.decode())
    stream = await trio.open_ssl_over_tcp_stream(host, int(port), ssl_context=ctx, https_compatible=True)
    received = b""
    try:
        await stream.send_all(data)
        with trio.move_on_after(wait):
            while chunk := await stream.receive_some():
                received += chunk
    finally:
        await stream.aclose()
    return received


async def test_a_body_that_stops_arriving_is_a_504_and_the_server_keeps_serving(https_server, caplog, autojump_clock):
    server = https_server  # real HTTPS: a connection that hangs up or stalls mid-body
    head = (f"POST {server.rbac}/clusterroles HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.token}\r\n"
            "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n").encode()
    # Hung up mid-body: nothing to answer, nothing logged as a server error.
    assert await raw_request(server, head + b'{"apiVersion"', wait=0) == b""
    # Stalled mid-body: the body timeout answers (trio time), the connection is not held forever.
    stalled = await raw_request(server, head + b'{"apiVersion"', wait=600)
    assert stalled.startswith(b"HTTP/1.1 504") and b'"reason":"Timeout"' in stalled
    async with server.client() as c:
        assert (await c.post(f"{server.rbac}/clusterroles", json=cr("after"))).status_code == 201
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR and r.name.startswith("api")]


async def test_huge_request_heads_are_refused_before_the_app(https_server):
    server = https_server  # real HTTPS: Hypercorn's limits
    async with server.client() as c:
        assert (await c.get(f"{server.rbac}/clusterroles", headers={"X-Big": "a" * 100_000})).status_code == 431
        # A request line past hypercorn's 16 KiB head limit: refused before the app (400 or 431).
        selector = ",".join(f"k{i}=v{i}" for i in range(10_000))
        for params in ({"labelSelector": selector[:30_000]}, {"continue": "A" * 30_000}):
            assert (await c.get(f"{server.rbac}/clusterroles", params=params)).status_code in (400, 431)
        assert (await c.get(f"{server.rbac}/clusterroles")).status_code == 200


@pytest.mark.stores("memory")  # its own store, or none
async def test_a_selector_of_ten_thousand_terms_is_served(registry):
    rt = registry.scheme.by_kind("ClusterRole")
    await registry.create(ADMIN, rt, "", Body(cr("labelled", labels={f"k{i}": f"v{i}" for i in range(50)})))
    everything = ",".join(f"k{i}=v{i}" for i in range(10_000))
    first_fifty = ",".join(f"k{i}=v{i}" for i in range(50)) + "," + ",".join(f"!z{i}" for i in range(9_950))
    assert (await registry.list(ADMIN, rt, "", ListOptions(label_selector=everything))).items == []
    assert [o.name for o in (await registry.list(ADMIN, rt, "", ListOptions(label_selector=first_fifty))).items] \
        == ["labelled"]
    stream = await registry.open_watch(ADMIN, rt, "", ListOptions(label_selector=first_fifty, timeout_seconds=1))
    assert [(t, o.name) async for t, o in stream] == [("ADDED", "labelled")]


@pytest.mark.stores("memory")  # its own store, or none
async def test_a_continue_token_of_a_megabyte_is_400(registry):
    rt = registry.scheme.by_kind("ClusterRole")
    for token in ("A" * 1_000_000, "%%%" * 300_000):
        with pytest.raises(errors.BadRequest):
            await registry.list(ADMIN, rt, "", ListOptions(limit=1, continue_token=token))


# ---- 4. memory bounds -------------------------------------------------------------------------

@pytest.mark.stores("memory")  # its own store, or none
async def test_watch_history_is_bounded_in_bytes_and_watches_from_before_it_lose_nothing(registry, autojump_clock):
    cache = registry.cache
    cache.max_history_bytes = 200_000
    rt = registry.scheme.by_kind("ClusterRole")
    created = await registry.create(ADMIN, rt, "", Body(cr("big")))
    first = created.obj.revision
    revisions = [first]
    for i in range(600):
        written = await registry.patch(ADMIN, rt, "", "big", "application/merge-patch+json",
                                       Body({"metadata": {"annotations": {"pad": f"{i:04}" + "x" * 2000}}}))
        revisions.append(written.obj.revision)
        assert await cache.wait_for(written.obj.revision, timeout=5)
        assert cache.history_bytes <= cache.max_history_bytes
    assert cache.oldest_revision > first  # the oldest events were shed
    # A watch from before the kept history replays the store's log, then follows the cache.
    stream = await registry.open_watch(ADMIN, rt, "", ListOptions(resource_version=str(first - 1)))
    seen: list[int] = []
    events = stream.__aiter__()
    try:
        while not seen or seen[-1] < revisions[-1]:
            event_type, obj = await events.__anext__()
            seen.append(obj.revision)
    finally:
        await events.aclose()
    assert seen == revisions


@pytest.mark.stores("memory")  # its own store, or none
async def test_a_slow_watcher_is_cut_off_and_resumes_without_loss(registry, autojump_clock):
    rt = registry.scheme.by_kind("ClusterRole")
    roles = registry.kind_cache(rt)
    start = registry.cache.revision
    baseline = roles.watchers
    stream = await registry.open_watch(ADMIN, rt, "", ListOptions(resource_version=str(start)))
    events = stream.__aiter__()
    written = []
    for i in range(1_200):  # more than a watcher's queue (1000) while it reads nothing
        written.append((await registry.create(ADMIN, rt, "", Body(cr(f"slow-{i:04}")))).obj.revision)
        if i == 0:
            await events.__anext__()  # registered and reading, then stalls
    await registry.cache.wait_for(written[-1])
    assert roles.watchers == baseline  # closed as overflowed: its queue is not growing any more
    seen = [written[0]]
    async for _, obj in events:  # the queued events, then the end of the stream
        seen.append(obj.revision)
    assert len(seen) < len(written)
    resumed = await registry.open_watch(ADMIN, rt, "", ListOptions(resource_version=str(seen[-1]),
                                                                   timeout_seconds=1))
    seen += [obj.revision async for _, obj in resumed]
    assert seen == written


@pytest.mark.stores("memory")  # its own store, or none
async def test_the_rbac_index_forgets_deleted_bindings(registry):
    assert await registry.cache.wait_fresh()  # the bootstrap policy is in the index
    before = registry.rbac.statistics()
    ns_rt, rb_rt, crb_rt = (registry.scheme.by_kind(k) for k in ("Namespace", "RoleBinding", "ClusterRoleBinding"))
    ref = {"apiGroup": "rbac.authorization.svc.io", "kind": "ClusterRole", "name": "view"}
    for n in range(10):
        await registry.create(ADMIN, ns_rt, "", Body({"apiVersion": "v1", "kind": "Namespace",
                                                      "metadata": {"name": f"tenant-{n}"}}))
        for b in range(5):
            await registry.create(ADMIN, rb_rt, f"tenant-{n}", Body({
                "apiVersion": RBAC, "kind": "RoleBinding", "metadata": {"name": f"b{b}"}, "roleRef": ref,
                "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.svc.io", "name": f"u-{n}-{b}"},
                             {"kind": "Group", "apiGroup": "rbac.authorization.svc.io", "name": f"g-{n}-{b}"}]}))
    for b in range(30):
        await registry.create(ADMIN, crb_rt, "", Body({
            "apiVersion": RBAC, "kind": "ClusterRoleBinding", "metadata": {"name": f"c{b}"}, "roleRef": ref,
            "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.svc.io", "name": f"cu-{b}"}]}))
    assert await registry.cache.wait_fresh()
    assert registry.rbac.statistics().role_bindings == before.role_bindings + 50
    for n in range(10):
        for b in range(5):
            await registry.delete(ADMIN, rb_rt, f"tenant-{n}", f"b{b}")
    for b in range(30):
        await registry.delete(ADMIN, crb_rt, "", f"c{b}")
    assert await registry.cache.wait_fresh()
    assert registry.rbac.statistics() == before
    # Nothing is kept for subjects or namespaces that no binding names any more.
    index = registry.rbac
    assert not any(ns.startswith("tenant-") for ns in index._bindings)
    assert not any(u.startswith("cu-") for u in index._cluster_bindings.by_user)
    assert len(registry.namespace_gate) == 0
