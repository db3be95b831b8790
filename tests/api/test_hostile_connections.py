"""Hostile connections over real HTTPS: half-open connections and slow requests are cut off in bounded time,
and never keep the server from answering others.

On the MockClock (`autojump_clock`): Hypercorn's and the app's timeouts run
in trio time, so minutes pass at no cost. The bounds are the server's:
a TLS handshake must finish within 60 s (Hypercorn's), a connection that
sends no complete request head is closed within the keep-alive timeout
(75 s), a body must arrive within 60 s (504). Each test allows 120 s.
The body past `--max-body-bytes` (413) is `tests/api/test_crud.py`'s.
"""

from __future__ import annotations

import ssl

import trio

from tests.support.server import Server

LIMIT = 120.0  # seconds of trio time any of these connections may hold the server


async def connect(srv: Server, *, tls: bool = True) -> trio.abc.Stream:
    host, port = srv.url.split("://", 1)[1].rsplit(":", 1)
    if not tls:
        return await trio.open_tcp_stream(host, int(port))
    context = ssl.create_default_context(cadata=srv.ca_pem.decode())
    stream = await trio.open_ssl_over_tcp_stream(host, int(port), ssl_context=context, https_compatible=True)
    await stream.do_handshake()
    return stream


async def closed_within(stream: trio.abc.Stream, limit: float) -> bytes | None:
    """What the server sends until it closes `stream` (None if it is still open after `limit` s)."""
    received = b""
    with trio.move_on_after(limit):
        try:
            while chunk := await stream.receive_some():
                received += chunk
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        return received
    return None


async def still_serving(srv: Server) -> bool:
    async with srv.client() as c:
        return (await c.get("/healthz")).status_code == 200


async def test_half_open_connections_are_closed_and_never_block_others(https_server, autojump_clock):
    srv = https_server
    no_handshake = [await connect(srv, tls=False) for _ in range(10)]  # TCP only: TLS never begun
    silent = [await connect(srv) for _ in range(10)]  # TLS done, then nothing
    assert await still_serving(srv)
    closed: list[bytes | None] = []

    async def watch(stream: trio.abc.Stream) -> None:
        closed.append(await closed_within(stream, LIMIT))

    async with trio.open_nursery() as nursery:
        for stream in no_handshake + silent:
            nursery.start_soon(watch, stream)
        await trio.sleep(1)
        assert await still_serving(srv)
    assert closed == [b""] * 20  # every one closed by the server, with nothing sent
    assert await still_serving(srv)


async def test_a_request_head_dripped_a_byte_at_a_time_is_cut_off(https_server, autojump_clock):
    srv = https_server
    stream = await connect(srv)
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 1000
    start = trio.current_time()
    cut = False
    with trio.move_on_after(LIMIT):
        try:
            for byte in head:  # one byte every 10 s: each one resets no timer
                await stream.send_all(bytes([byte]))
                with trio.move_on_after(10):
                    if await stream.receive_some() == b"":
                        cut = True
                        break
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            cut = True
    assert cut and trio.current_time() - start <= LIMIT
    assert await still_serving(srv)


async def test_a_body_dripped_a_byte_at_a_time_is_answered_504_and_writes_nothing(https_server, autojump_clock):
    srv = https_server
    stream = await connect(srv)
    await stream.send_all((f"POST /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {srv.token}\r\n"
                           "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n").encode())
    body = b'{"metadata":{"name":"drip"}}'.ljust(1000)
    answer = b""
    with trio.move_on_after(LIMIT):
        for byte in body:  # one byte every 5 s: the body would take 5000 s
            await stream.send_all(bytes([byte]))
            with trio.move_on_after(5):
                answer = await stream.receive_some()
            if answer:
                break
        while b'"code":504' not in answer and (chunk := await stream.receive_some()):
            answer += chunk  # the rest of the answer
    assert answer.startswith(b"HTTP/1.1 504") and b'"reason":"Timeout"' in answer
    async with srv.client() as c:
        assert (await c.get("/api/v1/namespaces/drip")).status_code == 404
