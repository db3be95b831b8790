"""The request object the server is built on: Quart's, with a query and headers that miss cheaply, reached
without a proxy.

Contract: `create_app` serves with `MiniplaneRequest`; the filter chain and
the route read the request being served through `current_request()` once
per function rather than through `quart.request`: the request `serving(request)` names while it is served
in front of Quart (`api.directroutes`), else Quart's.

Why: both run on every request. werkzeug's `MultiDict.get` raises and
catches a `BadRequestKeyError` for each missing key, and a request asks for
half a dozen options it seldom carries (`timeout`, `fieldManager`, `dryRun`,
...): `Query` answers a miss with the default. Its headers' `get` and `in`
do the same (`RequestHeaders`): every GET asks for headers it seldom carries
(`Audit-ID`, `Accept-Encoding`, `Content-Length`, `Transfer-Encoding`; issue
41's profile: six exceptions built per GET). Each attribute read through
`quart.request` (a werkzeug `LocalProxy`) is a context-variable lookup and
three calls; a create read it about twenty times. `current_request()` asks
the proxy once for the object it stands for (`_get_current_object()`,
werkzeug's documented way to do so).
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Callable

from quart import request
from quart_trio.wrappers import TrioRequest
from werkzeug.datastructures import Headers, ImmutableMultiDict

__all__ = ["MiniplaneRequest", "Query", "RequestHeaders", "current_request", "serving"]

#: The request served in front of Quart in this context (`serving`); None under Quart.
_SERVED: ContextVar[Any] = ContextVar("miniplane_served_request", default=None)


class Query(ImmutableMultiDict):
    """The parsed query string: werkzeug's, whose `get` of a missing key returns the default without raising."""

    def get(self, key: Any, default: Any = None, type: Callable[[Any], Any] | None = None) -> Any:
        if key not in self:
            return default
        return super().get(key, default, type)


class RequestHeaders(Headers):
    """werkzeug's headers, whose `get` (without `type`) and `in` of a missing name answer without raising."""

    def get(self, key: Any, default: Any = None, type: Callable[[Any], Any] | None = None) -> Any:
        if type is not None or key.__class__ is not str:
            return super().get(key, default, type)
        wanted = key.lower()
        for name, value in self:  # the (name, value) pairs, as sent
            if name.lower() == wanted:
                return value
        return default

    def __contains__(self, key: Any) -> bool:
        if key.__class__ is not str:
            return super().__contains__(key)
        wanted = key.lower()
        for name, _ in self:
            if name.lower() == wanted:
                return True
        return False


class MiniplaneRequest(TrioRequest):
    """Quart-trio's request with `Query` as its `args` and `RequestHeaders` as its `headers`."""

    parameter_storage_class = Query

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Quart builds a plain `Headers` (quart.asgi); the subclass adds no state, so it is the same object.
        self.headers.__class__ = RequestHeaders


def current_request() -> MiniplaneRequest:
    """The request being served: the one `serving` names, else what `quart.request` stands for, looked up
    once. Raises RuntimeError outside a request."""
    served = _SERVED.get()
    if served is not None:
        return served  # type: ignore[no-any-return]
    return request._get_current_object()  # type: ignore[attr-defined,no-any-return]


class serving:
    """`with serving(request):` `current_request()` is `request` within (this task's context)."""

    __slots__ = ("_request", "_token")

    def __init__(self, request: Any) -> None:
        self._request = request

    def __enter__(self) -> None:
        self._token = _SERVED.set(self._request)

    def __exit__(self, *exc: object) -> None:
        _SERVED.reset(self._token)
