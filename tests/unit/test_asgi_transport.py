"""The streaming ASGI transport of the tests (`tests/support/asgi.py`) keeps its contract.

Each test drives a small raw ASGI app, so what is proved is the transport's:
chunks reach the client as the app sends them, request bodies reach the app
chunk by chunk, closing the response hangs up (`http.disconnect`, the app
cancelled and finished), headers repeat, HEAD has no body, a failing app is a
protocol error, the read timeout runs in trio time.
"""

from __future__ import annotations

import httpx
import pytest
import trio

from tests.support.asgi import ASGITransport


async def start(send, status: int = 200, headers: list | None = None) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers or []})


async def test_body_chunks_reach_the_client_as_the_app_sends_them(nursery, autojump_clock):
    release = trio.Event()

    async def app(scope, receive, send):
        await start(send)
        await send({"type": "http.response.body", "body": b"first", "more_body": True})
        await release.wait()  # the app goes on only when the client has had the first chunk
        await send({"type": "http.response.body", "body": b"second", "more_body": False})

    async with httpx.AsyncClient(transport=ASGITransport(app, nursery), base_url="http://t") as client:
        async with client.stream("GET", "/") as r:
            chunks = r.aiter_raw()
            assert await chunks.__anext__() == b"first"
            release.set()
            assert [c async for c in chunks] == [b"second"]


async def test_a_request_body_reaches_the_app_chunk_by_chunk(nursery, autojump_clock):
    received: list[dict] = []

    async def app(scope, receive, send):
        while True:
            message = await receive()
            received.append(message)
            if not message.get("more_body"):
                break
        await start(send)
        await send({"type": "http.response.body", "body": b"".join(m["body"] for m in received)})

    async def body():
        yield b"one,"
        await trio.sleep(5)  # mock time: a slow client
        yield b"two"

    async with httpx.AsyncClient(transport=ASGITransport(app, nursery), base_url="http://t") as client:
        r = await client.post("/", content=body())
    assert r.content == b"one,two"
    assert [(m["type"], m["body"], m["more_body"]) for m in received] == [
        ("http.request", b"one,", True), ("http.request", b"two", True), ("http.request", b"", False)]


async def test_closing_the_response_disconnects_and_cancels_the_app(nursery, autojump_clock):
    events: list[str] = []

    async def app(scope, receive, send):
        assert (await receive())["type"] == "http.request"
        try:
            await start(send)
            await send({"type": "http.response.body", "body": b"x", "more_body": True})
            await trio.sleep_forever()
        except trio.Cancelled:
            events.append("cancelled")
            raise
        finally:
            with trio.CancelScope(shield=True):
                events.append((await receive())["type"])

    async with httpx.AsyncClient(transport=ASGITransport(app, nursery), base_url="http://t") as client:
        async with client.stream("GET", "/") as r:
            async for _ in r.aiter_raw():
                break
        assert events == ["cancelled", "http.disconnect"]  # all done before the client goes on


async def test_the_scope_is_a_plain_http_request_without_tls(nursery):
    seen: dict = {}

    async def app(scope, receive, send):
        seen.update(scope)
        await start(send)
        await send({"type": "http.response.body", "body": b""})

    async with httpx.AsyncClient(transport=ASGITransport(app, nursery), base_url="http://miniplane") as client:
        await client.get("/a%20b/c", params={"x": "1"}, headers={"X-Two": "2"})
    assert (seen["method"], seen["scheme"], seen["path"], seen["raw_path"], seen["query_string"]) == \
        ("GET", "http", "/a b/c", b"/a%20b/c", b"x=1")
    assert (b"x-two", b"2") in seen["headers"] and "tls" not in seen["extensions"]
    assert seen["server"] == ("miniplane", 80)


async def test_repeated_headers_stay_repeated_and_head_has_no_body(nursery):
    async def app(scope, receive, send):
        await start(send, headers=[(b"warning", b"299 - \"a\""), (b"warning", b"299 - \"b\"")])
        await send({"type": "http.response.body", "body": b"body"})

    async with httpx.AsyncClient(transport=ASGITransport(app, nursery), base_url="http://t") as client:
        got = await client.get("/")
        head = await client.head("/")
    assert got.headers.get_list("warning") == ['299 - "a"', '299 - "b"'] and got.content == b"body"
    assert head.content == b""


async def test_an_app_that_fails_is_a_protocol_error(nursery):
    async def before(scope, receive, send):
        raise RuntimeError("boom")

    async def midway(scope, receive, send):
        await start(send)
        await send({"type": "http.response.body", "body": b"partial", "more_body": True})
        raise RuntimeError("boom")

    for app in (before, midway):
        async with httpx.AsyncClient(transport=ASGITransport(app, nursery), base_url="http://t") as client:
            with pytest.raises(httpx.RemoteProtocolError) as caught:
                await client.get("/")
        assert isinstance(caught.value.__cause__, RuntimeError)


async def test_the_read_timeout_runs_in_trio_time(nursery, autojump_clock):
    async def app(scope, receive, send):
        await start(send)
        await send({"type": "http.response.body", "body": b"x", "more_body": True})
        await trio.sleep_forever()

    async with httpx.AsyncClient(transport=ASGITransport(app, nursery), base_url="http://t",
                                 timeout=httpx.Timeout(30, read=7)) as client:
        begun = trio.current_time()
        with pytest.raises(httpx.ReadTimeout):
            await client.get("/")
    assert trio.current_time() - begun == pytest.approx(7)
