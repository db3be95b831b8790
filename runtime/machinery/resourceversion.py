"""Comparing resource versions as a client may: numbers when both are numbers, else only equality.

The spec calls resource versions opaque strings to hand back unchanged. A
client may still order two of them when both are well-formed decimal
numbers, as Kubernetes' `CompareResourceVersion` defines them: ASCII digits
with no leading zero, so "0" (the "any version" of a list or watch) and
"007" are not orderable. They are ordered by length, then lexicographically
(the spec's rule: no fixed bit size). Any other pair can only be equal or
not. Pure code, no I/O.

Example::

    compare("9", "10")          # -1: 9 is older
    compare("abc", "abc")       # 0
    compare("abc", "10")        # raises Incomparable
    compare("007", "7")         # raises Incomparable: a leading zero is not well formed
    is_at_least("10", "9")      # True
    is_at_least("abc", "10")    # False: cannot know, so not yet
"""

from __future__ import annotations

import re

__all__ = ["Incomparable", "parse", "compare", "is_at_least", "is_newer"]

_DECIMAL = re.compile(r"[1-9][0-9]*")


class Incomparable(ValueError):
    """Two different resource versions that are not both decimal numbers."""


def parse(resource_version: str) -> int | None:
    """Return the version as an int when it is well formed (ASCII digits, no leading zero), else None."""
    if _DECIMAL.fullmatch(resource_version):
        return int(resource_version)
    return None


def compare(a: str, b: str) -> int:
    """Return -1, 0 or 1 as `a` is older than, the same as, or newer than `b`.

    Raises `Incomparable` when the two differ and are not both well-formed decimal numbers.
    """
    if parse(a) is not None and parse(b) is not None:
        # Length first, then text: the order of the numbers, without converting them.
        x, y = (len(a), a), (len(b), b)
        return (x > y) - (x < y)
    if a == b:
        return 0
    raise Incomparable(f"resource versions {a!r} and {b!r} cannot be ordered")


def is_at_least(current: str, wanted: str) -> bool:
    """Return whether `current` is known to be `wanted` or newer.

    An empty `wanted`, or "0" (any version), is always reached; an empty
    `current` reaches nothing else. Incomparable versions are not reached
    (callers wait on).
    """
    if wanted in ("", "0"):
        return True
    if not current:
        return False
    try:
        return compare(current, wanted) >= 0
    except Incomparable:
        return False


def is_newer(a: str, b: str) -> bool:
    """Return whether `a` is known to be strictly newer than `b` (False when incomparable)."""
    try:
        return compare(a, b) > 0
    except Incomparable:
        return False
