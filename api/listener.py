"""The HTTPS listener: Hypercorn's connection handling behind a count of open connections.

`serve_counted(app, config, limits)` does what `hypercorn.trio.serve` does
(listen on `config`'s binds with its TLS context, run each connection with
Hypercorn's `TCPServer`, HTTP/1.1 and HTTP/2, a graceful stop on
cancellation) and counts each open connection in `limits`
(`RequestLimits.connection_opened/closed`). A connection past
`max_connections` is still served, but `over_connection_limit()` is then true
in its requests' tasks: the app answers each 429 with `Connection: close`, so
the client learns why and the connection ends. One twice past the limit is
closed at once, before its TLS handshake.

HTTP/1.1 status lines carry Go's reason phrases (`HTTP/1.1 404 Not Found`),
as kube-apiserver's: Hypercorn sends none (`HTTP/1.1 404 `), and HTTP/1.1
clients show the phrase (the Python client's `ApiException.reason`, curl).
An HTTP/1.1 answer of known length goes out in one write (one TLS record,
one system call), where Hypercorn alone writes its head, body and end apart,
a connection idle after an answer closes at the keep-alive timeout (75 s),
which Hypercorn under quart-trio never did (see `_IdleTimer`), and, with no
read timeout set (the server sets none), a read is not wrapped in a cancel
scope with an infinite deadline, as Hypercorn wraps each.

Caveats:
    Built on Hypercorn's trio worker internals (`TCPServer` with its
    `idle_task`, `_read_data`, `MAX_RECV` and `_initiate_server_close`, `WorkerContext`,
    `Lifespan`), as of Hypercorn 0.18 (the pinned range); it relies, as
    `api.authn.capture_peer_certificates` does, on the app's tasks being
    spawned from the connection's task, so that they see its context.
"""

from __future__ import annotations

import math
from contextvars import ContextVar
from typing import Any

import trio
from hypercorn.config import Config
from hypercorn.events import Closed, Event, RawData
from hypercorn.trio.lifespan import Lifespan
from hypercorn.trio.tcp_server import MAX_RECV as _MAX_RECV, TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ConnectionState
from hypercorn.utils import repr_socket_addr, wrap_app

from api.limits import RequestLimits

__all__ = ["serve_counted", "over_connection_limit"]

_OVER_LIMIT: ContextVar[bool] = ContextVar("miniplane_connection_over_limit", default=False)


#: Go's `http.StatusText` (net/http/status.go), which kube-apiserver's status lines carry; Python's
#: `HTTPStatus` words some otherwise (414, 418) and its newer versions more (413, 422).
_GO_STATUS_TEXT = {
    100: "Continue", 101: "Switching Protocols", 102: "Processing", 103: "Early Hints",
    200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information", 204: "No Content",
    205: "Reset Content", 206: "Partial Content", 207: "Multi-Status", 208: "Already Reported", 226: "IM Used",
    300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
    305: "Use Proxy", 307: "Temporary Redirect", 308: "Permanent Redirect",
    400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
    405: "Method Not Allowed", 406: "Not Acceptable", 407: "Proxy Authentication Required",
    408: "Request Timeout", 409: "Conflict", 410: "Gone", 411: "Length Required", 412: "Precondition Failed",
    413: "Request Entity Too Large", 414: "Request URI Too Long", 415: "Unsupported Media Type",
    416: "Requested Range Not Satisfiable", 417: "Expectation Failed", 418: "I'm a teapot",
    421: "Misdirected Request", 422: "Unprocessable Entity", 423: "Locked", 424: "Failed Dependency",
    425: "Too Early", 426: "Upgrade Required", 428: "Precondition Required", 429: "Too Many Requests",
    431: "Request Header Fields Too Large", 451: "Unavailable For Legal Reasons",
    500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
    504: "Gateway Timeout", 505: "HTTP Version Not Supported", 506: "Variant Also Negotiates",
    507: "Insufficient Storage", 508: "Loop Detected", 510: "Not Extended", 511: "Network Authentication Required",
}
#: h11's status line without a reason (what Hypercorn sends) -> the line with Go's.
_STATUS_LINES = {f"HTTP/1.1 {code} \r\n".encode(): f"HTTP/1.1 {code} {text}\r\n".encode()
                 for code, text in _GO_STATUS_TEXT.items()}
_BARE_LINE = len(b"HTTP/1.1 200 \r\n")


class _IdleTimer:
    """A connection's keep-alive timeout: Hypercorn's idle task (`TrioSingleTask`), mended.

    Hypercorn starts a task each time a connection idles (`restart`, through
    `nursery.start`) and cancels it when a request comes (`stop`). The restart
    after an answer runs in the task that sent the answer, quart-trio's
    request task, which quart-trio cancels once the answer is out: the start
    was cancelled with it, so a connection idle after an answer never timed
    out, and held its place under `--max-connections` for as long as the
    client kept it. Here `restart` has no checkpoint to cancel: one task per
    connection waits under a cancel scope whose deadline moves, to the
    keep-alive timeout when the connection idles and to none while it serves
    (no task, `start` handshake or lock per request). What it does is
    Hypercorn's `_idle_timeout`: an idle connection closes when the timeout
    passes or the server stops; a busy one is closed by its protocol when its
    answer is done (Hypercorn's h11 and h2 both do). It ends with the
    connection's reading (`end`), whichever side closed it.
    """

    def __init__(self, server: TCPServer) -> None:
        self._server = server
        self._scope: trio.CancelScope | None = None  # its deadline: none (inf) while the connection serves
        self._ended = False

    async def restart(self, task_group: Any, action: Any) -> None:
        """The connection idles. (`action`, Hypercorn's `_idle_timeout`, is what `_watch` does.)"""
        if self._ended:
            return
        terminated = self._server.context.terminated.is_set()
        deadline = -math.inf if terminated else trio.current_time() + self._server.config.keep_alive_timeout
        if self._scope is None:
            self._scope = trio.CancelScope(deadline=deadline)
            task_group._nursery.start_soon(self._watch)
        else:
            self._scope.deadline = deadline

    async def stop(self) -> None:  # a request came
        if self._scope is not None:
            self._scope.deadline = math.inf

    def end(self) -> None:
        """The connection is done reading (closed by either side): its timer ends with it."""
        self._ended = True
        if self._scope is not None:
            self._scope.cancel()

    async def _watch(self) -> None:
        assert self._scope is not None
        with self._scope:
            await self._server.context.terminated.wait()
            if self._scope.deadline == math.inf:  # serving
                await trio.sleep_forever()  # its protocol closes it once its answer is done
        if not self._ended:
            with trio.CancelScope(shield=True):
                await self._server._initiate_server_close()


class _Connection(TCPServer):
    """Hypercorn's connection, its HTTP/1.1 status lines given their reason phrase, a whole answer sent
    in one write, and its keep-alive timeout kept by an `_IdleTimer`.

    h11 serializes a response head on its own, and Hypercorn sends it as one
    `RawData`, so a head starts the bytes of a send; no body of this server
    starts with a status line (its bodies are JSON, YAML, CBOR, protobuf,
    gzip, HTML or plain text; HTTP/2 frames begin with their length).

    Hypercorn sends an answer's head, its body and its (empty) end as three
    writes, each a TLS record and a system call. A head with a Content-Length
    is held and sent with the next write: Hypercorn sends it only once the
    body's first part is in hand, and writes that part (or, for a body it
    suppresses, the end) in the same call, so nothing waits on it. A head
    without one (a stream: a watch) goes at once, as does a 1xx head (the
    client waits for `100 Continue` before it sends the body). Empty writes
    are skipped.
    """

    _held = b""  # a response head to send with the next write

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._idle_timer = _IdleTimer(self)
        self.idle_task = self._idle_timer  # type: ignore[assignment]  # Hypercorn calls restart() and stop()

    async def _read_data(self) -> None:
        try:
            if self.config.read_timeout:
                await super()._read_data()
            else:
                await self._read_until_closed()
        finally:
            self._idle_timer.end()  # else the connection's task group would wait for its timer

    async def _read_until_closed(self) -> None:
        # Hypercorn's loop without its `fail_after(read_timeout or inf)`: with no read timeout (the
        # server sets none) that is a cancel scope entered and left around every read, for nothing.
        while True:
            try:
                data = await self.stream.receive_some(_MAX_RECV)
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                break
            await self.protocol.handle(RawData(bytes(data)))
            if not data:
                break
        await self.protocol.handle(Closed())

    async def protocol_send(self, event: Event) -> None:
        if isinstance(event, RawData):
            data = event.data
            if data[:9] == b"HTTP/1.1 ":
                line = _STATUS_LINES.get(data[:_BARE_LINE])
                if line is not None:
                    data = line + data[_BARE_LINE:]
                if data[9:10] != b"1" and b"\r\ncontent-length:" in data.lower():
                    self._held += data
                    return
            if self._held:
                data, self._held = self._held + data, b""
            if not data:
                return
            event = RawData(data, event.address)
        elif self._held:  # the connection closes or idles: what is held goes first
            held, self._held = self._held, b""
            await super().protocol_send(RawData(held))
        await super().protocol_send(event)


def over_connection_limit() -> bool:
    """Whether the current request came on a connection opened past `max_connections`."""
    return _OVER_LIMIT.get()


async def serve_counted(app: Any, config: Config, limits: RequestLimits, *,
                        task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED) -> None:
    """Serve `app` on `config`'s secure binds until cancelled; started() with the bound URLs."""
    wrapped = wrap_app(app, config.wsgi_max_body_size, None)
    lifespan_state: dict[str, Any] = {}
    lifespan = Lifespan(wrapped, config, lifespan_state)
    context = WorkerContext(None)
    cap = limits.options.max_connections

    async def connection(stream: trio.SSLStream[trio.SocketStream]) -> None:
        admitted = limits.connection_opened()
        try:
            if not admitted and cap and limits.connections > 2 * cap:
                await trio.aclose_forcefully(stream)
                return
            _OVER_LIMIT.set(not admitted)
            await _Connection(wrapped, config, context, ConnectionState(lifespan_state.copy()), stream)
        finally:
            limits.connection_closed()

    async with trio.open_nursery() as lifespan_nursery:
        await lifespan_nursery.start(lifespan.handle_lifespan)
        await lifespan.wait_for_startup()
        async with trio.open_nursery() as server_nursery:
            sockets = config.create_sockets()
            ssl_context = config.create_ssl_context()
            listeners = []
            binds = []
            for sock in sockets.secure_sockets:
                sock.listen(config.backlog)
                listeners.append(trio.SSLListener(trio.SocketListener(trio.socket.from_stdlib_socket(sock)),
                                                  ssl_context, https_compatible=True))
                binds.append(f"https://{repr_socket_addr(sock.family, sock.getsockname())}")
            for sock in sockets.insecure_sockets:
                sock.listen(config.backlog)
                listeners.append(trio.SocketListener(trio.socket.from_stdlib_socket(sock)))
                binds.append(f"http://{repr_socket_addr(sock.family, sock.getsockname())}")
            task_status.started(binds)
            try:
                await trio.serve_listeners(connection, listeners, handler_nursery=server_nursery)
            finally:
                await context.terminated.set()
                server_nursery.cancel_scope.deadline = trio.current_time() + config.graceful_timeout
        await lifespan.wait_for_shutdown()
        lifespan_nursery.cancel_scope.cancel()
