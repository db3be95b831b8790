"""`pattern` with Go's semantics: RE2, unanchored search, Go's error words.

Kubernetes compiles a schema's `pattern` with Go's `regexp` (RE2). Python's
`re` would read some patterns differently (`$` also matches before a final
newline; lookarounds and backreferences are accepted), so patterns are
compiled with RE2 itself (`google-re2`, which cel-python already depends
on): what Go rejects (lookarounds, backreferences, repeats over 1000) is
rejected here, and what Go accepts matches the same strings.

Compile errors are worded as Go's (`error parsing regexp: missing closing ):
`a(``); the mapping covers RE2's error codes one to one.

Internal to `runtime.server.schema`: imported by its modules only.
"""

from __future__ import annotations

import functools

import re2

__all__ = ["Pattern", "PatternError", "compile_pattern"]

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False

# RE2 (C++) error code text -> Go regexp/syntax ErrorCode text.
_GO_WORDS = {
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class range": "invalid character class range",
    "invalid character class": "invalid character class",
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid UTF-8": "invalid UTF-8",
    "invalid named capture group": "invalid named capture",
    "pattern too large - compile failed": "expression too large",
}


class PatternError(ValueError):
    """A pattern Go's regexp rejects; `str()` is Go's message."""


class Pattern:
    """A compiled pattern: `search(text)` is Go's `MatchString`."""

    __slots__ = ("_regexp", "source")

    def __init__(self, source: str, regexp: object) -> None:
        self.source = source
        self._regexp = regexp

    def search(self, text: str) -> bool:
        return self._regexp.search(text) is not None

    def __repr__(self) -> str:
        return f"Pattern({self.source!r})"


@functools.lru_cache(maxsize=4096)
def compile_pattern(source: str) -> Pattern:
    """Compile `source` as Go would; raises `PatternError` with Go's words."""
    try:
        return Pattern(source, re2.compile(source, options=_OPTIONS))
    except re2.error as exc:
        raw = exc.args[0] if exc.args else b""
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        code, _, fragment = text.partition(": ")
        words = _GO_WORDS.get(code, code)
        raise PatternError(f"error parsing regexp: {words}: `{fragment or source}`") from None
