"""The spec's resourceVersion tables (get, list, watch), cell by cell, through real HTTPS.

Every test runs on trio's MockClock (autojump): waits for versions that never
come (3 s, then 504) and history windows are instant and deterministic.
"""

from __future__ import annotations

import json

import pytest
import trio

from tests.support.objects import collection_rv, create
from tests.support.server import start_in_process


@pytest.fixture
async def srv(nursery, tmp_path, autojump_clock):
    return await start_in_process(nursery, tmp_path)


def item_names(doc: dict) -> set[str]:
    return {i["metadata"]["name"] for i in doc["items"]}


async def watch_events(c, path: str, params: dict, *, count: int | None = None) -> list[dict]:
    """Events of a watch until it ends (timeoutSeconds) or `count` non-bookmark events arrived."""
    events: list[dict] = []
    async with c.stream("GET", path, params={"watch": "1", **params}) as r:
        assert r.status_code == 200, await r.aread()
        async for line in r.aiter_lines():
            if not line:
                continue
            events.append(json.loads(line))
            if count is not None and len([e for e in events if e["type"] != "BOOKMARK"]) >= count:
                break
    return events


def assert_too_large(r, wanted: int) -> None:
    assert r.status_code == 504, r.text
    status = r.json()
    assert status["reason"] == "Timeout"
    assert status["message"].startswith(f"Timeout: Too large resource version: {wanted}, current: ")
    assert status["details"]["causes"] == [{"reason": "ResourceVersionTooLarge",
                                            "message": "Too large resource version"}]
    assert r.headers["Retry-After"] == "1"


# ---- get -----------------------------------------------------------------------------------------

async def test_get_with_resource_version_unset_is_most_recent(srv, autojump_clock):
    async with srv.client() as c:
        await create(c, srv, "g")
        r = await c.patch(f"{srv.rbac}/clusterroles/g", json={"metadata": {"labels": {"v": "2"}}},
                          headers={"Content-Type": "application/merge-patch+json"})
        got = await c.get(f"{srv.rbac}/clusterroles/g")
        assert got.json()["metadata"]["resourceVersion"] == r.json()["metadata"]["resourceVersion"]


async def test_get_with_resource_version_0_is_any(srv, autojump_clock):
    async with srv.client() as c:
        rv = await create(c, srv, "g")
        got = await c.get(f"{srv.rbac}/clusterroles/g", params={"resourceVersion": "0"})
        assert got.status_code == 200 and int(got.json()["metadata"]["resourceVersion"]) == rv


async def test_get_with_resource_version_is_not_older_than_it(srv, autojump_clock):
    async with srv.client() as c:
        rv = await create(c, srv, "g")
        await create(c, srv, "other")
        got = await c.get(f"{srv.rbac}/clusterroles/g", params={"resourceVersion": str(rv + 1)})
        assert got.status_code == 200 and got.json()["metadata"]["resourceVersion"] == str(rv)


async def test_get_of_a_version_that_never_arrives_is_504_too_large_with_retry_after(srv, autojump_clock):
    async with srv.client() as c:
        current = await collection_rv(c, srv)
        r = await c.get(f"{srv.rbac}/clusterroles/admin", params={"resourceVersion": str(current + 100)})
        assert_too_large(r, current + 100)


async def test_get_waits_for_a_version_that_arrives_within_the_wait(srv, nursery, autojump_clock):
    async with srv.client() as c:
        current = await collection_rv(c, srv)

        async def later() -> None:
            await trio.sleep(1)
            async with srv.client() as c2:
                await create(c2, srv, "late")

        nursery.start_soon(later)
        r = await c.get(f"{srv.rbac}/clusterroles/late", params={"resourceVersion": str(current + 1)})
        assert r.status_code == 200 and r.json()["metadata"]["name"] == "late"


async def test_get_with_a_malformed_resource_version_is_400(srv, autojump_clock):
    async with srv.client() as c:
        r = await c.get(f"{srv.rbac}/clusterroles/admin", params={"resourceVersion": "abc"})
        assert r.status_code == 400 and r.json()["reason"] == "BadRequest"


# ---- list: the Invalid cells -----------------------------------------------------------------------

INVALID_CELLS = [
    # (resourceVersionMatch, limit, resourceVersion, the message after 'is invalid: ')
    ("Exact", None, None, "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless "
                          "resourceVersion is provided"),
    ("Exact", None, "0", 'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for '
                         'resourceVersion "0"'),
    ("Exact", "2", None, "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless "
                         "resourceVersion is provided"),
    ("Exact", "2", "0", 'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for '
                        'resourceVersion "0"'),
    ("NotOlderThan", None, None, "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless "
                                 "resourceVersion is provided"),
    ("NotOlderThan", "2", None, "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless "
                                "resourceVersion is provided"),
]


@pytest.mark.parametrize("match,limit,rv,detail", INVALID_CELLS)
async def test_invalid_cells_of_the_list_table_are_422_invalid_list_options(
        srv, match, limit, rv, detail, autojump_clock):
    params = {"resourceVersionMatch": match}
    if limit:
        params["limit"] = limit
    if rv is not None:
        params["resourceVersion"] = rv
    async with srv.client() as c:
        r = await c.get(f"{srv.rbac}/clusterroles", params=params)
    assert r.status_code == 422, r.text
    status = r.json()
    assert status["reason"] == "Invalid"
    assert status["message"] == f'ListOptions.meta.k8s.io "" is invalid: {detail}'
    assert status["details"]["group"] == "meta.k8s.io" and status["details"]["kind"] == "ListOptions"
    assert status["details"]["causes"][0]["field"] == "resourceVersionMatch"


async def test_unsupported_resource_version_match_is_422(srv, autojump_clock):
    async with srv.client() as c:
        r = await c.get(f"{srv.rbac}/clusterroles", params={"resourceVersionMatch": "Newest",
                                                            "resourceVersion": "1"})
    assert r.status_code == 422
    assert r.json()["message"] == ('ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported '
                                   'value: "Newest": supported values: "Exact", "NotOlderThan", ""')
    assert r.json()["details"]["causes"][0]["reason"] == "FieldValueNotSupported"


async def test_resource_version_match_with_continue_is_422(srv, autojump_clock):
    async with srv.client() as c:
        for name in "abc":
            await create(c, srv, f"p-{name}")
        token = (await c.get(f"{srv.rbac}/clusterroles", params={"limit": "1"})).json()["metadata"]["continue"]
        r = await c.get(f"{srv.rbac}/clusterroles", params={"continue": token, "resourceVersion": "5",
                                                            "resourceVersionMatch": "NotOlderThan"})
    assert r.status_code == 422
    assert "resourceVersionMatch is forbidden when continue is provided" in r.json()["message"]


async def test_send_initial_events_on_a_list_is_422(srv, autojump_clock):
    async with srv.client() as c:
        r = await c.get(f"{srv.rbac}/clusterroles", params={"sendInitialEvents": "true"})
    assert r.status_code == 422
    assert r.json()["message"] == ('ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: '
                                   'sendInitialEvents is forbidden for list')


# ---- list: resourceVersionMatch unset ---------------------------------------------------------------

async def test_list_unset_no_limit_is_most_recent(srv, autojump_clock):
    async with srv.client() as c:
        rv = await create(c, srv, "fresh")
        doc = (await c.get(f"{srv.rbac}/clusterroles")).json()
        assert "fresh" in item_names(doc) and int(doc["metadata"]["resourceVersion"]) >= rv


async def test_list_0_no_limit_is_any(srv, autojump_clock):
    async with srv.client() as c:
        rv = await create(c, srv, "fresh")
        doc = (await c.get(f"{srv.rbac}/clusterroles", params={"resourceVersion": "0"})).json()
        assert int(doc["metadata"]["resourceVersion"]) >= rv and "fresh" in item_names(doc)


async def test_list_n_no_limit_is_not_older_than_n(srv, autojump_clock):
    async with srv.client() as c:
        old = await create(c, srv, "a")
        new = await create(c, srv, "b")
        doc = (await c.get(f"{srv.rbac}/clusterroles", params={"resourceVersion": str(old)})).json()
        assert int(doc["metadata"]["resourceVersion"]) >= new and {"a", "b"} <= item_names(doc)


async def test_list_n_no_limit_of_a_version_that_never_arrives_is_504(srv, autojump_clock):
    async with srv.client() as c:
        future = await collection_rv(c, srv) + 50
        assert_too_large(await c.get(f"{srv.rbac}/clusterroles", params={"resourceVersion": str(future)}), future)


async def test_list_unset_with_limit_is_most_recent(srv, autojump_clock):
    async with srv.client() as c:
        rv = await create(c, srv, "aaa-first")
        doc = (await c.get(f"{srv.rbac}/clusterroles", params={"limit": "1"})).json()
        assert [i["metadata"]["name"] for i in doc["items"]] == ["aaa-first"]
        assert int(doc["metadata"]["resourceVersion"]) >= rv and doc["metadata"]["continue"]


async def test_list_0_with_limit_is_any(srv, autojump_clock):
    async with srv.client() as c:
        rv = await create(c, srv, "aaa-first")
        doc = (await c.get(f"{srv.rbac}/clusterroles", params={"limit": "1", "resourceVersion": "0"})).json()
        assert [i["metadata"]["name"] for i in doc["items"]] == ["aaa-first"]
        assert int(doc["metadata"]["resourceVersion"]) >= rv


async def test_list_n_with_limit_is_exact(srv, autojump_clock):
    async with srv.client() as c:
        before = await create(c, srv, "aaa-1")
        await create(c, srv, "aaa-0")  # sorts first, but created after `before`
        doc = (await c.get(f"{srv.rbac}/clusterroles", params={"limit": "1", "resourceVersion": str(before)})).json()
        assert doc["metadata"]["resourceVersion"] == str(before)
        assert [i["metadata"]["name"] for i in doc["items"]] == ["aaa-1"]


async def test_list_continuation_with_resource_version_unset(srv, autojump_clock):
    async with srv.client() as c:
        for name in ("aaa-1", "aaa-2"):
            await create(c, srv, name)
        first = (await c.get(f"{srv.rbac}/clusterroles", params={"limit": "1"})).json()
        second = (await c.get(f"{srv.rbac}/clusterroles",
                              params={"limit": "1", "continue": first["metadata"]["continue"]})).json()
        assert [i["metadata"]["name"] for i in second["items"]] == ["aaa-2"]
        assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


async def test_list_continuation_with_resource_version_0_is_a_continuation(srv, autojump_clock):
    async with srv.client() as c:
        for name in ("aaa-1", "aaa-2"):
            await create(c, srv, name)
        first = (await c.get(f"{srv.rbac}/clusterroles", params={"limit": "1"})).json()
        r = await c.get(f"{srv.rbac}/clusterroles", params={"limit": "1", "resourceVersion": "0",
                                                            "continue": first["metadata"]["continue"]})
        assert r.status_code == 200
        assert [i["metadata"]["name"] for i in r.json()["items"]] == ["aaa-2"]


async def test_list_continuation_with_a_resource_version_is_400(srv, autojump_clock):
    async with srv.client() as c:
        for name in ("aaa-1", "aaa-2"):
            await create(c, srv, name)
        first = (await c.get(f"{srv.rbac}/clusterroles", params={"limit": "1"})).json()
        r = await c.get(f"{srv.rbac}/clusterroles", params={
            "limit": "1", "continue": first["metadata"]["continue"],
            "resourceVersion": first["metadata"]["resourceVersion"]})
    assert r.status_code == 400
    assert r.json()["message"] == "specifying resource version is not allowed when using continue"


# ---- list: Exact ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("limit", [None, "100"])
async def test_list_exact_is_the_collection_at_exactly_that_version(srv, limit, autojump_clock):
    async with srv.client() as c:
        at = await create(c, srv, "x-kept")
        await create(c, srv, "x-later")
        await c.delete(f"{srv.rbac}/clusterroles/x-kept")
        params = {"resourceVersion": str(at), "resourceVersionMatch": "Exact"}
        if limit:
            params["limit"] = limit
        doc = (await c.get(f"{srv.rbac}/clusterroles", params=params)).json()
        assert doc["metadata"]["resourceVersion"] == str(at)
        names = item_names(doc)
        assert "x-kept" in names and "x-later" not in names


@pytest.mark.parametrize("gates", [{}, {"ListFromCacheSnapshot": False}])
async def test_list_exact_answers_the_same_from_a_snapshot_and_from_the_store(nursery, tmp_path, autojump_clock,
                                                                             gates):
    from runtime.server.featuregates import DEFAULT_GATES
    srv = await start_in_process(nursery, tmp_path, feature_gates=dict(DEFAULT_GATES, **gates))
    async with srv.client() as c:
        at = await create(c, srv, "s-1")
        await c.patch(f"{srv.rbac}/clusterroles/s-1", json={"metadata": {"labels": {"x": "y"}}},
                      headers={"Content-Type": "application/merge-patch+json"})
        await create(c, srv, "s-2")
        doc = (await c.get(f"{srv.rbac}/clusterroles",
                           params={"resourceVersion": str(at), "resourceVersionMatch": "Exact"})).json()
        s1 = [i for i in doc["items"] if i["metadata"]["name"] == "s-1"][0]
        assert s1["metadata"]["resourceVersion"] == str(at) and "labels" not in s1["metadata"]
        assert "s-2" not in item_names(doc)


async def test_list_exact_of_a_version_that_never_arrives_is_504(srv, autojump_clock):
    async with srv.client() as c:
        future = await collection_rv(c, srv) + 10
        r = await c.get(f"{srv.rbac}/clusterroles",
                        params={"resourceVersion": str(future), "resourceVersionMatch": "Exact"})
        assert_too_large(r, future)


async def test_list_exact_of_a_compacted_version_is_410_expired(nursery, tmp_path, autojump_clock):
    srv = await start_in_process(nursery, tmp_path, watch_history=5, compaction_interval=1)
    async with srv.client() as c:
        at = await create(c, srv, "old")
        await create(c, srv, "newer")
        await trio.sleep(30)
        r = await c.get(f"{srv.rbac}/clusterroles",
                        params={"resourceVersion": str(at), "resourceVersionMatch": "Exact"})
    assert r.status_code == 410
    assert r.json()["reason"] == "Expired"
    assert r.json()["message"] == "The resourceVersion for the provided list is too old."


async def test_list_timeout_seconds_bounds_the_wait_for_a_version(srv, autojump_clock):
    async with srv.client() as c:
        future = await collection_rv(c, srv) + 10
        start = trio.current_time()
        r = await c.get(f"{srv.rbac}/clusterroles", params={"resourceVersion": str(future), "timeoutSeconds": "1"})
        assert_too_large(r, future)
        assert trio.current_time() - start < 3  # mock time: the 1 s bound, not the 3 s default


# ---- list: NotOlderThan ---------------------------------------------------------------------------------

@pytest.mark.parametrize("limit", [None, "1"])
async def test_list_not_older_than_0_is_any(srv, limit, autojump_clock):
    async with srv.client() as c:
        rv = await create(c, srv, "aaa")
        params = {"resourceVersion": "0", "resourceVersionMatch": "NotOlderThan"}
        if limit:
            params["limit"] = limit
        doc = (await c.get(f"{srv.rbac}/clusterroles", params=params)).json()
        assert int(doc["metadata"]["resourceVersion"]) >= rv and "aaa" in item_names(doc)


@pytest.mark.parametrize("limit", [None, "1"])
async def test_list_not_older_than_n_is_at_least_n(srv, limit, autojump_clock):
    async with srv.client() as c:
        old = await create(c, srv, "aaa")
        new = await create(c, srv, "aab")
        params = {"resourceVersion": str(old), "resourceVersionMatch": "NotOlderThan"}
        if limit:
            params["limit"] = limit
        doc = (await c.get(f"{srv.rbac}/clusterroles", params=params)).json()
        assert int(doc["metadata"]["resourceVersion"]) >= new and "aaa" in item_names(doc)


@pytest.mark.parametrize("limit", [None, "1"])
async def test_list_not_older_than_a_version_that_never_arrives_is_504(srv, limit, autojump_clock):
    async with srv.client() as c:
        future = await collection_rv(c, srv) + 10
        params = {"resourceVersion": str(future), "resourceVersionMatch": "NotOlderThan"}
        if limit:
            params["limit"] = limit
        assert_too_large(await c.get(f"{srv.rbac}/clusterroles", params=params), future)


async def test_not_older_than_with_limit_is_410_once_its_version_is_no_longer_available(
        nursery, tmp_path, autojump_clock):
    srv = await start_in_process(nursery, tmp_path, watch_history=5, compaction_interval=1)
    async with srv.client() as c:
        rv = await create(c, srv, "aaa-1")
        await create(c, srv, "aaa-2")
        first = (await c.get(f"{srv.rbac}/clusterroles", params={
            "resourceVersion": str(rv), "resourceVersionMatch": "NotOlderThan", "limit": "1"})).json()
        await create(c, srv, "aaa-3")  # the next compaction passes the list's version
        await trio.sleep(30)
        r = await c.get(f"{srv.rbac}/clusterroles", params={"limit": "1",
                                                            "continue": first["metadata"]["continue"]})
    assert r.status_code == 410 and r.json()["reason"] == "Expired"


# ---- watch -------------------------------------------------------------------------------------------

async def test_watch_unset_gets_state_and_starts_at_most_recent(srv, nursery, autojump_clock):
    async with srv.client() as c:
        await create(c, srv, "w-existing")
        events = await watch_events(c, f"{srv.rbac}/clusterroles", {"timeoutSeconds": "2"})
    added = [e["object"]["metadata"]["name"] for e in events if e["type"] == "ADDED"]
    assert "w-existing" in added and "admin" in added  # the whole current state, synthetic ADDED


async def test_watch_0_gets_state_and_starts_at_any(srv, autojump_clock):
    async with srv.client() as c:
        await create(c, srv, "w-existing")
        events = await watch_events(c, f"{srv.rbac}/clusterroles", {"resourceVersion": "0", "timeoutSeconds": "2"})
    assert "w-existing" in [e["object"]["metadata"]["name"] for e in events if e["type"] == "ADDED"]


async def test_watch_n_starts_at_exact_n(srv, autojump_clock):
    async with srv.client() as c:
        await create(c, srv, "w-before")
        rv = await collection_rv(c, srv)
        await create(c, srv, "w-after")
        events = await watch_events(c, f"{srv.rbac}/clusterroles", {"resourceVersion": str(rv), "timeoutSeconds": "2"})
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "w-after")]
