"""The API's paths served in front of Quart (`api.directroutes`): what the view is given and what is sent of its
answer are what Quart gives and sends, the rest is left to Quart before anything is done, and a client's going
ends the request as it ends Quart's.

Equivalence is checked twice: a view echoing what it was given (method, path, query, headers), served by
`DirectRoutes` and by a Quart app of the server's request class over any query and headers (Hypothesis); and
the server's own answers to writes, reads and refusals over the server's HTTP/1.1 layer in process, sent to
the server's app and to Quart's app alone (status, headers in order, body; what a write makes anew, its uid,
times and resourceVersion, masked, and the name each path wrote).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from hypothesis import given, settings, strategies as st
from quart import Response
from quart_trio import QuartTrio

from api.directroutes import DirectRoutes
from api.request_class import MiniplaneRequest, current_request
from tests.support.cached_gets import CLUSTER_ROLE, TABLE, start_cached_gets
from tests.support.wire import open_wire, parse_answer

RBAC = "/apis/rbac.authorization.svc.io/v1"
CR = "application/json"


# ---- what the view is given ----------------------------------------------------------------------

async def _echo(path: str) -> Response:
    request = current_request()
    seen = {"path": path, "method": request.method, "request_path": request.path,
            "query": request.query_string.decode("latin-1"), "args": list(request.args.items(multi=True)),
            "headers": list(request.headers.items()), "scope": request.scope is not None}
    return Response(json.dumps(seen), status=201, headers={"Content-Type": "application/json", "X-Seen": "yes"})


def _echo_app() -> QuartTrio:
    app = QuartTrio(__name__)
    app.request_class = MiniplaneRequest
    app.add_url_rule("/<path:path>", "all", _echo, methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
    return app


class _Counting:
    """An ASGI app counting the requests that reach `app`."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.requests += 1
        await self.app(scope, receive, send)


def _scope(method: str, path: str, query: bytes = b"", headers: list[tuple[bytes, bytes]] = (),
           http_version: str = "1.1", raw_path: bytes | None = None) -> dict[str, Any]:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": http_version, "method": method,
            "scheme": "https", "path": path, "raw_path": raw_path if raw_path is not None else path.encode(),
            "query_string": query, "root_path": "", "headers": list(headers), "client": ("127.0.0.1", 5000),
            "server": ("127.0.0.1", 6443), "extensions": {}}


async def _call(app: Any, scope: dict[str, Any], body: bytes = b"") -> list[dict[str, Any]]:
    """What `app` sent for `scope` with `body`, its body events joined into one."""
    sent: list[dict[str, Any]] = []
    events = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if events:
            return events.pop(0)
        await trio.sleep_forever()

    async def send(event: dict[str, Any]) -> None:
        sent.append(event)
    with trio.fail_after(5):
        await app(scope, receive, send)
    start = sent[0]
    return [start, {"type": "http.response.body",
                    "body": b"".join(e.get("body", b"") for e in sent[1:])}]


_HEADER_NAMES = st.sampled_from(["accept", "audit-id", "user-agent", "x-custom", "content-type", "host",
                                 "x-dup", "authorization"])
_HEADER_VALUES = st.text(st.characters(min_codepoint=0x20, max_codepoint=0xff, blacklist_characters="\x7f"),
                         max_size=12).map(str.strip)
_QUERIES = st.lists(st.sampled_from(["a", "b", "=", "&", ";", "+", "%20", "%zz", "%c3%a9", "%ff", "x", "é", "~"]),
                    max_size=12).map(lambda parts: "".join(parts).encode())


@settings(max_examples=60, deadline=None)
@given(query=_QUERIES, headers=st.lists(st.tuples(_HEADER_NAMES, _HEADER_VALUES), max_size=6),
       http_version=st.sampled_from(["1.0", "1.1", "2"]), method=st.sampled_from(["GET", "POST", "DELETE"]))
def test_the_view_is_given_what_quart_gives_it(query: bytes, headers: list[tuple[str, str]], http_version: str,
                                                method: str) -> None:
    app = _echo_app()
    direct = _Counting(app)
    raw_headers = [(n.encode("latin-1"), v.encode("latin-1")) for n, v in headers]
    scope = _scope(method, "/apis/g/v1/things", query, raw_headers, http_version)

    async def both() -> tuple[Any, Any]:
        served = await _call(DirectRoutes(direct, _echo), dict(scope))
        expected = await _call(app, dict(scope))
        return served, expected
    served, expected = trio.run(both)
    assert served == expected
    assert direct.requests == 0  # served in front of Quart: queries of any bytes decode as UTF-8 here


@pytest.mark.parametrize(("name", "scope", "direct"), [
    ("a collection", _scope("POST", "/apis/g/v1/things"), True),
    ("the core group", _scope("GET", "/api/v1/namespaces/a/pods/b"), True),
    ("the discovery roots", _scope("GET", "/apis"), True),
    ("PUT", _scope("PUT", "/apis/g/v1/things/a"), True),
    ("PATCH", _scope("PATCH", "/apis/g/v1/things/a"), True),
    ("HEAD", _scope("HEAD", "/apis/g/v1/things/a"), False),
    ("OPTIONS", _scope("OPTIONS", "/apis/g/v1/things"), False),
    ("another path", _scope("GET", "/version"), False),
    ("a path only beginning so", _scope("GET", "/apiserver"), False),
    ("a trailing slash", _scope("GET", "/apis/g/v1/things/"), False),
    ("an empty segment", _scope("GET", "/apis/g//things"), False),
    ("an escape", _scope("GET", "/apis/g/v1/things/a", raw_path=b"/apis/g/v1/things/%61"), False),
    ("a root path", _scope("GET", "/apis/g/v1/things/a") | {"root_path": "/mounted"}, False),
])
async def test_which_requests_are_served_in_front_of_quart(name: str, scope: dict[str, Any], direct: bool) -> None:
    quart = _Counting(_echo_app())
    await _call(DirectRoutes(quart, _echo), scope)
    assert quart.requests == (0 if direct else 1)


async def test_a_query_not_utf8_is_left_to_quart() -> None:
    quart = _Counting(_echo_app())
    with pytest.raises(BaseException) as failed:  # Quart's own routing fails on it (Hypercorn answers 500)
        await _call(DirectRoutes(quart, _echo), _scope("GET", "/apis/g/v1/things", b"a=\xff"))
    assert "UnicodeDecodeError" in repr(failed.value.exceptions) and quart.requests == 1


async def test_a_streamed_answer_is_sent_as_quart_sends_it() -> None:
    async def streaming(path: str) -> Response:
        async def chunks() -> Any:
            for part in (b"one", b"", "two"):
                yield part
        response = Response(chunks(), status=200, headers={"Content-Type": "text/plain"})
        response.timeout = None
        return response
    app = QuartTrio(__name__)
    app.add_url_rule("/<path:path>", "all", streaming, methods=["GET"])
    scope = _scope("GET", "/apis/g/v1/things")
    assert await _call(DirectRoutes(app, streaming), scope) == await _call(app, scope)


# ---- the client's going ----------------------------------------------------------------------------

async def test_a_client_gone_while_its_body_is_read_gets_no_answer_and_nothing_is_done(tmp_path: Path) -> None:
    async with trio.open_nursery() as nursery:
        srv = await start_cached_gets(nursery, tmp_path)
        quart = _Counting(srv.plane.app.app.app)
        srv.plane.app.app.app = quart
        metrics = srv.plane.state.metrics.registry
        labels = {"verb": "POST", "dry_run": "", "group": "rbac.authorization.svc.io", "version": "v1",
                  "resource": "clusterroles", "subresource": "", "scope": "resource", "component": "apiserver",
                  "code": "201"}
        before = metrics.get_sample_value("apiserver_request_total", labels)
        events = [{"type": "http.request", "body": b'{"metadata":{"name":"gone"', "more_body": True},
                  {"type": "http.disconnect"}]
        sent: list[Any] = []

        async def receive() -> dict[str, Any]:
            return events.pop(0)

        async def send(event: Any) -> None:
            sent.append(event)
        scope = _scope("POST", f"{RBAC}/clusterroles", headers=[
            (b"host", b"miniplane"), (b"authorization", b"Bearer root-token"), (b"content-type", b"application/json"),
            (b"content-length", b"60")])
        with trio.fail_after(5):
            await srv.plane.app(scope, receive, send)
        assert (sent, quart.requests, srv.plane.state.limits.mutating) == ([], 0, 0)
        assert metrics.get_sample_value("apiserver_request_total", labels) == before
        async with srv.client() as admin:
            assert (await admin.get(f"{RBAC}/clusterroles/gone")).status_code == 404
        nursery.cancel_scope.cancel()


async def test_a_watch_ends_when_its_client_goes(tmp_path: Path) -> None:
    async with trio.open_nursery() as nursery:
        srv = await start_cached_gets(nursery, tmp_path)
        gone = trio.Event()
        sent: list[Any] = []
        delivered = trio.Event()

        async def receive() -> dict[str, Any]:
            await gone.wait()
            return {"type": "http.disconnect"}

        async def send(event: Any) -> None:
            sent.append(event)
            if event.get("body"):
                delivered.set()
        scope = _scope("GET", f"{RBAC}/clusterroles", b"watch=1", [
            (b"host", b"miniplane"), (b"authorization", b"Bearer root-token")])
        with trio.fail_after(5):
            async with trio.open_nursery() as watching:
                watching.start_soon(srv.plane.app, scope, receive, send)
                await delivered.wait()  # the ADDED events of what exists
                assert srv.plane.state.limits.open_watches("root") == 1
                gone.set()
        assert sent[0]["status"] == 200 and srv.plane.state.limits.open_watches("root") == 0
        nursery.cancel_scope.cancel()


# ---- the server's answers, both ways -------------------------------------------------------------

_ROLE = {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "ClusterRole", "metadata": {"name": "{name}"},
         "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}
_APPLY = "apiVersion: rbac.authorization.svc.io/v1\nkind: ClusterRole\nmetadata:\n  name: {name}\nrules: []\n"

#: (name, method, path, headers, body, whether `{name}` exists first): `{name}` is the path's own name.
WRITES: list[tuple[str, str, str, dict[str, str], str]] = [
    ("create", "POST", "/clusterroles", {}, json.dumps(_ROLE), False),
    ("create, a manager and strict fields", "POST", "/clusterroles?fieldManager=me&fieldValidation=Strict", {},
     json.dumps(_ROLE), False),
    ("create, dry run", "POST", "/clusterroles?dryRun=All", {}, json.dumps(_ROLE), False),
    ("create, an unknown field strictly: 400", "POST", "/clusterroles?fieldValidation=Strict", {},
     json.dumps(_ROLE | {"spec": 1}), False),
    ("create, no name: 422", "POST", "/clusterroles", {}, json.dumps(_ROLE | {"metadata": {}}), False),
    ("create, existing: 409", "POST", "/clusterroles", {}, json.dumps(_ROLE), True),
    ("create, bob: 403", "POST", "/clusterroles", {"Authorization": "Bearer bob-token"}, json.dumps(_ROLE), False),
    ("create, nobody: 401", "POST", "/clusterroles", {"Authorization": "Bearer nobody"}, json.dumps(_ROLE), False),
    ("create, text: 415", "POST", "/clusterroles", {"Content-Type": "text/plain"}, json.dumps(_ROLE), False),
    ("create, YAML in and out", "POST", "/clusterroles", {"Content-Type": "application/yaml",
                                                          "Accept": "application/yaml"}, json.dumps(_ROLE), False),
    ("create, a Table answered", "POST", "/clusterroles", {"Accept": TABLE}, json.dumps(_ROLE), False),
    ("create, a missing namespace: 404", "POST", "/namespaces/nowhere/roles", {}, json.dumps(_ROLE | {"kind": "Role"}),
     False),
    ("create, an Audit-ID sent", "POST", "/clusterroles", {"Audit-ID": "mine"}, json.dumps(_ROLE), False),
    ("create, an empty body: 400", "POST", "/clusterroles", {}, "", False),
    ("update, a stale resourceVersion: 409", "PUT", "/clusterroles/{name}", {},
     json.dumps(_ROLE | {"metadata": {"name": "{name}", "resourceVersion": "1"}}), True),
    ("merge patch", "PATCH", "/clusterroles/{name}", {"Content-Type": "application/merge-patch+json"},
     '{"metadata":{"labels":{"a":"b"}}}', True),
    ("apply", "PATCH", "/clusterroles/{name}?fieldManager=tester", {"Content-Type": "application/apply-patch+yaml"},
     _APPLY, False),
    ("delete", "DELETE", "/clusterroles/{name}", {}, "", True),
    ("delete, missing: 404", "DELETE", "/clusterroles/{name}", {}, "", False),
    ("list, a page", "GET", "/clusterroles?limit=1", {}, "", True),
    ("list as a Table", "GET", "/clusterroles", {"Accept": TABLE}, "", True),
    ("list, a bad limit: 400", "GET", "/clusterroles?limit=x", {}, "", False),
    ("get, at resourceVersion 0", "GET", "/clusterroles/{name}?resourceVersion=0", {}, "", True),
    ("get, an unknown kind: 404", "GET", "/widgets/{name}", {}, "", False),
    ("discovery", "GET", "", {}, "", False),
]

#: What a write makes anew: each path's differs.
_FRESH = re.compile(rb'("(?:uid|creationTimestamp|resourceVersion|time|continue)":")[^"]*"'
                    rb'|((?:uid|creationTimestamp|resourceVersion|time): )\S+')


def _request(method: str, path: str, headers: dict[str, str], body: str, name: str) -> bytes:
    data = body.replace("{name}", name).encode()
    sent = {"Host": "miniplane", "Authorization": "Bearer root-token", "Content-Type": CR,
            "Accept": "application/json", "User-Agent": "direct/1.0"} | headers
    if method in ("POST", "PUT", "PATCH"):
        sent["Content-Length"] = str(len(data))
    target = (RBAC + path).replace("{name}", name)
    return (f"{method} {target} HTTP/1.1\r\n" + "".join(f"{n}: {v}\r\n" for n, v in sent.items())
            + "\r\n").encode() + data


def _comparable(raw: bytes, names: tuple[str, ...]) -> tuple[int, list[tuple[str, str]], bytes]:
    """The answer with what differs by path masked: what a write makes anew, and the names (a list holds both)."""
    status, headers, body = parse_answer(raw)
    for name in names:
        body = body.replace(name.encode(), b"NAME")
    body = _FRESH.sub(lambda m: (m.group(1) or m.group(2)) + b"*" + (b'"' if m.group(1) else b""), body)
    return status, [(n, v) for n, v in headers if n not in ("audit-id", "content-length")], body


@pytest.mark.parametrize(("case", "method", "path", "headers", "body", "exists"), WRITES, ids=[w[0] for w in WRITES])
async def test_the_server_answers_in_front_of_quart_as_through_it(
        tmp_path: Path, case: str, method: str, path: str, headers: dict[str, str], body: str, exists: bool) -> None:
    async with trio.open_nursery() as nursery:
        srv = await start_cached_gets(nursery, tmp_path)
        quart = srv.plane.app.app.app
        counting = _Counting(quart)
        srv.plane.app.app.app = counting
        names = ("direct-a", "quartz-b")
        if exists:
            async with srv.client() as admin:
                for name in names:
                    created = _ROLE | {"metadata": {"name": name}}
                    assert (await admin.post(f"{RBAC}/clusterroles", json=created)).status_code == 201
        async with open_wire(srv.plane.app) as direct, open_wire(quart) as full:
            served = await direct.exchange(_request(method, path, headers, body, names[0]))
            expected = await full.exchange(_request(method, path, headers, body, names[1]))
        assert counting.requests == 0
        if "Audit-ID" in headers:
            assert ("audit-id", "mine") in parse_answer(served)[1]
        assert _comparable(served, names) == _comparable(expected, names)
        nursery.cancel_scope.cancel()


async def test_a_cached_get_that_misses_is_served_in_front_of_quart(tmp_path: Path) -> None:
    async with trio.open_nursery() as nursery:
        srv = await start_cached_gets(nursery, tmp_path)
        counting = _Counting(srv.plane.app.app.app)
        srv.plane.app.app.app = counting
        async with open_wire(srv.plane.app) as wire:
            raw = (f"GET {CLUSTER_ROLE}-missing HTTP/1.1\r\nHost: m\r\nAuthorization: Bearer root-token\r\n\r\n")
            assert parse_answer(await wire.exchange(raw.encode()))[0] == 404
        assert counting.requests == 0
        nursery.cancel_scope.cancel()
