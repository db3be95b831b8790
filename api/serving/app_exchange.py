"""One request and its answer between the connection and the app, over HTTP/1.x or one HTTP/2 stream: what
Hypercorn's `HTTPStream` and its trio `TaskGroup.spawn_app` do, with fewer layers.

Why: on every request Hypercorn's stream built an event object for each step (the request, each body
part, its end, the answer's head, body and end, the close) and dispatched it twice (to the stream, then
back to the protocol), and handed the app its body through a trio memory channel (a checkpoint per
send and per receive) behind a wrapper task. That machinery was about a tenth of a create's Python
calls on this server's own HTTP/1.1 layer (issue 41's profile: the channel's sends and receives, the
stream's `handle` and `app_send`, the protocol's `stream_send`), and as much of an HTTP/2 GET's.

Contract: a protocol makes one `AppExchange(sink, app, config, task_group, scheme, client, server)` per
request (`Http1Protocol` per request, `Http2Protocol` per stream, the stream its sink) and calls
`begin(method, raw_target, http_version, headers, state)` with its head (the app's task is spawned in
the connection's task group, from the connection's task, so that it sees its context), `body(data)` per
part, `end()` once read whole, and `close()` when the exchange is over (its answer done, the stream
reset, or the client gone). The app gets Hypercorn's scope (the same keys and values; HTTP/2 and 3 offer
the trailers, push and early hints extensions) and ASGI events, in order, at most
`config.max_app_queue_size` waiting (the reading waits for room, as on the channel); once closed the
app's `receive` gives `http.disconnect` after what was queued. The app's messages go to the sink
(`AnswerSink`): `start_answer(status, headers)`, `write_answer(data)`, `end_answer()` and
`exchange_done()`, and over HTTP/2 (a `StreamSink`) `informational(status, headers)` (an early hint, 103) and
`write_trailers(headers)`, with `HTTPStream`'s rules: a body is suppressed for HEAD, 1xx, 204 and 304;
an app that ends before its answer's head is answered 500; trailers are sent only to a request with
`te: trailers`, a trailers message before any head starting a 200 answer; a push is checked (its path a
str, its headers valid) and given no stream (neither Hypercorn's h2 protocol here nor this server's
pushes: `api.serving.http2`); a message out of turn (or one HTTP/1.x has not) raises Hypercorn's
`UnexpectedMessageError` into the app; an app's error is logged through `config.log` as Hypercorn logs
it; the access log is written as Hypercorn writes it.

Departures: the app's `receive` does not checkpoint when an event is already queued (trio's channel
did); it waits, cancellably, when none is. Trailers alone, to a request without `te: trailers`, end the
answer as Hypercorn's do, and are access-logged without a response, where Hypercorn's stream raises an
`AttributeError` into the app (its answer's head unset).

Internal to `api.serving`: imported by its modules only.
"""

from __future__ import annotations

from collections import deque
from time import time
from typing import Any, Protocol, cast
from urllib.parse import unquote

import trio

from api.serving.hypercorn_internals import (AppWrapper, Config, Request, TaskGroup, UnexpectedMessageError,
                                             build_and_validate_headers, suppress_body, valid_server_name)

__all__ = ["AnswerSink", "AppExchange", "StreamSink"]

# The exchange's states, as HTTPStream's ASGIHTTPState: before the answer's head, during its body, waiting for
# trailers, done.
_REQUEST, _RESPONSE, _TRAILERS, _CLOSED = "REQUEST", "RESPONSE", "TRAILERS", "CLOSED"


#: The versions whose answers may carry trailers, pushes and early hints (HTTPStream's sets: all three alike).
_MULTIPLEXED = frozenset({"2", "3"})


class AnswerSink(Protocol):
    """What the exchange writes an answer to: `Http1Protocol`'s framing, or an HTTP/2 stream's."""

    async def start_answer(self, status: int, headers: list[tuple[bytes, bytes]]) -> None: ...
    async def write_answer(self, data: bytes) -> None: ...
    async def end_answer(self) -> None: ...
    async def exchange_done(self) -> None: ...


class StreamSink(AnswerSink, Protocol):
    """An HTTP/2 stream's framing: what an HTTP/1.x sink has, and the messages only HTTP/2 carries."""

    async def informational(self, status: int, headers: list[tuple[bytes, bytes]]) -> None: ...
    async def write_trailers(self, headers: list[tuple[bytes, bytes]]) -> None: ...


class _Inbox:
    """The app's ASGI receive events in order, at most `bound` waiting: the reading side waits for room."""

    __slots__ = ("_events", "_bound", "_arrived", "_taken")

    def __init__(self, bound: int) -> None:
        self._events: deque[dict[str, Any]] = deque()
        self._bound = max(1, bound)
        self._arrived = trio.lowlevel.ParkingLot()
        self._taken = trio.lowlevel.ParkingLot()

    async def put(self, event: dict[str, Any]) -> None:
        while len(self._events) >= self._bound:
            await self._taken.park()
        self._events.append(event)
        if self._arrived:
            self._arrived.unpark()

    async def receive(self) -> dict[str, Any]:
        while not self._events:
            await self._arrived.park()
        event = self._events.popleft()
        if self._taken:
            self._taken.unpark()
        return event


class AppExchange:
    """One request's exchange with the app (see the module doc)."""

    __slots__ = ("sink", "app", "config", "task_group", "scheme", "client", "server", "scope", "state",
                 "closed", "started", "response", "suppressed", "trailers", "inbox")

    def __init__(self, sink: AnswerSink, app: AppWrapper, config: Config, task_group: TaskGroup, scheme: str,
                 client: tuple[str, int] | None, server: tuple[str, int] | None) -> None:
        self.sink, self.app, self.config, self.task_group = sink, app, config, task_group
        self.scheme, self.client, self.server = scheme, client, server
        self.scope: dict[str, Any] = {}
        self.state = _REQUEST
        self.closed = False
        self.started = 0.0
        self.response: dict[str, Any] | None = None  # the answer's head, once sent (for the access log)
        self.suppressed = False
        self.trailers = False
        self.inbox: _Inbox | None = None

    # -- from the connection --
    async def begin(self, method: str, raw_target: bytes, http_version: str, headers: list[tuple[bytes, bytes]],
                    state: Any) -> None:
        """The request's head: the app is started (or, for a host not served, a 404 sent: Hypercorn's own
        check, its Request event built only when server names are configured)."""
        self.started = time()
        path, _, query_string = raw_target.partition(b"?")
        self.scope = {
            "type": "http", "http_version": http_version, "asgi": {"spec_version": "2.1", "version": "3.0"},
            "method": method, "scheme": self.scheme, "path": unquote(path.decode("ascii")), "raw_path": path,
            "query_string": query_string, "root_path": self.config.root_path, "headers": headers,
            "client": self.client, "server": self.server, "state": state.copy(), "extensions": {},
        }
        if http_version in _MULTIPLEXED:
            self.scope["extensions"].update({"http.response.trailers": {}, "http.response.push": {},
                                             "http.response.early_hint": {}})
        if not self.config.server_names or valid_server_name(self.config, Request(
                stream_id=1, headers=headers, http_version=http_version, method=method, raw_path=raw_target,
                state=state)):
            self.inbox = _Inbox(self.config.max_app_queue_size)
            self.task_group.spawn(self._run_app)
        else:
            await self._send_error(404)
            self.closed = True

    async def body(self, data: bytes) -> None:
        if not self.closed and self.inbox is not None:
            await self.inbox.put({"type": "http.request", "body": bytes(data), "more_body": True})

    async def end(self) -> None:
        if not self.closed and self.inbox is not None:
            await self.inbox.put({"type": "http.request", "body": b"", "more_body": False})

    async def close(self) -> None:
        """The exchange is over (its answer done, or the client gone): the app hears `http.disconnect`."""
        if self.closed:
            return
        self.closed = True
        if self.state != _CLOSED:
            await self.config.log.access(self.scope, None, time() - self.started)
        if self.inbox is not None:
            await self.inbox.put({"type": "http.disconnect"})

    # -- the app --
    async def _run_app(self) -> None:
        # Hypercorn's trio `_handle`, the app's task: an error is logged, and the exchange ends either way.
        inbox = self.inbox
        assert inbox is not None
        try:
            await self.app(self.scope, inbox.receive, self._app_send, trio.to_thread.run_sync, trio.from_thread.run)
        except trio.Cancelled:
            raise
        except BaseExceptionGroup as error:
            _, other_errors = error.split(trio.Cancelled)
            if other_errors is None:
                raise
            await self.config.log.exception("Error in ASGI Framework")
        except Exception:
            await self.config.log.exception("Error in ASGI Framework")
        finally:
            await self._app_send(None)

    async def _app_send(self, message: dict[str, Any] | None) -> None:
        if message is None:  # the app has finished
            if not self.closed:
                if self.state == _REQUEST:
                    await self._send_error(500)
                await self.sink.exchange_done()
            return
        kind = message["type"]
        if kind == "http.response.start" and self.state == _REQUEST:
            headers = build_and_validate_headers(message.get("headers", []))
            status = int(message["status"])
            self.response, self.suppressed = message, suppress_body(self.scope["method"], status)
            self.trailers = bool(message.get("trailers", False))
            await self.sink.start_answer(status, headers)
            self.state = _RESPONSE
        elif kind == "http.response.body" and self.state == _RESPONSE:
            body = message.get("body", b"")
            if not self.suppressed and body != b"":
                await self.sink.write_answer(bytes(body))
            if not message.get("more_body", False):
                if self.trailers:
                    self.state = _TRAILERS
                else:
                    await self._send_closed()
        elif self.scope["http_version"] in _MULTIPLEXED:
            await self._multiplexed_send(kind, message)
        else:
            raise UnexpectedMessageError(self.state, kind)

    async def _multiplexed_send(self, kind: str, message: dict[str, Any]) -> None:
        """HTTP/2's (and 3's) messages: a push, an early hint, trailers (`HTTPStream`'s rules)."""
        sink = cast(StreamSink, self.sink)
        if kind == "http.response.push":
            if not isinstance(message["path"], str):
                raise TypeError(f"{message['path']} should be a str")
            build_and_validate_headers(message["headers"])  # checked as Hypercorn checks it; pushed nowhere
        elif kind == "http.response.early_hint" and self.state == _REQUEST:
            await sink.informational(103, [(b"link", bytes(link).strip()) for link in message["links"]])
        elif kind == "http.response.trailers" and self.state in (_REQUEST, _TRAILERS):
            if any(name == b"te" and value == b"trailers" for name, value in self.scope["headers"]):
                headers = build_and_validate_headers(message["headers"])
                if self.state == _REQUEST:  # trailers alone: a 200 whose head is these fields
                    self.response = {"type": "http.response.start", "status": 200, "headers": headers}
                    await self.sink.start_answer(200, headers)
                    self.state = _TRAILERS
                else:
                    await sink.write_trailers(headers)
            if not message.get("more_trailers", False):
                await self._send_closed()
        else:
            raise UnexpectedMessageError(self.state, kind)

    async def _send_closed(self) -> None:
        await self.sink.end_answer()
        self.state = _CLOSED
        await self.config.log.access(self.scope, self.response, time() - self.started)
        await self.sink.exchange_done()

    async def _send_error(self, status: int) -> None:
        await self.sink.start_answer(status, [(b"content-length", b"0"), (b"connection", b"close")])
        await self.sink.end_answer()
        self.state = _CLOSED
        await self.config.log.access(self.scope, {"status": status, "headers": []}, time() - self.started)
