"""`api.serving.http1_exchange.Http1Exchange` does for HTTP/1.x what Hypercorn's `HTTPStream` did: the same
scope, the same events to the app, the same answer to the protocol, whatever the app does.

Each case drives both with the same request (its head, its body's parts, its end) and an app that records
its scope and what it receives; the protocol's side is a recorder of the answer's head, parts, end and
the exchange's end, which closes the exchange as `Http1Protocol` does. Then the app's own bound on
waiting events (`config.max_app_queue_size`): the reading waits for room.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

import pytest
import trio
import trio.testing
from hypercorn.config import Config
from hypercorn.protocol.events import Body, EndBody, Request, Response, StreamClosed
from hypercorn.protocol.http_stream import HTTPStream
from hypercorn.trio.task_group import TaskGroup
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ConnectionState
from hypercorn.utils import wrap_app

from api.serving.http1_exchange import Http1Exchange

CLIENT, SERVER = ("127.0.0.1", 50000), ("127.0.0.1", 6443)
HEADERS = [(b"host", b"miniplane"), (b"content-length", b"6")]

App = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


async def _read_body(receive: Any, seen: list[Any]) -> None:
    while True:
        event = await receive()
        seen.append(event)
        if event["type"] != "http.request" or not event.get("more_body"):
            return


def _app(behaviour: str, seen: list[Any]) -> App:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append(dict(scope, state=dict(scope["state"])))
        if behaviour == "raises before its answer":
            raise RuntimeError("broken")
        if behaviour == "ends without an answer":
            return
        if behaviour == "sends a body first":
            try:
                await send({"type": "http.response.body", "body": b"x"})
            except Exception as exc:  # Hypercorn's UnexpectedMessageError, raised into the app
                seen.append(type(exc).__name__)
            return
        await _read_body(receive, seen)
        status = 204 if behaviour == "answers 204 with a body" else 200
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b" text/plain ")],
                    "trailers": behaviour == "asks for trailers"})
        await send({"type": "http.response.body", "body": b"part-", "more_body": True})
        if behaviour == "raises mid-answer":
            raise RuntimeError("broken")
        await send({"type": "http.response.body", "body": b"", "more_body": True})
        await send({"type": "http.response.body", "body": bytearray(b"end"), "more_body": False})
        if behaviour == "waits for the disconnect":
            seen.append(await receive())
    return app


BEHAVIOURS = ["answers", "answers 204 with a body", "raises before its answer", "ends without an answer",
              "sends a body first", "raises mid-answer", "asks for trailers", "waits for the disconnect"]


def _config(server_names: tuple[str, ...]) -> Config:
    config = Config()
    config.server_names = list(server_names)
    return config


async def _through_hypercorn(app: App, method: str, server_names: tuple[str, ...] = ()) -> list[Any]:
    """What Hypercorn's HTTPStream gives the protocol, as (step, ...) tuples."""
    config, answer = _config(server_names), []
    async with TaskGroup() as task_group:
        stream: HTTPStream | None = None

        async def send(event: Any) -> None:
            if isinstance(event, Response):
                answer.append(("start", event.status_code, list(event.headers)))
            elif isinstance(event, Body):
                answer.append(("body", bytes(event.data)))
            elif isinstance(event, EndBody):
                answer.append(("end",))
            elif isinstance(event, StreamClosed):
                answer.append(("done",))
                assert stream is not None
                await stream.handle(StreamClosed(stream_id=1))
        stream = HTTPStream(wrap_app(app, config.wsgi_max_body_size, None), config, WorkerContext(None), task_group,
                            True, CLIENT, SERVER, send, 1)
        await stream.handle(Request(stream_id=1, headers=HEADERS, http_version="1.1", method=method,
                                    raw_path=b"/apis/a%20b?x=1&y", state=ConnectionState({"k": "v"})))
        await stream.handle(Body(stream_id=1, data=b"abc"))
        await stream.handle(Body(stream_id=1, data=b"def"))
        await stream.handle(EndBody(stream_id=1))
        await trio.testing.wait_all_tasks_blocked()
        await stream.handle(StreamClosed(stream_id=1))  # the client's close, if the answer did not end it
    return answer


class _Recorder:
    """The protocol's side of an `Http1Exchange`: records its calls, closes it when done."""

    def __init__(self) -> None:
        self.answer: list[Any] = []
        self.exchange: Http1Exchange | None = None

    async def start_answer(self, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        self.answer.append(("start", status, list(headers)))

    async def write_answer(self, data: bytes) -> None:
        self.answer.append(("body", data))

    async def end_answer(self) -> None:
        self.answer.append(("end",))

    async def exchange_done(self) -> None:
        self.answer.append(("done",))
        assert self.exchange is not None
        await self.exchange.close()


async def _through_the_exchange(app: App, method: str, server_names: tuple[str, ...] = ()) -> list[Any]:
    config, sink = _config(server_names), _Recorder()
    async with TaskGroup() as task_group:
        exchange = sink.exchange = Http1Exchange(sink, wrap_app(app, config.wsgi_max_body_size, None), config,
                                                 task_group, "https", CLIENT, SERVER)
        await exchange.begin(method, b"/apis/a%20b?x=1&y", "1.1", HEADERS, ConnectionState({"k": "v"}))
        await exchange.body(b"abc")
        await exchange.body(b"def")
        await exchange.end()
        await trio.testing.wait_all_tasks_blocked()
        await exchange.close()
    return sink.answer


@pytest.mark.parametrize("method", ["POST", "HEAD"])
@pytest.mark.parametrize("behaviour", BEHAVIOURS)
async def test_the_exchange_gives_the_app_and_the_protocol_what_hypercorns_stream_gave(behaviour: str,
                                                                                      method: str) -> None:
    theirs: list[Any] = []
    ours: list[Any] = []
    expected = await _through_hypercorn(_app(behaviour, theirs), method)
    got = await _through_the_exchange(_app(behaviour, ours), method)
    assert ours == theirs  # the scope and every event received, in order
    assert got == expected  # the answer's head, parts, end and the exchange's end
    assert ours[0]["path"] == "/apis/a b" and ours[0]["query_string"] == b"x=1&y"


@pytest.mark.parametrize("server_names", [("miniplane",), ("elsewhere",)])
async def test_a_host_is_served_or_answered_404_by_the_server_names_as_hypercorn_decides(
        server_names: tuple[str, ...]) -> None:
    theirs: list[Any] = []
    ours: list[Any] = []
    expected = await _through_hypercorn(_app("answers", theirs), "POST", server_names)
    got = await _through_the_exchange(_app("answers", ours), "POST", server_names)
    assert (ours, got) == (theirs, expected)
    assert (got[0][1] == 404) == (server_names == ("elsewhere",))


async def test_an_app_reading_nothing_holds_the_reading_at_its_queue_bound() -> None:
    config = Config()
    config.max_app_queue_size = 2
    received: list[Any] = []
    go = trio.Event()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await go.wait()
        await _read_body(receive, received)

    sink = _Recorder()
    async with TaskGroup() as task_group:
        exchange = sink.exchange = Http1Exchange(sink, wrap_app(app, config.wsgi_max_body_size, None), config,
                                                 task_group, "https", CLIENT, SERVER)
        await exchange.begin("POST", b"/x", "1.1", HEADERS, ConnectionState({}))
        read: list[int] = []

        async def reading() -> None:
            for i, part in enumerate([b"a", b"b", b"c"]):
                await exchange.body(part)
                read.append(i)
            await exchange.end()
            read.append(3)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(reading)
            await trio.testing.wait_all_tasks_blocked()
            assert read == [0, 1]  # two wait: the third part waits for room
            go.set()
        assert read == [0, 1, 2, 3]
    assert [e["body"] for e in received] == [b"a", b"b", b"c", b""]
