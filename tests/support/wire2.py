"""One HTTP/2 connection in process: the server's own HTTP/2 layer (`api.serving.http2`) fed a client's frames.

Contract: `async with open_wire2(app) as wire:` serves `app` (a control plane's `plane.app`) behind
`Http2Protocol`, as `miniplane serve` does on a connection whose TLS chose "h2", with no socket and no
TLS (the scope says https, as behind TLS); the client's preface, SETTINGS and WINDOW_UPDATE giving the
largest windows are read first (so the server never waits for a window).
`get_frames(path, token, accept)` is one GET's HEADERS frame on the next stream (an HPACK block of the
client's encoder, so a GET sent again is the same small block of indexed fields, as kubectl's are);
`await wire.exchange(frames)` hands those bytes to the connection, as one read, and returns the frames
written back until one ends that stream, as bytes; `wire.answer(raw)` decodes them into (status, headers
in order, body) with the client's HPACK decoder (one per connection, in order, as HPACK needs).

The answer's bytes are all the connection would write to its socket (Date off, as `tests.support.wire`
does), so a GET over HTTP/2 compares with the same GET over HTTP/1.1, and a counting test counts what one
HTTP/2 request costs. Caveats: one request at a time; an answer that never ends (a watch) is not awaited
to its end (`exchange` raises on trio's deadline the caller sets).
"""

from __future__ import annotations

import struct
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Iterator

import hpack
import trio
from hypercorn.events import Closed, Event, RawData

from api.serving.http2 import Http2Protocol
from api.serving.http2_frames import (DATA, DEFAULT_WINDOW, END_HEADERS, END_STREAM, HEADERS, INITIAL_WINDOW_SIZE,
                                     MAX_WINDOW, PREFACE, frame, settings, window_update)
from tests.support.wire import serving

__all__ = ["Wire2", "open_wire2"]

_HEAD = struct.Struct(">IBI")


class Wire2:
    """One in-process HTTP/2 connection (see the module doc)."""

    def __init__(self) -> None:
        self.protocol: Http2Protocol | None = None
        self._encoder = hpack.Encoder()
        self._decoder = hpack.Decoder()
        self._stream = -1
        self._awaited = 0
        self._written = bytearray()
        self._whole = trio.Event()
        self.closed = False

    async def send(self, event: Event) -> None:
        """The protocol's writes: kept until a frame ends the awaited stream."""
        if isinstance(event, RawData):
            self._written += event.data
            if self._awaited and _ends(self._written, self._awaited):
                self._whole.set()
        elif isinstance(event, Closed):
            self.closed = True
            self._whole.set()

    def get_frames(self, path: str, token: str, accept: str = "application/json") -> bytes:
        """One GET of `path` as the bearer of `token` on the next stream: its HEADERS frame."""
        self._stream += 2
        block = self._encoder.encode([(":method", "GET"), (":scheme", "https"), (":authority", "miniplane"),
                                      (":path", path), ("authorization", f"Bearer {token}"),
                                      ("accept", accept), ("user-agent", "cached-gets/1.0")])
        return frame(HEADERS, END_HEADERS | END_STREAM, self._stream, block)

    async def exchange(self, frames: bytes) -> bytes:
        """The frames written back for the request `frames` until its stream ends, as bytes."""
        assert self.protocol is not None and not self.closed
        self._written.clear()
        self._whole = trio.Event()
        self._awaited = _stream_of(frames)
        await self.protocol.handle(RawData(frames))
        await self._whole.wait()
        return bytes(self._written)

    def answer(self, raw: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        """(status, headers with lower-case names, body) of the awaited stream's frames in `raw`."""
        status, headers, body = 0, [], bytearray()
        for kind, _flags, stream_id, payload in _frames(raw):
            if stream_id != self._awaited:
                continue
            if kind == HEADERS:
                for name, value in self._decoder.decode(payload, raw=True):
                    if name == b":status":
                        status = int(value)
                    else:
                        headers.append((name.decode("latin-1"), value.decode("latin-1")))
            elif kind == DATA:
                body += payload
        return status, headers, bytes(body)


def _frames(raw: bytes) -> Iterator[tuple[int, int, int, bytes]]:
    at = 0
    while at + 9 <= len(raw):
        length_kind, flags, stream_id = _HEAD.unpack_from(raw, at)
        length = length_kind >> 8
        yield length_kind & 0xFF, flags, stream_id & 0x7FFFFFFF, raw[at + 9:at + 9 + length]
        at += 9 + length


def _ends(raw: bytearray, stream_id: int) -> bool:
    return any(sid == stream_id and flags & END_STREAM and kind in (HEADERS, DATA)
               for kind, flags, sid, _ in _frames(bytes(raw)))


def _stream_of(frames: bytes) -> int:
    return _HEAD.unpack_from(frames, 0)[2] & 0x7FFFFFFF


@asynccontextmanager
async def open_wire2(app: Any) -> AsyncIterator[Wire2]:
    """A `Wire2` to `app` for the block, its preface and SETTINGS read; the connection closes on leaving."""
    wire = Wire2()
    async with serving(Http2Protocol, app, wire) as protocol:
        await protocol.initiate()
        # The most window a client may give, at once: a client that never gave windows back would have
        # the server wait after 64 KiB of answers (RFC 9113 6.9); kubectl's and h2load's give them back.
        await protocol.handle(RawData(PREFACE + settings({INITIAL_WINDOW_SIZE: MAX_WINDOW})
                                      + window_update(0, MAX_WINDOW - DEFAULT_WINDOW)))
        yield wire
