"""One HTTP/1.1 connection over real TLS, driven request by request (h11), for tests of connection reuse.

Contract: `async with open_connection(server) as conn:` opens a TLS connection to a
`tests.support.server.Server` started with `start_server` (HTTP/1.1 by ALPN).
`await conn.request(method, path, headers=..., body=b"...")` sends one request
and returns its `Answer` (status, headers with lower-case names, body). The body
is sent while the answer is read, as a browser or Go's client does: a server
that answers before reading the body, or stops reading it, gets its answer
through. `answer.closing` is whether the answer said `Connection: close`;
`conn.reusable` whether the connection can carry the next request (h11's
state, and the server has not closed it). Raises `ConnectionDropped` when the
connection ends without a complete answer.
"""

from __future__ import annotations

import ssl
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import AsyncIterator

import h11
import trio

from tests.support.server import Server

__all__ = ["Answer", "Connection", "ConnectionDropped", "open_connection"]


class ConnectionDropped(Exception):
    """The server closed the connection without a complete answer."""


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def closing(self) -> bool:
        return "close" in self.headers.get("connection", "").lower()


class Connection:
    def __init__(self, stream: trio.SSLStream) -> None:
        self._stream = stream
        self._h11 = h11.Connection(h11.CLIENT)
        self.server_closed = False

    @property
    def reusable(self) -> bool:
        return not self.server_closed and self._h11.our_state is h11.IDLE and self._h11.their_state is h11.IDLE

    async def request(self, method: str, path: str, *, headers: dict[str, str] | None = None,
                      body: bytes = b"") -> Answer:
        wanted = {"host": "miniplane", **{k.lower(): v for k, v in (headers or {}).items()}}
        if body or method in ("POST", "PUT", "PATCH"):
            wanted["content-length"] = str(len(body))
        head = self._h11.send(h11.Request(method=method, target=path, headers=list(wanted.items())))
        answer: list[Answer] = []
        async with trio.open_nursery() as nursery:
            async def send() -> None:
                try:
                    await self._stream.send_all(head)
                    for offset in range(0, len(body), 65536):
                        await self._stream.send_all(self._h11.send(h11.Data(data=body[offset:offset + 65536])))
                    await self._stream.send_all(self._h11.send(h11.EndOfMessage()))
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    pass  # the server stopped reading (it answered and closed): the answer says so

            nursery.start_soon(send)
            answer.append(await self._read_answer())
            if answer[0].closing or self._h11.their_state is h11.MUST_CLOSE:
                nursery.cancel_scope.cancel()  # the rest of the body will not be read
        if self._h11.our_state is h11.DONE and self._h11.their_state is h11.DONE:
            self._h11.start_next_cycle()
        return answer[0]

    async def stalled(self, method: str, path: str, *, headers: dict[str, str], length: int, part: bytes) -> Answer:
        """Send a request announcing a body of `length` bytes but only `part` of it, and read the answer."""
        wanted = {"host": "miniplane", **{k.lower(): v for k, v in headers.items()}, "content-length": str(length)}
        await self._stream.send_all(self._h11.send(h11.Request(method=method, target=path,
                                                               headers=list(wanted.items()))))
        await self._stream.send_all(self._h11.send(h11.Data(data=part)))
        return await self._read_answer()

    async def _read_answer(self) -> Answer:
        response: h11.Response | None = None
        body = b""
        while True:
            event = self._h11.next_event()
            if event is h11.NEED_DATA:
                data = await self._stream.receive_some(65536)
                if not data:
                    self.server_closed = True
                self._h11.receive_data(data)
                continue
            if isinstance(event, h11.Response):
                response = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                assert response is not None
                return Answer(response.status_code, {k.decode().lower(): v.decode() for k, v in response.headers},
                              body)
            elif isinstance(event, h11.ConnectionClosed):
                raise ConnectionDropped("the server closed the connection without a complete answer")

    async def wait_closed(self) -> bool:
        """Whether the server closes the connection (reads to its end)."""
        while True:
            try:
                data = await self._stream.receive_some(65536)
            except trio.BrokenResourceError:
                return True
            if not data:
                self.server_closed = True
                return True


@asynccontextmanager
async def open_connection(server: Server) -> AsyncIterator[Connection]:
    host, port = server.url.split("://", 1)[1].rsplit(":", 1)
    assert server.ca_pem is not None, "a real HTTPS server (start_server) is needed"
    ctx = ssl.create_default_context(cadata=server.ca_pem.decode())
    ctx.set_alpn_protocols(["http/1.1"])
    stream = await trio.open_ssl_over_tcp_stream(host, int(port), ssl_context=ctx, https_compatible=True)
    try:
        yield Connection(stream)
    finally:
        await trio.aclose_forcefully(stream)
