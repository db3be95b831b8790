"""Comparing resource versions as a client may: numbers when both are numbers, else only equality.

The spec calls resource versions opaque strings to hand back unchanged. A
client may still order two of them when both are decimal numbers (as
miniplane and etcd write them; Kubernetes' `CompareResourceVersion` does the
same): compared as unbounded integers, never squeezed into 64 bits. Any
other pair can only be equal or not. Pure code, no I/O.

Example::

    compare("9", "10")          # -1: 9 is older
    compare("abc", "abc")       # 0
    compare("abc", "10")        # raises Incomparable
    is_at_least("10", "9")      # True
    is_at_least("abc", "10")    # False: cannot know, so not yet
"""

from __future__ import annotations

import re

__all__ = ["Incomparable", "parse", "compare", "is_at_least", "is_newer"]

_DECIMAL = re.compile(r"[0-9]+")


class Incomparable(ValueError):
    """Two different resource versions that are not both decimal numbers."""


def parse(resource_version: str) -> int | None:
    """Return the version as an int when it is a decimal number (ASCII digits only), else None."""
    if _DECIMAL.fullmatch(resource_version):
        return int(resource_version)
    return None


def compare(a: str, b: str) -> int:
    """Return -1, 0 or 1 as `a` is older than, the same as, or newer than `b`.

    Raises `Incomparable` when the two differ and are not both decimal numbers.
    """
    x, y = parse(a), parse(b)
    if x is not None and y is not None:
        return (x > y) - (x < y)
    if a == b:
        return 0
    raise Incomparable(f"resource versions {a!r} and {b!r} cannot be ordered")


def is_at_least(current: str, wanted: str) -> bool:
    """Return whether `current` is known to be `wanted` or newer.

    An empty `wanted` is always reached; an empty `current` reaches nothing
    else. Incomparable versions are not reached (callers wait on).
    """
    if not wanted:
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
