"""Types of the storage tests' fixtures (`tests/unit/storage/conftest.py`).

`StoreFactory`: an async factory of fresh stores (`await make(**options)`).
`Backend`: a backend's name, and for etcd the session's endpoint.
`Revs`: revisions counted from the store's revision when a test began
(`rev(n)`, and `rev.value(text, n)` for what `val(text)` wrote then).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Awaitable, Callable

from runtime.server.storage import Store

__all__ = ["StoreFactory", "Revs", "Backend"]

StoreFactory = Callable[..., Awaitable[Store]]


@dataclass(frozen=True)
class Backend:
    """A backend's name, and for etcd the session's endpoint."""

    name: str
    etcd_endpoint: str = ""


@dataclass(frozen=True)
class Revs:
    """Revisions counted from `base`, the store's revision when the test began."""

    base: int

    def __call__(self, n: int) -> int:
        return self.base + n

    def value(self, text: str, n: int) -> bytes:
        """What `val(text)` wrote at the test's n-th revision."""
        return f"{text}@{self.base + n}".encode()
