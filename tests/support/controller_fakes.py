"""Fakes for a reconciler's unit tests: an informer over a list of objects, a client recording its updates.

Contract: `FakeInformer(*objects)` answers `get(key)` by name and `list(namespace)` as an informer's cache;
`UpdateRecorder().updates` holds each `update(obj, subresource=...)` call as `(obj, subresource)`.
"""

from __future__ import annotations

from typing import Any

from runtime.client.interface import ObjectKey

__all__ = ["FakeInformer", "UpdateRecorder"]


class FakeInformer:
    """An informer's cache of `objects`."""

    def __init__(self, *objects: dict[str, Any]) -> None:
        self.objects = list(objects)

    def get(self, key: ObjectKey) -> dict[str, Any] | None:
        return next((o for o in self.objects if o["metadata"]["name"] == key.name), None)

    def list(self, namespace: str | None = None) -> list[dict[str, Any]]:
        return [o for o in self.objects if not namespace or o["metadata"].get("namespace") == namespace]


class UpdateRecorder:
    """A client whose updates are recorded and answered with the object written."""

    def __init__(self) -> None:
        self.updates: list[tuple[dict[str, Any], str]] = []

    async def update(self, obj: dict[str, Any], *, subresource: str = "") -> dict[str, Any]:
        self.updates.append((obj, subresource))
        return obj
