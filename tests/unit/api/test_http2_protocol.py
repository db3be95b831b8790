"""`api.serving.http2`'s rules, one test each, on its own: no socket, an echo app behind it, frames built
and read here (the bytes a client would write and read).

The frame-level behaviour over real TLS is tests/api/test_http2_frames.py's; here each rule of RFC 9113
the protocol keeps is driven alone, with what it must write back (and the app must see).
"""

from __future__ import annotations

import json
import struct
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import hpack
import pytest
import trio
import trio.testing
from hypercorn.config import Config
from hypercorn.events import Closed, Event, RawData, Updated
from hypercorn.trio.task_group import TaskGroup
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ConnectionState
from hypercorn.utils import wrap_app
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.serving import http2_frames as f
from api.serving.http2 import Http2Protocol

SEEN: list[dict[str, Any]] = []  # what the app was asked, and whether it was told of a disconnect


async def echo(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Answers with what it was asked. `/stream`: no length, two parts; `/close`: `Connection: close`;
    `/crash`: fails after its head; `/wait`: waits for the disconnect; `/early`: answers before the body."""
    if scope["type"] != "http":
        return
    seen = {"method": scope["method"], "path": scope["raw_path"].decode(), "headers": scope["headers"],
            "body": b"", "disconnected": False}
    SEEN.append(seen)
    while scope["path"] != "/early":
        message = await receive()
        if message["type"] == "http.disconnect":
            seen["disconnected"] = True
            return
        seen["body"] += message.get("body", b"")
        if not message.get("more_body"):
            break
    path = scope["path"]
    if path == "/wait":
        while (await receive())["type"] != "http.disconnect":
            pass
        seen["disconnected"] = True
        return
    answer = json.dumps({"method": scope["method"], "path": path, "length": len(seen["body"])}).encode()
    if path == "/big":
        answer = b"x" * 100_000
    headers = [(b"content-type", b"application/json")]
    if path != "/stream":
        headers.append((b"content-length", b"%d" % len(answer)))
    if path == "/close":
        headers.append((b"Connection", b"close"))
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    if path == "/crash":
        raise RuntimeError("the app fails mid-answer")
    if path == "/stream":
        await send({"type": "http.response.body", "body": answer[:5], "more_body": True})
        await send({"type": "http.response.body", "body": answer[5:]})
    else:
        await send({"type": "http.response.body", "body": answer})


class Peer:
    """The client's side of one in-process connection: writes frames, reads what the server wrote."""

    def __init__(self) -> None:
        self.written = bytearray()
        self.writes = 0
        self.closed = False
        self.updates: list[bool] = []
        self.encoder = hpack.Encoder()
        self.decoder = hpack.Decoder()
        self.protocol: Http2Protocol

    async def send(self, event: Event) -> None:  # the connection's side of the protocol
        if isinstance(event, RawData):
            self.written += event.data
            self.writes += 1
        elif isinstance(event, Closed):
            self.closed = True
            await self.protocol.handle(Closed())
        elif isinstance(event, Updated):
            self.updates.append(event.idle)

    async def write(self, *frames: bytes) -> None:
        await self.protocol.handle(RawData(b"".join(frames)))
        await trio.testing.wait_all_tasks_blocked()

    def headers(self, stream_id: int, fields: list[tuple[bytes, bytes]], end_stream: bool = True) -> bytes:
        return f.frame(f.HEADERS, f.END_HEADERS | (f.END_STREAM if end_stream else 0), stream_id,
                       self.encoder.encode(fields))

    def frames(self) -> list[tuple[int, int, int, bytes]]:
        """The frames written since last read: (type, flags, stream, payload); header blocks decoded."""
        out, data = [], bytes(self.written)
        self.written.clear()
        while data:
            word, flags, stream_id = f.HEAD.unpack_from(data)
            length, payload = word >> 8, data[9:9 + (word >> 8)]
            data = data[9 + length:]
            out.append((word & 0xFF, flags, stream_id, payload))
        return out

    def answer(self, stream_id: int) -> tuple[dict[bytes, bytes], bytes, bool]:
        """A stream's answer among the frames written: its fields, its body, whether it ended."""
        fields: dict[bytes, bytes] = {}
        body, ended = b"", False
        for kind, flags, sid, payload in self.frames():
            if sid != stream_id:
                continue
            if kind == f.HEADERS:
                fields.update(self.decoder.decode(payload, raw=True))
            elif kind == f.DATA:
                body += payload
            ended = ended or bool(flags & f.END_STREAM)
        return fields, body, ended


def get(path: str = "/a", method: bytes = b"GET", *extra: tuple[bytes, bytes]) -> list[tuple[bytes, bytes]]:
    return [(b":method", method), (b":scheme", b"https"), (b":path", path.encode()), (b":authority", b"h"), *extra]


def error_code(payload: bytes) -> int:
    return struct.unpack(">I", payload[-4:])[0]


@asynccontextmanager
async def connection(**options: Any) -> AsyncIterator[Peer]:
    """A connection whose preface and SETTINGS are exchanged; what they wrote is read."""
    config = Config()
    config.include_date_header = False
    for name, value in options.items():
        setattr(config, name, value)
    SEEN.clear()
    peer = Peer()
    with trio.fail_after(10):
        async with TaskGroup() as task_group:
            peer.protocol = Http2Protocol(wrap_app(echo, config.wsgi_max_body_size, None), config,
                                          WorkerContext(None), task_group, ConnectionState({}), True,
                                          ("127.0.0.1", 1), ("127.0.0.1", 2), peer.send)
            await peer.protocol.initiate()
            await peer.write(f.PREFACE, f.settings({}), f.frame(f.SETTINGS, f.ACK, 0))
            peer.frames()
            yield peer
            await peer.protocol.handle(RawData(b""))
            await peer.protocol.handle(Closed())


async def test_the_server_opens_with_its_settings_and_acks_the_clients() -> None:
    peer = Peer()
    config = Config()
    async with TaskGroup() as task_group:
        peer.protocol = Http2Protocol(wrap_app(echo, config.wsgi_max_body_size, None), config, WorkerContext(None),
                                      task_group, ConnectionState({}), True, None, None, peer.send)
        await peer.protocol.initiate()
        await peer.write(f.PREFACE, f.settings({f.INITIAL_WINDOW_SIZE: 1000}))
        (first, _, _, values), (second, flags, _, _) = peer.frames()
        assert first == f.SETTINGS and dict(struct.iter_unpack(">HI", values)) == {
            f.MAX_CONCURRENT_STREAMS: 100, f.MAX_HEADER_LIST_SIZE: 2**16}
        assert (second, flags) == (f.SETTINGS, f.ACK)
        await peer.protocol.handle(Closed())


@pytest.mark.parametrize("opening", [b"GET / HTTP/1.1\r\n\r\n" + b"x" * 30, f.PREFACE + f.frame(f.PING, 0, 0, b"8bytes!!")])
async def test_a_connection_not_opened_by_the_preface_and_settings_is_a_protocol_error(opening: bytes) -> None:
    peer = Peer()
    config = Config()
    async with TaskGroup() as task_group:
        peer.protocol = Http2Protocol(wrap_app(echo, config.wsgi_max_body_size, None), config, WorkerContext(None),
                                      task_group, ConnectionState({}), True, None, None, peer.send)
        await peer.write(opening)
        (kind, _, _, payload), = peer.frames()
        assert kind == f.GOAWAY and error_code(payload) == f.PROTOCOL_ERROR and peer.closed


async def test_a_ping_is_echoed_with_its_eight_bytes() -> None:
    async with connection() as peer:
        await peer.write(f.frame(f.PING, 0, 0, b"12345678"))
        assert peer.frames() == [(f.PING, f.ACK, 0, b"12345678")]


async def test_an_answer_of_known_length_is_head_and_body_in_one_write_ending_the_stream() -> None:
    async with connection() as peer:
        peer.writes = 0
        await peer.write(peer.headers(1, get("/a?x=1")))
        assert peer.writes == 1
        fields, body, ended = peer.answer(1)
        assert fields[b":status"] == b"200" and json.loads(body) == {"method": "GET", "path": "/a", "length": 0}
        assert ended and fields[b"content-length"] == b"%d" % len(body)
        assert SEEN[0]["path"] == "/a" and SEEN[0]["headers"][0] == (b"host", b"h")


async def test_an_answer_of_unknown_length_has_its_head_at_once_and_each_part_as_it_comes() -> None:
    async with connection() as peer:
        await peer.write(peer.headers(1, get("/stream")))
        kinds = [(kind, flags & f.END_STREAM) for kind, flags, _, _ in peer.frames()]
        assert kinds == [(f.HEADERS, 0), (f.DATA, 0), (f.DATA, 0), (f.DATA, f.END_STREAM)]


async def test_a_head_answer_is_its_fields_alone_ending_the_stream() -> None:
    async with connection() as peer:
        await peer.write(peer.headers(1, get("/a", b"HEAD")))
        (kind, flags, _, _), = peer.frames()
        assert kind == f.HEADERS and flags & f.END_STREAM


async def test_a_request_body_reaches_the_app_and_its_windows_are_given_back() -> None:
    async with connection() as peer:
        await peer.write(peer.headers(1, get("/a", b"POST"), end_stream=False),
                         f.frame(f.DATA, 0, 1, b"x" * 1000), f.frame(f.DATA, f.PADDED, 1, b"\x03abcpad"))
        updates = [(sid, struct.unpack(">I", payload)[0]) for kind, _, sid, payload in peer.frames()
                   if kind == f.WINDOW_UPDATE]
        assert sorted(updates) == [(0, 1007), (1, 1007)]  # padding counts (RFC 9113 6.1)
        await peer.write(f.frame(f.DATA, f.END_STREAM, 1, b"!"))
        _, body, ended = peer.answer(1)
        assert SEEN[0]["body"] == b"x" * 1000 + b"abc!" and json.loads(body)["length"] == 1004 and ended


async def test_a_body_longer_or_shorter_than_its_content_length_resets_the_stream() -> None:
    async with connection() as peer:
        await peer.write(peer.headers(1, get("/a", b"POST", (b"content-length", b"3")), end_stream=False),
                         f.frame(f.DATA, 0, 1, b"four"),
                         peer.headers(3, get("/a", b"POST", (b"content-length", b"3")), end_stream=False),
                         f.frame(f.DATA, f.END_STREAM, 3, b"tw"))
        resets = [(sid, error_code(payload)) for kind, _, sid, payload in peer.frames() if kind == f.RST_STREAM]
        assert resets == [(1, f.PROTOCOL_ERROR), (3, f.PROTOCOL_ERROR)] and not peer.closed


@pytest.mark.parametrize("fields", [
    get("/a", b"GET", (b"X-Upper", b"v")),
    get("/a", b"GET", (b"connection", b"keep-alive")),
    get("/a", b"GET", (b"te", b"gzip")),
    get("/a", b"GET", (b"x-a", b"line\nbreak")),
    [(b":method", b"GET"), (b"x-a", b"v"), (b":path", b"/a"), (b":scheme", b"https")],
    [(b":method", b"GET"), (b":scheme", b"https")],
    [(b":method", b"GET"), (b":method", b"GET"), (b":scheme", b"https"), (b":path", b"/")],
    [(b":method", b"GET"), (b":scheme", b"https"), (b":path", b"/"), (b":status", b"200")],
    [(b":method", b"GET"), (b":scheme", b"https"), (b":path", b"relative")],
    get("/a", b"POST", (b"content-length", b"x1")),
], ids=["upper-case name", "connection-specific", "te other than trailers", "line break in a value",
        "pseudo after regular", "no path", "pseudo twice", "a response's pseudo", "not origin-form",
        "content-length not a number"])
async def test_a_malformed_request_resets_its_stream_and_the_connection_serves_on(
        fields: list[tuple[bytes, bytes]]) -> None:
    async with connection() as peer:
        await peer.write(peer.headers(1, fields), peer.headers(3, get("/b")))
        frames = peer.frames()
        assert (f.RST_STREAM, 0, 1, struct.pack(">I", f.PROTOCOL_ERROR)) in frames
        assert any(kind == f.HEADERS and sid == 3 for kind, _, sid, _ in frames) and SEEN[0]["path"] == "/b"


async def test_cookie_fields_are_joined_and_authority_becomes_the_first_host() -> None:
    async with connection() as peer:
        await peer.write(peer.headers(1, get("/a", b"GET", (b"cookie", b"a=1"), (b"host", b"other"),
                                             (b"cookie", b"b=2"))))
        assert SEEN[0]["headers"] == [(b"host", b"h"), (b"cookie", b"a=1; b=2")]


async def test_an_even_stream_is_a_protocol_error_and_a_reused_one_stream_closed() -> None:
    async with connection() as peer:
        await peer.write(peer.headers(3, get()), peer.headers(1, get()))
        assert (f.RST_STREAM, 0, 1, struct.pack(">I", f.STREAM_CLOSED)) in peer.frames()
        await peer.write(peer.headers(4, get()))
        (kind, _, _, payload), = peer.frames()
        assert kind == f.GOAWAY and payload == struct.pack(">II", 3, f.PROTOCOL_ERROR) and peer.closed


async def test_streams_past_max_concurrent_streams_are_refused() -> None:
    async with connection(h2_max_concurrent_streams=2) as peer:
        await peer.write(peer.headers(1, get("/wait")), peer.headers(3, get("/wait")), peer.headers(5, get("/a")))
        assert peer.frames() == [(f.RST_STREAM, 0, 5, struct.pack(">I", f.PROTOCOL_ERROR))]
        assert len(SEEN) == 2


@pytest.mark.parametrize("bad", [f.frame(f.PING, 0, 0, b"seven!!"), f.frame(f.WINDOW_UPDATE, 0, 0, b"123"),
                                 f.frame(f.RST_STREAM, 0, 1, b"12345"), f.frame(f.SETTINGS, 0, 0, b"12345"),
                                 f.frame(f.DATA, 0, 1, b"x" * (2**14 + 1))],
                         ids=["ping", "window update", "rst_stream", "settings", "over max frame size"])
async def test_a_frame_of_the_wrong_size_is_a_frame_size_error(bad: bytes) -> None:
    async with connection() as peer:
        await peer.write(peer.headers(1, get("/wait"), end_stream=False), bad)
        assert (f.GOAWAY, 0, 0, struct.pack(">II", 1, f.FRAME_SIZE_ERROR)) in peer.frames() and peer.closed
        assert SEEN[0]["disconnected"]


@pytest.mark.parametrize("bad, code", [
    (f.frame(f.DATA, 0, 0, b"x"), f.PROTOCOL_ERROR), (f.frame(f.PUSH_PROMISE, f.END_HEADERS, 1, b"\0\0\0\2"), f.PROTOCOL_ERROR),
    (f.frame(f.SETTINGS, 0, 1, b""), f.PROTOCOL_ERROR), (f.settings({f.ENABLE_PUSH: 2}), f.PROTOCOL_ERROR),
    (f.settings({f.MAX_FRAME_SIZE: 100}), f.PROTOCOL_ERROR), (f.window_update(0, 0), f.PROTOCOL_ERROR),
    (f.window_update(0, 2**31 - 1), f.FLOW_CONTROL_ERROR), (f.settings({f.INITIAL_WINDOW_SIZE: 2**31}), f.FLOW_CONTROL_ERROR),
    (f.frame(f.CONTINUATION, f.END_HEADERS, 1, b""), f.PROTOCOL_ERROR), (f.window_update(9, 1), f.PROTOCOL_ERROR),
    (f.frame(f.HEADERS, f.END_HEADERS, 3, b"\xff\xff\xff\xff"), f.COMPRESSION_ERROR),
], ids=["data on stream 0", "push promise", "settings on a stream", "enable_push 2", "max frame size under 16384",
        "window update of 0", "connection window past 2^31-1", "initial window past 2^31-1",
        "continuation without headers", "window update of an idle stream", "a broken header block"])
async def test_a_connection_error_is_a_goaway_with_its_code_then_the_close(bad: bytes, code: int) -> None:
    async with connection() as peer:
        await peer.write(peer.headers(1, get()), bad)
        assert peer.frames()[-1] == (f.GOAWAY, 0, 0, struct.pack(">II", 1, code))
        assert peer.closed


async def test_a_frame_between_headers_and_its_continuation_is_a_protocol_error() -> None:
    async with connection() as peer:
        block = peer.encoder.encode(get())
        await peer.write(f.frame(f.HEADERS, f.END_STREAM, 1, block[:3]), f.frame(f.PING, 0, 0, b"12345678"))
        assert peer.frames() == [(f.GOAWAY, 0, 0, struct.pack(">II", 0, f.PROTOCOL_ERROR))]


async def test_a_header_block_over_continuations_is_one_request() -> None:
    async with connection() as peer:
        block = peer.encoder.encode(get("/a", b"GET", (b"x-long", b"v" * 40_000)))
        await peer.write(f.frame(f.HEADERS, f.END_STREAM, 1, block[:16_000]),
                         f.frame(f.CONTINUATION, 0, 1, block[16_000:32_000]),
                         f.frame(f.CONTINUATION, f.END_HEADERS, 1, block[32_000:]))
        assert peer.answer(1)[0][b":status"] == b"200" and dict(SEEN[0]["headers"])[b"x-long"] == b"v" * 40_000


async def test_a_header_list_over_its_maximum_is_enhance_your_calm() -> None:
    async with connection(h2_max_header_list_size=1000) as peer:
        block = peer.encoder.encode(get("/a", b"GET", (b"x-long", b"v" * 2000)))
        await peer.write(f.frame(f.HEADERS, f.END_STREAM, 1, block[:1500]),
                         f.frame(f.CONTINUATION, f.END_HEADERS, 1, block[1500:]))
        assert peer.frames()[-1] == (f.GOAWAY, 0, 0, struct.pack(">II", 0, f.ENHANCE_YOUR_CALM))


async def test_unknown_frame_types_and_priority_are_ignored() -> None:
    async with connection() as peer:
        await peer.write(f.frame(0x42, 0xFF, 0, b"anything"), f.frame(f.PRIORITY, 0, 1, b"\0\0\0\0\x10"),
                         peer.headers(1, get()))
        assert peer.answer(1)[0][b":status"] == b"200" and not peer.closed


async def test_an_answer_waits_while_the_stream_window_is_shut_and_goes_when_it_opens() -> None:
    async with connection() as peer:
        await peer.write(f.settings({f.INITIAL_WINDOW_SIZE: 0}), peer.headers(1, get("/big")))
        kinds = [kind for kind, _, _, _ in peer.frames()]
        assert kinds == [f.SETTINGS, f.HEADERS]  # the ACK, the head: no DATA
        await peer.write(f.window_update(1, 40_000))
        sent = [payload for kind, _, _, payload in peer.frames() if kind == f.DATA]
        assert [len(p) for p in sent] == [16_384, 16_384, 7_232]
        await peer.write(f.settings({f.INITIAL_WINDOW_SIZE: 2**20}))  # the delta moves the open stream's window
        _, body, ended = peer.answer(1)
        assert len(body) == 65_535 - 40_000 and not ended  # as far as the connection's window goes
        await peer.write(f.window_update(0, 2**20))
        _, body, ended = peer.answer(1)
        assert len(body) == 100_000 - 65_535 and ended


async def test_data_frames_keep_within_the_clients_max_frame_size() -> None:
    async with connection() as peer:
        await peer.write(f.settings({f.MAX_FRAME_SIZE: 20_000}), peer.headers(1, get("/big")))
        sizes = [len(payload) for kind, _, _, payload in peer.frames() if kind == f.DATA]
        assert max(sizes) == 20_000 and sum(sizes) == 65_535


async def test_a_stream_the_client_resets_tells_its_app_and_the_connection_serves_on() -> None:
    async with connection() as peer:
        await peer.write(peer.headers(1, get("/wait")))
        await peer.write(f.rst_stream(1, f.CANCEL), peer.headers(3, get("/a")))
        assert SEEN[0]["disconnected"] and peer.answer(3)[0][b":status"] == b"200" and peer.updates[-1] is True


async def test_an_app_that_ends_mid_answer_has_its_stream_reset() -> None:
    async with connection() as peer:
        await peer.write(peer.headers(1, get("/crash")))
        assert (f.RST_STREAM, 0, 1, struct.pack(">I", f.INTERNAL_ERROR)) in peer.frames() and not peer.closed


async def test_an_answer_before_the_whole_request_refuses_the_rest_with_no_error() -> None:
    async with connection() as peer:
        await peer.write(peer.headers(1, get("/early", b"POST"), end_stream=False))
        frames = peer.frames()
        assert [kind for kind, _, _, _ in frames] == [f.HEADERS, f.DATA, f.RST_STREAM]
        assert frames[-1] == (f.RST_STREAM, 0, 1, struct.pack(">I", f.NO_ERROR)) and not peer.closed


async def test_a_connect_is_answered_method_not_allowed() -> None:
    async with connection() as peer:
        await peer.write(peer.headers(1, [(b":method", b"CONNECT"), (b":authority", b"h:443")], end_stream=False))
        frames = peer.frames()
        assert frames[0][:3] == (f.HEADERS, f.END_STREAM | f.END_HEADERS, 1)
        assert (b":status", b"405") in peer.decoder.decode(frames[0][3], raw=True)
        assert frames[1] == (f.RST_STREAM, 0, 1, struct.pack(">I", f.NO_ERROR)) and SEEN == []


async def test_keep_alive_max_requests_sends_goaway_and_closes_once_idle() -> None:
    async with connection(keep_alive_max_requests=2) as peer:
        await peer.write(peer.headers(1, get("/a")), peer.headers(3, get("/wait")))
        frames = peer.frames()
        assert (f.GOAWAY, 0, 0, struct.pack(">II", 3, f.NO_ERROR)) in frames and not peer.closed
        await peer.write(peer.headers(5, get("/a")))  # past the GOAWAY's last stream: ignored
        assert peer.frames() == [] and len(SEEN) == 2
        await peer.write(f.rst_stream(3, f.CANCEL))
        assert peer.closed


async def test_an_answer_saying_connection_close_ends_the_connection_with_goaway() -> None:
    async with connection() as peer:
        await peer.write(peer.headers(1, get("/close")))
        frames = peer.frames()
        assert frames[-1] == (f.GOAWAY, 0, 0, struct.pack(">II", 1, f.NO_ERROR)) and peer.closed
        fields = peer.decoder.decode(frames[0][3], raw=True)
        assert (b":status", b"200") in fields and all(name != b"connection" for name, _ in fields)


async def test_the_server_closing_an_idle_connection_says_goaway_first() -> None:
    async with connection() as peer:
        await peer.write(peer.headers(1, get("/a")))
        peer.frames()
        await peer.protocol.handle(Closed())
        assert peer.frames() == [(f.GOAWAY, 0, 0, struct.pack(">II", 1, f.NO_ERROR))]


async def test_trailers_of_a_request_end_its_body() -> None:
    async with connection() as peer:
        await peer.write(peer.headers(1, get("/a", b"POST"), end_stream=False), f.frame(f.DATA, 0, 1, b"abc"),
                         peer.headers(1, [(b"x-checksum", b"1")]))
        assert SEEN[0]["body"] == b"abc" and json.loads(peer.answer(1)[1])["length"] == 3


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(points=st.lists(st.integers(0, 10**6), max_size=12), bodies=st.lists(st.binary(max_size=200), max_size=4))
def test_however_the_clients_bytes_are_cut_into_reads_the_answers_are_the_same(points, bodies) -> None:
    async def run(cut: list[int]) -> list[tuple[int, bytes]]:
        async with connection() as peer:
            data = b""
            for number, body in enumerate(bodies or [b""]):
                stream_id = 2 * number + 1
                data += peer.headers(stream_id, get(f"/s{number}", b"PUT"), end_stream=False)
                data += f.frame(f.DATA, f.END_STREAM, stream_id, body)
            edges = sorted({0, len(data), *(p % (len(data) + 1) for p in cut)})
            for start, end in zip(edges, edges[1:]):
                await peer.write(data[start:end])
            return sorted((sid, payload) for kind, _, sid, payload in peer.frames() if kind == f.DATA)
    assert trio.run(run, points) == trio.run(run, []) and trio.run(run, [])
