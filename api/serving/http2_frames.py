"""HTTP/2's wire format (RFC 9113 section 4 and 6, RFC 7541): frames built as bytes, answers' headers encoded.

Why its own module: `api.serving.http2` keeps a connection's rules; this one
only knows how the bytes are laid out, so that each reads on its own.

Contract:
- The frame types, flags, settings and error codes by their RFC names.
- `frame(type, flags, stream_id, payload)` is one frame's bytes;
  `settings`, `window_update`, `rst_stream`, `goaway` and `ping_ack` the
  control frames this server writes.
- `encode_answer(status, headers)` is an answer's (or trailers', status
  None) header block, whether its fields give its length (a
  content-length), and whether one asks for the connection's close. Fields
  as HTTP/2 has them (RFC 9113 8.2): names lower-cased, connection-specific
  ones (`connection`, `keep-alive`, `proxy-connection`,
  `transfer-encoding`, `upgrade`) dropped, a value holding CR, LF or NUL a
  `ValueError`. The block needs no state on either side: `:status` from the
  static table where it is there, every other field a literal never added
  to the client's dynamic table (RFC 7541 6.2.2), its name from the static
  table where it is there. An answer's fields are mostly new values (a
  date, a length, an audit id), so the dynamic table would buy little, and
  without it no answer's encoding depends on another's: answers of
  concurrent streams may be written in any order.
- `header_frames(stream_id, block, end_stream, max_frame)` splits a block
  into HEADERS and CONTINUATION frames.

Internal to `api.serving`: imported by its modules only.
"""

from __future__ import annotations

import struct

from hpack.table import HeaderTable

__all__ = ["PREFACE", "DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS", "PUSH_PROMISE", "PING", "GOAWAY",
           "WINDOW_UPDATE", "CONTINUATION", "END_STREAM", "ACK", "END_HEADERS", "PADDED", "PRIORITY_FLAG",
           "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "STREAM_CLOSED",
           "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "ENHANCE_YOUR_CALM", "HEAD",
           "HEADER_TABLE_SIZE", "ENABLE_PUSH",
           "MAX_CONCURRENT_STREAMS", "INITIAL_WINDOW_SIZE", "MAX_FRAME_SIZE", "MAX_HEADER_LIST_SIZE",
           "DEFAULT_WINDOW", "DEFAULT_FRAME_SIZE", "MAX_WINDOW", "frame", "settings", "window_update", "rst_stream",
           "goaway", "ping_ack", "encode_answer", "header_frames", "data_frames"]

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

# Frame types (RFC 9113 6).
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = range(10)
# Flags.
END_STREAM = ACK = 0x1
END_HEADERS = 0x4
PADDED = 0x8
PRIORITY_FLAG = 0x20
# Error codes (RFC 9113 7).
NO_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR, FLOW_CONTROL_ERROR = 0x0, 0x1, 0x2, 0x3
STREAM_CLOSED, FRAME_SIZE_ERROR, REFUSED_STREAM, CANCEL, COMPRESSION_ERROR = 0x5, 0x6, 0x7, 0x8, 0x9
ENHANCE_YOUR_CALM = 0xB
# Settings (RFC 9113 6.5.2).
HEADER_TABLE_SIZE, ENABLE_PUSH, MAX_CONCURRENT_STREAMS, INITIAL_WINDOW_SIZE, MAX_FRAME_SIZE, MAX_HEADER_LIST_SIZE = (
    range(1, 7))

DEFAULT_WINDOW = 65_535
DEFAULT_FRAME_SIZE = 16_384
MAX_WINDOW = 2**31 - 1

HEAD = struct.Struct(">IBI")  # a frame's header: length (24 bits) << 8 | type, flags, stream id


def frame(kind: int, flags: int, stream_id: int, payload: bytes = b"") -> bytes:
    return HEAD.pack(len(payload) << 8 | kind, flags, stream_id) + payload


def settings(values: dict[int, int]) -> bytes:
    return frame(SETTINGS, 0, 0, b"".join(struct.pack(">HI", key, value) for key, value in values.items()))


def window_update(stream_id: int, increment: int) -> bytes:
    return frame(WINDOW_UPDATE, 0, stream_id, struct.pack(">I", increment))


def rst_stream(stream_id: int, code: int) -> bytes:
    return frame(RST_STREAM, 0, stream_id, struct.pack(">I", code))


def goaway(last_stream_id: int, code: int) -> bytes:
    return frame(GOAWAY, 0, 0, struct.pack(">II", last_stream_id, code))


def ping_ack(payload: bytes) -> bytes:
    return frame(PING, ACK, 0, payload)


def data_frames(stream_id: int, data: bytes | memoryview, end_stream: bool, max_frame: int) -> bytes:
    """`data` as DATA frames of at most `max_frame` bytes; END_STREAM on the last when `end_stream`."""
    if not data:
        return frame(DATA, END_STREAM if end_stream else 0, stream_id)
    parts = []
    for start in range(0, len(data), max_frame):
        chunk = data[start:start + max_frame]
        last = start + max_frame >= len(data)
        parts.append(HEAD.pack(len(chunk) << 8 | DATA, END_STREAM if last and end_stream else 0, stream_id))
        parts.append(chunk)
    return b"".join(parts)


def header_frames(stream_id: int, block: bytes, end_stream: bool, max_frame: int) -> bytes:
    """A header block as one HEADERS frame, or HEADERS and CONTINUATIONs when over `max_frame`."""
    flags = END_STREAM if end_stream else 0
    if len(block) <= max_frame:
        return frame(HEADERS, flags | END_HEADERS, stream_id, block)
    pieces = [block[start:start + max_frame] for start in range(0, len(block), max_frame)]
    out = [frame(HEADERS, flags, stream_id, pieces[0])]
    out += [frame(CONTINUATION, 0, stream_id, piece) for piece in pieces[1:-1]]
    out.append(frame(CONTINUATION, END_HEADERS, stream_id, pieces[-1]))
    return b"".join(out)


def _integer(value: int, prefix_bits: int, first: int) -> bytes:
    """RFC 7541 5.1: `value` with an N-bit prefix, `first` holding the bits above it."""
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out = bytearray([first | limit])
    value -= limit
    while value >= 128:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _string(value: bytes) -> bytes:
    return _integer(len(value), 7, 0) + value  # not Huffman-coded: cheaper to write than the bytes it saves


#: `:status` values in the static table (RFC 7541 appendix A): one byte each.
_STATUS_INDEXED = {200: b"\x88", 204: b"\x89", 206: b"\x8a", 304: b"\x8b", 400: b"\x8c", 404: b"\x8d", 500: b"\x8e"}
_STATUS_NAME = 8  # the static table's first `:status` entry: the name of a literal status

#: Fields HTTP/2 has not (RFC 9113 8.2.2): an answer's are dropped.
_CONNECTION_SPECIFIC = frozenset({b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"upgrade"})
#: A literal never indexed, its name by static index (the first entry of each name), for the lower-case names an
#: answer may carry (no connection-specific one: a name found here is sent as it is).
_NAME_PREFIXES: dict[bytes, bytes] = {}
for _index, (_name, _value) in enumerate(HeaderTable.STATIC_TABLE, start=1):
    if _name not in _CONNECTION_SPECIFIC:
        _NAME_PREFIXES.setdefault(_name, _integer(_index, 4, 0x00))
_CONTENT_LENGTH = _NAME_PREFIXES[b"content-length"]
_NEW_NAME = b"\x00"  # a literal without indexing, its name literal too
_NAME_CACHE_SIZE = 512


#: A string's length prefix, for the lengths that fit its 7-bit prefix in one byte (most values).
_SHORT_LENGTHS = [bytes((length,)) for length in range(127)]


def _name_prefix(name: bytes) -> bytes:
    """A lower-case name's prefix, new names kept (a bounded few: names an app makes up are not kept without end)."""
    prefix = _NAME_PREFIXES.get(name)
    if prefix is None:
        prefix = _NEW_NAME + _string(name)
        if len(_NAME_PREFIXES) < _NAME_CACHE_SIZE:
            _NAME_PREFIXES[name] = prefix
    return prefix


def encode_answer(status: int | None, headers: list[tuple[bytes, bytes]]) -> tuple[bytes, bool, bool]:
    """An answer's header block, whether it gives a content-length, whether it asks for the connection's
    close (see the module docstring)."""
    parts = []
    if status is not None:
        parts.append(_STATUS_INDEXED.get(status) or _integer(_STATUS_NAME, 4, 0x00) + _string(b"%d" % status))
    # One pass, inlined (a call per field, and two per its value, were a tenth of an HTTP/2 answer's Python
    # calls): a lower-case name known by its prefix as it is, any other lowered first; a short value by its
    # one-byte length.
    prefixes, short = _NAME_PREFIXES, _SHORT_LENGTHS
    has_length = close = False
    for name, value in headers:
        if b"\n" in value or b"\r" in value or b"\0" in value:
            raise ValueError("a response header holds a line break")
        prefix = prefixes.get(name)
        if prefix is None:
            name = name.lower()
            if name in _CONNECTION_SPECIFIC:
                close = close or name == b"connection" and b"close" in value.lower()
                continue
            prefix = _name_prefix(name)
        if prefix is _CONTENT_LENGTH:
            has_length = True
        size = len(value)
        parts.append(prefix + (short[size] + value if size < 127 else _string(value)))
    return b"".join(parts), has_length, close
