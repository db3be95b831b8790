"""The HTTPS listener: Hypercorn's connection handling behind a count of open connections.

`serve_counted(app, config, limits)` serves `app` as `hypercorn.trio.serve`
does (through `api.serving.hypercorn_internals`: HTTP/1.1 by
`api.serving.http1`, HTTP/2 by `api.serving.http2`, the keep-alive timeout, a graceful
stop on cancellation) and counts each open connection in `limits`
(`RequestLimits.connection_opened/closed`). A connection past
`max_connections` is still served, but `over_connection_limit()` is then true
in its requests' tasks: the app answers each 429 with `Connection: close`, so
the client learns why and the connection ends. One twice past the limit is
closed at once, before its TLS handshake.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Awaitable, Callable

import trio
from hypercorn.config import Config

from api.limits import RequestLimits
from api.serving.http1 import Http1Protocol
from api.serving.http2 import Http2Protocol
from api.serving.hypercorn_internals import serve_connections

__all__ = ["serve_counted", "over_connection_limit"]

_OVER_LIMIT: ContextVar[bool] = ContextVar("miniplane_connection_over_limit", default=False)


def over_connection_limit() -> bool:
    """Whether the current request came on a connection opened past `max_connections`."""
    return _OVER_LIMIT.get()


async def serve_counted(app: Any, config: Config, limits: RequestLimits, *,
                        task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED) -> None:
    """Serve `app` on `config`'s secure binds until cancelled; started() with the bound URLs."""
    cap = limits.options.max_connections

    async def counted(stream: trio.abc.Stream, serve: Callable[[], Awaitable[None]]) -> None:
        admitted = limits.connection_opened()
        try:
            if not admitted and cap and limits.connections > 2 * cap:
                await trio.aclose_forcefully(stream)
                return
            _OVER_LIMIT.set(not admitted)
            await serve()
        finally:
            limits.connection_closed()

    await serve_connections(app, config, Http1Protocol, Http2Protocol, counted, task_status=task_status)
