"""The load test, short form (CI): 50 well-formed clients and 5 hostile ones for 20 s against a real server.

The server is `miniplane serve` as a child process (SQLite store, built-in
controllers) on loopback HTTPS, its in-flight limits lowered (10 read-only,
5 mutating) so that the load overloads it: 429s with `Retry-After` are
answers, which the clients retry as client-go does; the load and
its checks are `tests.support.load`'s: no 5xx to a well-formed request, no
request left without an answer, no lost acknowledged write (each channel
listed against its writer's acknowledged state), every watch complete (its
events, across reconnections, exactly its writer's writes, in order), no 5xx
to hostile input but a stalled body's 504, and the server's memory after the
load within 20% of before. Bounded: 20 s of load, a few seconds of set-up,
warm-up and settling. The full form (200 + 20 clients, 60 s) is
`bench/bench_load.py` (`make bench`).
"""

from __future__ import annotations

import signal
from pathlib import Path

import trio

from runtime.client.kubeconfig import load_kubeconfig
from tests.support.load import LoadConfig, LoadTarget, run_load
from tests.support.serverproc import spawn_server

#: The watch history (and compaction window) of the server under load: short, so that the memory the load's
#: events hold is released while the test settles.
WATCH_HISTORY = "5"


async def test_fifty_clients_for_twenty_seconds_lose_nothing_and_get_no_5xx(tmp_path: Path):
    proc, url = await spawn_server(tmp_path / "data", "--api-domain", "k8s.io", "--watch-history", WATCH_HISTORY,
                                   "--max-requests-inflight", "10", "--max-mutating-requests-inflight", "5")
    try:
        config = load_kubeconfig(tmp_path / "data" / "admin.kubeconfig")
        target = LoadTarget(url, config.ca_pem, config.token, proc.pid)
        report = await run_load(target, LoadConfig(clients=50, hostile=5, duration=20.0, settle=6.0))
    finally:
        proc.send_signal(signal.SIGTERM)
        with trio.fail_after(30):
            await proc.wait()
    print(report.summary())
    assert report.problems() == []
    # It did work (counts modest enough for a loaded machine: the promises above are what is tested).
    assert report.acknowledged_writes > 20 and report.watch_events > 20 and report.requests > 200
    assert proc.returncode == 0
