"""An answer of known length leaves in one write (one TLS record); a stream's head leaves at once
(`api.serving.listener`).

Hypercorn writes an answer's head, body and end separately: three TLS
records and system calls where one does. Over raw TLS a read returns one
record at most, so the first read after a request holds the whole answer
only when the server wrote it whole.
"""

from __future__ import annotations

import json

import pytest
import trio

from tests.support.server import Server

pytestmark = pytest.mark.stores("memory")  # the HTTP layer's: any store answers the same


async def first_read(srv: Server, request: bytes) -> bytes:
    """What one read returns after `request` is sent over a fresh TLS connection."""
    async with await srv.raw_tls() as stream:
        await stream.send_all(request)
        with trio.fail_after(30):
            return await stream.receive_some(1 << 20)


def whole(answer: bytes) -> bool:
    head, _, body = answer.partition(b"\r\n\r\n")
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    return len(body) == length


async def test_an_answer_with_a_length_comes_in_one_write(https_server):
    srv = https_server
    auth = f"Authorization: Bearer {srv.token}\r\n".encode()
    body = json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "one-write"}}).encode()
    requests = [
        b"GET /api/v1/namespaces/default HTTP/1.1\r\nHost: x\r\n" + auth + b"\r\n",
        b"POST /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + auth +
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body),
        b"GET /api/v1/namespaces/nope HTTP/1.1\r\nHost: x\r\n" + auth + b"\r\n",
    ]
    answers = [await first_read(srv, request) for request in requests]
    assert [a.split(b"\r\n", 1)[0] for a in answers] == [b"HTTP/1.1 200 OK", b"HTTP/1.1 201 Created",
                                                          b"HTTP/1.1 404 Not Found"]
    assert all(whole(a) for a in answers), answers


async def test_a_streamed_answer_sends_its_head_before_any_event(https_server):
    srv = https_server
    auth = f"Authorization: Bearer {srv.token}\r\n".encode()
    async with srv.client() as c:
        rv = (await c.get("/api/v1/namespaces")).json()["metadata"]["resourceVersion"]
    # A watch from the newest revision: no event is due, yet the head (chunked, no length) comes.
    answer = await first_read(srv, f"GET /api/v1/namespaces?watch=1&resourceVersion={rv} HTTP/1.1\r\n"
                                   f"Host: x\r\n".encode() + auth + b"\r\n")
    head = answer.split(b"\r\n\r\n", 1)[0].lower()
    assert head.startswith(b"http/1.1 200 ok\r\n") and b"transfer-encoding: chunked" in head
