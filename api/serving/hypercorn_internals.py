"""What this server uses of Hypercorn beyond its documented API (`hypercorn.config.Config`,
`hypercorn.trio.serve`): the one module that touches Hypercorn's internals
(tests/unit/api/test_hypercorn_boundary.py checks it).

Contract:
- `serve_connections(app, config, http1, http2, on_connection)` does what `hypercorn.trio.serve`
  does (the lifespan, listening on `config`'s binds with its TLS context, a
  graceful stop on cancellation: `config.graceful_timeout` for open
  connections), but hands each accepted stream to `on_connection(stream,
  serve)`, which may refuse it or call `await serve()` to run it as a
  `Connection`. Started with the bound URLs.
- `Connection` is Hypercorn's trio `TCPServer` speaking HTTP/1.1 and
  HTTP/2 through the protocol classes it is given (`api.serving.http1.
  Http1Protocol` and `api.serving.http2.Http2Protocol`, where Hypercorn's
  are `H11Protocol` and `H2Protocol`), chosen by TLS's ALPN, keeping the
  keep-alive timeout with `_IdleTimer`, and reading without a cancel scope
  per read when no read timeout is set (the server sets none).
- The protocol-level names `api.serving.http1`, `app_exchange` and `http2` build on
  (Hypercorn's connection events, `HTTPStream`'s helpers, its typing) are re-exported
  here, so that no other module imports more of Hypercorn than its documented API.

Caveats:
    Built on Hypercorn's trio worker internals as of Hypercorn 0.18 (the
    pinned range): `TCPServer` with its `run` (remade here), `idle_task`,
    `protocol`, `protocol_send`, `stream`, `context`, `_read_data`,
    `_close`, `MAX_RECV` and `_initiate_server_close`; the trio
    `TaskGroup`; `WorkerContext`, `Lifespan`, `wrap_app`,
    `parse_socket_addr`, `repr_socket_addr`; the protocol interface
    (`initiate`, `handle(event)`, `send`) that `H11Protocol` and
    `H2Protocol` implement; `HTTPStream`'s behaviour, which
    `api.serving.app_exchange` repeats (its scope, its rules, `suppress_body`,
    `build_and_validate_headers`, `valid_server_name`, `UnexpectedMessageError`), and the trio
    `TaskGroup.spawn` it starts the app with. A Hypercorn
    upgrade must be checked against each. It relies, as
    `api.authn.capture_peer_certificates` does, on the app's tasks being
    spawned from the connection's task, so that they see its context.

Internal to `api.serving`: imported by its modules only.
"""

from __future__ import annotations

import math
from typing import Any, Awaitable, Callable

import trio
from hypercorn.config import Config
from hypercorn.events import Closed, Event, RawData, Updated
from hypercorn.protocol.events import Request
from hypercorn.trio.lifespan import Lifespan
from hypercorn.trio.task_group import TaskGroup as ConnectionTaskGroup
from hypercorn.trio.tcp_server import MAX_RECV, TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import AppWrapper, ConnectionState, TaskGroup, WorkerContext as WorkerContextType
from hypercorn.utils import (UnexpectedMessageError, build_and_validate_headers, parse_socket_addr, repr_socket_addr,
                             suppress_body, valid_server_name, wrap_app)

__all__ = ["Connection", "serve_connections",
           # for api.serving.http1 and http2: Hypercorn's protocol interface
           "AppWrapper", "Closed", "Config", "ConnectionState", "Event", "RawData", "TaskGroup", "Updated",
           "WorkerContextType",
           # for api.serving.app_exchange: HTTPStream's helpers, and the Request event its host check takes
           "Request", "UnexpectedMessageError", "build_and_validate_headers", "suppress_body", "valid_server_name"]


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



class Connection(TCPServer):
    """Hypercorn's connection (`TCPServer(app, config, context, state, stream)`), speaking HTTP/1.1 through
    `http1` and HTTP/2 through `http2` (classes with `H11Protocol`'s constructor and interface), chosen by
    TLS's ALPN, and keeping its keep-alive timeout with an `_IdleTimer`."""

    def __init__(self, http1: type, http2: type, *args: Any) -> None:
        super().__init__(*args)
        self._http1, self._http2 = http1, http2
        self._idle_timer = _IdleTimer(self)
        self.idle_task = self._idle_timer  # type: ignore[assignment]  # Hypercorn calls restart() and stop()

    async def run(self) -> None:
        """Hypercorn's `TCPServer.run`, the protocol made here (where Hypercorn's `ProtocolWrapper` picks h11
        or h2, and h2c upgrades: `http1` serves those as plain HTTP/1.1)."""
        try:
            try:
                with trio.fail_after(self.config.ssl_handshake_timeout):
                    await self.stream.do_handshake()
            except (trio.BrokenResourceError, trio.TooSlowError):
                return  # the handshake failed
            alpn = self.stream.selected_alpn_protocol()
            socket = self.stream.transport_stream.socket
            ssl = True
        except AttributeError:  # not TLS
            alpn, socket, ssl = "http/1.1", self.stream.socket, False
        try:
            client = parse_socket_addr(socket.family, socket.getpeername())
            server = parse_socket_addr(socket.family, socket.getsockname())
            async with ConnectionTaskGroup() as task_group:
                self._task_group = task_group
                protocol = self._http2 if alpn == "h2" else self._http1
                self.protocol = protocol(self.app, self.config, self.context, task_group,
                                         ConnectionState(self.state), ssl, client, server, self.protocol_send)
                await self.protocol.initiate()
                await self.idle_task.restart(self._task_group, self._idle_timeout)
                await self._read_data()
        except OSError:
            pass
        finally:
            await self._close()

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
                data = await self.stream.receive_some(MAX_RECV)
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                break
            await self.protocol.handle(RawData(bytes(data)))
            if not data:
                break
        await self.protocol.handle(Closed())


#: What `serve_connections` calls per accepted stream: the stream, and the coroutine function serving it.
OnConnection = Callable[[trio.abc.Stream, Callable[[], Awaitable[None]]], Awaitable[None]]


async def serve_connections(app: Any, config: Config, http1: type, http2: type, on_connection: OnConnection, *,
                            task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED) -> None:
    """Serve `app` on `config`'s binds until cancelled, each connection through `on_connection` (see the
    module doc); started() with the bound URLs."""
    wrapped = wrap_app(app, config.wsgi_max_body_size, None)
    lifespan_state: dict[str, Any] = {}
    lifespan = Lifespan(wrapped, config, lifespan_state)
    context = WorkerContext(None)

    async def connection(stream: trio.SSLStream[trio.SocketStream]) -> None:
        async def serve() -> None:
            await Connection(http1, http2, wrapped, config, context, ConnectionState(lifespan_state.copy()), stream)
        await on_connection(stream, serve)

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
