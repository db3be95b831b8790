"""The keep-alive timeout (75 s) of an HTTPS connection counts from its last answer, never during one
(`api.serving.listener`'s idle timer).

On the MockClock (`autojump_clock`), so minutes pass at no cost. Hypercorn
under quart-trio never closed a connection idle after an answer (its idle
task's restart was cancelled with quart-trio's request task): these tests
fail on that code. They hold the timer to Hypercorn's rule: an idle
connection closes 75 s after its last answer, each request starts the count
again, and a connection busy with a long answer (a watch) is never idle;
HTTP/2 (kubectl's) idles the same way.
"""

from __future__ import annotations

import ssl

import httpx
import pytest
import trio

from tests.support.server import Server

pytestmark = pytest.mark.stores("memory")  # the HTTP layer's: any store answers the same

KEEP_ALIVE = 75.0  # api.serving.server's keep_alive_timeout


async def exchange(stream: trio.SSLStream, request: bytes, end: bytes) -> bytes:
    """Send `request`, then read until the bytes received end with `end`."""
    await stream.send_all(request)
    received = b""
    while not received.endswith(end):
        chunk = await stream.receive_some()
        assert chunk, f"closed inside an answer: {received!r}"
        received += chunk
    return received


async def seconds_until_closed(stream: trio.SSLStream) -> float:
    """Trio seconds until the server closes `stream`, which sends nothing meanwhile."""
    start = trio.current_time()
    with trio.fail_after(4 * KEEP_ALIVE):
        try:
            assert await stream.receive_some() == b""
        except trio.BrokenResourceError:
            pass
    return trio.current_time() - start


def healthz(srv: Server) -> bytes:
    return f"GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {srv.token}\r\n\r\n".encode()


async def test_a_connection_idle_after_its_answer_closes_at_the_keep_alive_timeout(https_server, autojump_clock):
    srv = https_server
    async with await srv.raw_tls() as stream:
        assert (await exchange(stream, healthz(srv), b"ok")).startswith(b"HTTP/1.1 200 OK")
        assert KEEP_ALIVE <= await seconds_until_closed(stream) < KEEP_ALIVE + 1


async def test_each_request_starts_the_keep_alive_count_again(https_server, autojump_clock):
    srv = https_server
    async with await srv.raw_tls() as stream:
        for _ in range(4):  # 4 x 60 s: well past one timeout, never 75 s idle
            assert (await exchange(stream, healthz(srv), b"ok")).startswith(b"HTTP/1.1 200 OK")
            await trio.sleep(KEEP_ALIVE - 15)
        # 60 s after the last answer: 15 s left, counted from that answer, not from the first.
        assert KEEP_ALIVE - 60 <= await seconds_until_closed(stream) < KEEP_ALIVE - 59


async def test_a_connection_busy_with_a_long_answer_is_not_idle(https_server, autojump_clock):
    srv = https_server
    async with srv.client() as c:
        rv = (await c.get("/api/v1/namespaces")).json()["metadata"]["resourceVersion"]
    watch = (f"GET /api/v1/namespaces?watch=1&resourceVersion={rv}&timeoutSeconds=200 HTTP/1.1\r\n"
             f"Host: x\r\nAuthorization: Bearer {srv.token}\r\n\r\n").encode()
    async with await srv.raw_tls() as stream:
        start = trio.current_time()
        async with trio.open_nursery() as nursery:
            async def create_later() -> None:
                await trio.sleep(2 * KEEP_ALIVE)  # past the timeout, the watch still open
                async with srv.client() as c:
                    assert (await c.post("/api/v1/namespaces", json={"metadata": {"name": "late"}})).status_code == 201

            nursery.start_soon(create_later)
            answer = await exchange(stream, watch, b"0\r\n\r\n")  # the chunked end: the watch's timeout
        assert b'"name":"late"' in answer and trio.current_time() - start >= 200
        assert KEEP_ALIVE <= await seconds_until_closed(stream) < KEEP_ALIVE + 1


async def open_connections(srv: Server) -> float:
    """The server's count of open connections (`apiserver_open_connections`), the asking one included."""
    async with srv.client() as c:
        text = (await c.get("/metrics")).text
    return float(next(line.split()[-1] for line in text.splitlines()
                      if line.startswith("apiserver_open_connections ")))


async def test_an_http2_connection_idle_after_its_answer_closes_too(https_server, autojump_clock):
    srv = https_server
    context = ssl.create_default_context(cadata=srv.ca_pem.decode())
    async with httpx.AsyncClient(base_url=srv.url, verify=context, http2=True,
                                 headers={"Authorization": f"Bearer {srv.token}"}) as h2:
        assert (await h2.get("/api/v1/namespaces/default")).http_version == "HTTP/2"
        assert await open_connections(srv) == 2  # the HTTP/2 one and the asking one
        await trio.sleep(KEEP_ALIVE + 5)
        assert await open_connections(srv) == 1  # the asking one
