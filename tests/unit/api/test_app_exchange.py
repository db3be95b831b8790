"""`api.serving.app_exchange.AppExchange` does for HTTP/1.1 and HTTP/2 what Hypercorn's `HTTPStream` did: the
same scope, the same events to the app, the same answer to the protocol, whatever the app does.

Each case drives both with the same request (its head, its body's parts, its end) and an app that records
its scope and what it receives; the protocol's side is a recorder of the answer's head, parts, 1xx heads,
trailers, end and the exchange's end, which closes the exchange as `Http1Protocol` and `Http2Protocol` do.
HTTP/2's own messages (early hints, trailers, pushes) are sent over both versions: HTTP/1.1 refuses them
as Hypercorn does. A push is a `Request` event from Hypercorn's stream, which its h2 protocol and this
server's drop (neither pushes): it is not recorded. Then the app's own bound on waiting events
(`config.max_app_queue_size`): the reading waits for room.
"""

from __future__ import annotations

import logging
from typing import Any, Awaitable, Callable

import pytest
import trio
import trio.testing
from hypercorn.config import Config
from hypercorn.protocol.events import (Body, EndBody, InformationalResponse, Request, Response, StreamClosed,
                                       Trailers)
from hypercorn.protocol.http_stream import HTTPStream
from hypercorn.trio.task_group import TaskGroup
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ConnectionState
from hypercorn.utils import wrap_app

from api.serving.app_exchange import AppExchange

CLIENT, SERVER = ("127.0.0.1", 50000), ("127.0.0.1", 6443)
HEADERS = [(b"host", b"miniplane"), (b"content-length", b"6")]
TE_TRAILERS = [*HEADERS, (b"te", b"trailers")]
TARGET = b"/apis/a%20b?x=1&y"

App = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


async def _read_body(receive: Any, seen: list[Any]) -> None:
    while True:
        event = await receive()
        seen.append(event)
        if event["type"] != "http.request" or not event.get("more_body"):
            return


#: What an app may send before its answer's head that an exchange may refuse (out of turn, or not HTTP/1.1's).
_BEFORE_THE_HEAD: dict[str, dict[str, Any]] = {
    "sends a body first": {"type": "http.response.body", "body": b"x"},
    "sends an early hint": {"type": "http.response.early_hint", "links": [b" </style.css>; rel=preload "]},
    "pushes": {"type": "http.response.push", "path": "/other", "headers": [(b"Accept", b"*/*")]},
    "pushes a path not a str": {"type": "http.response.push", "path": b"/other", "headers": []},
    "sends trailers alone": {"type": "http.response.trailers", "headers": [(b"X-Sum", b"1")]},
    "sends trailers alone without te": {"type": "http.response.trailers", "headers": [(b"X-Sum", b"1")]},
}
_TRAILERS = [{"type": "http.response.trailers", "headers": [(b"X-Sum", b"1")], "more_trailers": True},
             {"type": "http.response.trailers", "headers": [(b"x-more", b"2")]}]


def _app(behaviour: str, seen: list[Any]) -> App:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append(dict(scope, state=dict(scope["state"])))
        if behaviour == "raises before its answer":
            raise RuntimeError("broken")
        if behaviour == "ends without an answer":
            return
        if behaviour in _BEFORE_THE_HEAD:
            try:
                await send(_BEFORE_THE_HEAD[behaviour])
            except Exception as exc:  # Hypercorn's UnexpectedMessageError (a TypeError), raised into the app
                seen.append(type(exc).__name__)
                return
            if behaviour in ("sends a body first", "sends trailers alone", "sends trailers alone without te"):
                return
        await _read_body(receive, seen)
        status = 204 if behaviour == "answers 204 with a body" else 200
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b" text/plain ")],
                    "trailers": behaviour in ("asks for trailers", "sends trailers", "sends trailers without te")})
        await send({"type": "http.response.body", "body": b"part-", "more_body": True})
        if behaviour == "raises mid-answer":
            raise RuntimeError("broken")
        await send({"type": "http.response.body", "body": b"", "more_body": True})
        await send({"type": "http.response.body", "body": bytearray(b"end"), "more_body": False})
        if behaviour in ("sends trailers", "sends trailers without te"):
            try:
                for message in _TRAILERS:
                    await send(message)
            except Exception as exc:
                seen.append(type(exc).__name__)
        if behaviour == "waits for the disconnect":
            seen.append(await receive())
    return app


BEHAVIOURS = ["answers", "answers 204 with a body", "raises before its answer", "ends without an answer",
              "raises mid-answer", "asks for trailers", "waits for the disconnect", *_BEFORE_THE_HEAD,
              "sends trailers", "sends trailers without te"]


def _headers(behaviour: str) -> list[tuple[bytes, bytes]]:
    return HEADERS if behaviour.endswith("without te") else TE_TRAILERS


def _config(server_names: tuple[str, ...]) -> Config:
    config = Config()
    config.server_names = list(server_names)
    return config


async def _through_hypercorn(app: App, method: str, version: str, headers: list[tuple[bytes, bytes]],
                             server_names: tuple[str, ...] = (),
                             config: Config | None = None) -> list[Any]:
    """What Hypercorn's HTTPStream gives the protocol, as (step, ...) tuples."""
    config, answer = config or _config(server_names), []
    async with TaskGroup() as task_group:
        stream: HTTPStream | None = None

        async def send(event: Any) -> None:
            if isinstance(event, Response):
                answer.append(("start", event.status_code, list(event.headers)))
            elif isinstance(event, InformationalResponse):
                answer.append(("informational", event.status_code, list(event.headers)))
            elif isinstance(event, Body):
                answer.append(("body", bytes(event.data)))
            elif isinstance(event, Trailers):
                answer.append(("trailers", list(event.headers)))
            elif isinstance(event, EndBody):
                answer.append(("end",))
            elif isinstance(event, StreamClosed):
                answer.append(("done",))
                assert stream is not None
                await stream.handle(StreamClosed(stream_id=1))
            else:
                assert isinstance(event, Request)  # a push: dropped by the protocol
        stream = HTTPStream(wrap_app(app, config.wsgi_max_body_size, None), config, WorkerContext(None), task_group,
                            True, CLIENT, SERVER, send, 1)
        await stream.handle(Request(stream_id=1, headers=headers, http_version=version, method=method,
                                    raw_path=TARGET, state=ConnectionState({"k": "v"})))
        await stream.handle(Body(stream_id=1, data=b"abc"))
        await stream.handle(Body(stream_id=1, data=b"def"))
        await stream.handle(EndBody(stream_id=1))
        await trio.testing.wait_all_tasks_blocked()
        await stream.handle(StreamClosed(stream_id=1))  # the client's close, if the answer did not end it
    return answer


class _Recorder:
    """The protocol's side of an `AppExchange`: records its calls, closes it when done."""

    def __init__(self) -> None:
        self.answer: list[Any] = []
        self.exchange: AppExchange | None = None

    async def start_answer(self, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        self.answer.append(("start", status, list(headers)))

    async def informational(self, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        self.answer.append(("informational", status, list(headers)))

    async def write_answer(self, data: bytes) -> None:
        self.answer.append(("body", data))

    async def write_trailers(self, headers: list[tuple[bytes, bytes]]) -> None:
        self.answer.append(("trailers", list(headers)))

    async def end_answer(self) -> None:
        self.answer.append(("end",))

    async def exchange_done(self) -> None:
        self.answer.append(("done",))
        assert self.exchange is not None
        await self.exchange.close()


async def _through_the_exchange(app: App, method: str, version: str, headers: list[tuple[bytes, bytes]],
                                server_names: tuple[str, ...] = (),
                             config: Config | None = None) -> list[Any]:
    config, sink = config or _config(server_names), _Recorder()
    async with TaskGroup() as task_group:
        exchange = sink.exchange = AppExchange(sink, wrap_app(app, config.wsgi_max_body_size, None), config,
                                               task_group, "https", CLIENT, SERVER)
        await exchange.begin(method, TARGET, version, headers, ConnectionState({"k": "v"}))
        await exchange.body(b"abc")
        await exchange.body(b"def")
        await exchange.end()
        await trio.testing.wait_all_tasks_blocked()
        await exchange.close()
    return sink.answer


@pytest.mark.parametrize("version", ["1.1", "2"])
@pytest.mark.parametrize("method", ["POST", "HEAD"])
@pytest.mark.parametrize("behaviour", BEHAVIOURS)
async def test_the_exchange_gives_the_app_and_the_protocol_what_hypercorns_stream_gave(behaviour: str, method: str,
                                                                                      version: str) -> None:
    theirs: list[Any] = []
    ours: list[Any] = []
    expected = await _through_hypercorn(_app(behaviour, theirs), method, version, _headers(behaviour))
    got = await _through_the_exchange(_app(behaviour, ours), method, version, _headers(behaviour))
    if behaviour == "sends trailers alone without te" and version == "2":  # the exchange's departure
        assert theirs.pop() == "AttributeError"  # Hypercorn's, its answer's head unset for the access log
    assert ours == theirs  # the scope and every event received, in order
    assert got == expected  # the answer's head, parts, 1xx heads, trailers, end and the exchange's end
    assert ours[0]["path"] == "/apis/a b" and ours[0]["query_string"] == b"x=1&y"


@pytest.mark.parametrize("version", ["1.1", "2"])
@pytest.mark.parametrize("server_names", [("miniplane",), ("elsewhere",)])
async def test_a_host_is_served_or_answered_404_by_the_server_names_as_hypercorn_decides(
        server_names: tuple[str, ...], version: str) -> None:
    theirs: list[Any] = []
    ours: list[Any] = []
    expected = await _through_hypercorn(_app("answers", theirs), "POST", version, HEADERS, server_names)
    got = await _through_the_exchange(_app("answers", ours), "POST", version, HEADERS, server_names)
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
        exchange = sink.exchange = AppExchange(sink, wrap_app(app, config.wsgi_max_body_size, None), config,
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


@pytest.mark.parametrize("version", ["1.1", "2"])
@pytest.mark.parametrize("behaviour", ["answers", "ends without an answer", "waits for the disconnect",
                                       "sends trailers", "sends trailers alone"])
async def test_the_access_log_is_written_as_hypercorns_stream_writes_it(behaviour: str, version: str) -> None:
    lines = []
    for through in (_through_hypercorn, _through_the_exchange):
        handler = _Lines()
        logger = logging.getLogger(f"test.access.{through.__name__}")
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        config = _config(())
        config.accesslog = logger
        config.access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(H)s'  # its time left out
        try:
            await through(_app(behaviour, []), "POST", version, _headers(behaviour), config=config)
        finally:
            logger.removeHandler(handler)
        lines.append(handler.lines)
    assert lines[0] == lines[1] and len(lines[0]) == 1, lines


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())
