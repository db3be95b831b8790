"""HTTP/2 on one connection (RFC 9113): what Hypercorn's h2 protocol does, its frames read and written here.

Why: an HTTP/2 GET cost twice an HTTP/1.1 one. Hypercorn's protocol drives
the `h2` state machine (an event object per frame, a stream state machine,
its own header checks) and hands every answer to a send task through events
and a priority tree; with trio's hand-offs that was most of the CPU of a
GET, the app a sixteenth of it (py-spy). Here a frame is a 9-byte header
read with `struct`, a request's headers are decoded with `hpack` and checked
once (a block sent again, on this connection or another of the process
with an equal table, not at all: `api.serving.http2_request`), and an
answer is written by its own task, its head with its body in one write,
waiting only when a flow-control window is shut.

Contract: `Http2Protocol` stands where Hypercorn's `H2Protocol` stands
(`api.serving.hypercorn_internals.Connection` puts it there for TLS's ALPN
"h2") and gives the app, through an `api.serving.app_exchange.AppExchange`
per stream (what Hypercorn's `HTTPStream` does), the events h2's gave:
- The server's SETTINGS first (MAX_CONCURRENT_STREAMS and
  MAX_HEADER_LIST_SIZE from the config); the client's preface and SETTINGS
  are checked, and its SETTINGS ACKed; a PING is answered; the client's
  INITIAL_WINDOW_SIZE and MAX_FRAME_SIZE rule what is written.
- A request's fields are checked as RFC 9113 8.2-8.3 says (lower-case
  names, no connection-specific field, pseudo-fields first, once, and the
  ones a request needs; a body as long as its content-length): a
  malformed request is reset (RST_STREAM PROTOCOL_ERROR), the connection
  serving on. Cookie fields are joined into one (8.2.3); `:authority`
  becomes `host`, first, as Hypercorn gives it.
- A request's DATA is given back to the client's windows once read.
- A stream over MAX_CONCURRENT_STREAMS is reset (REFUSED_STREAM until the
  client ACKs the server's SETTINGS, PROTOCOL_ERROR after: as Go does).
- An answer with a Content-Length (or none to carry: HEAD, 204, 304) is
  written whole once its end comes: HEADERS and DATA in one write, END_STREAM
  on the last frame. One without (a watch) has its head written at once and
  each part as it comes. Both wait while a window is shut. 1xx heads and
  trailers are written as they come. An app that ends without finishing its
  answer has the stream reset (INTERNAL_ERROR); an answer finished before
  the request's body has the rest refused (RST_STREAM NO_ERROR, 8.1).
- A connection error (a frame where none may be, a bad size, a window over
  2^31-1, a broken header block) is a GOAWAY with RFC 9113's code, then the
  close. A stream the client resets ends its app (`http.disconnect`).
- GOAWAY from the server (NO_ERROR) once idle when: the server stops (new
  streams refused meanwhile), `keep_alive_max_requests` streams were
  opened, an answer said `Connection: close`, the client sent GOAWAY, or
  the keep-alive timeout passed.

Departures from Hypercorn's h2: no server push and no websocket over
HTTP/2 (RFC 8441): a CONNECT is answered 405 (this server serves neither);
priorities are not kept (RFC 9113 deprecates them; streams are written as
their answers come, as Go's default scheduler nearly does). A header list
over MAX_HEADER_LIST_SIZE is a GOAWAY ENHANCE_YOUR_CALM, as h2 makes it
(Go answers 431: its decoder can drop fields and keep its table; hpack's
cannot).

Internal to `api.serving`: imported by its modules only.
"""

from __future__ import annotations

import struct
from typing import Awaitable, Callable

import hpack
import trio

from api.serving.http2_frames import (
    ACK, COMPRESSION_ERROR, CONTINUATION, DATA, DEFAULT_FRAME_SIZE, DEFAULT_WINDOW, END_HEADERS, END_STREAM,
    ENABLE_PUSH, ENHANCE_YOUR_CALM, FLOW_CONTROL_ERROR, FRAME_SIZE_ERROR, GOAWAY, HEAD, HEADERS, INITIAL_WINDOW_SIZE,
    INTERNAL_ERROR, MAX_CONCURRENT_STREAMS,
    MAX_FRAME_SIZE, MAX_HEADER_LIST_SIZE, MAX_WINDOW, NO_ERROR, PADDED, PING, PREFACE, PRIORITY, PRIORITY_FLAG,
    PROTOCOL_ERROR, PUSH_PROMISE, REFUSED_STREAM, RST_STREAM, SETTINGS, STREAM_CLOSED, WINDOW_UPDATE, data_frames,
    encode_answer, frame, goaway, header_frames, ping_ack, rst_stream, settings, window_update)
from api.serving.app_exchange import AppExchange
from api.serving.http2_request import RequestBlocks, SharedBlocks
from api.serving.hypercorn_internals import (
    AppWrapper, Closed, Config, ConnectionState, Event, RawData, TaskGroup, Updated, WorkerContextType as WorkerContext)

__all__ = ["Http2Protocol"]

#: What the process's connections decoded (at most 1 MiB of fields): a new connection's requests are its clients' old.
_SHARED_BLOCKS = SharedBlocks(1 << 20)
_METHOD_NOT_ALLOWED = [(b"content-length", b"0"), (b"allow", b"GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS")]


class _ConnectionError(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class _StreamError(Exception):
    def __init__(self, stream_id: int, code: int) -> None:
        super().__init__(stream_id, code)
        self.stream_id, self.code = stream_id, code


class _Stream:
    """One open stream: its app's exchange, its windows, how far each side is; it frames the answer the
    exchange gives it (`api.serving.app_exchange.StreamSink`), dropping what is left once reset."""

    __slots__ = ("protocol", "stream_id", "exchange", "send_window", "unacked", "remote_ended", "local_ended",
                 "reset", "expected_length", "received", "head_request", "head", "body")

    def __init__(self, protocol: Http2Protocol, stream_id: int, expected_length: int | None,
                 head_request: bool) -> None:
        self.protocol, self.stream_id = protocol, stream_id
        self.exchange = AppExchange(self, protocol.app, protocol.config, protocol.task_group,
                                    "https" if protocol.ssl else "http", protocol.client, protocol.server)
        self.send_window = protocol._stream_window
        self.unacked = 0                 # DATA bytes read, not yet given back to its window
        self.remote_ended = False        # the client sent END_STREAM
        self.local_ended = False         # the server did
        self.reset = False               # either side reset it, or the connection went
        self.expected_length = expected_length
        self.received = 0
        self.head_request = head_request
        self.head: bytes | None = None   # an answer's header block, held to go with its body
        self.body = bytearray()          # that answer's body so far

    # -- the exchange's answer --
    async def start_answer(self, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        if self.reset or self.local_ended:
            return  # reset meanwhile: what is left of its answer is dropped
        protocol = self.protocol
        block, has_length = protocol._answer_block(status, headers)
        if status >= 200 and (self.head_request or status in (204, 304) or has_length):
            self.head = block  # written with its body: one write
        else:
            await protocol._write(header_frames(self.stream_id, block, False, protocol._max_frame))

    async def informational(self, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        if not (self.reset or self.local_ended):
            block, _ = self.protocol._answer_block(status, headers)
            await self.protocol._write(header_frames(self.stream_id, block, False, self.protocol._max_frame))

    async def write_answer(self, data: bytes) -> None:
        if self.reset or self.local_ended:
            return
        if self.head is not None:
            self.body += data
        else:
            await self.protocol._send_data(self, data, end=False)

    async def end_answer(self) -> None:
        if not (self.reset or self.local_ended):
            await self.protocol._send_data(self, bytes(self.body), end=True)

    async def write_trailers(self, headers: list[tuple[bytes, bytes]]) -> None:
        if self.reset or self.local_ended:
            return
        protocol = self.protocol
        await protocol._send_data(self, bytes(self.body), end=False)
        if not self.reset:
            self.local_ended = True
            block, _ = protocol._answer_block(None, headers)
            await protocol._write(header_frames(self.stream_id, block, True, protocol._max_frame))

    async def exchange_done(self) -> None:
        await self.protocol._app_done(self)


class Http2Protocol:
    """One HTTP/2 connection's streams (see the module docstring)."""

    def __init__(self, app: AppWrapper, config: Config, context: WorkerContext, task_group: TaskGroup,
                 connection_state: ConnectionState, ssl: bool, client: tuple[str, int] | None,
                 server: tuple[str, int] | None, send: Callable[[Event], Awaitable[None]]) -> None:
        self.app, self.config, self.context, self.task_group = app, config, context, task_group
        self.connection_state, self.ssl, self.client, self.server, self.send = (
            connection_state, ssl, client, server, send)
        self.keep_alive_requests = 0
        self._buffer = bytearray()
        self._preface_read = False
        self._requests = RequestBlocks(config.h2_max_header_list_size, _SHARED_BLOCKS)
        self._max_block = 2 * config.h2_max_header_list_size  # a header block's bytes, over CONTINUATIONs
        self._block: tuple[int, int, bytearray] | None = None  # awaiting CONTINUATION: stream, END_STREAM, bytes
        self._streams: dict[int, _Stream] = {}
        self._last_stream = 0             # the highest stream the client opened
        self._control: list[bytes] = []   # frames to write once this read is handled
        self._unacked = 0                 # DATA bytes read, not yet given back to the connection's window
        self._recv_window = DEFAULT_WINDOW
        self._send_window = DEFAULT_WINDOW
        self._stream_window = DEFAULT_WINDOW  # the client's INITIAL_WINDOW_SIZE
        self._max_frame = DEFAULT_FRAME_SIZE  # the client's MAX_FRAME_SIZE
        self._max_inbound = config.h2_max_inbound_frame_size
        self._settings_acked = False
        self._window_grew = trio.Event()  # set (and replaced) when a window grows or a stream goes
        self._goaway_sent = False
        self._closing = False   # no new streams: close once none is open
        self._eof = False       # the client closed its side
        self._closed = False

    # -- Hypercorn's protocol interface --
    async def initiate(self) -> None:
        values = {MAX_CONCURRENT_STREAMS: self.config.h2_max_concurrent_streams,
                  MAX_HEADER_LIST_SIZE: self.config.h2_max_header_list_size}
        if self._max_inbound != DEFAULT_FRAME_SIZE:
            values[MAX_FRAME_SIZE] = self._max_inbound
        await self.send(RawData(settings(values)))

    async def handle(self, event: Event) -> None:
        if isinstance(event, RawData):
            if self._closed:
                return
            self._eof = not event.data
            try:
                await self._read(event.data)
            except _ConnectionError as error:
                await self._fail(error.code)
                return
            await self._write_control()
        elif isinstance(event, Closed):
            if not self._eof:  # the server closes (its keep-alive timeout, its stop): it says so first
                await self._go_away(NO_ERROR)
            self._closed = True
            self._wake()
            for stream_id in list(self._streams):
                await self._forget(stream_id)

    # -- reading --
    async def _read(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        if not self._preface_read:
            if len(buffer) < len(PREFACE) + 9:
                if not PREFACE.startswith(bytes(buffer[:len(PREFACE)])):
                    raise _ConnectionError(PROTOCOL_ERROR)
                return
            if buffer[:len(PREFACE)] != PREFACE or buffer[len(PREFACE) + 3] != SETTINGS:
                raise _ConnectionError(PROTOCOL_ERROR)  # the preface, then SETTINGS (RFC 9113 3.4)
            del buffer[:len(PREFACE)]
            self._preface_read = True
        start, size = 0, len(buffer)
        while size - start >= 9 and not self._closed:
            word, flags, stream_id = HEAD.unpack_from(buffer, start)
            length = word >> 8
            if length > self._max_inbound:
                raise _ConnectionError(FRAME_SIZE_ERROR)
            end = start + 9 + length
            if end > size:
                break
            payload = bytes(buffer[start + 9:end])
            start = end
            try:
                await self._frame(word & 0xFF, flags, stream_id & 0x7FFFFFFF, payload)
            except _StreamError as error:
                await self._reset(error.stream_id, error.code)
        del buffer[:start]

    async def _frame(self, kind: int, flags: int, stream_id: int, payload: bytes) -> None:
        if self._block is not None and kind != CONTINUATION:
            raise _ConnectionError(PROTOCOL_ERROR)  # a header block is one run of frames (RFC 9113 6.10)
        if kind == DATA:
            await self._data(flags, stream_id, payload)
        elif kind == HEADERS:
            await self._headers(flags, stream_id, payload)
        elif kind == CONTINUATION:
            await self._continuation(flags, stream_id, payload)
        elif kind == SETTINGS:
            self._settings(flags, stream_id, payload)
        elif kind == WINDOW_UPDATE:
            self._window_update(stream_id, payload)
        elif kind == PING:
            if stream_id:
                raise _ConnectionError(PROTOCOL_ERROR)
            if len(payload) != 8:
                raise _ConnectionError(FRAME_SIZE_ERROR)
            if not flags & ACK:
                self._control.append(ping_ack(payload))
        elif kind == RST_STREAM:
            await self._rst_stream(stream_id, payload)
        elif kind == PRIORITY:
            if not stream_id:
                raise _ConnectionError(PROTOCOL_ERROR)
            if len(payload) != 5:
                raise _StreamError(stream_id, FRAME_SIZE_ERROR)
        elif kind == GOAWAY:
            if stream_id:
                raise _ConnectionError(PROTOCOL_ERROR)
            self._closing = True  # the client opens no more: done once its streams are
            await self._close_if_done()
        elif kind == PUSH_PROMISE:
            raise _ConnectionError(PROTOCOL_ERROR)  # a client may not push (RFC 9113 8.4)
        # Else a frame type this server does not know: ignored (RFC 9113 5.5).

    async def _data(self, flags: int, stream_id: int, payload: bytes) -> None:
        if not stream_id:
            raise _ConnectionError(PROTOCOL_ERROR)
        length = len(payload)
        if length > self._recv_window:
            raise _ConnectionError(FLOW_CONTROL_ERROR)
        self._recv_window -= length
        self._unacked += length
        data = _unpadded(flags, payload)
        stream = self._streams.get(stream_id)
        if stream is None or stream.remote_ended:
            if stream_id > self._last_stream:
                raise _ConnectionError(PROTOCOL_ERROR)  # an idle stream
            raise _StreamError(stream_id, STREAM_CLOSED)
        stream.received += len(data)
        ended = flags & END_STREAM
        expected = stream.expected_length
        if expected is not None and (stream.received > expected or ended and stream.received != expected):
            raise _StreamError(stream_id, PROTOCOL_ERROR)  # a body unlike its content-length (RFC 9113 8.1.1)
        if not ended:
            stream.unacked += length
        if data:
            await stream.exchange.body(data)
        if ended:
            stream.remote_ended = True
            await stream.exchange.end()

    async def _headers(self, flags: int, stream_id: int, payload: bytes) -> None:
        if not stream_id:
            raise _ConnectionError(PROTOCOL_ERROR)
        block = _unpadded(flags, payload)
        if flags & PRIORITY_FLAG:
            if len(block) < 5:
                raise _ConnectionError(FRAME_SIZE_ERROR)
            block = block[5:]
        if flags & END_HEADERS:
            await self._header_block(stream_id, flags & END_STREAM, block)
        else:
            self._block = (stream_id, flags & END_STREAM, bytearray(block))

    async def _continuation(self, flags: int, stream_id: int, payload: bytes) -> None:
        if self._block is None or self._block[0] != stream_id:
            raise _ConnectionError(PROTOCOL_ERROR)
        _, end_stream, block = self._block
        block += payload
        if len(block) > self._max_block:
            raise _ConnectionError(ENHANCE_YOUR_CALM)
        if flags & END_HEADERS:
            self._block = None
            await self._header_block(stream_id, end_stream, bytes(block))

    async def _header_block(self, stream_id: int, end_stream: int, block: bytes) -> None:
        try:  # decoded whatever becomes of the stream: the decoder's table must follow the client's
            request = self._requests.decode(block)
        except hpack.OversizedHeaderListError:
            raise _ConnectionError(ENHANCE_YOUR_CALM) from None
        except hpack.HPACKError:
            raise _ConnectionError(COMPRESSION_ERROR) from None
        stream = self._streams.get(stream_id)
        if stream is not None:  # trailers: dropped, as Hypercorn drops h2's
            if stream.remote_ended:
                raise _StreamError(stream_id, STREAM_CLOSED)
            if not end_stream:
                raise _StreamError(stream_id, PROTOCOL_ERROR)
            await self._data(END_STREAM, stream_id, b"")
            return
        if stream_id % 2 == 0:
            raise _ConnectionError(PROTOCOL_ERROR)  # clients open odd streams (RFC 9113 5.1.1)
        if stream_id <= self._last_stream:
            raise _StreamError(stream_id, STREAM_CLOSED)
        self._last_stream = stream_id
        if self._goaway_sent:
            return  # past the server's GOAWAY's last stream: ignored, the client knows (RFC 9113 6.8)
        if self._closing or self.context.terminated.is_set():
            raise _StreamError(stream_id, REFUSED_STREAM)
        if len(self._streams) >= self.config.h2_max_concurrent_streams:
            raise _StreamError(stream_id, PROTOCOL_ERROR if self._settings_acked else REFUSED_STREAM)
        if request is None:
            raise _StreamError(stream_id, PROTOCOL_ERROR)  # malformed (RFC 9113 8.1.1)
        if request.method == "CONNECT":
            block, _ = self._answer_block(405, _METHOD_NOT_ALLOWED)
            await self._write(header_frames(stream_id, block, True, self._max_frame))
            if not end_stream:
                self._control.append(rst_stream(stream_id, NO_ERROR))
            return
        stream = self._streams[stream_id] = _Stream(self, stream_id, request.content_length, request.method == "HEAD")
        await stream.exchange.begin(request.method, request.path, "2", request.headers, self.connection_state)
        self.keep_alive_requests += 1
        await self.context.mark_request()
        await self.send(Updated(idle=False))
        if self.keep_alive_requests >= self.config.keep_alive_max_requests:
            self._closing = True
            await self._go_away(NO_ERROR)
        if end_stream:
            await self._data(END_STREAM, stream_id, b"")

    def _settings(self, flags: int, stream_id: int, payload: bytes) -> None:
        if stream_id:
            raise _ConnectionError(PROTOCOL_ERROR)
        if flags & ACK:
            if payload:
                raise _ConnectionError(FRAME_SIZE_ERROR)
            self._settings_acked = True
            return
        if len(payload) % 6:
            raise _ConnectionError(FRAME_SIZE_ERROR)
        for key, value in struct.iter_unpack(">HI", payload):
            if key == ENABLE_PUSH and value > 1:
                raise _ConnectionError(PROTOCOL_ERROR)
            if key == INITIAL_WINDOW_SIZE:
                if value > MAX_WINDOW:
                    raise _ConnectionError(FLOW_CONTROL_ERROR)
                delta, self._stream_window = value - self._stream_window, value
                for stream in self._streams.values():  # RFC 9113 6.9.2: open streams' windows move with it
                    stream.send_window += delta
                    if stream.send_window > MAX_WINDOW:
                        raise _ConnectionError(FLOW_CONTROL_ERROR)
            elif key == MAX_FRAME_SIZE:
                if not DEFAULT_FRAME_SIZE <= value <= 2**24 - 1:
                    raise _ConnectionError(PROTOCOL_ERROR)
                self._max_frame = value
            # Else HEADER_TABLE_SIZE (answers use no dynamic table), MAX_CONCURRENT_STREAMS (this server
            # opens none), MAX_HEADER_LIST_SIZE (advisory) or unknown: nothing to do.
        self._control.append(frame(SETTINGS, ACK, 0))
        self._wake()

    def _window_update(self, stream_id: int, payload: bytes) -> None:
        if len(payload) != 4:
            raise _ConnectionError(FRAME_SIZE_ERROR)
        increment = int.from_bytes(payload, "big") & 0x7FFFFFFF
        if not stream_id:
            if not increment:
                raise _ConnectionError(PROTOCOL_ERROR)
            self._send_window += increment
            if self._send_window > MAX_WINDOW:
                raise _ConnectionError(FLOW_CONTROL_ERROR)
        else:
            stream = self._streams.get(stream_id)
            if stream is None:
                if stream_id > self._last_stream:
                    raise _ConnectionError(PROTOCOL_ERROR)  # an idle stream
                return  # a closed one: may come after its end (RFC 9113 6.9)
            if not increment:
                raise _StreamError(stream_id, PROTOCOL_ERROR)
            stream.send_window += increment
            if stream.send_window > MAX_WINDOW:
                raise _StreamError(stream_id, FLOW_CONTROL_ERROR)
        self._wake()

    async def _rst_stream(self, stream_id: int, payload: bytes) -> None:
        if len(payload) != 4:
            raise _ConnectionError(FRAME_SIZE_ERROR)
        if not stream_id or stream_id > self._last_stream:
            raise _ConnectionError(PROTOCOL_ERROR)
        if stream_id in self._streams:
            await self._forget(stream_id)
            await self._after_stream()

    # -- writing --
    async def _write(self, data: bytes) -> None:
        if not self._closed:
            await self.send(RawData(data))

    async def _write_control(self) -> None:
        """The frames this read called for, in one write: ACKs, PINGs, resets, and DATA's windows given back."""
        control = self._control
        if self._unacked:
            control.append(window_update(0, self._unacked))
            self._recv_window += self._unacked
            self._unacked = 0
        for stream_id, stream in self._streams.items():
            if stream.unacked:
                if not stream.remote_ended:
                    control.append(window_update(stream_id, stream.unacked))
                stream.unacked = 0
        if control:
            self._control = []
            await self._write(b"".join(control))

    async def _send_data(self, stream: _Stream, data: bytes, end: bool) -> None:
        """The held head (if any) and `data`, as the windows let them go: waits while one is shut."""
        stream_id = stream.stream_id
        head = b""
        if stream.head is not None:
            head = header_frames(stream_id, stream.head, end and not data, self._max_frame)
            stream.head, stream.body = None, bytearray()
            if end and not data:
                stream.local_ended = True
                await self._write(head)
                return
        view = memoryview(data)
        while True:
            allowed = min(self._send_window, stream.send_window)
            if len(view) <= allowed:
                if view or end or head:
                    self._take(stream, len(view))
                    stream.local_ended = end
                    await self._write(head + data_frames(stream_id, view, end, self._max_frame) if view or end
                                      else head)
                return
            if allowed > 0:  # what the windows let go now
                self._take(stream, allowed)
                head += data_frames(stream_id, view[:allowed], False, self._max_frame)
                view = view[allowed:]
            if head:
                await self._write(head)
                head = b""
            grew = self._window_grew
            while min(self._send_window, stream.send_window) <= 0 and not stream.reset and not self._closed:
                await grew.wait()
                grew = self._window_grew
            if stream.reset or self._closed:
                return  # the stream or the connection went: the rest is dropped

    def _take(self, stream: _Stream, size: int) -> None:
        self._send_window -= size
        stream.send_window -= size

    def _answer_block(self, status: int | None, headers: list[tuple[bytes, bytes]]) -> tuple[bytes, bool]:
        """An answer's header block with the config's date and server (`encode_answer`), and whether it gives
        its length; one asking for the connection's close (`Connection: close`) ends the connection after the
        answer, as Go's server does."""
        block, has_length, close = encode_answer(status, [*headers, *self.config.response_headers("h2")])
        if close:
            self._closing = True
        return block, has_length

    # -- streams' and the connection's ends --
    async def _reset(self, stream_id: int, code: int) -> None:
        self._control.append(rst_stream(stream_id, code))
        if stream_id in self._streams:
            await self._forget(stream_id)
            await self._after_stream()

    async def _forget(self, stream_id: int) -> None:
        """The stream ends (reset, or its connection gone): its app is told (`http.disconnect`)."""
        stream = self._streams.pop(stream_id, None)
        if stream is not None:
            stream.reset = True
            self._wake()
            await stream.exchange.close()

    async def _app_done(self, stream: _Stream) -> None:
        """The stream's app is done: an answer it left unfinished is reset, a request body still coming
        refused (RFC 9113 8.1)."""
        stream_id = stream.stream_id
        if stream_id not in self._streams:
            return  # forgotten already (reset, or the connection gone)
        if not stream.reset:
            if not stream.local_ended:
                self._control.append(rst_stream(stream_id, INTERNAL_ERROR))
            elif not stream.remote_ended:
                self._control.append(rst_stream(stream_id, NO_ERROR))
        await self._forget(stream_id)
        await self._write_control()
        await self._after_stream()

    async def _after_stream(self) -> None:
        idle = not self._streams
        if not await self._close_if_done():
            await self.send(Updated(idle=idle))

    async def _close_if_done(self) -> bool:
        if self._streams or not (self._closing or self.context.terminated.is_set()):
            return False
        await self._go_away(NO_ERROR)
        await self.send(Closed())
        return True

    async def _go_away(self, code: int) -> None:
        if not self._goaway_sent:
            self._goaway_sent = True
            await self._write(b"".join([*self._control, goaway(self._last_stream, code)]))
            self._control = []

    async def _fail(self, code: int) -> None:
        """A connection error: GOAWAY with its code, then the close."""
        await self._go_away(code)
        self._closed = True
        await self.send(Closed())

    def _wake(self) -> None:
        self._window_grew.set()
        self._window_grew = trio.Event()


def _unpadded(flags: int, payload: bytes) -> bytes:
    if not flags & PADDED:
        return payload
    if not payload or payload[0] >= len(payload):
        raise _ConnectionError(PROTOCOL_ERROR)  # padding past the frame (RFC 9113 6.1)
    return payload[1:len(payload) - payload[0]]
