"""Faults around etcd: etcd stopped or hung under load (503 within the store's timeout, never a hang, the
server lives on), watches across an outage (clients resume from their last version: no event lost or
repeated), and the built-in controllers' leader killed -9 (another server takes over).
"""

from __future__ import annotations

import itertools
import json
import os
import signal
from collections import Counter

import httpx
import pytest
import trio

from api.assembly import CONTROLLERS_LEASE
from tests.support.etcd import EtcdServer, fresh_prefix
from tests.support.objects import cr
from tests.support.server import Server, start_in_process
from tests.support.serverproc import admin_client, spawn_server

MERGE = {"Content-Type": "application/merge-patch+json"}
#: Seconds each call to etcd may take (the `timeout` store option): a hung etcd costs a request this long.
ETCD_TIMEOUT = 3.0
#: A guard far above anything a request should take: reaching it means the server hung.
NO_HANG = 30


async def on_etcd(nursery, tmp_path, etcd: EtcdServer) -> Server:
    return await start_in_process(nursery, tmp_path, store=f"etcd://{etcd.endpoint}?timeout={ETCD_TIMEOUT}")


class Load:
    """Clients creating, reading, listing and patching in a loop; every answer's status counted by phase."""

    def __init__(self, srv: Server) -> None:
        self.srv = srv
        self.phase = "up"
        self.statuses: dict[str, Counter[int]] = {}
        self._names = itertools.count()

    async def client(self, worker: int) -> None:
        srv = self.srv
        async with srv.client(timeout=NO_HANG) as c:
            await c.post(f"{srv.rbac}/clusterroles", json=cr(f"load-{worker}"))
            while True:
                requests = [
                    lambda: c.post(f"{srv.rbac}/clusterroles", json=cr(f"load-{worker}-{next(self._names)}")),
                    lambda: c.get(f"{srv.rbac}/clusterroles/load-{worker}"),
                    lambda: c.get(f"{srv.rbac}/clusterroles", params={"limit": "5"}),
                    lambda: c.patch(f"{srv.rbac}/clusterroles/load-{worker}", headers=MERGE,
                                    json={"metadata": {"labels": {"n": str(next(self._names))}}}),
                ]
                for send in requests:
                    phase = self.phase
                    with trio.fail_after(NO_HANG):  # never hangs
                        r = await send()
                    self.statuses.setdefault(phase, Counter())[r.status_code] += 1
                    if r.status_code == 503:
                        assert r.json()["reason"] == "ServiceUnavailable" and r.headers["Retry-After"] == "1"

    async def until(self, phase: str, status: int, count: int) -> None:
        with trio.fail_after(NO_HANG * 2):
            while self.statuses.get(phase, Counter())[status] < count:
                await trio.sleep(0.05)  # real clients against a real etcd: nothing to wait on


@pytest.mark.parametrize("fault", ["stopped", "hung"])
async def test_requests_while_etcd_is_down_answer_503_and_succeed_once_it_is_back(nursery, tmp_path, own_etcd,
                                                                                   fault):
    srv = await on_etcd(nursery, tmp_path, own_etcd)
    load = Load(srv)
    async with trio.open_nursery() as clients:
        for worker in range(8):
            clients.start_soon(load.client, worker)
        await load.until("up", 201, 8)
        load.phase = "down"
        if fault == "stopped":
            own_etcd.stop()
        else:
            os.kill(own_etcd.pid, signal.SIGSTOP)  # accepts connections, answers nothing
        await load.until("down", 503, 16)
        async with srv.client() as c:  # a load balancer's probe takes the server out meanwhile
            ready = await c.get("/readyz")
            assert ready.status_code == 500 and "[-]etcd failed: reason withheld\n" in ready.text, ready.text
        if fault == "stopped":
            own_etcd.start()
            await own_etcd.wait_healthy()
        else:
            os.kill(own_etcd.pid, signal.SIGCONT)
        load.phase = "back"
        await load.until("back", 201, 8)
        clients.cancel_scope.cancel()
    # While etcd was down every request that needed it answered 503 (cached reads at no version
    # do not need it); nothing else, no 500, no hang.
    assert set(load.statuses["down"]) <= {200, 201, 503}, load.statuses
    assert set(load.statuses["back"]) <= {200, 201, 503}, load.statuses
    async with srv.client() as c:  # the server lives on, ready again once a probe of etcd passes
        with trio.fail_after(NO_HANG):
            while (await c.get("/readyz")).status_code != 200:
                await trio.sleep(0.1)  # real clients against a real etcd: nothing to wait on


async def test_watches_resume_across_an_etcd_outage_without_losing_or_repeating_an_event(nursery, tmp_path,
                                                                                         own_etcd):
    srv = await on_etcd(nursery, tmp_path, own_etcd)
    seen: list[tuple[str, int]] = []
    rewatches = [0]

    async def watcher(start: str) -> None:
        # A reflector's loop: each watch ends after a second; the next starts from the last version seen.
        last = start
        async with srv.client() as c:
            while True:
                async with c.stream("GET", f"{srv.rbac}/clusterroles", timeout=httpx.Timeout(NO_HANG, read=None),
                                    params={"watch": "1", "resourceVersion": last, "timeoutSeconds": "1",
                                            "labelSelector": "outage=1"}) as r:
                    assert r.status_code == 200, await r.aread()
                    async for line in r.aiter_lines():
                        if line:
                            event = json.loads(line)
                            assert event["type"] == "ADDED", event
                            last = event["object"]["metadata"]["resourceVersion"]
                            seen.append((event["object"]["metadata"]["name"], int(last)))
                rewatches[0] += 1

    async with srv.client() as c:
        start = (await c.get(f"{srv.rbac}/clusterroles")).json()["metadata"]["resourceVersion"]
        async with trio.open_nursery() as watchers:
            watchers.start_soon(watcher, start)
            for i in range(5):
                assert (await c.post(f"{srv.rbac}/clusterroles", json=cr(f"o-{i}", outage="1"))).status_code == 201
            own_etcd.stop()
            outage_began = rewatches[0]
            with trio.fail_after(NO_HANG):
                while rewatches[0] < outage_began + 2:  # the client re-watches during the outage
                    await trio.sleep(0.05)
            own_etcd.start()
            await own_etcd.wait_healthy()
            for i in range(5, 10):
                with trio.fail_after(NO_HANG):
                    while (r := await c.post(f"{srv.rbac}/clusterroles", json=cr(f"o-{i}", outage="1"))).status_code == 503:
                        await trio.sleep(0.05)  # the first writes after a restart may find etcd still electing
                assert r.status_code == 201, r.text
            with trio.fail_after(NO_HANG):
                while len(seen) < 10:
                    await trio.sleep(0.05)
            watchers.cancel_scope.cancel()
    assert [name for name, _ in seen] == [f"o-{i}" for i in range(10)]
    assert [rv for _, rv in seen] == sorted({rv for _, rv in seen})


async def test_the_controllers_leader_killed_9_is_replaced_by_another_server(tmp_path, etcd_endpoint):
    store = ["--store", f"etcd://{etcd_endpoint}", "--etcd-prefix", fresh_prefix(), "--leader-elect-lease-duration",
             "2", "--leader-elect-renew-deadline", "1.5", "--leader-elect-retry-period", "0.5"]
    namespace, name = CONTROLLERS_LEASE
    lease = f"/apis/coordination.svc.io/v1/namespaces/{namespace}/leases/{name}"

    async def holder(c: httpx.AsyncClient) -> str:
        r = await c.get(lease)
        return r.json()["spec"].get("holderIdentity", "") if r.status_code == 200 else ""

    a, url_a = await spawn_server(tmp_path / "a", *store, "--leader-elect-identity", "a")
    b = None
    try:
        async with admin_client(tmp_path / "a", url_a) as ca:
            with trio.fail_after(NO_HANG):
                while await holder(ca) != "a":
                    await trio.sleep(0.05)
        b, url_b = await spawn_server(tmp_path / "b", *store, "--leader-elect-identity", "b")
        async with admin_client(tmp_path / "b", url_b) as cb:
            assert await holder(cb) == "a"
            a.send_signal(signal.SIGKILL)  # no release: b waits for the lease to expire
            await a.wait()
            with trio.fail_after(NO_HANG):
                while await holder(cb) != "b":
                    await trio.sleep(0.05)
            # b's controllers now run: a deleted namespace is finalized.
            assert (await cb.post("/api/v1/namespaces", json={"metadata": {"name": "doomed"}})).status_code == 201
            assert (await cb.delete("/api/v1/namespaces/doomed")).status_code == 200
            with trio.fail_after(NO_HANG):
                while (await cb.get("/api/v1/namespaces/doomed")).status_code != 404:
                    await trio.sleep(0.05)
    finally:
        for proc in (a, b):
            if proc is not None and proc.returncode is None:
                proc.kill()
                await proc.wait()
