"""Rules of `runtime.server.storage.etcd.http`: kept-alive POSTs to one etcd endpoint, and streamed answers.

Against a scripted loopback server (`tests.support.scripted_http`), which
counts the connections it accepts, so reuse is asserted on counts.
"""

from __future__ import annotations

import functools
from contextlib import asynccontextmanager
from typing import AsyncIterator, Awaitable, Callable

import pytest
import trio

from runtime.server.storage.etcd.http import Broken, Endpoint, Unreached
from tests.support.scripted_http import Answer, scripted_server


def echo(path: str, body: bytes) -> Answer:
    return Answer(parts=[path.encode() + b" " + body])


async def test_sequential_posts_share_one_kept_alive_connection() -> None:
    async with scripted_server(echo) as server:
        endpoint = Endpoint(server.url)
        for i in range(20):
            assert await endpoint.post("/v3/kv/range", b"%d" % i) == (200, b"/v3/kv/range %d" % i)
        assert server.connections == 1
        await endpoint.aclose()


async def test_a_request_larger_than_the_socket_takes_at_once_is_sent_whole() -> None:
    # A plain connection writes on its descriptor and sends what the socket did not take through the
    # stream; 8 MiB is more than a loopback socket takes in one write.
    body = bytes(range(256)) * (8 * 4096)
    async with scripted_server(echo) as server:
        endpoint = Endpoint(server.url)
        assert await endpoint.post("/big", body) == (200, b"/big " + body)
        assert await endpoint.post("/small", b"1") == (200, b"/small 1")
        assert server.connections == 1
        await endpoint.aclose()


async def test_posts_in_flight_together_open_one_connection_each_and_then_reuse_them() -> None:
    async with scripted_server(lambda path, body: Answer(parts=[body], pause=0.05)) as server:
        endpoint = Endpoint(server.url)

        async def burst() -> None:
            async with trio.open_nursery() as nursery:
                for i in range(8):
                    nursery.start_soon(endpoint.post, "/p", b"%d" % i)

        await burst()
        assert server.connections == 8
        await burst()
        assert server.connections == 8  # the second burst found eight idle connections
        await endpoint.aclose()


async def test_an_idle_connection_the_peer_closed_is_not_used() -> None:
    # The peer closes after each answer without saying so (as an etcd that restarts does).
    async with scripted_server(lambda path, body: Answer(parts=[b"ok"], then="close")) as server:
        endpoint = Endpoint(server.url)
        assert await endpoint.post("/p", b"1") == (200, b"ok")
        await trio.sleep(0.05)  # the peer's close reaches this side
        assert await endpoint.post("/p", b"2") == (200, b"ok")
        assert server.connections == 2
        await endpoint.aclose()


async def test_at_most_max_idle_connections_are_kept() -> None:
    async with scripted_server(lambda path, body: Answer(parts=[b"ok"], pause=0.05)) as server:
        endpoint = Endpoint(server.url, max_idle=2)
        async with trio.open_nursery() as nursery:
            for _ in range(5):
                nursery.start_soon(endpoint.post, "/p", b"")
        assert endpoint.statistics().idle == 2
        await endpoint.aclose()
        assert endpoint.statistics().idle == 0


async def test_an_answer_cut_short_breaks_the_call_and_its_connection_is_dropped() -> None:
    answers = iter([Answer(parts=[b'{"par'], then="cut"), Answer(parts=[b"{}"])])
    async with scripted_server(lambda path, body: next(answers)) as server:
        endpoint = Endpoint(server.url)
        with pytest.raises(Broken, match="/v3/kv/txn"):
            await endpoint.post("/v3/kv/txn", b"{}")
        assert endpoint.statistics().idle == 0
        assert await endpoint.post("/v3/kv/txn", b"{}") == (200, b"{}")
        assert server.connections == 2
        await endpoint.aclose()


async def test_a_port_nobody_listens_on_is_unreached() -> None:
    with trio.socket.socket() as sock:  # a port bound, never listened on: connections are refused
        await sock.bind(("127.0.0.1", 0))
        endpoint = Endpoint(f"http://127.0.0.1:{sock.getsockname()[1]}")
        with pytest.raises(Unreached):
            await endpoint.post("/p", b"")


async def test_a_peer_that_never_answers_breaks_the_call_after_the_timeout() -> None:
    async with scripted_server(lambda path, body: Answer(parts=[b"late"], pause=30)) as server:
        endpoint = Endpoint(server.url, timeout=0.2)
        with trio.fail_after(20):  # a guard against hanging, far above the timeout
            with pytest.raises(Broken, match="no answer within"):
                await endpoint.post("/p", b"")
        assert endpoint.statistics().idle == 0


async def test_a_cancelled_post_does_not_return_its_connection() -> None:
    async with scripted_server(lambda path, body: Answer(parts=[b"a", b"b"], pause=0.2)) as server:
        endpoint = Endpoint(server.url)
        with trio.move_on_after(0.1):
            await endpoint.post("/p", b"")
        assert endpoint.statistics().idle == 0  # half read: never handed to the next call
        assert await endpoint.post("/p", b"") == (200, b"ab")
        assert server.connections == 2
        await endpoint.aclose()


async def test_a_stream_yields_its_lines_whatever_the_writes_cut() -> None:
    parts = [b'{"a":1}\n{"b"', b':2}\n\n{"c":3', b"}\n", b'{"d":4}']  # the last line unterminated
    async with scripted_server(lambda path, body: Answer(parts=parts)) as server:
        endpoint = Endpoint(server.url)
        async with endpoint.stream("/v3/watch", b"{}") as answer:
            assert answer.status == 200
            lines = []
            while (line := await answer.next_line()) is not None:
                lines.append(line)
        assert lines == [b'{"a":1}', b'{"b":2}', b"", b'{"c":3}', b'{"d":4}']
        assert endpoint.statistics().idle == 0  # a stream's connection is its own, closed with it


async def test_a_stream_cut_short_breaks_and_an_error_status_reads_whole() -> None:
    answers = iter([Answer(parts=[b'{"a":1}\n{"b'], then="cut"), Answer(status=400, parts=[b'{"code":3,', b'"message":"bad"}'])])
    async with scripted_server(lambda path, body: next(answers)) as server:
        endpoint = Endpoint(server.url)
        async with endpoint.stream("/v3/watch", b"{}") as answer:
            assert await answer.next_line() == b'{"a":1}'
            with pytest.raises(Broken, match="stream broken"):
                await answer.next_line()
        async with endpoint.stream("/v3/watch", b"{}") as answer:
            assert (answer.status, await answer.read_all()) == (400, b'{"code":3,"message":"bad"}')


@pytest.mark.parametrize("url", ["127.0.0.1:2379", "ftp://127.0.0.1:2379", "http://127.0.0.1", "http://:2379"])
def test_an_endpoint_needs_an_http_url_with_host_and_port(url: str) -> None:
    with pytest.raises(ValueError):
        Endpoint(url)


@asynccontextmanager
async def raw_peer(answer: Callable[[trio.SocketStream], Awaitable[None]]) -> AsyncIterator[Endpoint]:
    """An Endpoint to a loopback peer that runs `answer` on each connection (bytes written by hand)."""
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(functools.partial(trio.serve_tcp, answer, 0, host="127.0.0.1"))
        endpoint = Endpoint(f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}")
        yield endpoint
        await endpoint.aclose()
        nursery.cancel_scope.cancel()


async def test_an_interim_answer_is_skipped_and_the_final_one_read() -> None:
    # A 1xx answer (etcd sends none unasked, but HTTP/1.1 allows it) comes before the real one.
    async def peer(stream: trio.SocketStream) -> None:
        await stream.receive_some(65536)
        await stream.send_all(b"HTTP/1.1 100 Continue\r\n\r\n")
        await stream.send_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
        await trio.sleep_forever()

    async with raw_peer(peer) as endpoint:
        assert await endpoint.post("/p", b"{}") == (200, b"ok")
        assert endpoint.statistics().idle == 1  # kept alive: the answer ended cleanly


async def test_an_answer_without_length_or_chunks_ends_where_the_connection_does() -> None:
    # HTTP/1.1's read-until-close: neither content-length nor transfer-encoding, then the peer closes.
    async def peer(stream: trio.SocketStream) -> None:
        await stream.receive_some(65536)
        await stream.send_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n")
        await stream.send_all(b'{"a":')
        await stream.send_all(b"1}")
        await stream.aclose()

    async with raw_peer(peer) as endpoint:
        assert await endpoint.post("/p", b"{}") == (200, b'{"a":1}')
        assert endpoint.statistics().idle == 0  # the close ended it: never reused


async def test_a_stream_whose_peer_never_answers_breaks_after_the_timeout() -> None:
    async def peer(stream: trio.SocketStream) -> None:
        await stream.receive_some(65536)
        await trio.sleep_forever()  # not even a status line

    async with raw_peer(peer) as endpoint:
        endpoint.timeout = 0.2
        with trio.fail_after(20):  # a guard against hanging, far above the timeout
            with pytest.raises(Broken, match="no answer within"):
                async with endpoint.stream("/v3/watch", b"{}"):
                    pass
