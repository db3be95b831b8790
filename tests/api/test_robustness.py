"""Robustness under load and disconnection, through the HTTP app in process, real HTTPS where the connection
matters (disconnects, shutdown), and the registry where HTTP cannot reach.

- Concurrency: contended writes to one object lose nothing, create/delete of
  one name and delete against finalizer removal stay consistent, creates
  racing their namespace's deletion leave no orphans, and every watcher sees
  every revision once, in order, under concurrent writers.
- Disconnects: clients that disconnect mid-watch or mid-list leave no watcher
  or task behind, and shutdown ends open watches.

Failures and memory bounds are in `test_robustness_failures.py`; the helpers
both use in `tests/support/robustness.py`.

Tests that wait in trio time run on the MockClock (`autojump_clock`); the
ones over SQLite (worker threads) use the real clock with generous guards
(`store_clock`: the autojump clock for memory and etcd, the real one for SQLite).
They run on every store (tests/api/conftest.py).
"""

from __future__ import annotations

import json
import random
from collections import Counter

import httpx
import pytest
import trio

from api import assembly as server_module
from runtime.server.registry import Registry
from runtime.machinery.options import Body
from runtime.client.http import open_http_client
from runtime.client.kubeconfig import load_kubeconfig
from runtime.controller.testing import wait_for_object
from tests.support.robustness import ADMIN, MERGE, count_tasks, cr, create, role, settle
from tests.support.server import Server, start_in_process, start_server


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
    from runtime.server.registry.namespace_gate import NamespaceGate
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
    from runtime.server.registry.namespace_gate import NamespaceGate
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
    assert sorted(seen) == [0, 1, 2, 3]  # every watcher started and recorded
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
                chunks = []
                async for chunk in r.aiter_raw():
                    chunks.append(chunk)
                    break  # the first piece of a ~4 MB list, then hang up
                assert chunks and chunks[0]
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
