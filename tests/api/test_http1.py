"""HTTP/1.1 on the wire (`api.serving.http1`): what Hypercorn's h11 protocol did, parsed by llhttp.

Over real HTTPS, bytes in and bytes out: pipelined requests are answered in
order, one at a time; HTTP/1.0 and `Connection: close` end the connection
after their answer; a chunked request body is read (its trailers dropped, an
endless trailer refused 431); an answer of unknown
length (a watch) is chunked; HEAD gets a head alone; a malformed request, an
HTTP/1.1 request without a Host, an Upgrade request with a body are answered
400 and the connection closes; an Upgrade request is served as plain HTTP/1.1
and the connection goes on; a head past 16 KiB is 431 however it is split;
after `keep_alive_max_requests` answers the connection closes.
"""

from __future__ import annotations

import json

import pytest
import trio
import trio.testing

from api.serving.http1 import response_head, status_line
from tests.support.server import Server

pytestmark = pytest.mark.stores("memory")  # the HTTP layer's: any store answers the same

NAMESPACES = "/api/v1/namespaces"


def request(srv: Server, method: str, path: str, *, version: str = "1.1", headers: str = "",
            body: bytes = b"") -> bytes:
    head = f"{method} {path} HTTP/{version}\r\nHost: x\r\nAuthorization: Bearer {srv.token}\r\n{headers}"
    if body and "transfer-encoding" not in headers.lower():
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + body


async def read_all(stream: trio.SSLStream) -> bytes:
    """Everything the server sends until it closes the connection."""
    received = b""
    with trio.fail_after(30):
        try:
            while chunk := await stream.receive_some():
                received += chunk
        except trio.BrokenResourceError:
            pass
    return received


async def read_answers(stream: trio.SSLStream, count: int) -> list[tuple[bytes, bytes]]:
    """The next `count` answers of known length: (head, body) each."""
    buffer, answers = b"", []
    with trio.fail_after(30):
        while len(answers) < count:
            if b"\r\n\r\n" in buffer:
                head, rest = buffer.split(b"\r\n\r\n", 1)
                length = int(next(line.split(b":", 1)[1] for line in head.split(b"\r\n")[1:]
                                  if line.lower().startswith(b"content-length:")))
                if len(rest) >= length:
                    answers.append((head, rest[:length]))
                    buffer = rest[length:]
                    continue
            chunk = await stream.receive_some()
            assert chunk, f"closed after {len(answers)} answers: {buffer!r}"
            buffer += chunk
    return answers


def namespace(name: str) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}).encode()


async def test_pipelined_requests_are_answered_in_order_and_the_connection_goes_on(https_server):
    srv = https_server
    async with await srv.raw_tls() as stream:
        await stream.send_all(request(srv, "POST", NAMESPACES, body=namespace("one")) +
                              request(srv, "GET", f"{NAMESPACES}/one") +
                              request(srv, "GET", f"{NAMESPACES}/nope"))
        answers = await read_answers(stream, 3)
        assert [head.split(b"\r\n", 1)[0] for head, _ in answers] == [
            b"HTTP/1.1 201 Created", b"HTTP/1.1 200 OK", b"HTTP/1.1 404 Not Found"]
        assert json.loads(answers[1][1])["metadata"]["name"] == "one"
        await stream.send_all(request(srv, "GET", "/version"))  # still open
        assert (await read_answers(stream, 1))[0][0].startswith(b"HTTP/1.1 200 OK\r\n")


@pytest.mark.parametrize("version, headers", [("1.0", ""), ("1.1", "Connection: close\r\n")])
async def test_an_http10_request_or_one_asking_to_close_ends_the_connection_after_its_answer(
        https_server, version, headers):
    srv = https_server
    async with await srv.raw_tls() as stream:
        await stream.send_all(request(srv, "GET", "/version", version=version, headers=headers))
        received = await read_all(stream)
    head, body = received.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200 OK\r\n") and b"\r\nconnection: close" in head.lower()
    assert json.loads(body)["gitVersion"]


async def test_a_chunked_request_body_is_read(https_server):
    srv = https_server
    body = namespace("chunked")
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:10], body[10:])) + b"0\r\n\r\n"
    async with await srv.raw_tls() as stream:
        await stream.send_all(request(srv, "POST", NAMESPACES, body=chunked, headers=(
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n")))
        head, answer = (await read_answers(stream, 1))[0]
    assert head.startswith(b"HTTP/1.1 201 Created\r\n"), head
    assert json.loads(answer)["metadata"]["name"] == "chunked"


async def test_a_chunked_body_s_trailers_are_dropped_and_an_endless_one_is_431(https_server):
    srv = https_server
    body = namespace("trailed")
    chunked = b"%x\r\n%s\r\n0\r\nX-Trailer: 1\r\nX-Other: 2\r\n\r\n" % (len(body), body)
    async with await srv.raw_tls() as stream:
        await stream.send_all(request(srv, "POST", NAMESPACES, body=chunked, headers=(
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nTrailer: X-Trailer, X-Other\r\n")))
        head, answer = (await read_answers(stream, 1))[0]
        assert head.startswith(b"HTTP/1.1 201 Created\r\n"), head
        # A trailer that never ends is held back by llhttp: bounded as a head is (16 KiB), then 431.
        await stream.send_all(request(srv, "POST", NAMESPACES, body=b"%x\r\n%s\r\n0\r\nX-T: " % (len(body), body),
                                      headers="Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"))
        for _ in range(6):  # 18,000 bytes of one trailer line, each its own read: past 16 KiB at the last
            await stream.send_all(b"a" * 3000)
            await trio.testing.wait_all_tasks_blocked()
        received = await read_all(stream)
    assert b"HTTP/1.1 431 Request Header Fields Too Large\r\n" in received, received[-300:]


async def test_an_answer_of_unknown_length_is_chunked_and_ends_with_the_last_chunk(https_server, autojump_clock):
    srv = https_server
    async with await srv.raw_tls() as stream:
        await stream.send_all(request(srv, "GET", f"{NAMESPACES}?watch=1&timeoutSeconds=5"))
        received = b""
        with trio.fail_after(60):
            while not received.endswith(b"\r\n0\r\n\r\n"):
                chunk = await stream.receive_some()
                assert chunk, received
                received += chunk
    head, body = received.split(b"\r\n\r\n", 1)
    assert b"\r\ntransfer-encoding: chunked" in head.lower() and b"content-length" not in head.lower()
    events, rest = [], body
    while True:
        size, rest = rest.split(b"\r\n", 1)
        if int(size, 16) == 0:
            break
        events.append(rest[:int(size, 16)])
        rest = rest[int(size, 16) + 2:]
    assert {json.loads(line)["object"]["metadata"]["name"] for e in events for line in e.splitlines()} >= {"default"}


async def test_a_head_request_gets_the_head_alone(https_server):
    srv = https_server
    async with await srv.raw_tls() as stream:
        await stream.send_all(request(srv, "HEAD", "/version") + request(srv, "GET", "/healthz"))
        received = b""
        with trio.fail_after(30):
            while not received.endswith(b"ok"):
                received += await stream.receive_some()
    first, second = received.split(b"HTTP/1.1 ")[1:]
    assert first.startswith(b"200 OK\r\n") and first.endswith(b"\r\n\r\n")  # no body after the head
    assert b"content-length:" in first.lower()
    assert second.startswith(b"200 OK\r\n") and second.endswith(b"\r\n\r\nok")


@pytest.mark.parametrize("raw", [
    b"GET /version HTTP/1.1\r\nHo st: x\r\n\r\n",                              # a header name with a space
    b"GET /version HTTP/1.1\r\n\r\n",                                           # HTTP/1.1 without Host
    b"GET /version HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",                     # two Hosts
    b"POST /version HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
    b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",                                        # HTTP/2's preface
    b"GET /version HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c\r\nContent-Length: 2\r\n\r\nab",
])
async def test_a_malformed_request_is_answered_400_and_the_connection_closes(https_server, raw):
    async with await https_server.raw_tls() as stream:
        await stream.send_all(raw)
        received = await read_all(stream)
    assert received.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert b"\r\ncontent-length: 0\r\nconnection: close\r\n" in received and received.endswith(b"\r\n\r\n")


async def test_a_malformed_request_behind_a_good_one_is_answered_after_it(https_server):
    srv = https_server
    async with await srv.raw_tls() as stream:
        await stream.send_all(request(srv, "GET", "/version") + b"GET / HTTP/1.1\r\nHo st: x\r\n\r\n")
        received = await read_all(stream)
    assert received.startswith(b"HTTP/1.1 200 OK\r\n")
    assert received.count(b"HTTP/1.1 ") == 2 and b"HTTP/1.1 400 Bad Request\r\n" in received


async def test_an_upgrade_request_is_served_as_plain_http11(https_server):
    srv = https_server
    upgrade = "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
    async with await srv.raw_tls() as stream:
        await stream.send_all(request(srv, "GET", "/version", headers=upgrade) + request(srv, "GET", "/healthz"))
        received = b""
        with trio.fail_after(30):
            while not received.endswith(b"ok"):
                received += await stream.receive_some()
    assert received.startswith(b"HTTP/1.1 200 OK\r\n") and received.count(b"HTTP/1.1 200 OK\r\n") == 2


@pytest.mark.parametrize("pieces", [1, 3, 40])
async def test_a_head_past_16_kib_is_431_however_it_is_split(https_server, pieces):
    srv = https_server
    raw = request(srv, "GET", "/version", headers=f"X-Big: {'a' * 20_000}\r\n")[:17_000]  # past 16 KiB, never whole
    async with await srv.raw_tls() as stream:
        step = len(raw) // pieces + 1
        for start in range(0, len(raw), step):
            await stream.send_all(raw[start:start + step])
            await trio.testing.wait_all_tasks_blocked()  # the server has read it: each its own read
        received = await read_all(stream)
    assert received.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"), received


async def test_a_head_under_16_kib_split_across_reads_is_served(https_server):
    srv = https_server
    raw = request(srv, "GET", "/version", headers=f"X-Big: {'a' * 12_000}\r\n")
    async with await srv.raw_tls() as stream:
        for start in range(0, len(raw), 1000):
            await stream.send_all(raw[start:start + 1000])
            await trio.testing.wait_all_tasks_blocked()
        assert (await read_answers(stream, 1))[0][0].startswith(b"HTTP/1.1 200 OK\r\n")


async def test_the_connection_closes_after_hypercorns_keep_alive_max_requests(https_server):
    srv = https_server
    most = 1000  # Hypercorn's keep_alive_max_requests
    async with await srv.raw_tls() as stream:
        await stream.send_all(request(srv, "GET", "/healthz") * (most + 1))
        received = await read_all(stream)
    answers = received.split(b"HTTP/1.1 200 OK\r\n")[1:]
    assert len(answers) == most
    assert [i for i, answer in enumerate(answers) if b"\r\nconnection: close\r\n" in answer.lower()] == [most - 1]


def test_status_lines_carry_go_reasons_and_a_header_cannot_split_the_head():
    assert status_line(422) == b"HTTP/1.1 422 Unprocessable Entity\r\n"
    assert status_line(599) == b"HTTP/1.1 599 \r\n"  # no reason, as h11 writes one Go has none for
    assert response_head(200, [(b"a", b"1")]) == b"HTTP/1.1 200 OK\r\na: 1\r\n\r\n"
    for bad in (b"x\r\nSet-Cookie: y", b"x\ny", b"x\ry"):
        with pytest.raises(ValueError):
            response_head(200, [(b"a", bad)])
