"""`api.serving.http1` under open-ended input (Hypothesis), on its own: no socket, an echo app behind it.

- However a stream of pipelined requests is cut into reads, the bytes
  written back are the same, and every request gets its answer in order
  (Content-Length and chunked bodies, HEAD, `Expect: 100-continue`,
  answers of known and unknown length).
- Random bytes, alone or behind a good request, never raise and never hang:
  the answer is a status line (400 or 431, after the good request's) or
  nothing, and a refusal asks to close the connection (at once, or at the
  client's close for a request it cut short).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import trio
import trio.testing
from hypercorn.config import Config
from hypercorn.events import Closed, Event, RawData
from hypercorn.trio.task_group import TaskGroup
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ConnectionState
from hypercorn.utils import wrap_app
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.serving.http1 import Http1Protocol

EXAMPLES = settings(max_examples=80, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


async def echo(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Answers what it was asked: method, target, the body's length and digest; `/stream` without a length."""
    if scope["type"] != "http":
        return
    body = b""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    answer = json.dumps({"method": scope["method"], "target": scope["raw_path"].decode() + "?" +
                         scope["query_string"].decode(), "length": len(body),
                         "digest": hashlib.sha256(body).hexdigest()}).encode()
    streamed = scope["path"] == "/stream"
    headers = [(b"content-type", b"application/json")]
    if not streamed:
        headers.append((b"content-length", str(len(answer)).encode()))
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    if streamed:
        await send({"type": "http.response.body", "body": answer[:5], "more_body": True})
        await send({"type": "http.response.body", "body": answer[5:]})
    else:
        await send({"type": "http.response.body", "body": answer})


async def serve(reads: list[bytes]) -> tuple[bytes, bool, bool]:
    """Feed `reads` to one connection's protocol, one read each, then its end once all is answered.

    Returns what it wrote, whether it asked to close before the end, and whether it asked at all.
    """
    config = Config()
    config.include_date_header = False  # the same bytes every time
    written: list[bytes] = []
    closed = False

    async def send(event: Event) -> None:
        nonlocal closed
        if isinstance(event, RawData):
            written.append(event.data)
        elif isinstance(event, Closed):
            closed = True
            await protocol.handle(Closed())

    with trio.fail_after(10):
        async with TaskGroup() as task_group:
            protocol = Http1Protocol(wrap_app(echo, config.wsgi_max_body_size, None), config, WorkerContext(None),
                                     task_group, ConnectionState({}), True, ("127.0.0.1", 1), ("127.0.0.1", 2), send)

            async def read() -> None:
                for data in reads:
                    if closed:
                        return
                    await protocol.handle(RawData(data))

            task_group.spawn(read)
            await trio.testing.wait_all_tasks_blocked()
            asked_to_close = closed
            if not closed:
                await protocol.handle(RawData(b""))
                await protocol.handle(Closed())
    return b"".join(written), asked_to_close, closed


@st.composite
def requests(draw: st.DrawFn) -> tuple[bytes, int]:
    """A request's bytes, and how many status lines it is answered with (a 100 Continue, then the answer)."""
    method = draw(st.sampled_from(["GET", "HEAD", "DELETE", "POST", "PUT"]))
    target = draw(st.sampled_from(["/a", "/stream", "/a/b%2Fc", "/q?x=1&y=%20"]))
    head = f"{method} {target} HTTP/1.1\r\nHost: h\r\n"
    head += "".join(f"X-{name}: {value}\r\n" for name, value in draw(st.lists(st.tuples(
        st.sampled_from(["A", "B", "Long"]), st.text("abc xyz=;,", max_size=30)), max_size=3)))
    expect = draw(st.booleans())
    if expect:
        head += "Expect: 100-continue\r\n"
    body = draw(st.binary(max_size=300)) if method in ("POST", "PUT") else b""
    if body and draw(st.booleans()):
        sizes = draw(st.lists(st.integers(1, 64), min_size=1, max_size=8))
        parts, at = [], 0
        for size in sizes:
            if at < len(body):
                parts.append(body[at:at + size])
                at += size
        parts.append(body[at:])
        encoded = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts if p) + b"0\r\n\r\n"
        return (head + "Transfer-Encoding: chunked\r\n\r\n").encode() + encoded, 1 + expect
    return (head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body, 1 + expect


def cut(data: bytes, points: list[int]) -> list[bytes]:
    edges = sorted({0, len(data), *(p % (len(data) + 1) for p in points)})
    return [data[a:b] for a, b in zip(edges, edges[1:])]


@EXAMPLES
@given(pipeline=st.lists(requests(), min_size=1, max_size=5), points=st.lists(st.integers(0, 10**6), max_size=12))
def test_however_pipelined_requests_are_cut_into_reads_the_answers_are_the_same(pipeline, points):
    data = b"".join(raw for raw, _ in pipeline)
    whole, whole_closed, _ = trio.run(serve, [data])
    pieces, pieces_closed, _ = trio.run(serve, cut(data, points))
    assert pieces == whole and not whole_closed and not pieces_closed
    assert whole.count(b"HTTP/1.1 ") == sum(lines for _, lines in pipeline)
    assert whole.count(b"HTTP/1.1 200 OK\r\n") == len(pipeline)


@EXAMPLES
@given(good=st.booleans(), garbage=st.binary(min_size=1, max_size=400), points=st.lists(st.integers(0, 500),
                                                                                         max_size=4))
def test_random_bytes_never_raise_nor_hang(good, garbage, points):
    first = b"GET /a HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n" if good else b""
    written, _, asked_to_close = trio.run(serve, cut(first + garbage, points))
    answers = written.split(b"HTTP/1.1 ")[1:]
    assert written == b"" or written.startswith(b"HTTP/1.1 ")
    if good:
        assert answers and answers[0].startswith(b"200 OK\r\n")
    for answer in answers[1 if good else 0:]:
        # garbage may happen to be a request (answered), else it is refused and the connection closes
        assert answer[:4] in (b"200 ", b"100 ", b"400 ", b"431 ")
    if any(answer.startswith((b"400 ", b"431 ")) for answer in answers):
        assert asked_to_close
