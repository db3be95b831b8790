"""An HTTP/2 request's fields, checked as RFC 9113 8.2-8.3 says, in the shape Hypercorn's `Request` takes.

Contract: `parse_request(fields)` takes a HEADERS block's decoded fields
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
from typing import NamedTuple

__all__ = ["ParsedRequest", "parse_request"]

_CONNECTION_SPECIFIC = frozenset({b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"upgrade"})
_PSEUDO = frozenset({b":method", b":scheme", b":path", b":authority"})
_NOT_LOWER_TOKEN = re.compile(rb"[^a-z0-9!#$%&'*+\-.^_`|~]")  # RFC 9110 5.6.2's token, upper case excluded
_NOT_TOKEN = re.compile(rb"[^A-Za-z0-9!#$%&'*+\-.^_`|~]")
#: Names seen well-formed: most requests carry the same few, checked once (bounded: names are the client's).
_GOOD_NAMES: set[bytes] = set()
_GOOD_NAMES_BOUND = 1024


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
