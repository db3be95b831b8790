"""Go's formatting of values, as Kubernetes prints them in its messages: the one place they are written.

- `go_quote(text)`: `%q` of a string (`strconv.Quote`); `go_quote_list(items)`
  its `%q` of a `[]string` (`["a" "b"]`).
- `go_number(value)`: `%v` of a number or boolean (`10`, `1.5`, `1e+21`).
- `go_plus_v(value)`: `%+v` (and `%v`) of a decoded JSON value (`map[a:1 b:[x y]]`).
- `go_json(value)`: `json.Marshal` of a decoded JSON value.
- `go_value(value, decoded=...)`: a bad value as apimachinery's `field.Error` prints it.
- `aggregate_message(errors)`: `utilerrors.NewAggregate(errors).Error()`.

Pure functions, no I/O.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["go_quote", "go_quote_list", "go_number", "go_plus_v", "go_json", "go_value", "GoText",
           "aggregate_message"]

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


def go_quote_list(items: Iterable[str]) -> str:
    """Return Go's `%q` of a `[]string`: `["a" "b"]`, `[]` when empty."""
    return "[" + " ".join(go_quote(i) for i in items) + "]"


def go_number(value: float) -> str:
    """A number (or boolean) as Go's `%v` prints it (`10`, `1.5`, `1e+21`, `+Inf`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if math.isnan(value):
        return "NaN"
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" in text:
        mantissa, _, exponent = text.partition("e")
        sign = "-" if exponent.startswith("-") else "+"
        digits = exponent.lstrip("+-").rjust(2, "0")
        text = f"{mantissa}e{sign}{digits}"
    return text


def go_plus_v(value: Any) -> str:
    """Go's `%+v` of a decoded JSON value (`map[a:1 b:[x y]]`: keys sorted, strings bare, nil `<nil>`).

    Numbers are float64 once decoded, so an integer prints without a
    fraction below 1e21 and in Go's exponent form above.
    """
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_plus_v(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_plus_v(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, (bool, int, float)):
        return go_number(value if isinstance(value, bool) else float(value))
    return str(value)


def go_json(value: Any) -> str:
    """Go's `json.Marshal` of a decoded JSON value: compact, map keys sorted, `<>&` escaped."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class GoText(str):
    """A bad value already written as Go prints it (e.g. a struct's `%#v`): shown as it is."""


def go_value(value: Any, *, decoded: bool = False) -> str:
    """A bad value as apimachinery's `field.Error` prints it.

    Strings as `%q`, numbers and booleans as `%v`, `GoText` as it is. The
    rest depends on where the value comes from:

    - a typed field (`decoded=False`, built-in validation): nil is the string
      `"null"` quoted (field.Error's own substitution), a `[]string` its `%#v`
      (`[]string{"a", "b"}`), anything else compact JSON;
    - a decoded JSON value (`decoded=True`, custom-resource schemas): nil is
      `null`, lists and objects compact JSON with sorted keys (Go prints
      `%#v` of `interface{}`, which has no JSON equivalent).
    """
    if isinstance(value, GoText):
        return str(value)
    if value is None:
        return "null" if decoded else go_quote("null")
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, (bool, int, float)):
        return go_number(value)
    if decoded:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "[]string{" + ", ".join(go_quote(v) for v in value) + "}"
    return json.dumps(value, separators=(",", ":"))


def aggregate_message(errors: Sequence[str]) -> str:
    """Return the message of `utilerrors.NewAggregate(errors)`; "" when there are none.

    One error is its own message; several are de-duplicated (first seen wins)
    and written `[a, b]`, unless only one distinct message remains.
    """
    errs = [e for e in errors if e]
    if not errs:
        return ""
    if len(errs) == 1:
        return errs[0]
    seen: dict[str, None] = dict.fromkeys(errs)
    if len(seen) == 1:
        return errs[0]
    return "[" + ", ".join(seen) + "]"
