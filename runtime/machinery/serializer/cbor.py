"""Kubernetes' CBOR wire format (`application/cbor`, RFC 8949) for JSON-form objects.

`encode(obj)` writes what Kubernetes' CBOR serializer writes
(`apimachinery/pkg/runtime/serializer/cbor`, `internal/modes/encode.go`):

- the item is enclosed in the self-described CBOR tag 55799, so every body
  starts with the magic bytes 0xd9 0xd9 0xf7;
- strings, map keys included, are CBOR *byte* strings (major type 2):
  Kubernetes does not validate UTF-8 at encode time and so never writes text
  strings;
- map keys are sorted bytewise by their encoding (RFC 8949 4.2.1, core
  deterministic order), floats take the shortest width that keeps their
  value, lengths are definite; NaN, infinities and integers outside int64
  are refused.

`decode(data)` reads what Kubernetes' decoder accepts (`internal/modes/decode.go`):
text or byte strings (byte strings become `str`; invalid UTF-8 is refused),
definite or indefinite lengths, any tag (its content is kept, 55799 or not).
It refuses, as Kubernetes does: duplicate map keys (a map with two equal
keys is invalid CBOR, rejected outright rather than reported as a strict
error), non-string map keys, nesting deeper than 64, more than 1024 array
elements or map pairs in one container, NaN/Inf, integers outside int64,
`undefined`, and bytes after the item.

A watch stream is a CBOR Sequence (RFC 8742, `application/cbor-seq`): each
entry is one self-described item `{"type": ..., "object": <self-described
object>}`, as Kubernetes embeds the object's own encoding in the event.

Caveats: the decoder is pure Python, written for request bodies (at most a
few MiB); `float` values that are whole numbers stay floats (CBOR keeps the
distinction, as Kubernetes does).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from typing import Any

import cbor2

__all__ = ["CBORError", "SELF_DESCRIBED", "SELF_DESCRIBED_PREFIX", "decode", "encode", "encode_watch_event",
           "decode_sequence"]

SELF_DESCRIBED = 55799
"""Tag number of self-described CBOR (RFC 8949 3.4.6)."""

SELF_DESCRIBED_PREFIX = b"\xd9\xd9\xf7"
"""The encoded head of tag 55799: the first three bytes of every body Kubernetes writes."""

_MAX_DEPTH = 64
_MAX_ITEMS = 1024
_INT64 = (-(1 << 63), (1 << 63) - 1)


class CBORError(ValueError):
    """Bytes are not CBOR Kubernetes accepts, or a value has no CBOR form here."""


# --- encoding ----------------------------------------------------------------

def _wire(value: Any, depth: int = 0) -> Any:
    """The value with every str as UTF-8 bytes (CBOR byte strings); refuses what Kubernetes refuses."""
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, Mapping):
        return {_key(k): _wire(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_wire(v, depth + 1) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        if not _INT64[0] <= value <= _INT64[1]:
            raise CBORError(f"integer {value} is outside int64")
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise CBORError(f"{value} has no CBOR (or JSON) form")
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    raise CBORError(f"cannot encode {type(value).__name__}")


def _key(key: Any) -> bytes:
    if not isinstance(key, str):
        raise CBORError(f"map key {key!r} is not a string")
    return key.encode()


def encode(obj: Any) -> bytes:
    """Return the self-described CBOR bytes of the JSON-form value `obj`.

    Raises `CBORError` for NaN/Inf, integers outside int64, non-string keys
    and values with no JSON form.
    """
    return cbor2.dumps(cbor2.CBORTag(SELF_DESCRIBED, _wire(obj)), canonical=True)


def encode_watch_event(event_type: str, obj: Any, encoded_object: bytes | None = None) -> bytes:
    """Return one entry of a CBOR Sequence watch stream.

    The entry is a self-described `{"object": ..., "type": ...}` whose
    `object` is the object's own self-described encoding (`encoded_object`
    when the caller has it cached). Raises `CBORError` like `encode`.
    """
    inner = encoded_object if encoded_object is not None else encode(obj)
    # Keys in encoded-bytes order: b"type" (head 0x44) before b"object" (head 0x46).
    return (SELF_DESCRIBED_PREFIX + b"\xa2" + cbor2.dumps(b"type") + cbor2.dumps(event_type.encode())
            + cbor2.dumps(b"object") + inner)


# --- decoding ----------------------------------------------------------------

class _Reader:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        end = self.pos + n
        if end > len(self.data):
            raise CBORError("unexpected end of CBOR data")
        chunk = self.data[self.pos:end]
        self.pos = end
        return chunk

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise CBORError("unexpected end of CBOR data")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def argument(self, info: int) -> int | None:
        """The head's argument; None for indefinite length (info 31)."""
        if info < 24:
            return info
        if info == 24:
            return self.byte()
        if info == 25:
            return struct.unpack(">H", self.take(2))[0]
        if info == 26:
            return struct.unpack(">I", self.take(4))[0]
        if info == 27:
            return struct.unpack(">Q", self.take(8))[0]
        if info == 31:
            return None
        raise CBORError(f"malformed CBOR head (additional information {info})")


_BREAK = object()


def _item(r: _Reader, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise CBORError(f"exceeded max nested level {_MAX_DEPTH}")
    head = r.byte()
    major, info = head >> 5, head & 0x1F
    if major == 7:
        return _simple(r, info)
    arg = r.argument(info)
    if major == 0:
        return _int(arg)
    if major == 1:
        return _int(-1 - arg) if arg is not None else _bad_indefinite(major)
    if major in (2, 3):
        raw = _string_bytes(r, major, arg)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise CBORError("invalid UTF-8 in a CBOR string") from None
    if major == 4:
        out: list[Any] = []
        while arg is None or len(out) < arg:
            if arg is None and r.data[r.pos:r.pos + 1] == b"\xff":
                r.pos += 1
                break
            if len(out) >= _MAX_ITEMS:
                raise CBORError(f"exceeded max number of elements {_MAX_ITEMS} for CBOR array")
            out.append(_item(r, depth + 1))
        return out
    if major == 5:
        obj: dict[str, Any] = {}
        count = 0
        while arg is None or count < arg:
            if arg is None and r.data[r.pos:r.pos + 1] == b"\xff":
                r.pos += 1
                break
            if count >= _MAX_ITEMS:
                raise CBORError(f"exceeded max number of key-value pairs {_MAX_ITEMS} for CBOR map")
            key = _item(r, depth + 1)
            if not isinstance(key, str):
                raise CBORError(f"CBOR map key {key!r} is not a string")
            if key in obj:
                raise CBORError(f'CBOR map has duplicate key "{key}"')
            obj[key] = _item(r, depth + 1)
            count += 1
        return obj
    if major == 6:
        if arg is None:
            return _bad_indefinite(major)
        return _item(r, depth + 1)  # unrecognized tags decode to their content
    raise CBORError(f"malformed CBOR major type {major}")  # pragma: no cover (3 bits)


def _bad_indefinite(major: int) -> Any:
    raise CBORError(f"indefinite length is not allowed for CBOR major type {major}")


def _int(value: int | None) -> int:
    if value is None:
        _bad_indefinite(0)
    if not _INT64[0] <= value <= _INT64[1]:
        raise CBORError(f"CBOR integer {value} overflows int64")
    return value


def _string_bytes(r: _Reader, major: int, arg: int | None) -> bytes:
    if arg is not None:
        return r.take(arg)
    parts = []
    while True:
        head = r.byte()
        if head == 0xFF:
            return b"".join(parts)
        if head >> 5 != major or head & 0x1F == 31:
            raise CBORError("malformed chunk of an indefinite-length CBOR string")
        parts.append(r.take(r.argument(head & 0x1F)))


def _simple(r: _Reader, info: int) -> Any:
    if info == 20:
        return False
    if info == 21:
        return True
    if info == 22:
        return None
    if info in (25, 26, 27):
        fmt = {25: ">e", 26: ">f", 27: ">d"}[info]
        value = struct.unpack(fmt, r.take(struct.calcsize(fmt)))[0]
        if math.isnan(value) or math.isinf(value):
            raise CBORError("NaN and infinite floats are not accepted")
        return value
    if info == 31:
        raise CBORError("unexpected CBOR break")
    raise CBORError(f"CBOR simple value {info} is not accepted")


def decode(data: bytes) -> Any:
    """Return the JSON-form value of one CBOR data item (self-described or not).

    Raises `CBORError` for malformed CBOR, for anything Kubernetes' decoder
    refuses (see the module docstring), and for bytes after the item.
    """
    r = _Reader(bytes(data))
    value = _item(r, 0)
    if r.pos != len(r.data):
        raise CBORError(f"{len(r.data) - r.pos} bytes of extraneous data after the CBOR item")
    return value


def decode_sequence(data: bytes) -> list[Any]:
    """Return the values of a CBOR Sequence (a watch stream's bytes). Raises `CBORError`."""
    r = _Reader(bytes(data))
    values = []
    while r.pos < len(r.data):
        values.append(_item(r, 0))
    return values
