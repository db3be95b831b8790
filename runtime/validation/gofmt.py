"""Go's formatting of values, as Kubernetes prints them in its messages: `%q`, `%+v`, `json.Marshal`."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["go_quote", "go_plus_v", "go_json"]

_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
               "\v": "\\v", "\\": "\\\\", '"': '\\"'}


def go_quote(text: str) -> str:
    """Return Go's `strconv.Quote(text)` (`%q`): printable characters as they are, é included.

    JSON would write `\\u00e9`; Go keeps what `unicode.IsPrint` accepts and
    escapes the rest as `\\xXX` (below U+0020 and DEL), `\\uXXXX` or `\\UXXXXXXXX`;
    a lone surrogate is not a valid rune and reads as U+FFFD.
    """
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\\ufffd")
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def go_plus_v(value: Any) -> str:
    """Go's `%+v` of a decoded JSON value (`map[a:1 b:[x y]]`: keys sorted, strings bare, nil `<nil>`)."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_plus_v(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_plus_v(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        number = float(value)
        if number.is_integer() and abs(number) < 1e21:
            return str(int(number))
        text = repr(number)
        return text.replace("e+0", "e+").replace("e-0", "e-") if "e" in text else text
    return str(value)


def go_json(value: Any) -> str:
    """Go's `json.Marshal` of a decoded JSON value: compact, map keys sorted, `<>&` escaped."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
