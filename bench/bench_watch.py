"""Watch and list benchmark against a real server (a `miniplane serve` subprocess, sqlite store).

Prints:
- event delivery latency, p50/p99, from write acknowledged (the writer got its
  201) to event received (a watcher parsed the event line), for 1, 10 and 100
  concurrent watchers over HTTPS; also from write sent, which cannot be
  negative. An event may reach a watcher before the writer has read its own
  answer: those count as 0 in the "ack" figures.
- list of 10,000 ClusterRoles, without and with paging (limit=500): from the
  watch cache (resourceVersion unset: a consistent read the cache answers),
  from a cache snapshot (resourceVersionMatch=Exact at an older version, gate
  ListFromCacheSnapshot on) and from the database (the same requests with the
  gate off: the server reads the sqlite log at that version).

Run: `python bench/bench_watch.py [--quick]`. Asserts nothing; figures depend
on the machine (the client runs in this process, the server in another).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402
import trio  # noqa: E402

from runtime.client.kubeconfig import load_kubeconfig  # noqa: E402
from runtime.machinery.storedobject import dumps_json  # noqa: E402
from runtime.server.storage.sqlite.store import SqliteStore  # noqa: E402

GROUP = "rbac.authorization.svc.io"
ROLES = f"/apis/{GROUP}/v1/clusterroles"
PREFIX = "/rbac.authorization/clusterroles/"


def role_json(name: str):
    def encode(rev: int) -> bytes:
        return dumps_json({
            "apiVersion": f"{GROUP}/v1", "kind": "ClusterRole",
            "metadata": {"name": name, "uid": str(uuid.uuid4()), "resourceVersion": str(rev),
                         "creationTimestamp": "2024-01-01T00:00:00Z", "labels": {"bench": "list"}},
            "rules": [{"apiGroups": [""], "resources": ["pods", "services"], "verbs": ["get", "list", "watch"]}]})
    return encode


async def populate(db: Path, n: int) -> None:
    store = await SqliteStore.open(db, synchronous="NORMAL")
    try:
        async def writer(start: int) -> None:
            for i in range(start, n, 50):
                await store.create(f"{PREFIX}bench-{i:05d}", role_json(f"bench-{i:05d}"))

        async with trio.open_nursery() as nursery:
            for t in range(50):
                nursery.start_soon(writer, t)
    finally:
        await store.aclose()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`miniplane serve` in a subprocess; `client()` gives an admin httpx client."""

    def __init__(self, data_dir: Path, gates: str = "") -> None:
        self.data_dir = data_dir
        self.port = free_port()
        cmd = [sys.executable, "-m", "api.cli", "serve", "--data-dir", str(data_dir), "--port", str(self.port),
               "--controllers", "false", "--store", "sqlite"]
        if gates:
            cmd += ["--feature-gates", gates]
        self.proc = subprocess.Popen(cmd, cwd=Path(__file__).resolve().parents[1], stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        if "serving at" not in line:
            raise RuntimeError(f"server did not start: {line!r}")
        self.url = line.split("serving at", 1)[1].split()[0]
        cfg = load_kubeconfig(data_dir / "admin.kubeconfig")
        self.token, self.ca = cfg.token, cfg.ca_pem

    def client(self) -> httpx.AsyncClient:
        ctx = ssl.create_default_context(cadata=self.ca.decode())
        return httpx.AsyncClient(base_url=self.url, verify=ctx, headers={"Authorization": f"Bearer {self.token}"},
                                 timeout=httpx.Timeout(60, read=None))

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


async def latency(server: Server, watchers: int, writes: int) -> tuple[list[float], list[float]]:
    """(ack->received, sent->received) in seconds, one value per watcher per event."""
    sent: dict[str, float] = {}
    acked: dict[str, float] = {}
    received: list[tuple[str, float]] = []
    ready = trio.Semaphore(0)
    tag = uuid.uuid4().hex[:6]
    async with server.client() as c:
        rv = (await c.get(ROLES, params={"limit": "1"})).json()["metadata"]["resourceVersion"]

    async def watch(stop: trio.Event) -> None:
        async with server.client() as c:
            async with c.stream("GET", ROLES, params={"watch": "1", "resourceVersion": rv,
                                                      "labelSelector": f"lat={tag}"}) as r:
                buf = b""
                warm = True
                async for chunk in r.aiter_bytes():
                    now = time.perf_counter()
                    buf += chunk
                    *lines, buf = buf.split(b"\n")
                    for line in lines:
                        if not line:
                            continue
                        name = json.loads(line)["object"]["metadata"]["name"]
                        if warm:
                            warm = False
                            ready.release()
                        elif name == "stop":
                            stop.set()
                            return
                        else:
                            received.append((name, now))

    async def write(c: httpx.AsyncClient, name: str) -> None:
        body = {"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole",
                "metadata": {"name": f"{tag}-{name}", "labels": {"lat": tag}}, "rules": []}
        sent[f"{tag}-{name}"] = time.perf_counter()
        r = await c.post(ROLES, json=body)
        acked[f"{tag}-{name}"] = time.perf_counter()
        assert r.status_code == 201, r.text

    async with trio.open_nursery() as nursery:
        stops = [trio.Event() for _ in range(watchers)]
        for stop in stops:
            nursery.start_soon(watch, stop)
        async with server.client() as c:
            await write(c, "warm")
            for _ in range(watchers):
                await ready.acquire()
            for i in range(writes):
                await write(c, f"w{i}")
            body = {"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole",
                    "metadata": {"name": "stop", "labels": {"lat": tag}}, "rules": []}
            await c.post(ROLES, json=body)
            for stop in stops:
                await stop.wait()
            await c.delete(f"{ROLES}/stop")
    from_ack = [max(0.0, t - acked[name]) for name, t in received]
    from_sent = [t - sent[name] for name, t in received]
    assert len(received) == watchers * writes
    return from_ack, from_sent


async def timed_list(server: Server, params: dict, runs: int) -> tuple[float, int]:
    """Median seconds to fetch the whole list (following continue), and the item count."""
    times, count = [], 0
    async with server.client() as c:
        for _ in range(runs):
            start = time.perf_counter()
            count, token = 0, ""
            while True:
                p = dict(params)
                if token:  # a continuation keeps the selectors, not the version
                    p = {k: v for k, v in p.items() if not k.startswith("resourceVersion")}
                    p["continue"] = token
                r = await c.get(ROLES, params=p)
                assert r.status_code == 200, r.text
                doc = r.json()
                count += len(doc["items"])
                token = doc["metadata"].get("continue", "")
                if not token:
                    break
            times.append(time.perf_counter() - start)
    return statistics.median(times), count


async def older_version(server: Server) -> str:
    """A version of the list, then one more write so that it is older than the cache's."""
    async with server.client() as c:
        rv = (await c.get(ROLES, params={"limit": "1"})).json()["metadata"]["resourceVersion"]
        name = f"older-{uuid.uuid4().hex[:6]}"
        await c.post(ROLES, json={"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole",
                                  "metadata": {"name": name}, "rules": []})
        await c.delete(f"{ROLES}/{name}")
    return rv


async def lists(server: Server, runs: int, rv: str, *, label: str) -> list[tuple[str, float, int]]:
    out = []
    sel = {"labelSelector": "bench=list"}
    if label == "cache":
        out.append(("cache, rv unset, no paging", *await timed_list(server, sel, runs)))
        out.append(("cache, rv unset, limit=500", *await timed_list(server, dict(sel, limit="500"), runs)))
    out.append((f"{label}, Exact older rv, no paging",
                *await timed_list(server, dict(sel, resourceVersion=rv, resourceVersionMatch="Exact"), runs)))
    out.append((f"{label}, Exact older rv, limit=500",
                *await timed_list(server, dict(sel, resourceVersion=rv, limit="500"), runs)))
    return out


async def main(quick: bool) -> None:
    n_objects = 2_000 if quick else 10_000
    writes = {1: 100, 10: 100, 100: 30} if quick else {1: 300, 10: 200, 100: 100}
    runs = 3 if quick else 5
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        t = time.perf_counter()
        await populate(data / "state.db", n_objects)
        print(f"populated {n_objects} ClusterRoles in {time.perf_counter() - t:.1f} s")
        server = Server(data)
        try:
            print("\nevent delivery latency (ms)    p50(ack)  p99(ack)  p50(sent)  p99(sent)  events")
            for watchers, n in writes.items():
                from_ack, from_sent = await latency(server, watchers, n)
                print(f"  {watchers:>3} watcher(s)               "
                      f"{pct(from_ack, 50)*1e3:8.2f}  {pct(from_ack, 99)*1e3:8.2f}"
                      f"  {pct(from_sent, 50)*1e3:9.2f}  {pct(from_sent, 99)*1e3:9.2f}  {len(from_ack):6d}")
            rv = await older_version(server)
            rows = await lists(server, runs, rv, label="cache")
            rows[2] = ("cache snapshot" + rows[2][0][5:], *rows[2][1:])
            rows[3] = ("cache snapshot" + rows[3][0][5:], *rows[3][1:])
        finally:
            server.stop()
        server = Server(data, gates="ListFromCacheSnapshot=false")
        try:
            rows += await lists(server, runs, await older_version(server), label="database")
        finally:
            server.stop()
        print(f"\nlist of {n_objects} objects (median of {runs})      seconds   items")
        for name, seconds, count in rows:
            print(f"  {name:<40} {seconds:8.3f}  {count:6d}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer objects and writes")
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    trio.run(main, ap.parse_args().quick)
