"""A manager's small endpoints over plain HTTP: an ASGI app served by Hypercorn on `HOST:PORT`.

`serve_plain_http(app, bind_address, what=...)` serves `app` until cancelled and
is started() with the base URL (`http://host:port`); `bind_address` is
`HOST:PORT` (`:PORT`: every interface; port 0: any free one). `answer_lifespan`
answers an ASGI lifespan scope (these apps hold nothing to start or stop).
The metrics endpoint (`miniplane controllers --metrics-bind-address`) and the
probes (`--health-probe-bind-address`, `runtime.controller.probes`) use them,
as controller-runtime serves its metrics and probes.
"""

from __future__ import annotations

import logging
from typing import Any

import trio

__all__ = ["serve_plain_http", "answer_lifespan"]

log = logging.getLogger(__name__)


async def answer_lifespan(receive: Any, send: Any) -> None:
    """Complete an ASGI lifespan's startup and shutdown."""
    while (await receive())["type"] != "lifespan.shutdown":
        await send({"type": "lifespan.startup.complete"})
    await send({"type": "lifespan.shutdown.complete"})


async def serve_plain_http(app: Any, bind_address: str, *, what: str = "http",
                           task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
    """Serve `app` on `bind_address` until cancelled; started() with its base URL (see the module docs)."""
    # late import: only serving needs Hypercorn (a fast start of the controllers command)
    from hypercorn.config import Config
    from hypercorn.trio import serve

    host, _, port = bind_address.rpartition(":")
    config = Config()
    config.bind = [f"{host or '0.0.0.0'}:{port}"]
    config.accesslog = None
    config.errorlog = logging.getLogger("hypercorn.error")
    config.graceful_timeout = 1

    async def serving(task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED) -> None:
        await serve(app, config, task_status=task_status)
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(serving)
        log.info("serving %s at %s", what, binds[0])
        task_status.started(binds[0])
