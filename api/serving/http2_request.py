"""An HTTP/2 request's header block, decoded and checked as RFC 9113 8.2-8.3 says, in the shape Hypercorn's `Request` takes.

Contract: `RequestBlocks(max_header_list_size)` is one connection's
decoding side: `decode(block)` gives the block's `parse_request`, raising
`hpack.HPACKError` (`hpack.OversizedHeaderListError` for a list over the
size) where the block breaks the decoder. A block seen again while the
decoder's dynamic table is as it was is given the request it gave then,
neither decoded nor checked again: a client repeating a request (a poll, a
benchmark's round of GETs) sends the same bytes, every field indexed or a
literal not added to the table (as nghttp2 sends `:path` and
`authorization`, and Go's client any field once indexed), and decoding
them was a tenth of an HTTP/2 GET's CPU (py-spy). A block that changes the
table (a field added, a size update) is not kept, and a change empties
what is kept; what is kept is at most `max_header_list_size` of fields
(one request's worth), emptied when full.

`SharedBlocks(bound)` is what every connection of a process has decoded,
given to each connection's `RequestBlocks(..., shared)`: a block that
left its connection's table unchanged is kept there under its bytes and
the table's contents (its size and entries), which are all its decoding
depends on, so another connection sending the same bytes over an equal
table gets that request too. Clients of one kind encode the same fields
the same way: each kubectl command, and each run of a benchmark, opens
new connections, whose first request of a path was a full decode each
(h2load's 16 connections over 100 paths: 1,600 per run). It is at most
`bound` of fields (and the tables they were decoded against), emptied
when full. A hit needs the same bytes and table, so the same credentials:
it tells a client nothing about others it could not learn by sending them.

`parse_request(fields)` takes a HEADERS block's decoded fields
(bytes pairs, in order) and gives a `ParsedRequest`, or None when the
request is malformed:
- a field name not a lower-case token, a value holding NUL, CR or LF;
- a connection-specific field (`connection`, `keep-alive`,
  `proxy-connection`, `transfer-encoding`, `upgrade`), or `te` other than
  `trailers`;
- a pseudo-field after a regular one, twice, unknown, or (`:protocol`)
  never offered; `:method`, `:scheme` and `:path` missing (a CONNECT has
  `:method` and `:authority` only); a `:path` that is not origin-form (or
  `*` for OPTIONS); a content-length that is not one number.
What it gives: `host` first (`:authority`, else the `host` field, as
Hypercorn's `filter_pseudo_headers` does, any other `host` dropped), the
other fields in order, `cookie` fields joined with "; " into one at the end
(RFC 9113 8.2.3: an HTTP/1.1 app reads one).

Internal to `api.serving`: imported by its modules only.
"""

from __future__ import annotations

import re
from typing import Iterable, NamedTuple

import hpack

__all__ = ["ParsedRequest", "RequestBlocks", "SharedBlocks", "parse_request"]

_CONNECTION_SPECIFIC = frozenset({b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"upgrade"})
_PSEUDO = frozenset({b":method", b":scheme", b":path", b":authority"})
_NOT_LOWER_TOKEN = re.compile(rb"[^a-z0-9!#$%&'*+\-.^_`|~]")  # RFC 9110 5.6.2's token, upper case excluded
_NOT_TOKEN = re.compile(rb"[^A-Za-z0-9!#$%&'*+\-.^_`|~]")
#: Names seen well-formed: most requests carry the same few, checked once (bounded: names are the client's).
_GOOD_NAMES: set[bytes] = set()
_GOOD_NAMES_BOUND = 1024
_UNSEEN = object()


class ParsedRequest(NamedTuple):
    method: str
    path: bytes
    headers: list[tuple[bytes, bytes]]
    content_length: int | None


def _good_name(name: bytes) -> bool:
    if name in _GOOD_NAMES:
        return True
    if not name or _NOT_LOWER_TOKEN.search(name):
        return False
    if len(_GOOD_NAMES) < _GOOD_NAMES_BOUND:
        _GOOD_NAMES.add(name)
    return True


def parse_request(fields: list[tuple[bytes, bytes]]) -> ParsedRequest | None:
    """The request `fields` make, or None when they make a malformed one (see the module docstring)."""
    pseudo: dict[bytes, bytes] = {}
    headers: list[tuple[bytes, bytes]] = [(b"host", b"")]  # its value below
    host = None
    cookies = []
    content_length = None
    for name, value in fields:
        if b"\r" in value or b"\n" in value or b"\0" in value:
            return None
        if name[:1] == b":":
            if len(headers) > 1 or host is not None or cookies or name not in _PSEUDO or name in pseudo:
                return None
            pseudo[name] = value
        elif not _good_name(name) or name in _CONNECTION_SPECIFIC or (name == b"te" and value != b"trailers"):
            return None
        elif name == b"host":
            host = value
        elif name == b"cookie":
            cookies.append(value)
        else:
            if name == b"content-length":
                if not value.isdigit() or content_length is not None and int(value) != content_length:
                    return None
                content_length = int(value)
            headers.append((name, value))
    method = pseudo.get(b":method")
    if not method or _NOT_TOKEN.search(method):
        return None
    path = pseudo.get(b":path")
    authority = pseudo.get(b":authority")
    if method == b"CONNECT":
        if authority is None or path is not None or b":scheme" in pseudo:
            return None
        path = b""
    elif (path is None or b":scheme" not in pseudo
          or not (path[:1] == b"/" or path == b"*" and method == b"OPTIONS")):
        return None
    headers[0] = (b"host", authority if authority is not None else host or b"")
    if cookies:
        headers.append((b"cookie", b"; ".join(cookies)))
    return ParsedRequest(method.decode("ascii"), path, headers, content_length)


def _list_size(fields: Iterable[tuple[bytes, bytes]]) -> int:
    """Fields' size as RFC 7541 4.1 counts it (a header list's, a table's)."""
    return sum(len(name) + len(value) + 32 for name, value in fields)


class _Kept(dict):  # type: ignore[type-arg]
    """A dict of at most `bound` in size, emptied when a new entry would pass it: `get` stays dict's own."""

    def __init__(self, bound: int) -> None:
        super().__init__()
        self._bound = bound
        self._size = 0

    def keep(self, key: object, value: object, size: int) -> None:
        if self._size + size > self._bound:
            self.clear()
        if size <= self._bound:
            self[key] = value
            self._size += size

    def clear(self) -> None:
        super().clear()
        self._size = 0


class SharedBlocks(_Kept):
    """Requests decoded on any connection, by block and table (see the module docstring): (request, fields'
    size) under (block, the table's size, its entries)."""


class RequestBlocks:
    """One connection's request header blocks, decoded and parsed; repeated ones once (see the module docstring)."""

    def __init__(self, max_header_list_size: int, shared: SharedBlocks | None = None) -> None:
        self._decoder = hpack.Decoder(max_header_list_size=max_header_list_size)
        self._bound = max_header_list_size
        self._shared = shared if shared is not None else SharedBlocks(0)  # none: nothing shared
        self._kept = _Kept(max_header_list_size)  # block -> its request
        self._table = self._table_state()  # the table the kept blocks were decoded against

    def decode(self, block: bytes) -> ParsedRequest | None:
        """The request `block` makes, or None when it is malformed; raises `hpack.HPACKError` when the block
        breaks the decoder (the connection's end: its table no longer follows the client's). Its headers are
        the caller's own list."""
        if not self._unchanged():
            self._kept.clear()
            self._table = self._table_state()
        request = self._kept.get(block, _UNSEEN)
        if request is _UNSEEN:
            request = self._decoded(block)
        if request is None:
            return None
        method, path, headers, content_length = request
        return ParsedRequest(method, path, list(headers), content_length)

    def _decoded(self, block: bytes) -> ParsedRequest | None:
        table = self._decoder.header_table
        entries = tuple(table.dynamic_entries)
        key = (block, table.maxsize, entries)
        shared = self._shared.get(key)
        if shared is not None and shared[1] <= self._bound:  # decoded elsewhere, and within this list's bound
            request, size = shared
        else:
            fields = self._decoder.decode(block, raw=True)
            request = parse_request(fields)
            if not self._unchanged():  # the block changed the table: its bytes may mean another thing next time
                return request
            size = _list_size(fields)
            self._shared.keep(key, (request, size), size + _list_size(entries))  # the table kept with it
        self._kept.keep(block, request, size)
        return request

    def _table_state(self) -> tuple[int, int, tuple[bytes, bytes] | None]:
        table = self._decoder.header_table
        entries = table.dynamic_entries
        return table.maxsize, len(entries), entries[0] if entries else None

    def _unchanged(self) -> bool:
        """Whether the table is the one `self._table` saw: a field added is a new newest entry (held there, so
        no other can take its place), a size update a new size or fewer entries."""
        size, count, newest = self._table_state()
        return size == self._table[0] and count == self._table[1] and newest is self._table[2]
