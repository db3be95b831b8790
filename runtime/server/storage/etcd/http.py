"""`Endpoint`: HTTP/1.1 POSTs to one etcd endpoint under trio, connections kept alive, answers parsed by httptools.

Why not httpx, which the runtime's own API client uses: an etcd call is the
inner loop of every write and consistent read on etcd, and through httpx's
AsyncClient (URL and header models, auth and redirect layers, httpcore's
pool) one txn cost the API server 1.0-1.4 ms of CPU, 2.2-3.1 ms with 16 in
flight: a third of a create's CPU. Why httptools (llhttp, the parser under
uvicorn) rather than h11 (the state machine under httpcore and hypercorn),
which this module used first: the same POST cost 0.4-0.5 ms with h11, most of
it h11's events and header checks in Python; llhttp parses an answer in C.
etcd's gateway is one known peer that speaks JSON over HTTP/1.1, so this
module is all the HTTP an etcd client needs: POST a body (the request is one
fixed header block), read the answer, or read it as a stream of lines.

Contract:
- `post(path, body)` answers `(status, body)` on a kept-alive connection: an
  idle one (a connection the peer has closed is dropped, not used), else a new
  one. At most `max_idle` idle connections are kept (`statistics().idle`).
- `stream(path, body)` opens a connection of its own and yields a `Streamed`
  answer (its status, then its body line by line, or whole); the connection
  is closed when the context ends.
- Raises `Unreached` when no connection could be made (the request was never
  sent: safe to send elsewhere), `Broken` when the connection failed or the
  call outlasted `timeout` after the request may have been sent. A stream has
  no timeout once its status has arrived (an idle watch is silent).
- Cancellation closes the connection in use; it is never reused half read.
- A plain (not TLS) connection is written and read on its descriptor, not
  through trio's SocketStream (its checks cost a tenth of a millisecond a
  call); TLS connections go through the stream.

Internal to `runtime.server.storage.etcd`: imported by its modules only.
"""

from __future__ import annotations

import os
import ssl
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import AsyncIterator
from urllib.parse import urlsplit

import httptools
import trio

__all__ = ["Endpoint", "EndpointStatistics", "Streamed", "Unreached", "Broken"]

_READ_SIZE = 65536


class Unreached(Exception):
    """No connection to the endpoint could be made: the request was never sent."""


class Broken(Exception):
    """The connection failed (or the call timed out) after the request may have been sent."""


class _PeerClosed(Exception):
    """The peer closed the connection inside an answer."""


#: What a connection can fail with once made: the peer gone, a broken protocol.
_FAILURES = (OSError, trio.BrokenResourceError, trio.ClosedResourceError, httptools.HttpParserError, _PeerClosed)


class _Connection:
    """One HTTP/1.1 connection: a trio stream, and llhttp's parser of the answer in progress.

    The parser calls back `on_header`, `on_headers_complete`, `on_body` and
    `on_message_complete` as it reads; an interim (1xx) answer is skipped. An
    answer that gives neither its length nor chunks ends where the connection
    does (HTTP/1.1's read-until-close), and leaves it closed.
    """

    __slots__ = ("stream", "socket", "_fd", "_parser", "_status", "_parts", "_complete", "_keep_alive", "_framed")

    def __init__(self, stream: trio.abc.Stream, socket: trio.socket.SocketType, *, plain: bool) -> None:
        self.stream = stream
        self.socket = socket
        # A plain TCP connection is written and read on its descriptor: trio's SocketStream wraps each
        # send and receive in a conflict check, a checkpoint and a first try (which, for an answer not
        # yet sent, fails and waits): per etcd call that was a tenth of a millisecond of the serving
        # thread. The request is written whole when the socket takes it (it almost always does: it is
        # small and the socket idle); an answer is waited for, then read. TLS goes through the stream.
        self._fd = socket.fileno() if plain else -1
        self._parser: httptools.HttpResponseParser | None = None
        self._status = 0          # the final answer's status once its head is read
        self._parts: list[bytes] = []
        self._complete = False
        self._keep_alive = False  # as the answer said when it ended (llhttp forgets it then)
        self._framed = False      # the answer gave its length or chunks (else it ends at the close)

    # -- llhttp's callbacks --
    def on_header(self, name: bytes, value: bytes) -> None:
        if not self._framed and name.lower() in (b"content-length", b"transfer-encoding"):
            self._framed = True

    def on_headers_complete(self) -> None:
        assert self._parser is not None
        if (status := self._parser.get_status_code()) >= 200:
            self._status = status

    def on_body(self, body: bytes) -> None:
        self._parts.append(body)

    def on_message_complete(self) -> None:
        if self._status:
            assert self._parser is not None
            self._complete, self._keep_alive = True, self._parser.should_keep_alive()

    # -- the exchange --
    async def send(self, request: bytes) -> None:
        """Send a request and ready a parser for its answer."""
        self._parser = httptools.HttpResponseParser(self)
        self._status, self._parts, self._complete, self._keep_alive, self._framed = 0, [], False, False, False
        if self._fd >= 0:
            try:
                sent = os.write(self._fd, request)
            except BlockingIOError:
                sent = 0
            if sent == len(request):
                return  # no checkpoint here: the caller's next step, reading the answer, is one
            request = request[sent:]
        await self.stream.send_all(request)

    async def _receive(self) -> None:
        if self._fd >= 0:
            while True:
                await trio.lowlevel.wait_readable(self._fd)
                try:
                    data = os.read(self._fd, _READ_SIZE)
                    break
                except BlockingIOError:  # trio allows a wake-up with nothing to read: wait again
                    continue
        else:
            data = await self.stream.receive_some(_READ_SIZE)
        if not data:
            if self._status and not self._framed:  # read-until-close: the close is the answer's end
                self._complete = True
                return
            raise _PeerClosed("the connection closed inside an answer")
        assert self._parser is not None
        self._parser.feed_data(data)

    async def status(self) -> int:
        """The answer's status, once its head is read."""
        while not self._status:
            await self._receive()
        return self._status

    async def body_part(self) -> bytes | None:
        """The answer's body read since the last call (at least a byte), None at its end."""
        while not self._parts:
            if self._complete:
                return None
            await self._receive()
        parts, self._parts = self._parts, []
        return b"".join(parts)  # one part: that part itself, not a copy

    def reusable(self) -> bool:
        """Whether the exchange ended with the connection kept alive."""
        return self._complete and self._keep_alive

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


@dataclass(frozen=True)
class EndpointStatistics:
    """A snapshot of an Endpoint: `idle` connections kept for the next call (a stream's are never kept)."""

    idle: int


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
        self._host_header = parts.netloc.encode("ascii")
        self._idle: list[_Connection] = []
        self._max_idle = max_idle

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        """POST `body` (JSON) to `path`; the answer's status and body. Raises Unreached, Broken."""
        connection = self._idle_connection() or await self._connect()
        try:
            with self._timer() as timer:
                await connection.send(self._request(path, body))
                status = await connection.status()
                parts = []
                while (part := await connection.body_part()) is not None:
                    parts.append(part)
            if timer.cancelled_caught:
                raise Broken(self._no_answer(path))
        except _FAILURES as exc:
            await trio.aclose_forcefully(connection.stream)
            raise Broken(f"{self.url}{path}: {exc!r}") from exc
        except BaseException:  # cancelled or timed out: the connection is mid-exchange
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
                with self._timer() as timer:
                    await connection.send(self._request(path, body))
                    status = await connection.status()
            except _FAILURES as exc:
                raise Broken(f"{self.url}{path}: {exc!r}") from exc
            if timer.cancelled_caught:
                raise Broken(self._no_answer(path))
            yield Streamed(connection, status)
        finally:
            await trio.aclose_forcefully(connection.stream)

    def statistics(self) -> EndpointStatistics:
        """The connections kept idle."""
        return EndpointStatistics(len(self._idle))

    async def aclose(self) -> None:
        """Close the idle connections (a call in flight closes its own when it ends)."""
        idle, self._idle = self._idle, []
        for connection in idle:
            await trio.aclose_forcefully(connection.stream)

    def _timer(self) -> trio.CancelScope:
        # A scope with a deadline rather than fail_after (a generator-based context manager): this is
        # every etcd call's path. The caller checks `cancelled_caught` (see `_no_answer`).
        return trio.CancelScope(deadline=trio.current_time() + self.timeout)

    def _no_answer(self, path: str) -> str:
        return f"{self.url}{path}: no answer within {self.timeout} s"

    def _request(self, path: str, body: bytes) -> bytes:
        # The whole request: our paths are ASCII and our bodies JSON, so the head is fixed but for two values.
        return b"POST %s HTTP/1.1\r\nhost: %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (
            path.encode("ascii"), self._host_header, len(body), body)

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
        return _Connection(stream, tcp.socket, plain=self._ssl is None)
