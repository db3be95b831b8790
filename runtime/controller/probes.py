"""Health and readiness probes: named checks served at `/healthz` and `/readyz` (controller-runtime's `healthz`).

A check is a sync callable that returns when healthy and raises when not,
its exception's message being the reason. `HealthChecks` holds named checks
(`manager.healthz`, `manager.readyz`; add more with
`manager.add_healthz_check(name, fn)` / `add_readyz_check`, as
controller-runtime's `AddHealthzCheck` / `AddReadyzCheck`). A manager's
defaults: healthz `ping` (alive while the process answers); readyz
`informers` (the manager runs and every informer has synced) and, with
leader election, `leader-election` (a holder of the Lease is known: this
manager or another).

`probes_app(manager)` is an ASGI app; `serve_probes(manager, bind_address)`
serves it over plain HTTP with hypercorn, as the metrics server is served
(`miniplane controllers --health-probe-bind-address`). Answers, as
controller-runtime's handler:

- `GET /healthz`, `/readyz`: every check passes: 200 `ok`; else 500 with one
  line per check (`[+]ping ok`, `[-]informers failed: <reason>`) and
  `readyz check failed`. `?verbose` lists the lines on success too (ending
  `readyz check passed`); `?exclude=name` (repeatable) skips a check.
- `GET /healthz/<name>`, `/readyz/<name>`: that check alone: 200 `ok`, 500
  `internal server error: <reason>`, 404 for an unknown name.

Example::

    manager.add_readyz_check("webhook-certs", lambda: certs.check_loaded())
    async with trio.open_nursery() as nursery:
        url = await nursery.start(serve_probes, manager, "127.0.0.1:8081")   # http://127.0.0.1:8081
        await nursery.start(manager.run)

Caveats:
    Unlike controller-runtime, which withholds a failed check's reason from
    the aggregate answer ("reason withheld"), the reason is written: the
    probe port is meant for the kubelet and operators, not the public.
    Checks run inline in the request: keep them quick and non-blocking.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import parse_qs

import trio

from runtime.controller.plainhttp import answer_lifespan, serve_plain_http

if TYPE_CHECKING:
    from runtime.controller.manager import Manager

__all__ = ["Check", "HealthChecks", "ping", "probes_app", "serve_probes"]

log = logging.getLogger(__name__)

#: Returns when healthy; raises, the message being the reason, when not.
Check = Callable[[], None]


def ping() -> None:
    """Always healthy: the process answers (controller-runtime's `healthz.Ping`)."""


class HealthChecks:
    """Named checks of one endpoint (`healthz` or `readyz`), run in the order added."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self._checks: dict[str, Check] = {}

    def add(self, name: str, check: Check) -> None:
        """Add a check. Raises ValueError for an empty or taken name, or one with `/`."""
        if not name or "/" in name:
            raise ValueError(f"a check name must be non-empty without '/': {name!r}")
        if name in self._checks:
            raise ValueError(f"a {self.endpoint} check named {name!r} is already added")
        self._checks[name] = check

    def names(self) -> list[str]:
        return list(self._checks)

    def run_one(self, name: str) -> str | None:
        """Run check `name`: None when it passes, else its reason. KeyError for an unknown name."""
        check = self._checks[name]
        try:
            check()
        except Exception as exc:
            return str(exc) or type(exc).__name__
        return None

    def answer(self, *, verbose: bool = False, exclude: frozenset[str] = frozenset()) -> tuple[int, str]:
        """The status code and body of the aggregate endpoint (see the module docs)."""
        lines, failed = [], False
        for name in self._checks:
            if name in exclude:
                lines.append(f"[+]{name} excluded: ok")
                continue
            reason = self.run_one(name)
            failed = failed or reason is not None
            lines.append(f"[+]{name} ok" if reason is None else f"[-]{name} failed: {reason}")
        if not failed and not verbose:
            return 200, "ok"
        if failed:
            log.info("%s check failed: %s", self.endpoint, "; ".join(l for l in lines if l.startswith("[-]")))
        lines.append(f"{self.endpoint} check {'failed' if failed else 'passed'}")
        return (500 if failed else 200), "\n".join(lines) + "\n"


def _route(manager: "Manager", path: str, query: str) -> tuple[int, str]:
    endpoint, _, name = path.strip("/").partition("/")
    checks = {"healthz": manager.healthz, "readyz": manager.readyz}.get(endpoint)
    if checks is None:
        return 404, "404 page not found\n"
    if name:
        if name not in checks.names():
            return 404, "404 page not found\n"
        reason = checks.run_one(name)
        return (200, "ok") if reason is None else (500, f"internal server error: {reason}\n")
    params = parse_qs(query, keep_blank_values=True)
    return checks.answer(verbose="verbose" in params, exclude=frozenset(params.get("exclude", ())))


def probes_app(manager: "Manager") -> Any:
    """An ASGI app answering `/healthz` and `/readyz` for `manager` (404 elsewhere; see the module docs)."""
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            return await answer_lifespan(receive, send)
        if scope["method"] in ("GET", "HEAD"):
            status, body = _route(manager, scope["path"], scope.get("query_string", b"").decode("latin-1"))
        else:
            status, body = 405, "405 method not allowed\n"
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"x-content-type-options", b"nosniff")]})
        await send({"type": "http.response.body", "body": body.encode() if scope["method"] != "HEAD" else b""})
    return app


async def serve_probes(manager: "Manager", bind_address: str, *,
                       task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
    """Serve `manager`'s probes at `http://BIND/healthz` and `/readyz` until cancelled; started() with the
    base URL (`http://host:port`). `bind_address` is `HOST:PORT` (`:PORT`: every interface; port 0: any)."""
    return await serve_plain_http(probes_app(manager), bind_address, what="health probes (/healthz, /readyz)",
                                  task_status=task_status)
