"""The filter chain as functions (`api.filters`): each filter takes the next handler and returns one, as
kube-apiserver's `WithAuthentication(handler, ...)`; a filter runs without the app or the others."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from api.filters import RequestContext, with_connection_limit, with_impersonation, with_status_answers
from api.limits import RequestLimits
from api.requestinfo import request_info
from runtime.machinery import errors
from runtime.server.rbac.user import UserInfo


def _context(headers: list[tuple[bytes, bytes]] = ()) -> RequestContext:
    request = SimpleNamespace(scope={"headers": list(headers)}, headers={}, method="GET", path="/version")
    return RequestContext(request, request_info("GET", "/version", {}), "", ("",) * 7, 0.0)  # type: ignore[arg-type]


async def test_a_filter_is_a_function_of_the_next_handler():
    seen = []

    async def route(ctx: RequestContext) -> str:
        seen.append(ctx.user)
        return "answer"
    alice = UserInfo("alice")
    ctx = _context()
    ctx.requester = alice
    handler = with_impersonation(route, lambda attrs: pytest.fail("no Impersonate-* header: nothing to decide"),
                                 "svc.io")
    assert await handler(ctx) == "answer"
    assert seen == [alice]  # who the request acts as, set for the handler inside


async def test_the_status_filter_answers_what_an_inner_filter_raises():
    answered = []
    answers = SimpleNamespace(status=lambda exc: answered.append(exc.code) or "status")

    async def route(ctx: RequestContext) -> str:
        raise errors.Forbidden("no")
    assert await with_status_answers(route, answers)(_context()) == "status"  # type: ignore[arg-type]
    assert answered == [403]


async def test_the_connection_limit_filter_refuses_before_the_next_handler(monkeypatch: pytest.MonkeyPatch):
    import api.filters

    async def route(ctx: RequestContext) -> str:
        pytest.fail("a request past the connection limit reached the route")
    monkeypatch.setattr(api.filters, "over_connection_limit", lambda: True)
    with pytest.raises(errors.TooManyRequests):
        await with_connection_limit(route, RequestLimits())(_context())
