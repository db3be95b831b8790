"""Watch delivery under write load: watchers and a writer, each a separate process, over raw HTTPS.

`python bench/scale_watch.py watch URL TOKEN CA --watchers N --selector S --out F`
opens N watches of ClusterRoles matching label selector S, prints `ready`
once all are open, then `received <count>` every half second, and records
when each event arrived (CLOCK_MONOTONIC, which every process on the
machine shares) until stdin closes; then writes `[[index, time], ...]` per
watcher to F.

`python bench/scale_watch.py write URL TOKEN CA --rate R --seconds D --label L --out F`
creates ClusterRoles `wb-<index>` labelled L, open loop: write i is due at
start + i/R, sent as soon as one of `--connections` keep-alive connections
is free; records when each was sent and answered (201) to F.

The HTTP is hand-written HTTP/1.1 over `trio.SSLStream` (names found with a
regular expression, no JSON decoding), so the clients cost little beside
the server they measure.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import ssl
import sys
import time
from urllib.parse import urlsplit

import trio

__all__ = ["main"]

GROUP = "rbac.authorization.svc.io"
ROLES = f"/apis/{GROUP}/v1/clusterroles"
_NAME = re.compile(rb'"name":"wb-(\d+)"')
_LENGTH = re.compile(rb"(?i)\r\ncontent-length:\s*(\d+)")


class Connection:
    """One keep-alive HTTPS connection speaking just enough HTTP/1.1."""

    def __init__(self, stream: trio.SSLStream, host: str, token: str) -> None:
        self.stream, self.host, self.token = stream, host, token
        self.buffer = b""

    @classmethod
    async def open(cls, url: str, token: str, ca: bytes) -> "Connection":
        parts = urlsplit(url)
        ctx = ssl.create_default_context(cadata=ca.decode())
        tcp = await trio.open_tcp_stream(parts.hostname, parts.port)
        stream = trio.SSLStream(tcp, ctx, server_hostname=parts.hostname)
        await stream.do_handshake()
        return cls(stream, parts.netloc, token)

    async def send(self, method: str, path: str, body: bytes = b"") -> None:
        head = (f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\nAuthorization: Bearer {self.token}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")
        await self.stream.send_all(head.encode() + body)

    async def _fill(self) -> None:
        data = await self.stream.receive_some(65536)
        if not data:
            raise EOFError("connection closed")
        self.buffer += data

    async def head(self) -> bytes:
        while b"\r\n\r\n" not in self.buffer:
            await self._fill()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        return head

    async def response(self) -> int:
        """Read one whole response (Content-Length or chunked); return its status."""
        head = await self.head()
        status = int(head[9:12])
        length = _LENGTH.search(head)
        if length:
            n = int(length.group(1))
            while len(self.buffer) < n:
                await self._fill()
            self.buffer = self.buffer[n:]
        else:
            while b"\r\n0\r\n\r\n" not in self.buffer and not self.buffer.startswith(b"0\r\n\r\n"):
                await self._fill()
            self.buffer = self.buffer.split(b"0\r\n\r\n", 1)[1]
        return status


async def watchers(url: str, token: str, ca: bytes, count: int, selector: str, out: str) -> None:
    received: list[list[tuple[int, float]]] = [[] for _ in range(count)]
    opened = trio.Semaphore(0)

    async def watch(i: int) -> None:
        conn = await Connection.open(url, token, ca)
        await conn.send("GET", f"{ROLES}?watch=1&labelSelector={selector}&allowWatchBookmarks=false")
        await conn.head()
        opened.release()
        seen = received[i]
        tail = conn.buffer
        while True:
            data = await conn.stream.receive_some(65536)
            if not data:
                return
            now = time.monotonic()
            tail += data
            last = 0
            for m in _NAME.finditer(tail):
                seen.append((int(m.group(1)), now))
                last = m.end()
            tail = tail[last:] if last else tail[-64:]

    async def until_stdin_closes(cancel: trio.CancelScope) -> None:
        stdin = trio.lowlevel.FdStream(sys.stdin.fileno())
        while await stdin.receive_some(1024):
            pass
        cancel.cancel()

    async def report() -> None:
        while True:
            await trio.sleep(0.5)
            print(f"received {sum(len(r) for r in received)}", flush=True)

    async with trio.open_nursery() as nursery:
        for i in range(count):
            nursery.start_soon(watch, i)
        for _ in range(count):
            await opened.acquire()
        print("ready", flush=True)
        nursery.start_soon(report)
        nursery.start_soon(until_stdin_closes, nursery.cancel_scope)
    with open(out, "w") as f:
        json.dump(received, f)


async def writer(url: str, token: str, ca: bytes, rate: float, seconds: float, label: str, connections: int,
                 out: str) -> None:
    total = int(rate * seconds)
    sent: list[float | None] = [None] * total
    acked: list[float | None] = [None] * total
    failed = 0
    next_index = 0
    start = time.monotonic() + 0.2

    async def work() -> None:
        nonlocal next_index, failed
        conn = await Connection.open(url, token, ca)
        while next_index < total:
            i = next_index
            next_index += 1
            due = start + i / rate
            if due > time.monotonic():
                await trio.sleep(due - time.monotonic())
            body = json.dumps({"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole",
                               "metadata": {"name": f"wb-{i}", "labels": {"watchbench": label}},
                               "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]},
                              separators=(",", ":")).encode()
            sent[i] = time.monotonic()
            await conn.send("POST", ROLES, body)
            status = await conn.response()
            if status == 201:
                acked[i] = time.monotonic()
            else:
                failed += 1

    async with trio.open_nursery() as nursery:
        for _ in range(connections):
            nursery.start_soon(work)
    done = [t for t in acked if t is not None]
    elapsed = (max(done) - start) if done else math.inf
    with open(out, "w") as f:
        json.dump({"sent": sent, "acked": acked, "failed": failed, "elapsed": elapsed}, f)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("watch", "write"):
        p = sub.add_parser(name)
        p.add_argument("url")
        p.add_argument("token")
        p.add_argument("ca")
        p.add_argument("--out", required=True)
    sub.choices["watch"].add_argument("--watchers", type=int, default=100)
    sub.choices["watch"].add_argument("--selector", required=True)
    sub.choices["write"].add_argument("--rate", type=float, default=500)
    sub.choices["write"].add_argument("--seconds", type=float, default=5)
    sub.choices["write"].add_argument("--label", required=True)
    sub.choices["write"].add_argument("--connections", type=int, default=32)
    args = parser.parse_args(argv)
    ca = open(args.ca, "rb").read()
    if args.command == "watch":
        trio.run(watchers, args.url, args.token, ca, args.watchers, args.selector, args.out)
    else:
        trio.run(writer, args.url, args.token, ca, args.rate, args.seconds, args.label, args.connections, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
