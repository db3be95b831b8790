"""HTTP/2 at the frame level: the server's connection behaviour (settings, PING, flow control, frame sizes,
concurrent streams, resets, protocol errors, CONTINUATION), seen by a raw `h2` client over real TLS with ALPN "h2".
"""

from __future__ import annotations

import json
import ssl
from contextlib import asynccontextmanager
from typing import AsyncIterator, Callable

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.settings
import pytest
import trio

from tests.support.server import Server

pytestmark = pytest.mark.stores("memory")  # the HTTP layer's: any store answers the same

ROLES = "/apis/rbac.authorization.svc.io/v1/clusterroles"
ADMIN = f"{ROLES}/admin"


class Raw:
    """An `h2` client connection over a trio TLS stream: send what is pending, read events until a predicate."""

    def __init__(self, stream: trio.SSLStream, conn: h2.connection.H2Connection, srv: Server) -> None:
        self.stream, self.conn, self.srv = stream, conn, srv
        self.events: list[h2.events.Event] = []
        self.frames: list[bytes] = []  # the raw chunks read, in order

    @classmethod
    @asynccontextmanager
    async def open(cls, srv: Server, config: h2.config.H2Configuration | None = None,
                   settings: dict[int, int] | None = None) -> AsyncIterator["Raw"]:
        host, port = srv.url.split("://", 1)[1].rsplit(":", 1)
        ctx = ssl.create_default_context(cadata=srv.ca_pem.decode())
        ctx.set_alpn_protocols(["h2"])
        stream = await trio.open_ssl_over_tcp_stream(host, int(port), ssl_context=ctx)
        await stream.do_handshake()
        assert stream.selected_alpn_protocol() == "h2"
        conn = h2.connection.H2Connection(config or h2.config.H2Configuration(client_side=True, header_encoding=None))
        conn.initiate_connection()
        if settings:
            conn.update_settings(settings)
        raw = cls(stream, conn, srv)
        await raw.flush()
        try:
            yield raw
        finally:
            await stream.aclose()

    async def flush(self) -> None:
        data = self.conn.data_to_send()
        if data:
            await self.stream.send_all(data)

    async def read_until(self, done: Callable[[list[h2.events.Event]], bool], ack: bool = True) -> None:
        """Read until `done(self.events)`; acknowledge data as it arrives unless `ack` is false."""
        with trio.fail_after(10):
            while not done(self.events):
                chunk = await self.stream.receive_some(65536)
                if not chunk:
                    raise EOFError("the server closed the connection")
                self.frames.append(chunk)
                for event in self.conn.receive_data(chunk):
                    self.events.append(event)
                    if ack and isinstance(event, h2.events.DataReceived) and event.flow_controlled_length:
                        self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                await self.flush()

    def headers(self, method: str, path: str, extra: list[tuple[bytes, bytes]] = ()) -> list[tuple[bytes, bytes]]:
        return [(b":method", method.encode()), (b":path", path.encode()), (b":scheme", b"https"),
                (b":authority", self.srv.url.split("://", 1)[1].encode()),
                (b"authorization", f"Bearer {self.srv.token}".encode()), *extra]

    async def request(self, method: str, path: str, extra: list[tuple[bytes, bytes]] = (),
                      end: bool = True) -> int:
        sid = self.conn.get_next_available_stream_id()
        self.conn.send_headers(sid, self.headers(method, path, extra), end_stream=end)
        await self.flush()
        return sid

    def of(self, sid: int, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind) and getattr(e, "stream_id", None) == sid]

    def ended(self, sid: int) -> Callable[[list[h2.events.Event]], bool]:
        return lambda events: any(isinstance(e, (h2.events.StreamEnded, h2.events.StreamReset))
                                  and e.stream_id == sid for e in events)

    def answer(self, sid: int) -> tuple[dict[bytes, bytes], bytes]:
        (head,) = self.of(sid, h2.events.ResponseReceived)
        return dict(head.headers), b"".join(e.data for e in self.of(sid, h2.events.DataReceived))


def _saw(kind: type) -> Callable[[list[h2.events.Event]], bool]:
    """Whether an event of `kind` came."""
    return lambda events: any(isinstance(e, kind) for e in events)


_terminated = _saw(h2.events.ConnectionTerminated)


async def test_the_server_opens_with_settings_acks_the_clients_and_answers_ping_with_the_same_bytes(
        https_server: Server) -> None:
    async with Raw.open(https_server) as raw:
        await raw.read_until(_saw(h2.events.SettingsAcknowledged))
        first = b"".join(raw.frames)
        assert first[3] == 0x4 and first[4] & 0x1 == 0  # the first frame: SETTINGS, not an ACK
        assert isinstance(raw.events[0], h2.events.RemoteSettingsChanged)
        raw.conn.ping(b"miniplan")
        await raw.flush()
        await raw.read_until(_saw(h2.events.PingAckReceived))
        (pong,) = [e for e in raw.events if isinstance(e, h2.events.PingAckReceived)]
        assert pong.ping_data == b"miniplan"


async def test_a_get_is_answered_200_with_a_body_of_its_content_length_and_the_stream_ends(
        https_server: Server) -> None:
    async with Raw.open(https_server) as raw:
        sid = await raw.request("GET", ADMIN)
        await raw.read_until(raw.ended(sid))
        head, body = raw.answer(sid)
        assert head[b":status"] == b"200"
        assert head[b"content-type"].startswith(b"application/json")
        assert int(head[b"content-length"]) == len(body) > 0
        assert json.loads(body)["metadata"]["name"] == "admin"
        assert len(raw.of(sid, h2.events.StreamEnded)) == 1


async def test_a_head_gets_its_headers_with_content_length_and_no_data(https_server: Server) -> None:
    async with Raw.open(https_server) as raw:
        sid = await raw.request("HEAD", ADMIN)
        await raw.read_until(raw.ended(sid))
        head, body = raw.answer(sid)
        assert head[b":status"] == b"200" and int(head[b"content-length"]) > 0
        assert body == b""


async def test_a_request_body_past_the_initial_window_is_let_in_by_window_updates(https_server: Server) -> None:
    data = {f"key-{i}": "v" * 1000 for i in range(200)}  # about 200 KiB: past the 65,535-byte window
    body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": data}).encode()
    async with Raw.open(https_server) as raw:
        sid = await raw.request("POST", "/api/v1/namespaces/default/configmaps",
                                [(b"content-type", b"application/json"),
                                 (b"content-length", str(len(body)).encode())], end=False)
        sent = 0
        while sent < len(body):
            window = min(raw.conn.local_flow_control_window(sid), raw.conn.max_outbound_frame_size)
            if window <= 0:
                before = len(raw.events)
                await raw.read_until(lambda ev: any(isinstance(e, h2.events.WindowUpdated)
                                                    for e in ev[before:]))
                continue
            chunk = body[sent:sent + window]
            raw.conn.send_data(sid, chunk, end_stream=sent + len(chunk) == len(body))
            sent += len(chunk)
            await raw.flush()
        await raw.read_until(raw.ended(sid))
        assert any(isinstance(e, h2.events.WindowUpdated) for e in raw.events)
        head, answer = raw.answer(sid)
        assert head[b":status"] == b"201"
        assert json.loads(answer)["data"] == data


async def test_the_server_sends_no_more_than_the_clients_window_before_a_window_update(
        https_server: Server) -> None:
    async with Raw.open(https_server, settings={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1000}) as raw:
        await raw.read_until(_saw(h2.events.SettingsAcknowledged))
        sid = await raw.request("GET", "/openapi/v2", [(b"accept-encoding", b"identity")])
        await raw.read_until(lambda ev: len(raw.of(sid, h2.events.ResponseReceived)) == 1, ack=False)
        await raw.read_until(lambda ev: sum(e.flow_controlled_length for e in raw.of(
            sid, h2.events.DataReceived)) >= 1000 or raw.ended(sid)(ev), ack=False)
        raw.conn.ping(b"barrier!")  # no real wait: whatever the server wrote before its PING ACK is in by then
        await raw.flush()
        await raw.read_until(_saw(h2.events.PingAckReceived), ack=False)
        before = sum(e.flow_controlled_length for e in raw.of(sid, h2.events.DataReceived))
        assert before == 1000 and not raw.ended(sid)(raw.events)  # the window filled, and no more
        for e in raw.of(sid, h2.events.DataReceived):
            raw.conn.acknowledge_received_data(e.flow_controlled_length, sid)
        await raw.flush()
        await raw.read_until(raw.ended(sid))
        head, body = raw.answer(sid)
        assert head[b":status"] == b"200" and len(body) > 100_000
        assert json.loads(body)["swagger"] == "2.0"


async def test_every_data_frame_is_within_the_clients_max_frame_size(https_server: Server) -> None:
    async with Raw.open(https_server) as raw:
        sid = await raw.request("GET", "/openapi/v2", [(b"accept-encoding", b"identity")])
        await raw.read_until(raw.ended(sid))
        sizes = [e.flow_controlled_length for e in raw.of(sid, h2.events.DataReceived)]
        assert sum(sizes) > 100_000 and len(sizes) > 6
        assert max(sizes) <= 16384


async def test_ten_streams_opened_at_once_are_each_answered(https_server: Server) -> None:
    async with Raw.open(https_server) as raw:
        sids = []
        for _ in range(10):
            sid = raw.conn.get_next_available_stream_id()
            raw.conn.send_headers(sid, raw.headers("GET", ADMIN), end_stream=True)
            sids.append(sid)
        await raw.flush()  # all ten in one write
        await raw.read_until(lambda ev: all(raw.ended(s)(ev) for s in sids))
        for sid in sids:
            head, body = raw.answer(sid)
            assert head[b":status"] == b"200"
            assert json.loads(body)["metadata"]["name"] == "admin"
        assert sids == list(range(1, 21, 2))


async def test_a_watch_reset_by_the_client_leaves_the_connection_serving(https_server: Server) -> None:
    async with Raw.open(https_server) as raw:
        watch = await raw.request("GET", f"{ROLES}?watch=1")
        await raw.read_until(lambda ev: len(raw.of(watch, h2.events.ResponseReceived)) == 1)
        assert dict(raw.of(watch, h2.events.ResponseReceived)[0].headers)[b":status"] == b"200"
        raw.conn.reset_stream(watch, h2.errors.ErrorCodes.CANCEL)
        await raw.flush()
        sid = await raw.request("GET", ADMIN)
        await raw.read_until(raw.ended(sid))
        head, body = raw.answer(sid)
        assert head[b":status"] == b"200" and json.loads(body)["metadata"]["name"] == "admin"
        assert not _terminated(raw.events)


async def test_a_data_frame_on_stream_zero_gets_goaway_protocol_error(https_server: Server) -> None:
    async with Raw.open(https_server) as raw:
        await raw.read_until(_saw(h2.events.SettingsAcknowledged))
        await raw.stream.send_all(b"\x00\x00\x04" b"\x00" b"\x00" b"\x00\x00\x00\x00" b"oops")
        await raw.read_until(_terminated)
        (gone,) = [e for e in raw.events if isinstance(e, h2.events.ConnectionTerminated)]
        assert gone.error_code == h2.errors.ErrorCodes.PROTOCOL_ERROR


async def test_an_upper_case_header_name_is_a_protocol_error(https_server: Server) -> None:
    config = h2.config.H2Configuration(client_side=True, header_encoding=None, validate_outbound_headers=False,
                                       normalize_outbound_headers=False)
    async with Raw.open(https_server, config) as raw:
        sid = await raw.request("GET", ADMIN, [(b"X-Upper", b"yes")])
        await raw.read_until(lambda ev: _terminated(ev) or raw.ended(sid)(ev))
        errors = [(type(e).__name__, e.error_code) for e in raw.events
                  if isinstance(e, (h2.events.ConnectionTerminated, h2.events.StreamReset))]
        assert errors and errors[0][1] == h2.errors.ErrorCodes.PROTOCOL_ERROR, errors  # seen: a GOAWAY
        assert not raw.of(sid, h2.events.ResponseReceived)


async def test_a_header_block_split_over_continuation_frames_is_answered(https_server: Server) -> None:
    async with Raw.open(https_server) as raw:
        await raw.read_until(_saw(h2.events.SettingsAcknowledged))
        sid = await raw.request("GET", ADMIN, [(b"x-big", b"a" * 40000)])
        assert raw.conn.max_outbound_frame_size == 16384  # so h2 wrote HEADERS then CONTINUATIONs
        await raw.read_until(lambda ev: _terminated(ev) or raw.ended(sid)(ev))
        head, body = raw.answer(sid)
        assert head[b":status"] == b"200" and json.loads(body)["metadata"]["name"] == "admin"
