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

HTTP/1.1 is spoken by `api.http1` (llhttp's parsing, Go's reason phrases,
an answer of known length in one write) where Hypercorn speaks it with h11;
HTTP/2 is Hypercorn's. A connection idle after an answer closes at the
keep-alive timeout (75 s), which Hypercorn under quart-trio never did (see
`_IdleTimer`), and, with no read timeout set (the server sets none), a read
is not wrapped in a cancel scope with an infinite deadline, as Hypercorn
wraps each.

Caveats:
    Built on Hypercorn's trio worker internals (`TCPServer` with its
    `idle_task`, `protocol`, `_read_data`, `MAX_RECV` and
    `_initiate_server_close`; `ProtocolWrapper.protocol`, `WorkerContext`,
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
from hypercorn.events import Closed, RawData
from hypercorn.protocol.h11 import H11Protocol
from hypercorn.trio.lifespan import Lifespan
from hypercorn.trio.tcp_server import MAX_RECV as _MAX_RECV, TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ConnectionState
from hypercorn.utils import repr_socket_addr, wrap_app

from api.http1 import Http1Protocol
from api.limits import RequestLimits

__all__ = ["serve_counted", "over_connection_limit"]

_OVER_LIMIT: ContextVar[bool] = ContextVar("miniplane_connection_over_limit", default=False)


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
    """Hypercorn's connection, speaking HTTP/1.1 through `api.http1` and keeping its keep-alive timeout
    with an `_IdleTimer`."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._idle_timer = _IdleTimer(self)
        self.idle_task = self._idle_timer  # type: ignore[assignment]  # Hypercorn calls restart() and stop()

    async def _read_data(self) -> None:
        try:
            wrapper = self.protocol
            if isinstance(wrapper.protocol, H11Protocol):  # made by `run` before the first read: not used yet
                wrapper.protocol = Http1Protocol(  # type: ignore[assignment]
                    wrapper.app, wrapper.config, wrapper.context, wrapper.task_group, wrapper.state, wrapper.ssl,
                    wrapper.client, wrapper.server, wrapper.send)
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
