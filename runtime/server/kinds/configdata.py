"""What ConfigMaps and Secrets share: config keys, base64 values read as Go reads them, the 1 MiB bound.

- `config_key_errors(key)`: apimachinery's `IsConfigMapKey` (at most 253
  bytes, of `[-._a-zA-Z0-9]`, not `.`, `..` or starting with `..`), its
  messages word for word.
- `go_base64(text)`: Go's `base64.StdEncoding.Decode`, which Kubernetes'
  JSON decoder runs on every `[]byte` field: newlines are skipped, padding
  is required, the error names the offset Go names
  (`illegal base64 data at input byte 4`). `canonical_base64` re-encodes
  what decoded, as Kubernetes writes the bytes back (`YR==` is `YQ==`).
- `decode_bytes(obj, field, prefix)`: a map of base64 values checked and made
  canonical, or the 400 Kubernetes answers for the first bad one;
  `decoded_size(text)` the bytes of a value it left, counted, not decoded.
- `nulls_as_empty(body, fields)`: a `null` value in those maps is an empty
  one, as Go's decoder leaves a string (or `[]byte`) it reads `null` into.
- `immutable_errors(new, old, fields)`: what `immutable: true` freezes;
  `drop_empty_maps(obj, names)`: empty maps left out, as `omitempty` does.
"""

from __future__ import annotations

import base64
import re
from typing import Any

from runtime.machinery.errors import BadRequest
from runtime.machinery.options import Body
from runtime.machinery.validation.fielderrors import FieldError, forbidden

__all__ = ["MAX_SIZE", "config_key_errors", "go_base64", "canonical_base64", "decode_bytes", "decoded_size",
           "immutable_errors", "IMMUTABLE_DETAIL", "nulls_as_empty", "drop_empty_maps"]

#: Kubernetes' MaxSecretSize: the bound of a Secret's data and of a ConfigMap's data and binaryData together.
MAX_SIZE = 1 * 1024 * 1024
#: ValidateConfigMapUpdate's and ValidateSecretUpdate's detail.
IMMUTABLE_DETAIL = "field is immutable when `immutable` is set"

_KEY = re.compile(r"[-._a-zA-Z0-9]+")
_KEY_MSG = ("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or "
            "'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")
_ALPHABET = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_NEWLINES = frozenset(b"\r\n")
#: Whole groups of four with at most two padding characters at the end: base64 Go's decoder accepts.
_CANONICAL = re.compile(rb"[A-Za-z0-9+/]*={0,2}")
_NOT_BASE64 = re.compile(rb"[^A-Za-z0-9+/\r\n]")
_NEWLINE_RUN = re.compile(rb"[\r\n]*")


def config_key_errors(key: str) -> list[str]:
    """apimachinery's `IsConfigMapKey`: every message for `key` (none when it is a valid config key)."""
    errs = []
    if len(key.encode("utf-8")) > 253:  # Go's len: bytes, not characters
        errs.append("must be no more than 253 characters")
    if not _KEY.fullmatch(key):
        errs.append(_KEY_MSG)
    if key == ".":
        errs.append("must not be '.'")
    elif key == "..":
        errs.append("must not be '..'")
    elif key.startswith(".."):
        errs.append("must not start with '..'")
    return errs


class _Corrupt(ValueError):
    """Go's `base64.CorruptInputError`: the offset of the first byte that does not decode."""

    def __init__(self, offset: int) -> None:
        super().__init__(f"illegal base64 data at input byte {offset}")


def _skip_newlines(src: bytes, si: int) -> int:
    return _NEWLINE_RUN.match(src, si).end()  # type: ignore[union-attr]  # matches the empty run too


def _quantum_end(src: bytes, si: int) -> tuple[int, bool]:
    """Go's decodeQuantum over one group of four from `si`: (where the next group starts, whether padding
    ended the input). Raises `_Corrupt` where Go does."""
    j = 0
    while j < 4:
        if si == len(src):
            if j == 0:
                return si, True
            raise _Corrupt(si - j)
        byte = src[si]
        si += 1
        if byte in _ALPHABET:
            j += 1
            continue
        if byte in _NEWLINES:
            si = _skip_newlines(src, si)
            continue
        if byte != ord("=") or j < 2:
            raise _Corrupt(si - 1)
        if j == 2:  # "==" expected: the first one is consumed
            si = _skip_newlines(src, si)
            if si == len(src):
                raise _Corrupt(len(src))
            if src[si] != ord("="):
                raise _Corrupt(si - 1)
            si += 1
        si = _skip_newlines(src, si)
        if si < len(src):
            raise _Corrupt(si)  # trailing garbage
        return si, True
    return si, False


def _newlines_before(src: bytes, end: int) -> int:
    return src.count(b"\n", 0, end) + src.count(b"\r", 0, end)


def _failing_quantum(src: bytes) -> int:
    """Where Go's decoder starts the group of four that holds the first byte neither base64 nor a newline
    (or the input's end): past the last whole group before it. Found by counting, not walking, so a bad
    value costs what a good one does."""
    bad = _NOT_BASE64.search(src)
    stop = bad.start() if bad else len(src)
    alphabet = stop - _newlines_before(src, stop)
    whole = alphabet - alphabet % 4
    if whole == 0:
        return 0
    low, high = whole, stop  # the least index with `whole` base64 bytes before it
    while low < high:
        mid = (low + high) // 2
        if mid - _newlines_before(src, mid) >= whole:
            high = mid
        else:
            low = mid + 1
    return low


def go_base64(text: str) -> bytes:
    """The bytes of base64 `text` as Go's `base64.StdEncoding` decodes them; raises ValueError in Go's words."""
    src = text.encode("utf-8")
    cleaned = src.replace(b"\n", b"").replace(b"\r", b"")
    if len(cleaned) % 4 == 0 and _CANONICAL.fullmatch(cleaned):
        return base64.b64decode(cleaned)  # what Go accepts, at C speed; a bad value is walked below
    si, done = _failing_quantum(src), False
    while not done and si < len(src):
        si, done = _quantum_end(src, si)  # raises where Go does: what passes it passed the check above
    return base64.b64decode(cleaned)


def canonical_base64(data: bytes) -> str:
    """Bytes as Go's JSON encoder writes a `[]byte`: standard, padded base64."""
    return base64.b64encode(data).decode("ascii")


def decode_bytes(obj: dict[str, Any], field: str, prefix: str) -> None:
    """Make the base64 map `obj[field]` canonical base64; raises the 400 Kubernetes' decoder answers for the
    first value that is not base64 (`prefix`: whose decoding failed)."""
    values = obj.get(field)
    if not values:
        return
    canonical: dict[str, str] = {}
    for key, text in values.items():
        try:
            canonical[key] = canonical_base64(go_base64(text))
        except ValueError as exc:
            raise BadRequest(f"{prefix}: {exc}") from None
    obj[field] = canonical


def decoded_size(text: str) -> int:
    """The number of bytes canonical base64 `text` (what `decode_bytes` leaves) holds, from its length."""
    return len(text) // 4 * 3 - (2 if text.endswith("==") else 1 if text.endswith("=") else 0)


def nulls_as_empty(body: Body, fields: tuple[str, ...]) -> Body:
    """`body` with each `null` value of the maps `fields` an empty string (the body itself when none is)."""
    data = body.data
    if not isinstance(data, dict):
        return body
    nulled = {name: data[name] for name in fields
              if isinstance(data.get(name), dict) and None in data[name].values()}
    if not nulled:
        return body
    fixed = dict(data)
    for name, values in nulled.items():
        fixed[name] = {key: "" if value is None else value for key, value in values.items()}
    return Body(fixed, body.duplicates)


def drop_empty_maps(obj: dict[str, Any], names: tuple[str, ...]) -> None:
    """Leave out the empty maps of `names`, as Kubernetes' JSON (`omitempty`) does."""
    for name in names:
        if name in obj and not obj[name]:
            del obj[name]


def immutable_errors(new: dict[str, Any], old: dict[str, Any], fields: tuple[str, ...]) -> list[FieldError]:
    """What an object whose old self was `immutable: true` may not do: unset it, or change `fields`
    (an absent map equals an empty one, as Go's nil and empty maps compare after decoding)."""
    if old.get("immutable") is not True:
        return []
    errs = []
    if new.get("immutable") is not True:
        errs.append(forbidden("immutable", IMMUTABLE_DETAIL))
    errs += [forbidden(name, IMMUTABLE_DETAIL) for name in fields if (new.get(name) or {}) != (old.get(name) or {})]
    return errs
