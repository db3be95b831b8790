"""Overload protection (issue 17.4), as kube-apiserver's: requests in flight, request and watch timeouts,
watches per user, open connections, and slow watchers.

In process on the MockClock (`autojump_clock`) where time matters; requests are held in flight by a
registry call or an admission plug-in that waits on an event, so counts, not timing, decide. Real
HTTPS where a socket matters (open connections). A watcher that stops reading is tested in process:
the transport is unbuffered, so the server's writes to it stop as they would on a full socket.
"""

from __future__ import annotations

import json
import ssl

import pytest
import trio

from api.filters import TIMED_OUT
from runtime.server.registry.admission import AdmissionPlugin
from runtime.machinery.options import Body
from runtime.controller.testing import ADMIN
from tests.support.metrics import scrape
from tests.support.rbac import grant, rule, token_file, user
from tests.support.server import Server, start_in_process, start_server

RBAC = "rbac.authorization.svc.io"


def cr(name: str, **meta) -> dict:
    return {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole", "metadata": {"name": name, **meta}, "rules": []}


async def settle(predicate, limit: float = 30.0) -> None:
    """Wait (trio time) for `predicate()`: the server's tasks reach a point no event reports."""
    with trio.fail_after(limit):
        while not predicate():
            await trio.sleep(0.01)


async def bob_may_use_clusterroles(srv: Server) -> None:
    await grant(srv, user("bob"), rule(["get", "list", "watch", "create"], ["clusterroles"], groups=[RBAC]))


def held_lists(srv: Server, release: trio.Event):
    """Make every list of the registry wait for `release` (a request held in flight)."""
    registry = srv.registry
    real = registry.list

    async def held(*args, **kwargs):
        await release.wait()
        return await real(*args, **kwargs)
    registry.list = held


async def test_read_only_requests_past_max_requests_inflight_are_429_with_retry_after(nursery, tmp_path,
                                                                                      autojump_clock):
    srv = await start_in_process(nursery, tmp_path, max_requests_inflight=2, token_auth_file=token_file(tmp_path))
    await bob_may_use_clusterroles(srv)
    limits = srv.plane.state.limits
    url = f"{srv.rbac}/clusterroles"
    release = trio.Event()
    held_lists(srv, release)
    codes: list[int] = []
    async with srv.client(token="bob-token") as bob, srv.client() as admin:
        async def held_list() -> None:
            codes.append((await bob.get(url)).status_code)

        async with trio.open_nursery() as requests:
            for _ in range(2):
                requests.start_soon(held_list)
            await settle(lambda: limits.read_only == 2)
            refused = await bob.get(url)
            refused_get = await bob.get(f"{url}/admin")
            # Mutating requests count apart, watches are long-running, system:masters is always served.
            created = await bob.post(url, json=cr("while-full"))
            async with bob.stream("GET", url, params={"watch": "1", "timeoutSeconds": "1"}) as watch:
                watch_code = watch.status_code
            admin_get = await admin.get(f"{url}/admin")
            release.set()
        after = await bob.get(url)
        samples = await scrape(admin)
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "1"
    status = refused.json()
    assert (status["reason"], status["message"], status["details"]) == (
        "TooManyRequests", "Too many requests, please try again later.", {"retryAfterSeconds": 1})
    assert refused_get.status_code == 429
    assert created.status_code == 201 and watch_code == 200 and admin_get.status_code == 200
    assert codes == [200, 200] and after.status_code == 200
    assert samples.value("apiserver_dropped_requests_total", request_kind="readOnly") == 2
    assert samples.value("apiserver_request_terminations_total", verb="LIST", resource="clusterroles",
                         code="429") == 1
    assert samples.value("apiserver_request_total", verb="LIST", resource="clusterroles", code="429") == 1


async def test_mutating_requests_past_max_mutating_requests_inflight_are_429(nursery, tmp_path, autojump_clock):
    release = trio.Event()

    async def hold(request) -> None:
        if request.obj["metadata"]["name"] == "held":
            await release.wait()
    srv = await start_in_process(nursery, tmp_path, max_mutating_requests_inflight=1,
                                 token_auth_file=token_file(tmp_path), admission=[AdmissionPlugin("hold", hold)])
    await bob_may_use_clusterroles(srv)
    limits = srv.plane.state.limits
    url = f"{srv.rbac}/clusterroles"
    codes: list[int] = []
    async with srv.client(token="bob-token") as bob:
        async def held_create() -> None:
            codes.append((await bob.post(url, json=cr("held"))).status_code)

        async with trio.open_nursery() as requests:
            requests.start_soon(held_create)
            await settle(lambda: limits.mutating == 1)
            refused = await bob.post(url, json=cr("refused"))
            listed = await bob.get(url)  # read-only requests count apart
            release.set()
        created = await bob.post(url, json=cr("after"))
    assert refused.status_code == 429 and refused.json()["reason"] == "TooManyRequests"
    assert refused.headers["Retry-After"] == "1"
    assert listed.status_code == 200 and codes == [201] and created.status_code == 201
    assert limits.mutating == 0 and limits.read_only == 0


async def test_a_request_past_the_request_timeout_is_504_in_kubernetes_words(nursery, tmp_path, autojump_clock):
    srv = await start_in_process(nursery, tmp_path, request_timeout=30)
    held_lists(srv, trio.Event())  # never released
    url = f"{srv.rbac}/clusterroles"
    async with srv.client(timeout=120) as c:
        began = trio.current_time()
        timed_out = await c.get(url)
        waited = trio.current_time() - began
        began = trio.current_time()
        asked = await c.get(url, params={"timeout": "2s"})  # the client's shorter ?timeout= wins
        asked_waited = trio.current_time() - began
        longer = await c.get(url, params={"timeout": "1h"})  # never longer than --request-timeout
        bad = await c.get(url, params={"timeout": "soon"})
        samples = await scrape(c)
    for answer in (timed_out, asked, longer):
        assert answer.status_code == 504
        assert (answer.json()["reason"], answer.json()["message"]) == ("Timeout", TIMED_OUT)
    assert (waited, asked_waited) == (pytest.approx(30), pytest.approx(2))  # trio's mock time, not the wall's
    assert bad.status_code == 400
    assert bad.json()["message"] == 'invalid timeout specified in the request URL - time: invalid duration "soon"'
    assert srv.plane.state.limits.read_only == 0
    assert samples.value("apiserver_request_terminations_total", verb="LIST", resource="clusterroles",
                         code="504") == 3


async def test_watches_end_at_a_random_time_between_min_request_timeout_and_twice_that(nursery, tmp_path,
                                                                                       autojump_clock):
    srv = await start_in_process(nursery, tmp_path, min_request_timeout=100)
    url = f"{srv.rbac}/clusterroles"
    lasted: list[float] = []
    async with srv.client(timeout=None) as c:
        now = (await c.get(url)).json()["metadata"]["resourceVersion"]

        async def watch(params: dict) -> None:
            began = trio.current_time()
            async with c.stream("GET", url, params={"watch": "1", "resourceVersion": now, **params}) as stream:
                assert stream.status_code == 200
                async for _ in stream.aiter_lines():
                    pass
            lasted.append(trio.current_time() - began)

        async with trio.open_nursery() as watches:
            for _ in range(8):
                watches.start_soon(watch, {})
        defaulted = list(lasted)
        lasted.clear()
        await watch({"timeoutSeconds": "7"})
        await watch({"timeoutSeconds": "0"})
    assert all(100 <= t < 201 for t in defaulted), defaulted
    assert len({round(t) for t in defaulted}) > 1  # spread, so that clients do not reconnect at once
    assert lasted[0] == pytest.approx(7)  # a client's timeoutSeconds is honoured
    assert 100 <= lasted[1] < 201  # 0 is "unset"


async def test_a_user_past_max_watches_per_user_gets_429_and_others_are_not_held_back(nursery, tmp_path,
                                                                                      autojump_clock):
    srv = await start_in_process(nursery, tmp_path, max_watches_per_user=2, token_auth_file=token_file(tmp_path))
    await bob_may_use_clusterroles(srv)
    limits = srv.plane.state.limits
    url = f"{srv.rbac}/clusterroles"
    async with srv.client(token="bob-token") as bob, srv.client() as admin:
        now = (await admin.get(url)).json()["metadata"]["resourceVersion"]
        params = {"watch": "1", "timeoutSeconds": "600", "resourceVersion": now}
        async with bob.stream("GET", url, params=params) as first, bob.stream("GET", url, params=params) as second:
            assert (first.status_code, second.status_code) == (200, 200)
            assert limits.open_watches("bob") == 2
            refused = await bob.get(url, params=params)
            async with admin.stream("GET", url, params=params) as other_user:
                assert other_user.status_code == 200
        await settle(lambda: limits.open_watches("bob") == 0)
        async with bob.stream("GET", url, params=params) as again:
            again_code = again.status_code
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "1"
    assert refused.json()["message"] == ('too many open watches for user "bob": 2 of at most 2; close some, or '
                                         "retry later")
    assert again_code == 200


def _raw_request(path: str, token: str) -> bytes:
    return (f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\r\n").encode()


async def _read_response(stream: trio.SSLStream) -> tuple[bytes, bytes]:
    """One HTTP/1.1 response with a Content-Length: (head, body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = await stream.receive_some()
        assert chunk, "the connection closed before an answer"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(
        b"content-length")))
    while len(body) < length:
        chunk = await stream.receive_some()
        assert chunk, "the connection closed mid-answer"
        body += chunk
    return head, body


async def _connect(srv: Server) -> trio.SSLStream:
    host, port = srv.url.split("://", 1)[1].rsplit(":", 1)
    ctx = ssl.create_default_context(cadata=srv.ca_pem.decode())
    ctx.set_alpn_protocols(["http/1.1"])
    return await trio.open_ssl_over_tcp_stream(host, int(port), ssl_context=ctx, https_compatible=True)


async def test_connections_past_max_connections_are_answered_429_and_closed(nursery, tmp_path):
    srv = await start_server(nursery, tmp_path, max_connections=2)  # real sockets, the real clock
    path = f"{srv.rbac}/clusterroles/admin"
    kept = [await _connect(srv) for _ in range(2)]
    for stream in kept:
        await stream.send_all(_raw_request(path, srv.token))
        head, _ = await _read_response(stream)
        assert head.startswith(b"HTTP/1.1 200")
    extra = await _connect(srv)
    await extra.send_all(_raw_request(path, srv.token))
    head, body = await _read_response(extra)
    assert head.startswith(b"HTTP/1.1 429") and b"connection: close" in head.lower()
    assert json.loads(body)["message"] == "too many open connections to the server (at most 2); retry later"
    with trio.fail_after(10):
        assert await extra.receive_some() == b""  # the server closed it
    await extra.aclose()
    await kept[0].aclose()
    with trio.fail_after(10):
        while True:  # the server notices the closed connection (no event tells the client when)
            fresh = await _connect(srv)
            await fresh.send_all(_raw_request(path, srv.token))
            head, _ = await _read_response(fresh)
            await fresh.aclose()
            if head.startswith(b"HTTP/1.1 200"):
                break
            await trio.sleep(0.05)
    for stream in kept[1:]:  # the connections within the limit kept serving
        await stream.send_all(_raw_request(path, srv.token))
        assert (await _read_response(stream))[0].startswith(b"HTTP/1.1 200")
        await stream.aclose()


async def test_a_watcher_that_stops_reading_holds_back_no_writer_nor_watcher_and_resumes_without_loss(
        server, autojump_clock):
    # In process: the transport is unbuffered, so a client that stops reading stops the server's writes to
    # it, as a full socket would (with no socket buffers to fill first).
    url = f"{server.rbac}/clusterroles"
    rt = server.registry.scheme.by_kind("ClusterRole")
    count = 1_200  # more than a watcher's queue (1000 events)
    async with server.client(timeout=None) as c, server.client(timeout=None) as f:
        start = (await c.get(url)).json()["metadata"]["resourceVersion"]
        params = {"watch": "1", "resourceVersion": start, "timeoutSeconds": "600"}
        async with c.stream("GET", url, params=params) as slow:
            slow_lines = slow.aiter_lines()
            fast_seen: list[str] = []
            written: list[str] = []

            async def fast() -> None:
                async with f.stream("GET", url, params=params) as stream:
                    async for line in stream.aiter_lines():
                        fast_seen.append(json.loads(line)["object"]["metadata"]["name"])
                        if len(fast_seen) == count:
                            return

            async with trio.open_nursery() as work:
                work.start_soon(fast)
                for i in range(count - 10):  # writers in process: many, quickly
                    obj = await server.registry.create(ADMIN, rt, "", Body(cr(f"w{i:04}")))
                    written.append(obj.obj.name)
                    if i == 0:
                        slow_seen = [json.loads(await slow_lines.__anext__())["object"]["metadata"]["name"]]
                for i in range(count - 10, count):  # and over HTTP, while the slow watcher still reads nothing
                    r = await c.post(url, json=cr(f"w{i:04}"))
                    assert r.status_code == 201, r.text
                    written.append(r.json()["metadata"]["name"])
            assert sorted(fast_seen) == sorted(written)  # the other watcher got everything meanwhile
            # The slow watcher reads again: what its queue held, then the end of its stream.
            events = [json.loads(line) async for line in slow_lines]
        slow_seen += [e["object"]["metadata"]["name"] for e in events]
        assert len(slow_seen) < count  # cut off: it could not keep up
        last = events[-1]["object"]["metadata"]["resourceVersion"]
        async with c.stream("GET", url, params={"watch": "1", "resourceVersion": last,
                                                "timeoutSeconds": "1"}) as resumed:
            slow_seen += [json.loads(line)["object"]["metadata"]["name"] async for line in resumed.aiter_lines()]
    assert slow_seen == written  # in order, nothing lost, nothing twice


