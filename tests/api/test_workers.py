"""`--workers N`: what one worker acknowledged, every other one serves as Kubernetes' consistency rules say.

Two workers of one SQLite data directory run in this process, each behind
its own transport, so a test picks which worker answers each request
(`tests.support.workers`). SQLite runs on real threads and the workers
wake each other over real sockets: these tests run on trio's real clock
and wait on answers and watches, never on time (a `fail_after` is a guard
against a hang, not a measure).
"""

from __future__ import annotations

import json

import httpx
import pytest
import trio

from tests.support.objects import cr
from tests.support.rbac import bind, rule, token_file
from tests.support.workers import start_workers_in_process

# The workers run on a SQLite store of their own: the API tests' default store does not matter.
pytestmark = pytest.mark.stores("memory")


async def test_a_write_through_one_worker_is_seen_by_the_next_consistent_read_on_another(nursery, tmp_path):
    a, b = await start_workers_in_process(nursery, tmp_path, 2)
    url = f"{a.rbac}/clusterroles"
    async with a.client() as ca, b.client() as cb:
        for i in range(20):
            writer, reader = (ca, cb) if i % 2 else (cb, ca)
            created = (await writer.post(url, json=cr(f"r-{i}")))
            assert created.status_code == 201, created.text
            rv = created.json()["metadata"]["resourceVersion"]
            # A GET and a list without resourceVersion are consistent reads: the write is there.
            got = await reader.get(f"{url}/r-{i}")
            assert got.status_code == 200 and got.json()["metadata"]["resourceVersion"] == rv
            listed = (await reader.get(url)).json()
            assert int(listed["metadata"]["resourceVersion"]) >= int(rv)
            assert f"r-{i}" in {o["metadata"]["name"] for o in listed["items"]}
            # An update through the reader is seen back by the writer.
            patched = await reader.patch(f"{url}/r-{i}", json={"metadata": {"labels": {"seen": "yes"}}},
                                         headers={"Content-Type": "application/merge-patch+json"})
            assert patched.status_code == 200, patched.text
            again = (await writer.get(f"{url}/r-{i}")).json()
            assert again["metadata"]["labels"] == {"seen": "yes"}
            assert again["metadata"]["resourceVersion"] == patched.json()["metadata"]["resourceVersion"]


async def test_a_watch_on_one_worker_sees_every_write_of_both_once_and_in_order(nursery, tmp_path):
    a, b = await start_workers_in_process(nursery, tmp_path, 2)
    url = f"{a.rbac}/clusterroles"
    names = [f"w-{i}" for i in range(30)]
    async with a.client() as ca, b.client() as cb:
        start = (await cb.get(url)).json()["metadata"]["resourceVersion"]
        seen: list[tuple[str, str, int]] = []
        async with cb.stream("GET", url, params={"watch": "1", "resourceVersion": start},
                             timeout=httpx.Timeout(30, read=None)) as watch:
            written: list[int] = []

            async def write() -> None:
                for i, name in enumerate(names):
                    r = await (ca if i % 3 else cb).post(url, json=cr(name))
                    assert r.status_code == 201, r.text
                    written.append(int(r.json()["metadata"]["resourceVersion"]))

            async with trio.open_nursery() as writers:
                writers.start_soon(write)
                with trio.fail_after(60):
                    async for line in watch.aiter_lines():
                        if line:
                            event = json.loads(line)
                            meta = event["object"]["metadata"]
                            seen.append((event["type"], meta["name"], int(meta["resourceVersion"])))
                            if len(seen) == len(names):
                                break
    assert [name for _, name, _ in seen] == names
    assert {kind for kind, _, _ in seen} == {"ADDED"}
    assert [rv for _, _, rv in seen] == sorted(written) == written


async def test_an_rbac_change_through_one_worker_authorizes_on_the_other(nursery, tmp_path):
    a, b = await start_workers_in_process(nursery, tmp_path, 2, token_auth_file=token_file(tmp_path))
    url = f"{a.rbac}/clusterroles"
    async with a.client() as admin_a, b.client() as admin_b, b.client(token="bob-token") as bob_b:
        assert (await bob_b.get(url)).status_code == 403
        r = await admin_a.post(url, json=cr("reader", rules=[rule(["list"], ["clusterroles"],
                                                                  groups=[f"rbac.authorization.{a.domain}"])]))
        assert r.status_code == 201, r.text
        await bind(a, "bob-reads", "ClusterRole", "reader", [{"kind": "User", "name": "bob"}])
        # Worker b is woken by a's commit: with no request to it, its cache (and authorizer) reaches the write.
        written = await a.plane.store.current_revision()
        assert await b.plane.registry.cache.wait_for(written, timeout=5)  # a guard, not a measure
        assert (await bob_b.get(url)).status_code == 200
        # And a delete through b takes the right away on a.
        async with a.client(token="bob-token") as bob_a:
            assert (await bob_a.get(url)).status_code == 200
            assert (await admin_b.delete(f"{a.rbac}/clusterrolebindings/bob-reads")).status_code == 200
            await admin_a.get(url)
            assert (await bob_a.get(url)).status_code == 403


async def test_a_continue_token_of_one_worker_is_honoured_by_another(nursery, tmp_path):
    a, b = await start_workers_in_process(nursery, tmp_path, 2)
    url = f"{a.rbac}/clusterroles"
    async with a.client() as ca, b.client() as cb:
        for i in range(6):
            assert (await ca.post(url, json=cr(f"page-{i}", page="yes"))).status_code == 201
        first = (await ca.get(url, params={"labelSelector": "page=yes", "limit": "2"})).json()
        token = first["metadata"]["continue"]
        # A write after the first page: the pages stay at the first page's revision.
        assert (await cb.post(url, json=cr("page-late", page="yes"))).status_code == 201
        names = [o["metadata"]["name"] for o in first["items"]]
        while token:
            page = await cb.get(url, params={"labelSelector": "page=yes", "limit": "2", "continue": token})
            assert page.status_code == 200, page.text
            body = page.json()
            assert body["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
            names += [o["metadata"]["name"] for o in body["items"]]
            token = body["metadata"].get("continue")
    assert names == [f"page-{i}" for i in range(6)]


async def test_only_worker_0_runs_the_built_in_controllers_and_they_act_on_every_workers_writes(nursery, tmp_path):
    a, b = await start_workers_in_process(nursery, tmp_path, 2, controllers=True)
    assert a.plane.controllers is not None and b.plane.controllers is None
    async with a.client() as ca, b.client() as cb:
        assert (await cb.post("/api/v1/namespaces", json={"metadata": {"name": "doomed"}})).status_code == 201
        role = {"metadata": {"name": "inside"}, "rules": []}
        assert (await cb.post(f"{b.rbac}/namespaces/doomed/roles", json=role)).status_code == 201
        assert (await cb.delete("/api/v1/namespaces/doomed")).status_code == 200
        # Worker 0's namespace controller empties and finalizes it; worker b sees it gone.
        rv = (await cb.get("/api/v1/namespaces")).json()["metadata"]["resourceVersion"]
        async with cb.stream("GET", "/api/v1/namespaces", params={
                "watch": "1", "resourceVersion": rv, "fieldSelector": "metadata.name=doomed"},
                timeout=httpx.Timeout(30, read=None)) as watch:
            with trio.fail_after(60):
                if (await cb.get("/api/v1/namespaces/doomed")).status_code != 404:
                    async for line in watch.aiter_lines():
                        if line and json.loads(line)["type"] == "DELETED":
                            break
        assert (await cb.get("/api/v1/namespaces/doomed")).status_code == 404
        assert (await ca.get(f"{a.rbac}/namespaces/doomed/roles/inside")).status_code == 404
