"""A history of 8 clients against 2 servers on one etcd, checked (tests/support/history.py): no acknowledged
write lost, per-key versions increasing, no stale read, every watch sees every version of every key.

Clients do conditional updates (PUT with the resourceVersion they read), creates, deletes and reads on 5
keys for a bounded number of operations (at most 20 s); a watch on each server records what it delivers.
Real time throughout: the servers talk to a real etcd.
"""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter

import httpx
import pytest
import trio

from tests.support.etcd import fresh_prefix
from tests.support.history import History, Op, WatchEvent, WatchLog, check
from tests.support.server import Server, start_in_process

KEYS = [f"k{i}" for i in range(5)]
CLIENTS, OPS_PER_CLIENT, BUDGET = 8, 40, 20.0
LABEL = {"history": "1"}


# These tests start their own servers on etcd: the default store does not matter.
pytestmark = pytest.mark.stores("memory")



def body(name: str, value: str, rv: str | None = None) -> dict:
    meta: dict = {"name": name, "labels": LABEL, "annotations": {"v": value}}
    if rv is not None:
        meta["resourceVersion"] = rv
    return {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "ClusterRole", "metadata": meta, "rules": []}


def state(obj: dict) -> tuple[int, str | None]:
    return int(obj["metadata"]["resourceVersion"]), (obj["metadata"].get("annotations") or {}).get("v")


class Workload:
    def __init__(self, servers: list[Server]) -> None:
        self.servers = servers
        self.ops: list[Op] = []
        self.tokens = itertools.count()

    def record(self, client: int, kind: str, key: str, start: float, r: httpx.Response | None,
               ok: int, refused: tuple[int, ...]) -> dict | None:
        end = trio.current_time()
        if r is not None and r.status_code == ok:
            obj = r.json()
            version, value = state(obj) if kind in ("create", "update", "read") else (0, None)
            self.ops.append(Op(client, kind, key, start, end, "ok", version, value))  # type: ignore[arg-type]
            return obj
        if r is not None and kind == "read" and r.status_code == 404:
            self.ops.append(Op(client, "read", key, start, end, "ok"))
            return None
        outcome = "failed" if r is not None and r.status_code in refused else "unknown"
        self.ops.append(Op(client, kind, key, start, end, outcome))  # type: ignore[arg-type]
        return None

    async def send(self, c: httpx.AsyncClient, method: str, path: str, **kw) -> httpx.Response | None:
        try:
            return await c.request(method, path, **kw)
        except httpx.TransportError:
            return None

    async def client(self, n: int, deadline: float) -> None:
        srv = self.servers[n % len(self.servers)]
        rng = random.Random(n)
        path = f"{srv.rbac}/clusterroles"
        async with srv.client() as c:
            for _ in range(OPS_PER_CLIENT):
                if trio.current_time() > deadline:
                    return
                key, choice = rng.choice(KEYS), rng.random()
                if choice < 0.15:
                    start = trio.current_time()
                    r = await self.send(c, "POST", path, json=body(key, f"c{n}-{next(self.tokens)}"))
                    self.record(n, "create", key, start, r, 201, (409,))
                elif choice < 0.3:
                    start = trio.current_time()
                    r = await self.send(c, "DELETE", f"{path}/{key}")
                    self.record(n, "delete", key, start, r, 200, (404,))
                else:
                    start = trio.current_time()
                    r = await self.send(c, "GET", f"{path}/{key}")
                    current = self.record(n, "read", key, start, r, 200, ())
                    if current is not None and choice < 0.65:  # a conditional update of what was read
                        start = trio.current_time()
                        r = await self.send(c, "PUT", f"{path}/{key}", json=body(
                            key, f"u{n}-{next(self.tokens)}", current["metadata"]["resourceVersion"]))
                        self.record(n, "update", key, start, r, 200, (409, 404))


async def watch(srv: Server, log: WatchLog, sentinels: set[str], done: trio.Event) -> None:
    """Watch the labelled roles from the log's start; re-watch from the last version when a stream ends."""
    last = str(log.start_version)
    seen: set[str] = set()
    async with srv.client() as c:
        while not done.is_set():
            async with c.stream("GET", f"{srv.rbac}/clusterroles", timeout=httpx.Timeout(30, read=None),
                                params={"watch": "1", "resourceVersion": last, "labelSelector": "history=1",
                                        "timeoutSeconds": "5"}) as r:
                assert r.status_code == 200, await r.aread()
                async for line in r.aiter_lines():
                    if not line:
                        continue
                    event = json.loads(line)
                    name = event["object"]["metadata"]["name"]
                    version, value = state(event["object"])
                    log.events.append(WatchEvent(event["type"], name, version, value))
                    last = str(version)
                    seen.add(name)
                    if sentinels <= seen:
                        done.set()
                        return


async def test_eight_clients_on_two_servers_leave_a_consistent_history(nursery, tmp_path, etcd_endpoint):
    prefix = fresh_prefix()
    servers = [await start_in_process(nursery, tmp_path / name, store=f"etcd://{etcd_endpoint}",
                                      etcd_prefix=prefix) for name in ("a", "b")]
    workload = Workload(servers)
    async with servers[0].client() as c:
        start = int((await c.get(f"{servers[0].rbac}/clusterroles")).json()["metadata"]["resourceVersion"])
    logs = [WatchLog(f"watch-{i}", start) for i in range(len(servers))]
    sentinels = {f"sentinel-{i}" for i in range(len(servers))}
    async with trio.open_nursery() as watchers:
        dones = [trio.Event() for _ in servers]
        for srv, log, done in zip(servers, logs, dones):
            watchers.start_soon(watch, srv, log, sentinels, done)
        async with trio.open_nursery() as clients:
            deadline = trio.current_time() + BUDGET
            for n in range(CLIENTS):
                clients.start_soon(workload.client, n, deadline)
        for i, srv in enumerate(servers):  # a last write through each server: every watch must see both
            async with srv.client() as c:
                assert (await c.post(f"{srv.rbac}/clusterroles", json=body(f"sentinel-{i}", "end"))).status_code == 201
        with trio.fail_after(30):
            for done in dones:
                await done.wait()
    history = History(workload.ops, logs)
    assert check(history) == []
    acknowledged = Counter(op.kind for op in history.ops if op.outcome == "ok")
    # The workload did what it is for: every kind of operation, acknowledged, and conflicts refused.
    assert min(acknowledged[k] for k in ("create", "update", "delete", "read")) >= 5, acknowledged
    assert any(op.kind == "update" and op.outcome == "failed" for op in history.ops)
