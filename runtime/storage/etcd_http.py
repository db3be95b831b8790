"""`Endpoint`: HTTP/1.1 POSTs to one etcd endpoint over h11 and trio, connections kept alive.

Why not httpx, which the runtime's own API client uses: an etcd call is the
inner loop of every write and consistent read on etcd, and through httpx's
AsyncClient (URL and header models, auth and redirect layers, httpcore's
pool) one txn cost the API server 1.0-1.4 ms of CPU, 2.2-3.1 ms with 16 in
flight: a third of a create's CPU. The same POST written with h11 (the
HTTP/1.1 state machine under httpcore and hypercorn) costs 0.4-0.5 ms. etcd's
gateway is one known peer that speaks JSON over HTTP/1.1, so this module is
all the HTTP an etcd client needs: POST a body, read the answer, or read it as
a stream of lines.

Contract:
- `post(path, body)` answers `(status, body)` on a kept-alive connection: an
  idle one (a connection the peer has closed is dropped, not used), else a new
  one. At most `max_idle` idle connections are kept.
- `stream(path, body)` opens a connection of its own and yields a `Streamed`
  answer (its status, then its body line by line, or whole); the connection
  is closed when the context ends.
- Raises `Unreached` when no connection could be made (the request was never
  sent: safe to send elsewhere), `Broken` when the connection failed or the
  call outlasted `timeout` after the request may have been sent. A stream has
  no timeout once its status has arrived (an idle watch is silent).
- Cancellation closes the connection in use; it is never reused half read.
"""

from __future__ import annotations

import ssl
from contextlib import asynccontextmanager
from typing import AsyncIterator
from urllib.parse import urlsplit

import h11
import trio

__all__ = ["Endpoint", "Streamed", "Unreached", "Broken"]

_READ_SIZE = 65536
#: What a connection can fail with once made: the peer gone, a broken protocol, the call's time out.
_FAILURES = (OSError, trio.BrokenResourceError, trio.ClosedResourceError, trio.TooSlowError, h11.ProtocolError)


class Unreached(Exception):
    """No connection to the endpoint could be made: the request was never sent."""


class Broken(Exception):
    """The connection failed (or the call timed out) after the request may have been sent."""


class _Connection:
    """One HTTP/1.1 connection: a trio stream and h11's state for it."""

    __slots__ = ("stream", "socket", "state")

    def __init__(self, stream: trio.abc.Stream, socket: trio.socket.SocketType) -> None:
        self.stream = stream
        self.socket = socket
        self.state = h11.Connection(h11.CLIENT)

    async def send(self, *events: h11.Event) -> None:
        await self.stream.send_all(b"".join(self.state.send(event) or b"" for event in events))

    async def next_event(self) -> h11.Event:
        while (event := self.state.next_event()) is h11.NEED_DATA:
            self.state.receive_data(await self.stream.receive_some(_READ_SIZE))  # b"": end of stream
        return event

    async def response(self) -> h11.Response:
        while not isinstance(event := await self.next_event(), h11.Response):
            if not isinstance(event, h11.InformationalResponse):
                raise h11.RemoteProtocolError(f"expected a response, got {type(event).__name__}")
        return event

    async def body_part(self) -> bytes | None:
        """The next piece of the answer's body, None at its end."""
        event = await self.next_event()
        if isinstance(event, h11.Data):
            return bytes(event.data)
        if isinstance(event, h11.EndOfMessage):
            return None
        raise h11.RemoteProtocolError("the connection closed inside an answer")

    def reusable(self) -> bool:
        """Whether the exchange ended cleanly with the connection kept alive; readies it for the next."""
        if self.state.our_state is h11.DONE and self.state.their_state is h11.DONE:
            self.state.start_next_cycle()
            return True
        return False

    def closed_by_peer(self) -> bool:
        # An idle HTTP/1.1 connection has nothing to read unless the peer closed it (etcd restarting).
        return self.socket.is_readable()


class Streamed:
    """A streaming answer: `status`, then `next_line()` or `read_all()`."""

    def __init__(self, connection: _Connection, status: int) -> None:
        self.status = status
        self._connection = connection
        self._buffer = bytearray()
        self._scanned = 0  # the buffer's first bytes known to hold no newline: a long line is scanned once
        self._ended = False

    async def next_line(self) -> bytes | None:
        """The next line of the body without its newline (a last unterminated line too), None at its end.

        Raises Broken when the connection breaks.
        """
        while (cut := self._buffer.find(b"\n", self._scanned)) < 0:
            self._scanned = len(self._buffer)
            if self._ended:
                line = bytes(self._buffer)
                self._buffer.clear()
                self._scanned = 0
                return line or None
            part = await self._part()
            if part is None:
                self._ended = True
            else:
                self._buffer += part
        line = bytes(self._buffer[:cut])
        del self._buffer[:cut + 1]
        self._scanned = 0
        return line

    async def read_all(self) -> bytes:
        """The rest of the body. Raises Broken."""
        parts = [bytes(self._buffer)]
        self._buffer.clear()
        self._scanned = 0
        while not self._ended and (part := await self._part()) is not None:
            parts.append(part)
        self._ended = True
        return b"".join(parts)

    async def _part(self) -> bytes | None:
        try:
            return await self._connection.body_part()
        except _FAILURES as exc:
            raise Broken(f"stream broken: {exc!r}") from exc


class Endpoint:
    """One etcd endpoint (`http://host:port` or `https://...`). Safe to share between trio tasks."""

    def __init__(self, url: str, *, ssl_context: ssl.SSLContext | None = None, timeout: float = 5.0,
                 max_idle: int = 64) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.port is None:
            raise ValueError(f"etcd endpoint {url!r}: expected http(s)://HOST:PORT")
        self.url = url
        self.timeout = timeout
        self._host, self._port = parts.hostname, parts.port
        self._ssl = (ssl_context or ssl.create_default_context()) if parts.scheme == "https" else None
        self._headers = [(b"host", parts.netloc.encode("ascii")), (b"content-type", b"application/json")]
        self._idle: list[_Connection] = []
        self._max_idle = max_idle

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        """POST `body` (JSON) to `path`; the answer's status and body. Raises Unreached, Broken."""
        connection = self._idle_connection() or await self._connect()
        try:
            with trio.fail_after(self.timeout):
                await connection.send(self._request(path, body), h11.Data(data=body), h11.EndOfMessage())
                status = (await connection.response()).status_code
                parts = []
                while (part := await connection.body_part()) is not None:
                    parts.append(part)
        except _FAILURES as exc:
            await trio.aclose_forcefully(connection.stream)
            raise Broken(f"{self.url}{path}: {exc!r}") from exc
        except BaseException:  # cancelled: the connection is mid-exchange
            await trio.aclose_forcefully(connection.stream)
            raise
        if connection.reusable() and len(self._idle) < self._max_idle:
            self._idle.append(connection)
        else:
            await trio.aclose_forcefully(connection.stream)
        return status, b"".join(parts)

    @asynccontextmanager
    async def stream(self, path: str, body: bytes) -> AsyncIterator[Streamed]:
        """POST `body` to `path` on a connection of its own; yields the answer once its status is in.

        Raises Unreached, Broken (while opening).
        """
        connection = await self._connect()
        try:
            try:
                with trio.fail_after(self.timeout):
                    await connection.send(self._request(path, body), h11.Data(data=body), h11.EndOfMessage())
                    status = (await connection.response()).status_code
            except _FAILURES as exc:
                raise Broken(f"{self.url}{path}: {exc!r}") from exc
            yield Streamed(connection, status)
        finally:
            await trio.aclose_forcefully(connection.stream)

    async def aclose(self) -> None:
        """Close the idle connections (a call in flight closes its own when it ends)."""
        idle, self._idle = self._idle, []
        for connection in idle:
            await trio.aclose_forcefully(connection.stream)

    def _request(self, path: str, body: bytes) -> h11.Request:
        return h11.Request(method=b"POST", target=path.encode("ascii"),
                           headers=[*self._headers, (b"content-length", str(len(body)).encode("ascii"))])

    def _idle_connection(self) -> _Connection | None:
        while self._idle:
            connection = self._idle.pop()
            if not connection.closed_by_peer():
                return connection
            # Closing a socket whose peer already closed it does not wait on the network.
            connection.socket.close()
        return None

    async def _connect(self) -> _Connection:
        tcp: trio.SocketStream | None = None
        try:
            with trio.fail_after(self.timeout):
                tcp = await trio.open_tcp_stream(self._host, self._port)
                stream: trio.abc.Stream = tcp
                if self._ssl is not None:
                    stream = trio.SSLStream(tcp, self._ssl, server_hostname=self._host, https_compatible=True)
                    await stream.do_handshake()
        except BaseException as exc:
            if tcp is not None:
                await trio.aclose_forcefully(tcp)
            if isinstance(exc, (OSError, trio.TooSlowError, trio.BrokenResourceError)):
                raise Unreached(f"{self.url}: {exc!r}") from exc
            raise
        return _Connection(stream, tcp.socket)
