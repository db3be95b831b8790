"""Several workers of one data directory in this process: what `miniplane serve --workers N` runs, minus sockets.

Contract: `start_workers_in_process(nursery, tmp_path, count, **options)`
starts `count` control planes (`tests.support.server.start_in_process`) on
one SQLite data directory, each with the `WorkerSpec` the parent of
`--workers` would hand it (its index and peer links; no listening socket:
each is reached through its own ASGI transport), worker 0 first, as the
parent does; returns their `Server`s. Cancelling `nursery` stops them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from api.assembly import ServeOptions, WorkerSpec, peer_group
from tests.support.server import Server, start_in_process

__all__ = ["start_workers_in_process"]


async def start_workers_in_process(nursery: trio.Nursery, tmp_path: Path, count: int, **options: Any) -> list[Server]:
    """`count` workers over one SQLite file (see the module doc)."""
    group = peer_group(ServeOptions(store="sqlite", workers=count))
    assert group is not None
    try:
        servers = []
        for index in range(count):
            spec = WorkerSpec(index, listen_fd=-1, ready_fd=-1, lifeline_fd=-1, peers=group.links(index))
            servers.append(await start_in_process(nursery, tmp_path, store="sqlite", worker=spec, **options))
        return servers
    finally:
        group.close()  # each worker's store holds its own duplicates of the descriptors
