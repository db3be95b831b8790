"""A trio-native streaming ASGI transport for httpx: an app served in this trio run, no socket.

Contract: `ASGITransport(app, nursery)` is an `httpx.AsyncBaseTransport`.
`handle_async_request` starts the app for the request in `nursery` and
returns as soon as the app sends `http.response.start`; the response's
stream yields each body chunk as the app sends it (an unbuffered channel:
the app's `send` blocks until the client reads, as a full socket would), so
watches and other endless streams work. The request body is handed to the
app chunk by chunk as the client's stream yields it (`more_body` until its
end). Closing the response (or cancelling the client while it waits)
delivers `http.disconnect`, cancels the app's task and waits for it to end,
so a test that hangs up finds the server's side already gone.

Like a server, it serves what the app sends: repeated headers stay repeated
(`Warning`), a HEAD response has no body, an app that fails or ends before
the end of its response is a `httpx.RemoteProtocolError` (chained to the
app's exception, if any). The client's read timeout (`httpx.Timeout.read`)
applies to each wait for the app once the request is sent (a body in
memory at once, a streamed one when the app has read it to its end) or
answered, in trio time (a `ReadTimeout`).

The ASGI scope is a plain-HTTP connection from `client` to `server`:
no `tls` extension, so no client certificate (tests of client certificates
need the real HTTPS server).

Caveats: no connection exists, so there is nothing of HTTP/1.1 itself:
no limits on request heads, no keep-alive, no `Transfer-Encoding` or `Date`
headers the server would add. Every request runs its own app task, as if on
its own connection.

httpx's own `ASGITransport` runs the app to its end before answering, which
an endless watch never reaches; hence this one (httpx's design, trio's
nurseries).
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import httpx
import trio

__all__ = ["ASGITransport"]

Message = dict[str, Any]
ASGIApp = Callable[..., Any]


@dataclass
class _Exchange:
    """One request's state, shared by the app's task and the client's response stream."""

    request: httpx.Request
    read_timeout: float | None
    messages: trio.MemoryReceiveChannel[Message]
    app_scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    #: The current wait's; its deadline runs once the request is sent (`timed`), as a client's read timeout.
    read_scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    body_sent: bool = False  # the app has received the whole body
    timed: bool = False  # the client has sent its request: waits for the app are under the read timeout
    disconnected: trio.Event = field(default_factory=trio.Event)
    done: trio.Event = field(default_factory=trio.Event)
    app_error: BaseException | None = None
    client_error: Exception | None = None

    def mark_body_sent(self) -> None:
        self.body_sent = True
        self.start_timing()

    def start_timing(self) -> None:
        if not self.timed:
            self.timed = True
            if self.read_timeout is not None:
                self.read_scope.deadline = trio.current_time() + self.read_timeout

    async def next_message(self) -> Message | None:
        """The app's next message (None once the app has ended); raises ReadTimeout."""
        timed = self.timed and self.read_timeout is not None
        self.read_scope = trio.CancelScope(deadline=trio.current_time() + self.read_timeout if timed else math.inf)
        with self.read_scope:
            try:
                return await self.messages.receive()
            except trio.EndOfChannel:
                return None
        raise httpx.ReadTimeout("the app sent nothing within the read timeout", request=self.request)

    async def hang_up(self) -> None:
        """The client is gone: tell the app, cancel it, wait until it has ended."""
        self.disconnected.set()
        self.app_scope.cancel()
        with trio.CancelScope(shield=True):
            await self.done.wait()
        self.messages.close()

    def incomplete(self, what: str) -> httpx.RemoteProtocolError:
        error = httpx.RemoteProtocolError(f"the app ended {what}", request=self.request)
        error.__cause__ = self.client_error or self.app_error
        return error


class _ResponseStream(httpx.AsyncByteStream):
    def __init__(self, exchange: _Exchange) -> None:
        self._exchange = exchange

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            message = await self._exchange.next_message()
            if message is None:
                raise self._exchange.incomplete("before the end of its response")
            body = message.get("body", b"")
            if body:
                yield body
            if not message.get("more_body", False):
                return

    async def aclose(self) -> None:
        await self._exchange.hang_up()


class ASGITransport(httpx.AsyncBaseTransport):
    """Serves each request with `app`, run in a task of `nursery`; see the module docstring.

    client, server: the ASGI scope's addresses (the server's port defaults
    to the URL's). Sharing one transport between clients is fine; closing a
    client leaves it usable.
    """

    def __init__(self, app: ASGIApp, nursery: trio.Nursery, *, client: tuple[str, int] = ("127.0.0.1", 50000),
                 server: tuple[str, int | None] | None = None) -> None:
        self.app = app
        self._nursery = nursery
        self._client = client
        self._server = server

    def _scope(self, request: httpx.Request) -> dict[str, Any]:
        raw_path = request.url.raw_path.split(b"?", 1)[0]
        return {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": request.method,
            "scheme": request.url.scheme,
            "path": unquote(raw_path.decode("ascii")),
            "raw_path": raw_path,
            "query_string": request.url.query,
            "root_path": "",
            "headers": [(name.lower(), value) for name, value in request.headers.raw],
            "client": self._client,
            "server": self._server or (request.url.host, request.url.port or 80),
            "extensions": {},
        }

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream), "an AsyncClient's request"
        outbox, inbox = trio.open_memory_channel[Message](0)  # unbuffered: the app waits for the reader
        timeout = request.extensions.get("timeout", {}).get("read")
        exchange = _Exchange(request, timeout, inbox)
        head = request.method == "HEAD"
        body = request.stream.__aiter__()

        async def receive() -> Message:
            if not exchange.body_sent:
                try:
                    chunk = b""
                    while not chunk:  # an empty chunk is no message (httpx sends one for no body)
                        chunk = await body.__anext__()
                except StopAsyncIteration:
                    exchange.mark_body_sent()
                    return {"type": "http.request", "body": b"", "more_body": False}
                except Exception as exc:  # the client failed while sending: for the app, it hung up
                    exchange.client_error = exc
                    exchange.mark_body_sent()
                    return {"type": "http.disconnect"}
                return {"type": "http.request", "body": bytes(chunk), "more_body": True}
            await exchange.disconnected.wait()
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            if exchange.disconnected.is_set():
                return  # nobody reads any more (a server drops it too)
            if message["type"] == "http.response.body":
                if head:
                    message = dict(message, body=b"")
                await outbox.send(message)
                if not message.get("more_body", False):
                    exchange.disconnected.set()  # the response is complete: as a server, end the exchange
            elif message["type"] == "http.response.start":
                await outbox.send(message)

        async def serve() -> None:
            try:
                with exchange.app_scope:
                    await self.app(self._scope(request), receive, send)
            except Exception as exc:  # the client gets a protocol error, chained to it
                exchange.app_error = exc
            finally:
                outbox.close()
                exchange.done.set()

        self._nursery.start_soon(serve)
        if isinstance(request.stream, httpx.ByteStream):
            exchange.start_timing()  # a body in memory is sent at once (a socket's buffer takes it)
        try:
            start = await exchange.next_message()
        except BaseException:
            await exchange.hang_up()
            raise
        if start is None or start["type"] != "http.response.start":
            await exchange.hang_up()
            if exchange.client_error is not None:
                raise exchange.client_error
            raise exchange.incomplete("without starting a response")
        exchange.start_timing()  # answered: the client reads from now on
        return httpx.Response(start["status"], headers=list(start.get("headers") or []),
                              stream=_ResponseStream(exchange), extensions={"http_version": b"HTTP/1.1"})
