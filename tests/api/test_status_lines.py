"""HTTP/1.1 status lines carry Go's reason phrases, as kube-apiserver's do (`api.serving.listener`).

Over real HTTPS (Hypercorn): HTTP/1.1 clients show the phrase (the Python
Kubernetes client's `ApiException.reason`, httpx's `reason_phrase`, curl),
and Hypercorn alone sends none. The phrases are Go's `http.StatusText`, where
Python's `HTTPStatus` words some otherwise.
"""

from __future__ import annotations

import trio

from tests.support.server import Server

NAMESPACES = "/api/v1/namespaces"


async def head_of(srv: Server, request: bytes) -> bytes:
    """The response head (through the blank line) the server answers `request` with, over raw TLS."""
    async with await srv.raw_tls() as stream:
        await stream.send_all(request)
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = await stream.receive_some()
            assert chunk, f"closed before a whole head: {received!r}"
            received += chunk
        return received.split(b"\r\n\r\n", 1)[0]


async def test_http1_status_lines_carry_go_reason_phrases(https_server):
    srv = https_server
    async with srv.client() as c:
        created = await c.post(NAMESPACES, json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}})
        again = await c.post(NAMESPACES, json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}})
        missing = await c.get(f"{NAMESPACES}/nope")
        invalid = await c.post(NAMESPACES, json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "A"}})
        listed = await c.get(NAMESPACES)
    assert [(r.http_version, r.status_code, r.reason_phrase) for r in (created, again, missing, invalid, listed)] == [
        ("HTTP/1.1", 201, "Created"), ("HTTP/1.1", 409, "Conflict"), ("HTTP/1.1", 404, "Not Found"),
        ("HTTP/1.1", 422, "Unprocessable Entity"), ("HTTP/1.1", 200, "OK")]
    async with srv.client(token=None) as anonymous:
        assert (await anonymous.get("/api/v1/namespaces/a/serviceaccounts")).reason_phrase == "Forbidden"


async def test_the_head_is_whole_after_the_phrase_and_every_response_of_a_connection_gets_one(https_server):
    srv = https_server
    auth = f"Authorization: Bearer {srv.token}\r\n".encode()
    two = (b"GET /api/v1/namespaces/nope HTTP/1.1\r\nHost: x\r\n" + auth + b"\r\n"
           b"GET /version HTTP/1.1\r\nHost: x\r\n" + auth + b"\r\n")
    async with await srv.raw_tls() as stream:
        await stream.send_all(two)
        received = b""
        with trio.fail_after(30):
            while received.count(b"HTTP/1.1 ") < 2 or not received.endswith(b"}"):
                received += await stream.receive_some()
    first, second = received.split(b"HTTP/1.1 ")[1:3]
    assert first.startswith(b"404 Not Found\r\ncontent-type: application/json\r\n")
    assert second.startswith(b"200 OK\r\ncontent-type: application/json\r\n")
    # An interim answer is reasoned too: Expect: 100-continue before a body.
    head = await head_of(srv, b"POST /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n" + auth +
                         b"Content-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 100 Continue\r\n")
