"""API throughput: creates, gets and lists of ClusterRoles over HTTPS against a real server.

Run: `.venv/bin/python bench/bench_api.py [--store sqlite|memory] [--n 2000] [--concurrency 16]`.
The server runs as a subprocess (one core for it, one for the load); figures are
requests/s and latency percentiles, with GET /healthz as the baseline of the same run.
"""

from __future__ import annotations

import argparse
import os
import ssl
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
import trio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from runtime.client.kubeconfig import load_kubeconfig  # noqa: E402
from tests.support.serverproc import spawn_server  # noqa: E402

GROUP = "/apis/rbac.authorization.svc.io/v1"


async def run_phase(name: str, n: int, concurrency: int, request) -> list[float]:
    latencies: list[float] = []
    counter = iter(range(n))

    async def worker() -> None:
        for i in counter:
            t0 = time.perf_counter()
            await request(i)
            latencies.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for _ in range(concurrency):
            nursery.start_soon(worker)
    elapsed = time.perf_counter() - t0
    lat = sorted(latencies)
    p50, p99 = lat[len(lat) // 2] * 1000, lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000
    print(f"{name:<28} {n / elapsed:9.0f} req/s   p50 {p50:6.2f} ms   p99 {p99:6.2f} ms")
    return lat


async def main(store: str, n: int, concurrency: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = await spawn_server(tmp, "--store", store, "--controllers", "false")
        cfg = load_kubeconfig(Path(tmp) / "admin.kubeconfig")
        ctx = ssl.create_default_context(cadata=cfg.ca_pem.decode())
        limits = httpx.Limits(max_connections=concurrency)
        try:
            async with httpx.AsyncClient(base_url=url, verify=ctx, limits=limits, timeout=60,
                                         headers={"Authorization": f"Bearer {cfg.token}"}) as c:
                print(f"miniplane API benchmark: store={store}, n={n}, concurrency={concurrency}, "
                      f"cpus={os.cpu_count()}")

                async def healthz(i: int) -> None:
                    r = await c.get("/healthz")
                    assert r.status_code == 200

                async def create(i: int) -> None:
                    body = {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "ClusterRole",
                            "metadata": {"name": f"bench-{i}", "labels": {"bench": "yes"}},
                            "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list"]}]}
                    r = await c.post(f"{GROUP}/clusterroles", json=body)
                    assert r.status_code == 201, r.text

                async def get(i: int) -> None:
                    r = await c.get(f"{GROUP}/clusterroles/bench-{i % n}")
                    assert r.status_code == 200

                async def list_all(i: int) -> None:
                    r = await c.get(f"{GROUP}/clusterroles", params={"labelSelector": "bench=yes"})
                    assert r.status_code == 200

                await run_phase("warm-up (connections, TLS)", concurrency * 4, concurrency, healthz)
                base = await run_phase("GET /healthz (baseline)", n, concurrency, healthz)
                await run_phase("POST clusterroles (create)", n, concurrency, create)
                gets = await run_phase("GET clusterroles/NAME", n, concurrency, get)
                await run_phase(f"LIST {n} clusterroles", max(20, n // 100), 2, list_all)
                ratio = statistics.median(gets) / statistics.median(base)
                print(f"GET object / GET /healthz median latency ratio: {ratio:.2f}")
        finally:
            proc.kill()
            await proc.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", default="sqlite", choices=("sqlite", "memory"))
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    trio.run(main, args.store, args.n, args.concurrency)
