"""`write_all`: a benchmark's objects created through a `Registry` by concurrent writers.

Contract: `write_all(registry, user, objects, writers)` starts `writers` tasks,
task `t` creating `objects[t::writers]` in that order as `user` (field
manager `bench`), each object in the namespace its metadata names; it returns
once every object is written and raises what a create raises (the other
writers are cancelled, as a trio nursery does).
"""

from __future__ import annotations

from typing import Any

import trio

from runtime.machinery.options import Body, WriteOptions
from runtime.server.rbac.user import UserInfo
from runtime.server.registry import Registry

__all__ = ["write_all"]


async def write_all(registry: Registry, user: UserInfo, objects: list[dict[str, Any]], writers: int) -> None:
    opts = WriteOptions(field_manager="bench")

    async def writer(start: int) -> None:
        for obj in objects[start::writers]:
            rt = registry.scheme.by_kind(obj["kind"])
            await registry.create(user, rt, obj["metadata"].get("namespace", ""), Body(obj), opts)

    async with trio.open_nursery() as nursery:
        for w in range(writers):
            nursery.start_soon(writer, w)
