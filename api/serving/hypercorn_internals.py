"""What this server uses of Hypercorn beyond its documented API (`hypercorn.config.Config`,
`hypercorn.trio.serve`): the one module that touches Hypercorn's internals
(tests/unit/api/test_hypercorn_boundary.py checks it).

Contract:
- `serve_connections(app, config, on_connection)` does what `hypercorn.trio.serve`
  does (the lifespan, listening on `config`'s binds with its TLS context, a
  graceful stop on cancellation: `config.graceful_timeout` for open
  connections), but hands each accepted stream to `on_connection(stream,
  serve)`, which may refuse it or call `await serve()` to run it as a
  `Connection`. Started with the bound URLs.
- `Connection` is Hypercorn's trio `TCPServer` speaking HTTP/1.1 through the
  protocol class it is given (`api.serving.http1.Http1Protocol`, where
  Hypercorn's is `H11Protocol`; HTTP/2 is Hypercorn's `H2Protocol` made a
  `CoalescingH2Protocol`: an answer of known length in one write), keeping the
  keep-alive timeout with `_IdleTimer`, and reading without a cancel scope
  per read when no read timeout is set (the server sets none).
- The protocol-level names `api.serving.http1` builds on (Hypercorn's
  events, `HTTPStream`, its typing) are re-exported here, so that no other
  module imports more of Hypercorn than its documented API.

Caveats:
    Built on Hypercorn's trio worker internals as of Hypercorn 0.18 (the
    pinned range): `TCPServer` with its `idle_task`, `protocol`, `stream`,
    `context`, `_read_data`, `MAX_RECV` and `_initiate_server_close`;
    `ProtocolWrapper.protocol` and its fields; `WorkerContext`, `Lifespan`,
    `wrap_app`, `repr_socket_addr`; the protocol interface (`handle(event)`,
    `send`, `HTTPStream`'s events) that `H11Protocol` implements; `H2Protocol`'s
    `stream_send`, `_send_data`, `_close_stream`, `_flush`, `connection`,
    `stream_buffers` (`pop`, `complete`, `close`) and `priority`. A Hypercorn
    upgrade must be checked against each. It relies, as
    `api.authn.capture_peer_certificates` does, on the app's tasks being
    spawned from the connection's task, so that they see its context.

Internal to `api.serving`: imported by its modules only.
"""

from __future__ import annotations

import math
from contextlib import suppress
from typing import Any, Awaitable, Callable

import h2.exceptions
import priority
import trio
from hypercorn.config import Config
from hypercorn.events import Closed, Event, RawData, Updated
from hypercorn.protocol.events import Body, EndBody, Event as StreamEvent, Request, Response, StreamClosed
from hypercorn.protocol.h11 import H11Protocol
from hypercorn.protocol.h2 import H2Protocol
from hypercorn.protocol.http_stream import HTTPStream
from hypercorn.trio.lifespan import Lifespan
from hypercorn.trio.tcp_server import MAX_RECV, TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import AppWrapper, ConnectionState, TaskGroup, WorkerContext as WorkerContextType
from hypercorn.utils import repr_socket_addr, wrap_app

__all__ = ["Connection", "serve_connections",
           # for api.serving.http1: Hypercorn's protocol interface
           "AppWrapper", "Body", "Closed", "Config", "ConnectionState", "EndBody", "Event", "HTTPStream", "RawData",
           "Request", "Response", "StreamClosed", "StreamEvent", "TaskGroup", "Updated", "WorkerContextType"]


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



#: What writing a stream's answer raises once the stream or its connection is gone (Hypercorn's own list).
_STREAM_GONE = (h2.exceptions.StreamClosedError, KeyError, h2.exceptions.ProtocolError, priority.MissingStreamError)


class CoalescingH2Protocol(H2Protocol):
    """Hypercorn's HTTP/2, writing an answer of known length in one write where Hypercorn's makes three.

    Hypercorn flushes the HEADERS frame alone, then each DATA frame, then an empty DATA frame ending the
    stream: three TLS records and writes for a GET (16% of an HTTP/2 GET's CPU, py-spy). Here the head of
    an answer with a Content-Length is held (`held_heads`), and so is its body (`held_bodies`) until its
    end: then, when the flow-control windows take it all, the answer's task writes the head and the data
    (END_STREAM on the last frame) in one flush, without waking the send task (whose hand-offs were a
    further tenth of the GET's CPU); else the held body goes to the send task as Hypercorn's would, which
    writes the head with the first data. An answer without a length (a watch, a streamed list) has its
    head flushed at once, as before. Made by swapping the class of Hypercorn's protocol (`adopt`): no
    state but `held_heads` and `held_bodies`.
    """

    held_heads: dict[int, list[tuple[bytes, bytes]]]
    held_bodies: dict[int, bytearray]

    @classmethod
    def adopt(cls, protocol: H2Protocol) -> None:
        protocol.__class__ = cls
        protocol.held_heads = {}  # type: ignore[attr-defined]
        protocol.held_bodies = {}  # type: ignore[attr-defined]

    async def stream_send(self, event: StreamEvent) -> None:
        stream_id = event.stream_id
        if isinstance(event, Response) and any(name == b"content-length" for name, _ in event.headers):
            self.held_heads[stream_id] = ([(b":status", b"%d" % event.status_code)] + event.headers
                                          + self.config.response_headers("h2"))
            return
        if isinstance(event, Body) and (stream_id in self.held_heads or stream_id in self.held_bodies):
            # Once begun, the whole body is held: its pieces go out in order.
            self.held_bodies.setdefault(stream_id, bytearray()).extend(event.data)
            return
        if isinstance(event, EndBody):
            if await self._send_whole(stream_id):
                return
            body = self.held_bodies.pop(stream_id, None)  # the send task took the head: the body follows it
            if body:
                await super().stream_send(Body(stream_id=stream_id, data=bytes(body)))
        await super().stream_send(event)

    async def _send_whole(self, stream_id: int) -> bool:
        """Write the held head and body of `stream_id`, ending it, when both windows take the body: True
        when done (or the stream is gone), False to leave it to the send task."""
        head = self.held_heads.get(stream_id)
        body = self.held_bodies.get(stream_id) or b""
        connection = self.connection
        if head is None or len(body) > connection.local_flow_control_window(stream_id):
            return False
        del self.held_heads[stream_id]
        self.held_bodies.pop(stream_id, None)
        try:
            connection.send_headers(stream_id, head, end_stream=not body)
            size = connection.max_outbound_frame_size
            for start in range(0, len(body), size):
                connection.send_data(stream_id, bytes(body[start:start + size]), end_stream=start + size >= len(body))
            self._finished(stream_id)
        except _STREAM_GONE:
            await self._dropped(stream_id)
        await self._flush()
        return True

    async def _send_data(self, stream_id: int) -> None:
        """Hypercorn's `_send_data`: the held head first, the stream's end on its last DATA frame, one flush."""
        try:
            head = self.held_heads.pop(stream_id, None)
            if head is not None:
                self.connection.send_headers(stream_id, head)
            buffer = self.stream_buffers[stream_id]
            chunk_size = max(0, min(self.connection.local_flow_control_window(stream_id),
                                    self.connection.max_outbound_frame_size))
            data = await buffer.pop(chunk_size)
            ended = False
            if data:
                ended = buffer.complete
                self.connection.send_data(stream_id, data, end_stream=ended)
            else:
                self.priority.block(stream_id)
            if buffer.complete:
                if not ended:
                    self.connection.end_stream(stream_id)
                self._finished(stream_id)
            await self._flush()
        except _STREAM_GONE:
            await self._dropped(stream_id)

    def _finished(self, stream_id: int) -> None:
        """The stream's answer is written whole: the send task forgets it."""
        del self.stream_buffers[stream_id]
        self.priority.remove_stream(stream_id)

    async def _dropped(self, stream_id: int) -> None:
        """The stream or the connection closed while its answer was written: as Hypercorn's, it is dropped."""
        buffer = self.stream_buffers.pop(stream_id, None)
        if buffer is not None:
            await buffer.close()
            with suppress(priority.MissingStreamError):
                self.priority.remove_stream(stream_id)

    async def _close_stream(self, stream_id: int) -> None:
        self.held_heads.pop(stream_id, None)  # a stream reset before its answer was written
        self.held_bodies.pop(stream_id, None)
        await super()._close_stream(stream_id)


class Connection(TCPServer):
    """Hypercorn's connection (`TCPServer(app, config, context, state, stream)`), speaking HTTP/1.1 through
    `http1` (a class with `H11Protocol`'s constructor and interface) and keeping its keep-alive timeout with
    an `_IdleTimer`."""

    def __init__(self, http1: type, *args: Any) -> None:
        super().__init__(*args)
        self._http1 = http1
        self._idle_timer = _IdleTimer(self)
        self.idle_task = self._idle_timer  # type: ignore[assignment]  # Hypercorn calls restart() and stop()

    async def _read_data(self) -> None:
        try:
            wrapper = self.protocol
            if isinstance(wrapper.protocol, H11Protocol):  # made by `run` before the first read: not used yet
                wrapper.protocol = self._http1(
                    wrapper.app, wrapper.config, wrapper.context, wrapper.task_group, wrapper.state, wrapper.ssl,
                    wrapper.client, wrapper.server, wrapper.send)
            elif type(wrapper.protocol) is H2Protocol:  # not used yet either: the same object, coalescing
                CoalescingH2Protocol.adopt(wrapper.protocol)
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


async def serve_connections(app: Any, config: Config, http1: type, on_connection: OnConnection, *,
                            task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED) -> None:
    """Serve `app` on `config`'s binds until cancelled, each connection through `on_connection` (see the
    module doc); started() with the bound URLs."""
    wrapped = wrap_app(app, config.wsgi_max_body_size, None)
    lifespan_state: dict[str, Any] = {}
    lifespan = Lifespan(wrapped, config, lifespan_state)
    context = WorkerContext(None)

    async def connection(stream: trio.SSLStream[trio.SocketStream]) -> None:
        async def serve() -> None:
            await Connection(http1, wrapped, config, context, ConnectionState(lifespan_state.copy()), stream)
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
