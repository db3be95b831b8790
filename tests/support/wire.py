"""One HTTP/1.1 connection in process: the server's own HTTP/1.1 layer (`api.serving.http1`) fed request bytes.

Contract: `async with open_wire(app) as wire:` serves `app` (an ASGI app, a control plane's `plane.app`)
behind `Http1Protocol` and its `AppExchange` per request, as `miniplane serve` does on each connection, with
no socket and no TLS (the scope says https, as behind TLS). `await wire.exchange(raw)` hands the bytes of
one request to the connection, as one read, and returns the bytes written back once its answer is whole
(an answer of known length, or a chunked one to its last chunk). `parse_answer(raw)` splits those bytes
into (status, headers in order with lower-case names, body: de-chunked). An answer that does not end (a
watch) is begun with `await wire.begin(raw)` instead, and what it wrote so far is `wire.take()`.

What runs between the request's bytes and the answer's is the server's work for that request: the
answer's bytes are all that the connection would write to its socket (Hypercorn's Date header off, so
two answers compare byte for byte). For counting tests and the profile of `bench/profile_get.py`.

Caveats: one request at a time; `exchange` of an answer that never ends (a watch) raises on trio's
deadline the caller sets.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import trio
from hypercorn.config import Config
from hypercorn.events import Closed, Event, RawData
from hypercorn.trio.task_group import TaskGroup
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ConnectionState
from hypercorn.utils import wrap_app

from api.serving.http1 import Http1Protocol

__all__ = ["Wire", "open_wire", "parse_answer", "serving"]


class Wire:
    """One in-process HTTP/1.1 connection (see the module doc)."""

    def __init__(self) -> None:
        self.protocol: Http1Protocol | None = None
        self._written = bytearray()
        self._whole = trio.Event()
        self.closed = False

    async def send(self, event: Event) -> None:
        """The protocol's writes: kept until the answer is whole."""
        if isinstance(event, RawData):
            self._written += event.data
            if _is_whole(self._written):
                self._whole.set()
        elif isinstance(event, Closed):
            self.closed = True
            self._whole.set()

    async def exchange(self, raw: bytes) -> bytes:
        """The bytes written back for the request `raw` (its answer, whole)."""
        assert self.protocol is not None and not self.closed
        self._written.clear()
        self._whole = trio.Event()
        await self.protocol.handle(RawData(raw))
        await self._whole.wait()
        return bytes(self._written)

    async def begin(self, raw: bytes) -> None:
        """Hand the request `raw` to the connection without awaiting its answer (a watch): `take()` what
        it writes."""
        assert self.protocol is not None and not self.closed
        self._written.clear()
        await self.protocol.handle(RawData(raw))

    def take(self) -> bytes:
        """What the connection wrote since `begin` or the last `take`."""
        written = bytes(self._written)
        self._written.clear()
        return written


def _is_whole(data: bytearray) -> bool:
    end = data.find(b"\r\n\r\n")
    if end < 0:
        return False
    head = bytes(data[:end]).lower()
    if head.startswith(b"http/1.1 1"):  # 100 Continue: the answer follows
        return _is_whole(data[end + 4:])
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name == b"content-length":
            return len(data) - end - 4 >= int(value)
        if name == b"transfer-encoding" and b"chunked" in value:
            return data.endswith(b"\r\n0\r\n\r\n") or data[end + 4:] == b"0\r\n\r\n"
    return False


def parse_answer(raw: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
    """(status, headers as sent with lower-case names, body de-chunked) of one answer's bytes."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = [(name.lower(), value.strip()) for name, _, value in (line.partition(":") for line in lines[1:])]
    if ("transfer-encoding", "chunked") in headers:
        parts, rest = [], body
        while True:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                break
            parts.append(rest[:size])
            rest = rest[size + 2:]
        body = b"".join(parts)
    return status, headers, body


@asynccontextmanager
async def open_wire(app: Any) -> AsyncIterator[Wire]:
    """A `Wire` to `app` for the block; the connection closes on leaving."""
    wire = Wire()
    async with serving(Http1Protocol, app, wire):
        yield wire


@asynccontextmanager
async def serving(protocol_class: Any, app: Any, wire: Any) -> AsyncIterator[Any]:
    """`protocol_class` serving `app` on one connection that writes to `wire.send`, set as `wire.protocol`,
    with the arguments `miniplane serve` gives it over TLS; the connection closes on leaving unless
    `wire.closed` (the server closed it). Shared by `open_wire` and `tests.support.wire2.open_wire2`."""
    config = Config()
    config.include_date_header = False  # the same bytes every time
    async with TaskGroup() as task_group:
        wire.protocol = protocol_class(wrap_app(app, config.wsgi_max_body_size, None), config, WorkerContext(None),
                                       task_group, ConnectionState({}), True, ("127.0.0.1", 50000),
                                       ("127.0.0.1", 6443), wire.send)
        try:
            yield wire.protocol
        finally:
            if not wire.closed:
                await wire.protocol.handle(RawData(b""))
                await wire.protocol.handle(Closed())
