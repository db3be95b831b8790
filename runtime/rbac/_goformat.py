"""Go formatting helpers, so messages read byte-for-byte as kube-apiserver writes them.

`go_quote` is Go's `%q` of a string, `go_quote_list` its `%q` of a `[]string`,
and `aggregate_message` the text of `utilerrors.NewAggregate(errs).Error()`.
Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["go_quote", "go_quote_list", "aggregate_message"]

_ESCAPES = {
    "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
    "\t": "\\t", "\v": "\\v", "\\": "\\\\", '"': '\\"',
}


def go_quote(text: str) -> str:
    """Return `text` quoted as Go's `strconv.Quote` (`%q`) does.

    Printable characters are kept as they are; the rest become `\\xNN`,
    `\\uNNNN` or `\\UNNNNNNNN` escapes, as Go writes them.
    """
    out = ['"']
    for ch in text:
        esc = _ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch.isprintable():
            out.append(ch)
        else:
            code = ord(ch)
            if code < 0x80:
                out.append(f"\\x{code:02x}")
            elif code < 0x10000:
                out.append(f"\\u{code:04x}")
            else:
                out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def go_quote_list(items: Iterable[str]) -> str:
    """Return Go's `%q` of a `[]string`: `["a" "b"]`, `[]` when empty."""
    return "[" + " ".join(go_quote(i) for i in items) + "]"


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
