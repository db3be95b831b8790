"""etcd over gRPC against etcd over its JSON gateway: the CPU one call costs this process, under trio.

Run: `python bench/bench_etcd_grpc.py [--calls N]` (starts its own etcd, see
`make etcd`). Why it exists: miniplane talks to etcd through the JSON gateway
(`runtime/server/storage/etcd/http.py`), and the README says why not gRPC; this
measures the road not taken rather than guessing. grpcio (installed with the
test extra's grpcio-tools) has no trio API, so each call is a grpcio future
whose completion callback, on grpcio's own thread, wakes the trio task
(`TrioToken.run_sync_soon`), the cheapest bridge there is: no thread per call.
The calls are etcd Range reads of one key, 16 in flight, the request encoded
by hand (field 1, the key) and the answer left as bytes, so neither side pays
for a message model; the gateway side is `EtcdClient.call`, JSON and base64
included. Prints calls/s and the CPU per call of the process (every thread,
grpcio's included), of trio's thread alone (the API server's bound) and of
etcd (what the gateway costs it), two rounds of each in turn. Asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import grpc  # noqa: E402
import trio  # noqa: E402

from children import tree_cpu_seconds  # noqa: E402
from runtime.server.storage.etcd.client import EtcdClient, b64  # noqa: E402
from tests.support.etcd import EtcdServer  # noqa: E402

CONCURRENT = 16
KEY = b"/registry/bench/x"


def range_request(key: bytes) -> bytes:
    """etcdserverpb.RangeRequest{key} in protobuf's wire format: field 1, length-delimited."""
    assert len(key) < 128
    return b"\x0a" + bytes([len(key)]) + key


async def rate(call: Callable[[], Awaitable[Any]], calls: int,
               etcd_cpu: Callable[[], float]) -> tuple[float, float, float, float]:
    """(calls/s, process, trio thread and etcd CPU ms per call) for `calls` calls, CONCURRENT in flight."""
    async def worker() -> None:
        for _ in range(calls // CONCURRENT):
            await call()

    await call()  # connections made before the clock starts
    start, cpu, own, etcd = time.perf_counter(), time.process_time(), time.thread_time(), etcd_cpu()
    async with trio.open_nursery() as nursery:
        for _ in range(CONCURRENT):
            nursery.start_soon(worker)
    done = calls // CONCURRENT * CONCURRENT
    return (done / (time.perf_counter() - start), (time.process_time() - cpu) / done * 1000,
            (time.thread_time() - own) / done * 1000, (etcd_cpu() - etcd) / done * 1000)


async def run(endpoint: str, calls: int, etcd_cpu: Callable[[], float]) -> None:
    channel = grpc.insecure_channel(endpoint)
    unary = channel.unary_unary("/etcdserverpb.KV/Range")  # bytes in, bytes out
    token = trio.lowlevel.current_trio_token()
    request = range_request(KEY)

    async def over_grpc() -> bytes:
        done = trio.Event()
        future = unary.future(request)
        future.add_done_callback(lambda _: token.run_sync_soon(done.set))
        await done.wait()
        return future.result()

    client = EtcdClient([f"http://{endpoint}"])
    body = {"key": b64(KEY)}

    async def over_gateway() -> dict[str, Any]:
        return await client.call("/v3/kv/range", body, idempotent=True)

    print(f"etcd at {endpoint}: Range of one key, {CONCURRENT} in flight, {calls} calls a round")
    try:
        for name, call in [("gRPC (grpcio futures)", over_grpc), ("JSON gateway (httptools)", over_gateway)] * 2:
            per_second, cpu, own, etcd = await rate(call, calls, etcd_cpu)
            print(f"  {name:26} {per_second:7.0f} calls/s   CPU per call: process {cpu:.3f} ms, "
                  f"trio's thread {own:.3f} ms, etcd {etcd:.3f} ms")
    finally:
        await client.aclose()
        channel.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=4000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = EtcdServer(Path(tmp) / "data")
        server.start()
        try:
            await server.wait_healthy()
            await run(server.endpoint, args.calls, lambda: tree_cpu_seconds(server.pid))
        finally:
            server.stop()


if __name__ == "__main__":
    trio.run(main)
