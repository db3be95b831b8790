"""HTTP/1.1 on one connection: what Hypercorn's h11 protocol does, parsed by llhttp (httptools), framed here.

Why: h11, the pure-Python state machine Hypercorn speaks HTTP/1.1 with, was
the largest single cost of a request in the serving thread after trio itself
(its events and header checks: 7% of a create's CPU, sampled). llhttp, the
parser under Node.js and uvicorn (and under this server's etcd client,
`runtime.server.storage.etcd.http`), parses a request in C; an answer's head is a
few bytes to write, with Go's reason phrase, as kube-apiserver's status
lines carry (`HTTP/1.1 404 Not Found`; h11 writes none).

Contract: `Http1Protocol` stands where Hypercorn's `H11Protocol` stands
(`api.serving.hypercorn_internals.Connection` puts it there) and gives the app, through an
`api.serving.app_exchange.AppExchange` per request (what Hypercorn's `HTTPStream` does), the ASGI
events h11's gave:
- One request at a time: a request pipelined behind another is read once
  that one's answer is done. After an answer the connection stays open when
  the request was read to its end, the answer sent to its end, and neither
  side asked to close (`Connection: close`, any HTTP/1.0 request, an answer
  cut short, the server stopping, `keep_alive_max_requests` answered);
  else it closes.
- `Expect: 100-continue` (HTTP/1.1) is answered `100 Continue` at once.
- The client's close ends the connection's reading, and the answer in
  progress with it (the app is told `http.disconnect`), as with h11 (a
  request pipelined before the close begins only once the answer before it
  is done, and that answer is not cut).
- An answer with a Content-Length goes out in one write, its head with its
  body (or its end); one without is chunked for HTTP/1.1, and ends with the
  connection for HTTP/1.0; answers to HEAD, and 1xx, 204 and 304, have no body.
- A malformed request (llhttp's strict rules; an HTTP/1.1 request without
  one Host) is answered 400 with `Connection: close` unless its answer has
  begun, and the connection closes; so is a request cut short by the
  client's close; what llhttp holds incomplete (a head, a trailer, a chunk's
  line) past `h11_max_incomplete_size` bytes (16 KiB, Hypercorn's bound of
  an incomplete h11 event) is answered 431: counted over the reads that move
  no request on, from the first (a head that begins after another request in
  one read counts from the next read). A chunked body's trailers are dropped,
  as Hypercorn drops h11's.

Departures from Hypercorn's h11: an `Upgrade` request (websocket, h2c) is
served as plain HTTP/1.1, as RFC 9110 lets a server do (this server serves
no websocket; HTTP/2 comes by TLS's ALPN), and one with a body is a 400;
HTTP/2's prior-knowledge preface on an HTTP/1.1 connection is a 400.

Internal to `api.serving`: imported by its modules only.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Awaitable, Callable, NamedTuple

import httptools

from api.serving.app_exchange import AppExchange
from api.serving.hypercorn_internals import (AppWrapper, Closed, Config, ConnectionState, Event, RawData, TaskGroup,
                                             Updated, WorkerContextType as WorkerContext)

__all__ = ["Http1Protocol", "response_head", "status_line"]

#: Go's `http.StatusText` (net/http/status.go), which kube-apiserver's status lines carry; Python's
#: `HTTPStatus` words some otherwise (414, 418) and its newer versions more (413, 422).
_GO_STATUS_TEXT = {
    100: "Continue", 101: "Switching Protocols", 102: "Processing", 103: "Early Hints",
    200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information", 204: "No Content",
    205: "Reset Content", 206: "Partial Content", 207: "Multi-Status", 208: "Already Reported", 226: "IM Used",
    300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
    305: "Use Proxy", 307: "Temporary Redirect", 308: "Permanent Redirect",
    400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
    405: "Method Not Allowed", 406: "Not Acceptable", 407: "Proxy Authentication Required",
    408: "Request Timeout", 409: "Conflict", 410: "Gone", 411: "Length Required", 412: "Precondition Failed",
    413: "Request Entity Too Large", 414: "Request URI Too Long", 415: "Unsupported Media Type",
    416: "Requested Range Not Satisfiable", 417: "Expectation Failed", 418: "I'm a teapot",
    421: "Misdirected Request", 422: "Unprocessable Entity", 423: "Locked", 424: "Failed Dependency",
    425: "Too Early", 426: "Upgrade Required", 428: "Precondition Required", 429: "Too Many Requests",
    431: "Request Header Fields Too Large", 451: "Unavailable For Legal Reasons",
    500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
    504: "Gateway Timeout", 505: "HTTP Version Not Supported", 506: "Variant Also Negotiates",
    507: "Insufficient Storage", 508: "Loop Detected", 510: "Not Extended", 511: "Network Authentication Required",
}
_STATUS_LINES = {code: f"HTTP/1.1 {code} {text}\r\n".encode() for code, text in _GO_STATUS_TEXT.items()}

# What the parser found, queued in order until served: a request's head, a part of its body, its end,
# the connection's end, a malformed request (its status).
_HEAD, _BODY, _END, _EOF, _ERROR = range(5)
# How an answer's body is framed.
_LENGTH, _CHUNKED, _UNTIL_CLOSE, _NO_BODY = range(4)


class _Head(NamedTuple):
    """A request's head as llhttp parsed it."""

    method: bytes
    target: bytes
    version: str
    headers: list[tuple[bytes, bytes]]  # names lower-cased, values stripped, as h11 gives them
    keep_alive: bool                    # llhttp's reading of the version and `Connection`


def status_line(code: int) -> bytes:
    """`HTTP/1.1 <code> <Go's reason>\\r\\n`; no reason for a code Go has none for (as h11 writes)."""
    return _STATUS_LINES.get(code) or b"HTTP/1.1 %d \r\n" % code


def response_head(code: int, headers: list[tuple[bytes, bytes]]) -> bytes:
    """An answer's head: its status line, `headers` as given, the blank line. Raises ValueError for a
    header holding a line break."""
    lines = b"".join([b"%s: %s\r\n" % (name, value) for name, value in headers])
    # A name or value holding a line break would split the head (h11 refuses those too).
    if lines.count(b"\n") != len(headers) or lines.count(b"\r") != len(headers):
        raise ValueError("a response header holds a line break")
    return status_line(code) + lines + b"\r\n"


class Http1Protocol:
    """One HTTP/1.1 connection's requests and answers (see the module docstring)."""

    def __init__(self, app: AppWrapper, config: Config, context: WorkerContext, task_group: TaskGroup,
                 connection_state: ConnectionState, ssl: bool, client: tuple[str, int] | None,
                 server: tuple[str, int] | None, send: Callable[[Event], Awaitable[None]]) -> None:
        self.app, self.config, self.context, self.task_group = app, config, context, task_group
        self.connection_state, self.ssl, self.client, self.server, self.send = (
            connection_state, ssl, client, server, send)
        self.can_read = context.event_class()  # set when an answer is done: a pipelined request may go on
        self.stream: AppExchange | None = None
        self.keep_alive_requests = 0
        self._parser = httptools.HttpRequestParser(self)
        self._found: deque[tuple[int, Any]] = deque()
        self._closed = False
        self._failed = False       # the parser refused what came: nothing after it is read
        # The request being parsed.
        self._target = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self._in_head = False
        self._mid_message = False  # from a request's first byte to its end
        self._progress = 0         # heads, body parts and ends parsed so far
        self._stalled = 0          # bytes read since a read last moved a request on (see `_read`)
        # The exchange being served.
        self._request_done = False   # its request was read to its end
        self._keep_alive = False     # neither side asked to close
        self._http10 = False
        self._head_request = False
        self._answering = False      # its answer's head was given
        self._framing = _LENGTH
        self._held = b""             # an answer's head of known length, sent with its first part
        self._answer_done = False

    # -- llhttp's callbacks (during feed_data) --
    def on_message_begin(self) -> None:
        self._target, self._headers, self._in_head = b"", [], True
        self._mid_message = True

    def on_url(self, url: bytes) -> None:
        self._target += url

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._in_head:  # else a chunked body's trailer: dropped, as Hypercorn drops h11's
            self._headers.append((name.lower(), value.strip(b" \t")))

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._progress += 1
        parser = self._parser
        self._found.append((_HEAD, _Head(parser.get_method(), self._target, parser.get_http_version(), self._headers,
                                         parser.should_keep_alive())))

    def on_body(self, body: bytes) -> None:
        self._progress += 1
        self._found.append((_BODY, body))

    def on_message_complete(self) -> None:
        self._mid_message = False
        self._progress += 1
        self._found.append((_END, None))

    # -- Hypercorn's protocol interface --
    async def initiate(self) -> None:
        pass

    async def handle(self, event: Event) -> None:
        if isinstance(event, RawData):
            self._read(event.data)
            await self._serve_found()
        elif isinstance(event, Closed):
            self._closed = True
            await self.can_read.set()
            await self._close_stream()

    # -- what the exchange (`AppExchange`) writes: the answer's head, its body's parts (`write_answer`), its end
    # (`end_answer`), the exchange's end (`exchange_done`) --
    async def start_answer(self, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        if status < 200:  # 1xx: a head alone, at once (the client may wait for it)
            await self.send(RawData(response_head(status, [*headers, *self.config.response_headers("h11")])))
        else:
            await self._answer(status, headers)

    # -- reading --
    def _read(self, data: bytes) -> None:
        if self._failed:
            return
        if not data:  # the client closed: a request it cut short is malformed
            self._found.append((_ERROR, 400) if self._mid_message else (_EOF, None))
            return
        progress = self._progress
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade as upgrade:
            self._upgrade_as_plain(data[upgrade.args[0]:])
        except httptools.HttpParserError:
            self._fail(400)
        else:
            # What llhttp holds back (a head, a trailer, a chunk's line still incomplete) is bounded as h11
            # bounds an incomplete event: reads that move no request on (no head, body part or end) count
            # whole; a read that does resets the count (what it holds after that is known only by the next).
            if self._progress != progress or not self._mid_message:
                self._stalled = 0
            else:
                self._stalled += len(data)
                if self._stalled > self.config.h11_max_incomplete_size:
                    self._fail(431)

    def _upgrade_as_plain(self, rest: bytes) -> None:
        # llhttp stops at an Upgrade request's head: serve it as plain HTTP/1.1 and parse what follows afresh.
        found = self._found
        if len(found) < 2 or found[-1][0] != _END or found[-2][0] != _HEAD:
            self._fail(400)  # llhttp stopped elsewhere than at a whole request's end (CONNECT)
            return
        if any(name in (b"content-length", b"transfer-encoding") and value not in (b"0", b"")
               for name, value in found[-2][1].headers):
            found.pop()  # its body was not parsed: the request cannot be served
            found.pop()
            self._fail(400)
            return
        self._parser = httptools.HttpRequestParser(self)
        if rest:
            self._read(rest)

    def _fail(self, status: int) -> None:
        self._failed = True
        self._found.append((_ERROR, status))

    async def _serve_found(self) -> None:
        found = self._found
        while found and not self._closed:
            kind, value = found[0]
            if kind == _HEAD or (kind == _ERROR and self._request_done):
                if self.stream is not None:  # behind an answer in progress: wait for its end (h11's PAUSED)
                    await self.can_read.clear()
                    await self.can_read.wait()
                    continue
            found.popleft()
            if kind == _HEAD:
                await self._begin(value)
            elif kind == _BODY:
                if self.stream is not None:
                    await self.stream.body(value)
            elif kind == _END:
                self._request_done = True
                if self.stream is not None:
                    await self.stream.end()
            elif kind == _EOF:  # the client is gone: the connection's reading ends, an answer in progress with it
                return
            elif kind == _ERROR:
                if self.stream is None or not self._answering:
                    await self._send_error(value)
                await self.send(Closed())
                return

    async def _begin(self, head: _Head) -> None:
        method, version, headers = head.method, head.version, head.headers
        hosts = sum(1 for name, _ in headers if name == b"host")
        if hosts > 1 or (hosts == 0 and version == "1.1"):  # RFC 9112 3.2, as h11 and Go's net/http
            self._found.clear()
            self._request_done = False
            self._fail(400)
            return
        await self.send(Updated(idle=False))
        self._request_done, self._answering, self._answer_done, self._held = False, False, False, b""
        self._http10 = version != "1.1"
        self._keep_alive = head.keep_alive and not self._http10  # h11 keeps no HTTP/1.0 connection alive
        self._head_request = method == b"HEAD"
        self.stream = AppExchange(self, self.app, self.config, self.task_group, "https" if self.ssl else "http",
                                  self.client, self.server)
        await self.stream.begin(method.decode("ascii").upper(), head.target, version, headers, self.connection_state)
        self.keep_alive_requests += 1
        await self.context.mark_request()
        if not self._http10 and any(name == b"expect" and value.lower() == b"100-continue"
                                    for name, value in headers):
            await self.send(RawData(response_head(100, self.config.response_headers("h11"))))

    # -- answering --
    async def _answer(self, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        headers = [*headers, *self.config.response_headers("h11")]
        if self.keep_alive_requests >= self.config.keep_alive_max_requests:
            headers.append((b"connection", b"close"))
        length = chunked = False
        for name, value in headers:
            lowered = name.lower()
            if lowered == b"content-length":
                length = True
            elif lowered == b"transfer-encoding":
                chunked = True
            elif lowered == b"connection" and b"close" in value.lower():
                self._keep_alive = False
        # h11's framing: a body of unknown length is chunked for HTTP/1.1, runs to the close for HTTP/1.0;
        # a HEAD's head says what a GET's would, a 204's or 304's is sent as given.
        unknown_length = (chunked or not length) and status not in (204, 304)
        if status in (204, 304) or self._head_request:
            framing = _NO_BODY
        elif not unknown_length:
            framing = _LENGTH
        elif self._http10:
            framing, self._keep_alive = _UNTIL_CLOSE, False
        else:
            framing = _CHUNKED
        if unknown_length:
            headers = [(n, v) for n, v in headers if n.lower() not in (b"content-length", b"transfer-encoding")]
            if not self._http10:
                headers.append((b"Transfer-Encoding", b"chunked"))
        if not self._keep_alive:
            headers = [(n, v) for n, v in headers if n.lower() != b"connection"]
            headers.append((b"Connection", b"close"))
        self._framing, self._answering = framing, True
        head = response_head(status, headers)
        if framing in (_LENGTH, _NO_BODY):
            self._held = head  # sent with the body's first part, or its end: one write
        else:
            await self.send(RawData(head))  # a stream (a watch): its head now

    async def write_answer(self, data: bytes) -> None:
        if not data or self._framing == _NO_BODY:
            return
        if self._framing == _CHUNKED:
            data = b"%x\r\n%s\r\n" % (len(data), data)
        if self._held:
            data, self._held = self._held + data, b""
        await self.send(RawData(data))

    async def end_answer(self) -> None:
        data, self._held = self._held + (b"0\r\n\r\n" if self._framing == _CHUNKED else b""), b""
        self._answer_done = True
        if data:
            await self.send(RawData(data))

    async def _send_error(self, status: int) -> None:
        headers = [(b"content-length", b"0"), (b"connection", b"close"), *self.config.response_headers("h11")]
        await self.send(RawData(response_head(status, headers)))

    async def exchange_done(self) -> None:
        # Decided before any checkpoint: once the stream is gone, a pipelined request may begin.
        keep = (self._request_done and self._answer_done and self._keep_alive
                and not self.context.terminated.is_set())
        if self._held:  # an answer that never sent its body: its head goes before the close
            held, self._held = self._held, b""
            await self.send(RawData(held))
        await self._close_stream()
        await self.can_read.set()
        await self.send(Updated(idle=True) if keep else Closed())

    async def _close_stream(self) -> None:
        if self.stream is not None:
            # The app hears the end (its http.disconnect queued) before a request read meanwhile may begin.
            await self.stream.close()
            self.stream = None
