"""The spec's watch rules through the HTTP app in process: stream shape (also over real HTTPS), start
versions, bookmarks, initial events, history and 410, waiting for future versions, timeouts, selectors,
informer resume.

Every test runs on trio's MockClock (autojump): a watch's timeoutSeconds ends
it as soon as everything else is idle, deterministically.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import httpx
import pytest
import trio

from tests.support.objects import collection_rv, cr, create
from tests.support.server import start_in_process


MERGE = {"Content-Type": "application/merge-patch+json"}


@pytest.fixture
async def srv(nursery, tmp_path, autojump_clock):
    return await start_in_process(nursery, tmp_path)


async def relabel(c, srv, name: str, **labels) -> int:
    r = await c.patch(f"{srv.rbac}/clusterroles/{name}", json={"metadata": {"labels": labels}}, headers=MERGE)
    assert r.status_code == 200, r.text
    return int(r.json()["metadata"]["resourceVersion"])


async def watch(c, path: str, **params) -> list[dict]:
    """Every event of a watch until the server ends it (pass timeoutSeconds)."""
    async with c.stream("GET", path, params={"watch": "1", **params}, timeout=httpx.Timeout(30, read=None)) as r:
        assert r.status_code == 200, await r.aread()
        return [json.loads(line) async for line in r.aiter_lines() if line]


def typed(events: list[dict], *, bookmarks: bool = False) -> list[tuple[str, str]]:
    return [(e["type"], e["object"]["metadata"].get("name", "")) for e in events
            if bookmarks or e["type"] != "BOOKMARK"]


# ---- 1. the stream -------------------------------------------------------------------------------

@pytest.mark.parametrize("flag", ["1", "true"])
async def test_watch_is_a_chunked_stream_of_type_and_object_documents(https_server, flag, autojump_clock):
    srv = https_server  # real HTTPS: the chunked transfer encoding is Hypercorn's
    async with srv.client() as c:
        rv = await collection_rv(c, srv)
        await create(c, srv, "w")
        async with c.stream("GET", f"{srv.rbac}/clusterroles",
                            params={"watch": flag, "resourceVersion": str(rv), "timeoutSeconds": "1"}) as r:
            assert r.headers.get("transfer-encoding") == "chunked"
            assert r.headers["content-type"] == "application/json"
            lines = [line async for line in r.aiter_lines() if line]
    doc = json.loads(lines[0])
    assert set(doc) == {"type", "object"} and doc["type"] == "ADDED"
    assert doc["object"]["kind"] == "ClusterRole" and doc["object"]["metadata"]["name"] == "w"


async def test_events_queued_for_a_watch_are_written_together(srv, autojump_clock):
    # kube-apiserver's serveWatch flushes once its channel is empty: a backlog is one write, not one per event.
    async with srv.client() as c:
        rv = await collection_rv(c, srv)
        async with c.stream("GET", f"{srv.rbac}/clusterroles", params={"watch": "1", "resourceVersion": str(rv),
                            "timeoutSeconds": "30"}, timeout=httpx.Timeout(30, read=None)) as r:
            writes = r.aiter_raw()  # in process: one chunk per write of the app
            await create(c, srv, "first")
            received = [await writes.__anext__()]
            for i in range(20):
                await create(c, srv, f"queued-{i}")  # the watch is not read meanwhile: its events queue
            while b"".join(received).count(b"\n") < 21:
                received.append(await writes.__anext__())
    events = [json.loads(line) for line in b"".join(received).splitlines() if line]
    assert [e["object"]["metadata"]["name"] for e in events] == ["first", *(f"queued-{i}" for i in range(20))]
    assert len(received) <= 3  # the first, the one in flight when the queue began, then the rest at once


async def test_watch_of_one_object_by_field_selector_sees_only_it(srv, autojump_clock):
    async with srv.client() as c:
        rv = await collection_rv(c, srv)
        await create(c, srv, "one")
        await create(c, srv, "other")
        await relabel(c, srv, "one", x="y")
        events = await watch(c, f"{srv.rbac}/clusterroles", resourceVersion=str(rv),
                             fieldSelector="metadata.name=one", timeoutSeconds="1")
    assert typed(events) == [("ADDED", "one"), ("MODIFIED", "one")]


async def test_watch_of_a_namespace_sees_only_that_namespace(srv, autojump_clock):
    async with srv.client() as c:
        for ns in ("wa", "wb"):
            await c.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        rv = await collection_rv(c, srv)
        for ns in ("wa", "wb"):
            await c.post(f"{srv.rbac}/namespaces/{ns}/roles", json={
                "apiVersion": "rbac.authorization.svc.io/v1", "kind": "Role",
                "metadata": {"name": f"r-{ns}"}, "rules": []})
        events = await watch(c, f"{srv.rbac}/namespaces/wa/roles", resourceVersion=str(rv), timeoutSeconds="1")
    assert typed(events) == [("ADDED", "r-wa")]


async def test_deleted_event_carries_the_last_state_at_the_deletes_version(srv, autojump_clock):
    async with srv.client() as c:
        await create(c, srv, "gone", keep="me")
        rv = await collection_rv(c, srv)
        await c.delete(f"{srv.rbac}/clusterroles/gone")
        after = await collection_rv(c, srv)
        events = await watch(c, f"{srv.rbac}/clusterroles", resourceVersion=str(rv), timeoutSeconds="1")
    assert typed(events) == [("DELETED", "gone")]
    obj = events[0]["object"]
    assert obj["metadata"]["labels"] == {"keep": "me"} and obj["metadata"]["resourceVersion"] == str(after)


# ---- 2. list, then watch from its version; resume after a disconnect ------------------------------

async def test_watch_from_a_lists_version_misses_nothing_after_it(srv, autojump_clock):
    async with srv.client() as c:
        rv = await collection_rv(c, srv)
        await create(c, srv, "a")
        await relabel(c, srv, "a", v="2")
        await create(c, srv, "b")
        await c.delete(f"{srv.rbac}/clusterroles/a")
        events = await watch(c, f"{srv.rbac}/clusterroles", resourceVersion=str(rv), timeoutSeconds="1")
    assert typed(events) == [("ADDED", "a"), ("MODIFIED", "a"), ("ADDED", "b"), ("DELETED", "a")]
    versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert versions == sorted(versions) and versions[0] > rv


async def test_rewatch_from_the_last_seen_version_neither_repeats_nor_misses(srv, autojump_clock):
    async with srv.client() as c:
        rv = await collection_rv(c, srv)
        await create(c, srv, "a")
        first = await watch(c, f"{srv.rbac}/clusterroles", resourceVersion=str(rv), timeoutSeconds="1")
        await create(c, srv, "b")
        last = first[-1]["object"]["metadata"]["resourceVersion"]
        second = await watch(c, f"{srv.rbac}/clusterroles", resourceVersion=last, timeoutSeconds="1")
    assert typed(first) == [("ADDED", "a")] and typed(second) == [("ADDED", "b")]


INFORMER_WRITES = 1000


async def test_informer_sees_every_change_exactly_once_across_forced_disconnects(srv, nursery, autojump_clock):
    """list, watch from the list's version, resume from the last seen version when the server
    closes the stream (timeoutSeconds=1): 1,000 writes, at least 3 disconnects."""
    path = f"{srv.rbac}/clusterroles"
    written: list[tuple[str, str, str | None]] = []
    seen: list[tuple[str, str, str]] = []
    disconnects = 0
    writes_done = trio.Event()
    listed_first = trio.Event()  # the writer starts after the list: every write is then a watch event

    async def informer(c) -> None:
        nonlocal disconnects
        listed = (await c.get(path, params={"labelSelector": "informer"})).json()
        rv = listed["metadata"]["resourceVersion"]
        listed_first.set()
        while True:
            async with c.stream("GET", path, params={
                    "watch": "1", "resourceVersion": rv, "labelSelector": "informer",
                    "allowWatchBookmarks": "true", "timeoutSeconds": "1"}) as r:
                assert r.status_code == 200
                async for line in r.aiter_lines():
                    if not line:
                        continue
                    event = json.loads(line)
                    assert event["type"] != "ERROR", event
                    rv = event["object"]["metadata"]["resourceVersion"]
                    if event["type"] != "BOOKMARK":
                        seen.append((event["type"], event["object"]["metadata"]["name"], rv))
            if writes_done.is_set() and len(seen) >= len(written):
                return
            disconnects += 1

    async def writer(c) -> None:
        await listed_first.wait()
        live: list[str] = []
        for i in range(INFORMER_WRITES):
            if i % 250 == 249:
                await trio.sleep(2)  # let the clock pass the watch's timeout: a forced disconnect
            if i % 3 == 0 or not live:
                name = f"inf-{i}"
                r = await c.post(path, json=cr(name, informer="yes"))
                written.append(("ADDED", name, r.json()["metadata"]["resourceVersion"]))
                live.append(name)
            elif i % 3 == 1:
                name = live[i % len(live)]
                r = await c.patch(f"{path}/{name}", json={"metadata": {"labels": {"n": str(i)}}}, headers=MERGE)
                written.append(("MODIFIED", name, r.json()["metadata"]["resourceVersion"]))
            else:
                name = live.pop(0)
                r = await c.delete(f"{path}/{name}")
                assert r.status_code == 200
                written.append(("DELETED", name, None))
        writes_done.set()

    async with srv.client() as c, srv.client() as w:
        with trio.fail_after(3600):  # mock time
            async with trio.open_nursery() as inner:
                inner.start_soon(informer, c)
                inner.start_soon(writer, w)
    assert len(written) == INFORMER_WRITES and disconnects >= 3
    assert len(seen) == len(written)
    assert len({rv for _, _, rv in seen}) == len(seen)  # no event twice
    per_object_written, per_object_seen = defaultdict(list), defaultdict(list)
    for kind, name, rv in written:
        per_object_written[name].append((kind, rv))
    for kind, name, rv in seen:
        per_object_seen[name].append((kind, rv if kind != "DELETED" else None))
    assert per_object_seen == per_object_written


# ---- 3. bookmarks -------------------------------------------------------------------------------------

async def test_bookmarks_are_sent_only_when_allowed(srv, autojump_clock):
    async with srv.client() as c:
        rv = await collection_rv(c, srv)
        await create(c, srv, "a")
        without = await watch(c, f"{srv.rbac}/clusterroles", resourceVersion=str(rv), timeoutSeconds="12")
        with_bm = await watch(c, f"{srv.rbac}/clusterroles", resourceVersion=str(rv), timeoutSeconds="12",
                              allowWatchBookmarks="true")
    assert "BOOKMARK" not in {e["type"] for e in without}
    assert "BOOKMARK" in {e["type"] for e in with_bm}


async def test_a_bookmark_holds_kind_api_version_and_resource_version_only(srv, autojump_clock):
    async with srv.client() as c:
        rv = await collection_rv(c, srv)
        last = await create(c, srv, "a")
        events = await watch(c, f"{srv.rbac}/clusterroles", resourceVersion=str(rv), timeoutSeconds="12",
                             allowWatchBookmarks="true")
    bookmarks = [e["object"] for e in events if e["type"] == "BOOKMARK"]
    assert bookmarks and all(b == {"kind": "ClusterRole", "apiVersion": "rbac.authorization.svc.io/v1",
                                   "metadata": {"resourceVersion": b["metadata"]["resourceVersion"]}}
                             for b in bookmarks)
    assert int(bookmarks[-1]["metadata"]["resourceVersion"]) >= last


async def test_a_bookmark_is_sent_before_the_timeout_closes_the_watch(srv, autojump_clock):
    async with srv.client() as c:
        rv = await collection_rv(c, srv)
        last = await create(c, srv, "a")
        events = await watch(c, f"{srv.rbac}/clusterroles", resourceVersion=str(rv), timeoutSeconds="1",
                             allowWatchBookmarks="true")
    assert typed(events, bookmarks=True)[-1][0] == "BOOKMARK"
    assert events[-1]["object"]["metadata"]["resourceVersion"] == str(last)


# ---- 4/5. initial events --------------------------------------------------------------------------

async def test_send_initial_events_sends_the_state_then_an_annotated_bookmark_then_changes(
        srv, nursery, autojump_clock):
    async with srv.client() as c:
        await create(c, srv, "init-a")
        rv = await collection_rv(c, srv)
        total = len((await c.get(f"{srv.rbac}/clusterroles")).json()["items"])
        events: list[dict] = []
        async with c.stream("GET", f"{srv.rbac}/clusterroles", params={
                "watch": "1", "sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan",
                "resourceVersion": str(rv), "allowWatchBookmarks": "true", "timeoutSeconds": "30"}) as r:
            async for line in r.aiter_lines():
                if not line:
                    continue
                events.append(json.loads(line))
                if events[-1]["type"] == "BOOKMARK" and len(events) == total + 1:
                    await create(c, srv, "init-b")
                if events[-1]["type"] == "ADDED" and events[-1]["object"]["metadata"]["name"] == "init-b":
                    break
    assert [e["type"] for e in events[:total]] == ["ADDED"] * total
    assert "init-a" in {e["object"]["metadata"]["name"] for e in events[:total]}
    end = events[total]
    assert end["type"] == "BOOKMARK"
    assert end["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert int(end["object"]["metadata"]["resourceVersion"]) >= rv
    assert typed(events[total + 1:]) == [("ADDED", "init-b")]


async def test_send_initial_events_without_resource_version_is_a_consistent_read(srv, autojump_clock):
    async with srv.client() as c:
        rv = await create(c, srv, "latest")
        events = await watch(c, f"{srv.rbac}/clusterroles", sendInitialEvents="true",
                             resourceVersionMatch="NotOlderThan", allowWatchBookmarks="true", timeoutSeconds="1")
    end = [e for e in events if e["type"] == "BOOKMARK"][0]
    assert int(end["object"]["metadata"]["resourceVersion"]) >= rv
    assert ("ADDED", "latest") in typed(events)


async def test_send_initial_events_waits_for_a_version_not_yet_reached(srv, nursery, autojump_clock):
    async with srv.client() as c:
        rv = await collection_rv(c, srv)

        async def later() -> None:
            await trio.sleep(5)
            async with srv.client() as c2:
                await create(c2, srv, "arrives")

        nursery.start_soon(later)
        events = await watch(c, f"{srv.rbac}/clusterroles", sendInitialEvents="true",
                             resourceVersionMatch="NotOlderThan", resourceVersion=str(rv + 1),
                             allowWatchBookmarks="true", timeoutSeconds="20")
    names = [n for t, n in typed(events) if t == "ADDED"]
    assert "arrives" in names
    end = [e for e in events if e["type"] == "BOOKMARK"][0]
    assert int(end["object"]["metadata"]["resourceVersion"]) >= rv + 1


async def test_send_initial_events_for_a_version_that_never_arrives_ends_in_a_504_error_event(srv, autojump_clock):
    async with srv.client() as c:
        future = await collection_rv(c, srv) + 100
        events = await watch(c, f"{srv.rbac}/clusterroles", sendInitialEvents="true",
                             resourceVersionMatch="NotOlderThan", resourceVersion=str(future))
    assert [e["type"] for e in events] == ["ERROR"]
    assert events[0]["object"]["code"] == 504 and events[0]["object"]["reason"] == "Timeout"
    assert "Too large resource version" in events[0]["object"]["message"]


async def test_initial_events_without_bookmarks_have_no_end_bookmark(srv, autojump_clock):
    async with srv.client() as c:
        events = await watch(c, f"{srv.rbac}/clusterroles", sendInitialEvents="true",
                             resourceVersionMatch="NotOlderThan", timeoutSeconds="1")
    assert events and {e["type"] for e in events} == {"ADDED"}


async def test_send_initial_events_false_with_a_version_starts_at_exactly_it(srv, autojump_clock):
    async with srv.client() as c:
        rv = await collection_rv(c, srv)
        await create(c, srv, "after")
        events = await watch(c, f"{srv.rbac}/clusterroles", sendInitialEvents="false",
                             resourceVersionMatch="NotOlderThan", resourceVersion=str(rv), timeoutSeconds="1")
    assert typed(events) == [("ADDED", "after")]


WATCH_INVALID = [
    ({"sendInitialEvents": "true"},
     "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"),
    ({"resourceVersionMatch": "NotOlderThan", "resourceVersion": "1"},
     "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents "
     "is provided"),
    ({"sendInitialEvents": "true", "resourceVersionMatch": "Exact", "resourceVersion": "1"},
     '[resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, '
     'resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]'),
]


@pytest.mark.parametrize("params,detail", WATCH_INVALID)
async def test_invalid_watch_options_are_422(srv, params, detail, autojump_clock):
    async with srv.client() as c:
        r = await c.get(f"{srv.rbac}/clusterroles", params={"watch": "1", **params})
    assert r.status_code == 422, r.text
    assert r.json()["message"] == f'ListOptions.meta.k8s.io "" is invalid: {detail}'


# ---- 6. history, 410 --------------------------------------------------------------------------------

async def test_watch_from_a_version_no_longer_kept_is_a_200_stream_starting_with_a_410_error(
        nursery, tmp_path, autojump_clock):
    srv = await start_in_process(nursery, tmp_path, watch_history=5, compaction_interval=1)
    async with srv.client() as c:
        rv = await collection_rv(c, srv)
        await create(c, srv, "a")
        await create(c, srv, "b")
        await trio.sleep(30)  # past the window: the cache trims, the store compacts
        events = await watch(c, f"{srv.rbac}/clusterroles", resourceVersion=str(rv), timeoutSeconds="5")
    assert events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert status["kind"] == "Status" and status["code"] == 410 and status["reason"] == "Expired"
    assert status["message"].startswith(f"too old resource version: {rv} (")
    assert len(events) == 1


async def test_watch_older_than_the_cache_history_is_served_from_the_stores_log(nursery, tmp_path, autojump_clock):
    srv = await start_in_process(nursery, tmp_path, watch_history=5, compaction_interval=100_000)
    async with srv.client() as c:
        rv = await collection_rv(c, srv)
        await create(c, srv, "a", team="x")
        await relabel(c, srv, "a", team="y")
        await create(c, srv, "b", team="x")
        await trio.sleep(30)  # the cache's history no longer reaches rv; the store's log does
        await create(c, srv, "c", team="x")
        events = await watch(c, f"{srv.rbac}/clusterroles", resourceVersion=str(rv),
                             labelSelector="team=x", timeoutSeconds="5")
    assert typed(events) == [("ADDED", "a"), ("DELETED", "a"), ("ADDED", "b"), ("ADDED", "c")]


async def test_history_within_the_window_is_served(nursery, tmp_path, autojump_clock):
    srv = await start_in_process(nursery, tmp_path, watch_history=60, compaction_interval=1)
    async with srv.client() as c:
        rv = await collection_rv(c, srv)
        await create(c, srv, "a")
        await trio.sleep(50)
        events = await watch(c, f"{srv.rbac}/clusterroles", resourceVersion=str(rv), timeoutSeconds="1")
    assert typed(events) == [("ADDED", "a")]


# ---- 7. a version from the future waits ----------------------------------------------------------

async def test_watch_from_a_version_newer_than_the_store_waits_for_it(srv, nursery, autojump_clock):
    async with srv.client() as c:
        rv = await collection_rv(c, srv)

        async def later() -> None:
            await trio.sleep(2)
            async with srv.client() as c2:
                for name in ("f1", "f2", "f3"):
                    await create(c2, srv, name)

        nursery.start_soon(later)
        events = await watch(c, f"{srv.rbac}/clusterroles", resourceVersion=str(rv + 2), timeoutSeconds="10")
    assert typed(events) == [("ADDED", "f3")]


# ---- timeouts ------------------------------------------------------------------------------------

async def test_timeout_seconds_ends_the_watch(srv, autojump_clock):
    async with srv.client() as c:
        rv = await collection_rv(c, srv)
        start = trio.current_time()
        events = await watch(c, f"{srv.rbac}/clusterroles", resourceVersion=str(rv), timeoutSeconds="7")
        assert events == [] and trio.current_time() - start >= 7  # mock time


# ---- selectors ------------------------------------------------------------------------------------

async def test_an_object_that_starts_matching_is_added_and_one_that_stops_is_deleted(srv, autojump_clock):
    async with srv.client() as c:
        await create(c, srv, "sel", team="b")
        rv = await collection_rv(c, srv)
        into = await relabel(c, srv, "sel", team="a")
        await relabel(c, srv, "sel", team="a", extra="1")
        out = await relabel(c, srv, "sel", team="b")
        await relabel(c, srv, "sel", team="c")
        events = await watch(c, f"{srv.rbac}/clusterroles", resourceVersion=str(rv), labelSelector="team=a",
                             timeoutSeconds="1")
    assert typed(events) == [("ADDED", "sel"), ("MODIFIED", "sel"), ("DELETED", "sel")]
    assert events[0]["object"]["metadata"]["resourceVersion"] == str(into)
    gone = events[2]["object"]["metadata"]
    assert gone["resourceVersion"] == str(out) and gone["labels"]["team"] == "a"  # the last matching state


async def test_many_watchers_each_see_every_event(srv, nursery, autojump_clock):
    async with srv.client() as c:
        rv = await collection_rv(c, srv)
        for i in range(5):
            await create(c, srv, f"m{i}")
        results: list[list[dict]] = []

        async def one() -> None:
            async with srv.client() as cc:
                results.append(await watch(cc, f"{srv.rbac}/clusterroles", resourceVersion=str(rv),
                                           timeoutSeconds="2"))

        async with trio.open_nursery() as inner:
            for _ in range(10):
                inner.start_soon(one)
    assert len(results) == 10
    assert Counter(tuple(typed(r)) for r in results) == Counter(
        {tuple(("ADDED", f"m{i}") for i in range(5)): 10})
