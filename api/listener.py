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

Caveats:
    Built on Hypercorn's trio worker internals (`TCPServer`, `WorkerContext`,
    `Lifespan`), as of Hypercorn 0.18 (the pinned range); it relies, as
    `api.authn.capture_peer_certificates` does, on the app's tasks being
    spawned from the connection's task, so that they see its context.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

import trio
from hypercorn.config import Config
from hypercorn.trio.lifespan import Lifespan
from hypercorn.trio.tcp_server import TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ConnectionState
from hypercorn.utils import repr_socket_addr, wrap_app

from api.limits import RequestLimits

__all__ = ["serve_counted", "over_connection_limit"]

_OVER_LIMIT: ContextVar[bool] = ContextVar("miniplane_connection_over_limit", default=False)


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
            await TCPServer(wrapped, config, context, ConnectionState(lifespan_state.copy()), stream)
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
