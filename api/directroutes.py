"""The filter chain served without Quart's request machinery: the API's requests from the ASGI scope straight
to the view (issue 41).

Why: the view (`api.filters.build_handler_chain`: every filter, then the route) is the server's work; Quart's
share of a create was a request and an app context, two tasks and a channel to carry the body, routing,
blinker's signals and the answer's sending: about a fifth of a create's Python calls, none of them doing
anything for these paths (one rule serves them all, no hook is registered).

Contract: `routed_as_is(scope)`: whether Quart's one URL rule would call the view with the path as it is
(no escape, empty segment, trailing slash or root path; this path and `api.cachedgets` serve only those).
`DirectRoutes(app, view)` is an ASGI app standing in front of `app` (the Quart app of `api.app`,
whose one URL rule calls `view` with the path after its first slash). It serves a request itself when Quart
would route it to `view` as it is: an HTTP GET, POST, PUT, PATCH or DELETE of a path under `/api` or `/apis`
with no escape (`%`), no empty segment, no trailing slash and no root path, and a query string that decodes
as UTF-8 (werkzeug's `args`, or Quart answers its error). Anything else goes to `app` untouched. The view
sees what Quart gives it: a `DirectRequest` with the same `method`, `path`, `query_string`, `scope`, `args`
(a `Query` parsed as werkzeug parses it) and `headers` (a `RequestHeaders` built as Quart builds it:
title-cased names after a `Remote-Addr`; `Host` added empty for HTTP/1.0) and its `body` (the chunks as
they come); `current_request()` returns it. The answer (a Quart `Response`) is sent as Quart sends it: its
status, its headers lower-cased and UTF-8 encoded in order, then its body (a whole one in one event).

The client's going (`http.disconnect`) ends the request as it ends Quart's: while the body is read, the
request stops with no answer and nothing counted (`ClientGone`); while a streamed answer (a watch) is sent,
its sending stops. Departure from Quart: a handler that already has its whole body is not cancelled when
the client goes before its answer (a create whose client left after sending it is stored, as
kube-apiserver, which does not stop a write its client left, would store it); its answer goes nowhere.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable
from urllib.parse import parse_qsl

import trio
from quart import Response
from quart.utils import encode_headers
from quart.wrappers.response import DataBody
import werkzeug.urls  # noqa: F401  (registers the "werkzeug.url_quote" error handler werkzeug parses queries with)

from api.request_class import Query, RequestHeaders, serving

__all__ = ["DirectRoutes", "DirectRequest", "ClientGone", "routed_as_is"]

_METHODS = frozenset(["GET", "POST", "PUT", "PATCH", "DELETE"])


def routed_as_is(scope: dict[str, Any]) -> bool:
    """Whether Quart's one URL rule would call the view with this path as it is: no escape (`%`), no empty
    segment (werkzeug redirects merged slashes), no trailing slash, no root path. Shared by the fast paths."""
    path = scope["path"]
    raw_path = scope.get("raw_path")
    return not (raw_path is not None and b"%" in raw_path or path.endswith("/") or "//" in path
                or scope.get("root_path"))


class ClientGone(BaseException):
    """The client went while its request's body was read: like trio's `Cancelled`, it ends the request's
    work without an answer (no filter answers it: it is not an `Exception`)."""


class DirectRequest:
    """What the view reads of a request Quart's would carry (see the module doc)."""

    __slots__ = ("method", "path", "query_string", "scope", "headers", "args", "_receive", "_ended")

    def __init__(self, scope: dict[str, Any], receive: Callable[[], Awaitable[dict[str, Any]]], args: Query) -> None:
        self.method = scope["method"]
        self.path = scope["path"]
        self.query_string = scope["query_string"]
        self.scope = scope
        self.args = args
        headers = RequestHeaders()
        headers["Remote-Addr"] = (scope.get("client") or ["<local>"])[0]
        for name, value in scope["headers"]:
            headers.add(name.decode("latin1").title(), value.decode("latin1"))
        if scope["http_version"] < "1.1":
            headers.setdefault("Host", "")
        self.headers = headers
        self._receive = receive
        self._ended = False

    @property
    def body(self) -> Any:
        """The body's chunks as they arrive (nothing once it has ended); raises ClientGone if the client goes."""
        return self._chunks()

    async def _chunks(self) -> Any:
        while not self._ended:
            event = await self._receive()
            if event["type"] != "http.request":
                self._ended = True
                raise ClientGone()
            if not event.get("more_body", False):
                self._ended = True
            chunk = event.get("body")
            if chunk:
                yield chunk


class DirectRoutes:
    """The ASGI app of the API's paths: `view` called here, the rest by `app` (see the module doc)."""

    def __init__(self, app: Any, view: Callable[[str], Awaitable[Response]]) -> None:
        self.app = app
        self.view = view

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        args = self._args(scope) if scope["type"] == "http" else None
        if args is None:
            await self.app(scope, receive, send)
            return
        request = DirectRequest(scope, receive, args)
        try:
            with serving(request):
                response = await self.view(scope["path"][1:])
            await _send(response, send, receive)
        except ClientGone:
            return

    @staticmethod
    def _args(scope: dict[str, Any]) -> Query | None:
        """The request's query when it is served here; None when Quart serves it."""
        path = scope["path"]
        if (scope["method"] not in _METHODS or not routed_as_is(scope)
                or not (path in ("/api", "/apis") or path.startswith(("/api/", "/apis/")))):
            return None
        query = scope["query_string"]
        if not query:
            return Query()
        try:
            return Query(parse_qsl(query.decode(), keep_blank_values=True, errors="werkzeug.url_quote"))
        except UnicodeDecodeError:
            return None


async def _send(response: Response, send: Any, receive: Any) -> None:
    """`response` sent as Quart sends it (see the module doc); a streamed body until the client goes."""
    await send({"type": "http.response.start", "status": response.status_code,
                "headers": encode_headers(response.headers)})
    body = response.response
    if type(body) is DataBody:  # whole (a range is Quart's make_conditional, never called on these paths)
        await send({"type": "http.response.body", "body": body.data, "more_body": False})
        return
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_cancel_when_gone, receive, nursery.cancel_scope)
        async with body as chunks:
            async for data in chunks:
                await send({"type": "http.response.body", "body": data.encode() if isinstance(data, str) else data,
                            "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        nursery.cancel_scope.cancel()


async def _cancel_when_gone(receive: Any, scope: trio.CancelScope) -> None:
    """Cancel `scope` once the client has gone (what is left of a body is read and dropped meanwhile)."""
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()
