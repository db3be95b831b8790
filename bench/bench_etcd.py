"""etcd store benchmark: creates/s sequential and with 16 concurrent writers, gets/s, a paged list.

Run: `python bench/bench_etcd.py [--endpoint HOST:PORT] [--quick]`. Without an
endpoint it starts its own etcd (Debian's etcd-server, see `make etcd`) on free
loopback ports with a temporary data directory, so it measures etcd's own
fsync on this machine's disk, and the CPU time each create costs the client
(this process) and etcd. Prints figures; asserts nothing. "mispredicted"
is the share of writes whose revision differed from the one the store
predicted for the encoder (each costs a second encode; see runtime.server.storage.etcd.store).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import trio  # noqa: E402

from runtime.server.storage.etcd.store import EtcdStore  # noqa: E402
from tests.support.etcd import EtcdServer  # noqa: E402

VALUE = b'{"apiVersion":"rbac.authorization.svc.io/v1","kind":"ClusterRole",' + b"x" * 400 + b"}"
CONCURRENT = 16


def encode(rev: int) -> bytes:
    return VALUE


def etcd_cpu(pid: int | None) -> float:
    """CPU seconds the etcd process has used (0 when it is not ours to see)."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


async def run(endpoint: str, n_seq: int, n_conc: int, n_get: int, n_list: int, pid: int | None) -> None:
    store = await EtcdStore.open(endpoint, prefix=f"/bench-{uuid.uuid4().hex[:8]}")
    try:
        start, cpu, server_cpu = time.perf_counter(), time.process_time(), etcd_cpu(pid)
        for i in range(n_seq):
            await store.create(f"/seq/{i:06d}", encode)
        t_seq = time.perf_counter() - start
        cpu_seq = (time.process_time() - cpu) / n_seq * 1000
        server_seq = (etcd_cpu(pid) - server_cpu) / n_seq * 1000
        stats_before = store.statistics()

        async def writer(t: int) -> None:
            for i in range(n_conc // CONCURRENT):
                await store.create(f"/conc/{t:02d}/{i:06d}", encode)

        start, cpu, server_cpu = time.perf_counter(), time.process_time(), etcd_cpu(pid)
        async with trio.open_nursery() as nursery:
            for t in range(CONCURRENT):
                nursery.start_soon(writer, t)
        t_conc = time.perf_counter() - start
        cpu_conc = (time.process_time() - cpu) / n_conc * 1000
        server_conc = (etcd_cpu(pid) - server_cpu) / n_conc * 1000
        stats = store.statistics()
        missed = (stats.mispredicted - stats_before.mispredicted) / max(1, stats.writes - stats_before.writes)

        start = time.perf_counter()
        for i in range(n_get):
            await store.get(f"/seq/{i % n_seq:06d}")
        t_get = time.perf_counter() - start

        for i in range(n_seq, n_list):
            await store.create(f"/seq/{i:06d}", encode)
        page_times, pages = [], 0
        revision, after, more = None, "", True
        while more:
            start = time.perf_counter()
            page = await store.list("/seq/", revision=revision, start_after=after, limit=500)
            page_times.append(time.perf_counter() - start)
            revision, after, more, pages = page.revision, page.entries[-1].key, page.more, pages + 1
        start = time.perf_counter()
        whole = await store.list("/seq/")
        t_whole = time.perf_counter() - start
    finally:
        await store.aclose()

    print(f"etcd at {endpoint}")
    print(f"  creates, sequential:     {n_seq / t_seq:8.0f}/s ({t_seq / n_seq * 1000:.2f} ms each; "
          f"CPU per create: client {cpu_seq:.2f} ms, etcd {server_seq:.2f} ms)")
    print(f"  creates, {CONCURRENT} concurrent:  {n_conc / t_conc:8.0f}/s (CPU per create: client "
          f"{cpu_conc:.2f} ms, etcd {server_conc:.2f} ms; encoder revision mispredicted for {missed:.0%})")
    print(f"  gets, sequential:        {n_get / t_get:8.0f}/s")
    print(f"  list of {len(whole.entries)}: whole {t_whole * 1000:.0f} ms; "
          f"{pages} pages of 500: {sum(page_times) * 1000:.0f} ms in all, "
          f"median page {statistics.median(page_times) * 1000:.1f} ms")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint", help="an etcd to use (HOST:PORT); default: start one")
    parser.add_argument("--quick", action="store_true", help="fewer operations")
    args = parser.parse_args()
    n_seq, n_conc, n_get, n_list = (200, 800, 500, 2000) if args.quick else (1000, 4000, 2000, 10000)
    if args.endpoint:
        await run(args.endpoint, n_seq, n_conc, n_get, n_list, None)
        return
    with tempfile.TemporaryDirectory() as tmp:
        server = EtcdServer(Path(tmp) / "data")
        server.start()
        try:
            await server.wait_healthy()
            await run(server.endpoint, n_seq, n_conc, n_get, n_list, server.pid)
        finally:
            server.stop()


if __name__ == "__main__":
    trio.run(main)
