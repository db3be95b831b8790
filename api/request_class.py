"""The request object the server is built on: Quart's, with a query that misses cheaply, reached without a proxy.

Contract: `create_app` serves with `MiniplaneRequest`; the filter chain and
the route read the request being served through `current_request()` once
per function rather than through `quart.request`.

Why: both run on every request. werkzeug's `MultiDict.get` raises and
catches a `BadRequestKeyError` for each missing key, and a request asks for
half a dozen options it seldom carries (`timeout`, `fieldManager`, `dryRun`,
...): `Query` answers a miss with the default. Each attribute read through
`quart.request` (a werkzeug `LocalProxy`) is a context-variable lookup and
three calls; a create read it about twenty times. `current_request()` asks
the proxy once for the object it stands for (`_get_current_object()`,
werkzeug's documented way to do so).
"""

from __future__ import annotations

from typing import Any, Callable

from quart import request
from quart_trio.wrappers import TrioRequest
from werkzeug.datastructures import ImmutableMultiDict

__all__ = ["MiniplaneRequest", "Query", "current_request"]


class Query(ImmutableMultiDict):
    """The parsed query string: werkzeug's, whose `get` of a missing key returns the default without raising."""

    def get(self, key: Any, default: Any = None, type: Callable[[Any], Any] | None = None) -> Any:
        if key not in self:
            return default
        return super().get(key, default, type)


class MiniplaneRequest(TrioRequest):
    """Quart-trio's request with `Query` as its `args`."""

    parameter_storage_class = Query


def current_request() -> MiniplaneRequest:
    """The request being served: what `quart.request` stands for, looked up once. Raises RuntimeError
    outside a request."""
    return request._get_current_object()  # type: ignore[attr-defined,no-any-return]
