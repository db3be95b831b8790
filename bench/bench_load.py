"""The load test, full form: 200 well-formed clients and 20 hostile ones for 60 s against a real server.

Run: `.venv/bin/python bench/bench_load.py [--clients 200] [--hostile 20] [--duration 60] [--workers 1]`.
The server is `miniplane serve` as a child process (SQLite, built-in controllers, default limits) on
loopback HTTPS; the load and its checks are `tests/support/load.py`'s (the CI form is
`tests/load/test_load.py`). Prints the figures, the latency of a list under load as a ratio to the same
list from one idle client measured first in the same run (the baseline), and every broken promise;
exits 1 if there is one.
"""

from __future__ import annotations

import argparse
import signal
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
from tests.support.load import LoadConfig, LoadTarget, run_load  # noqa: E402
from tests.support.serverproc import spawn_server  # noqa: E402


async def idle_list_latency(target: LoadTarget, n: int = 200) -> float:
    """Median seconds of one client listing a namespace's leases, the server otherwise idle."""
    context = ssl.create_default_context(cadata=target.ca_pem.decode())
    async with httpx.AsyncClient(base_url=target.url, verify=context, timeout=60,
                                 headers={"Authorization": f"Bearer {target.admin_token}"}) as c:
        took = []
        for _ in range(n):
            start = time.perf_counter()
            r = await c.get("/apis/coordination.k8s.io/v1/namespaces/default/leases")
            took.append(time.perf_counter() - start)
            assert r.status_code == 200, r.text
    return statistics.median(took)


async def main(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        extra = ["--workers", str(args.workers)] if args.workers != 1 else []
        proc, url = await spawn_server(tmp, "--api-domain", "k8s.io", "--watch-history", "5", *extra)
        try:
            cfg = load_kubeconfig(Path(tmp) / "admin.kubeconfig")
            target = LoadTarget(url, cfg.ca_pem, cfg.token, proc.pid)
            baseline = await idle_list_latency(target)
            report = await run_load(target, LoadConfig(clients=args.clients, hostile=args.hostile,
                                                       duration=args.duration, settle=10.0))
        finally:
            proc.send_signal(signal.SIGTERM)
            with trio.move_on_after(30):
                await proc.wait()
    print(report.summary())
    under_load = report.percentile("list", 0.5)
    print(f"baseline: one idle client lists in {baseline * 1e3:.1f} ms (p50); under load {under_load * 1e3:.1f} ms "
          f"({under_load / baseline:.1f}x)")
    problems = report.problems()
    for problem in problems:
        print("PROBLEM:", problem)
    print("result:", "every promise kept" if not problems else f"{len(problems)} broken")
    return 1 if problems else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--hostile", type=int, default=20)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=1)
    sys.exit(trio.run(main, parser.parse_args()))
