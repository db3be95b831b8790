"""Controller runtime benchmark: reconciles per second, and informer memory per cached object.

Prints:
- reconciles per second of a no-op reconciler (one worker) fed by 10,000
  object changes, each of a different object, so none is merged by the
  queue:
  * pipeline: the changes arrive as fast as a watch stream can deliver them
    (a stub client yields 10,000 prepared events): informer store and
    handler, work queue, worker, reconcile; timed from the first event to
    the 10,000th reconcile;
  * initial sync: 10,000 ClusterRoles exist when the manager starts (an
    in-process registry): list, replay to the controller, reconcile; timed
    from `Manager.run` to the 10,000th reconcile;
  * live, in process and over HTTPS: the manager runs while 10,000
    ClusterRoles are created (50 concurrent writers through the registry, or
    8 through an HTTPS server in this process); timed from the first write to
    the 10,000th reconcile. The write rate bounds this figure, so it is
    printed too.
- informer memory per cached object (tracemalloc): the traced memory an
  informer holds after listing 10,000 ClusterRoles (store, keys, namespace
  index), divided by 10,000; objects as decoded from JSON (what an informer
  over HTTP holds), and as the in-process client hands them out (deep copies
  of the registry's objects, whose strings are shared with the registry).

Run: `python bench/bench_controllers.py [--quick]` (--quick: a tenth of the
objects). Asserts nothing; figures depend on the machine.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any, AsyncIterator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import trio  # noqa: E402

from runtime.client.kubeconfig import load_kubeconfig  # noqa: E402
from api.assembly import ServeOptions
from api.serving.server import serve  # noqa: E402
from runtime.client.interface import ObjectKey, ObjectList, WatchEvent  # noqa: E402
from runtime.client.http import open_http_client  # noqa: E402
from runtime.client.local import LocalClient  # noqa: E402
from runtime.controller.informer import Informer  # noqa: E402
from runtime.controller.manager import Manager  # noqa: E402
from runtime.server.registry import Registry  # noqa: E402
from runtime.machinery.options import Body, ListOptions, WriteOptions  # noqa: E402
from runtime.machinery.scheme import ResourceType, Scheme  # noqa: E402
from runtime.server.storage import MemoryStore  # noqa: E402
from runtime.server.bootstrap import bootstrap as bootstrap_registry
from runtime.controller.testing import ADMIN  # noqa: E402


def role(scheme: Scheme, i: int) -> dict[str, Any]:
    return {"apiVersion": f"{scheme.rbac_group}/v1", "kind": "ClusterRole",
            "metadata": {"name": f"bench-{i:05d}", "labels": {"bench": "controllers", "index": str(i)}},
            "rules": [{"apiGroups": [""], "resources": ["namespaces", "namespaces/status"],
                       "verbs": ["get", "list", "watch"]}]}


class Counter:
    """A no-op reconciler that sets `done` at the n-th call."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.count = 0
        self.done = trio.Event()
        self.finished_at = 0.0

    async def reconcile(self, key: ObjectKey) -> None:
        self.count += 1
        if self.count == self.n:
            self.finished_at = time.perf_counter()
            self.done.set()


def rate(n: int, seconds: float) -> str:
    return f"{n / seconds:>9,.0f}/s  ({n:,} in {seconds:.2f} s)"


# ---- pipeline: a stub watch stream --------------------------------------------------------------------

class StubClient:
    """A Reader whose list is empty and whose watch yields `events` once, then stays open."""

    def __init__(self, scheme: Scheme, events: list[WatchEvent]) -> None:
        self.scheme = scheme
        self.events = events
        self.first_event_at = 0.0

    def resource(self, kind: ResourceType) -> ResourceType:
        return kind

    async def list(self, kind: ResourceType, **_: Any) -> ObjectList[dict[str, Any]]:
        return ObjectList([], "1")

    def watch(self, kind: ResourceType, **_: Any) -> contextlib.AbstractAsyncContextManager[AsyncIterator[WatchEvent]]:
        @contextlib.asynccontextmanager
        async def stream() -> AsyncIterator[AsyncIterator[WatchEvent]]:
            async def events() -> AsyncIterator[WatchEvent]:
                self.first_event_at = time.perf_counter()
                for i, event in enumerate(self.events):
                    if i % 500 == 0:
                        await trio.lowlevel.checkpoint()  # a network stream yields now and then
                    yield event
                await trio.sleep_forever()
            yield events()
        return stream()


async def bench_pipeline(n: int) -> None:
    scheme = Scheme()
    rt = scheme.by_kind("ClusterRole")
    events = []
    for i in range(n):
        obj = role(scheme, i)
        obj["metadata"]["resourceVersion"] = str(i + 2)
        events.append(WatchEvent("ADDED", obj))
    client = StubClient(scheme, events)
    counter = Counter(n)
    manager = Manager(client)  # type: ignore[arg-type]  # a Reader is all informers and this reconciler use
    manager.controller("noop").for_(rt).complete(counter.reconcile)
    async with trio.open_nursery() as nursery:
        await nursery.start(manager.run)
        await counter.done.wait()
        nursery.cancel_scope.cancel()
    print(f"  pipeline (stub watch stream)      {rate(n, counter.finished_at - client.first_event_at)}")


# ---- against a registry --------------------------------------------------------------------------------

async def open_registry(nursery: trio.Nursery) -> Registry:
    registry = Registry(MemoryStore(), Scheme(), history_seconds=600)
    await nursery.start(registry.run)
    await bootstrap_registry(registry)
    return registry


async def create_roles(registry: Registry, n: int, writers: int = 50) -> None:
    rt = registry.scheme.by_kind("ClusterRole")
    opts = WriteOptions(field_manager="bench")

    async def writer(start: int) -> None:
        for i in range(start, n, writers):
            await registry.create(ADMIN, rt, "", Body(role(registry.scheme, i)), opts)

    async with trio.open_nursery() as nursery:
        for w in range(writers):
            nursery.start_soon(writer, w)


async def bench_initial_sync(n: int) -> None:
    async with trio.open_nursery() as nursery:
        registry = await open_registry(nursery)
        await create_roles(registry, n)
        existing = len((await registry.list(ADMIN, registry.scheme.by_kind("ClusterRole"), "", ListOptions())).items)
        counter = Counter(existing)
        manager = Manager(LocalClient(registry, ADMIN))
        manager.controller("noop").for_(registry.scheme.by_kind("ClusterRole")).complete(counter.reconcile)
        began = time.perf_counter()
        await nursery.start(manager.run)
        await counter.done.wait()
        print(f"  initial sync (list + replay)      {rate(existing, counter.finished_at - began)}")
        nursery.cancel_scope.cancel()


async def bench_live(n: int, over_http: bool, tmp: Path) -> None:
    async with trio.open_nursery() as nursery:
        if over_http:
            opts = ServeOptions(data_dir=str(tmp / "data"), port=0, store="memory", controllers=False)
            await nursery.start(serve, opts)
            settings = load_kubeconfig(tmp / "data" / "admin.kubeconfig")
            client_cm: Any = open_http_client(settings)
        else:
            registry = await open_registry(nursery)
            client_cm = contextlib.nullcontext(LocalClient(registry, ADMIN))
        async with client_cm as client:
            rt = client.scheme.by_kind("ClusterRole")
            existing = len((await client.list(rt)).items)
            counter = Counter(existing + n)
            manager = Manager(client)
            manager.controller("noop").for_(rt).complete(counter.reconcile)
            await nursery.start(manager.run)
            began = time.perf_counter()
            if over_http:
                # 8 writers: more than httpx's 20 kept-alive connections would mean a TLS handshake per write.
                async def writer(start: int) -> None:
                    for i in range(start, n, 8):
                        await client.create(role(client.scheme, i))

                async with trio.open_nursery() as writers:
                    for w in range(8):
                        writers.start_soon(writer, w)
            else:
                await create_roles(registry, n)
            written = time.perf_counter()
            await counter.done.wait()
            where = "over HTTPS (in-process server)" if over_http else "in process                   "
            print(f"  live, {where} {rate(n, counter.finished_at - began)};"
                  f" writes {n / (written - began):,.0f}/s")
            nursery.cancel_scope.cancel()


# ---- memory --------------------------------------------------------------------------------------------

class DecodedClient(LocalClient):
    """A LocalClient whose lists return objects decoded from JSON, as an HTTP client's are."""

    async def _list(self, rt: ResourceType, namespace: str, opts: ListOptions) -> ObjectList[dict[str, Any]]:
        page = await super()._list(rt, namespace, opts)
        return ObjectList(json.loads(json.dumps(page.items)), page.resource_version, page.continue_token,
                          page.remaining_item_count)


async def informer_bytes(client: LocalClient, rt: ResourceType) -> tuple[int, int]:
    """(traced bytes an informer holds once synced, objects cached)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        informer = Informer(client, rt)
        async with trio.open_nursery() as nursery:
            await nursery.start(informer.run)
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - before
            nursery.cancel_scope.cancel()
        return held, len(informer.keys())
    finally:
        tracemalloc.stop()


async def bench_memory(n: int) -> None:
    async with trio.open_nursery() as nursery:
        registry = await open_registry(nursery)
        await create_roles(registry, n)
        rt = registry.scheme.by_kind("ClusterRole")
        sample = (await registry.list(ADMIN, rt, "", ListOptions(limit=1))).items[0].copy_dict()
        print(f"  one ClusterRole as JSON: {len(json.dumps(sample, separators=(',', ':')))} bytes"
              f" (with managedFields)")
        for label, client in (("decoded from JSON (HTTP)", DecodedClient(registry, ADMIN)),
                              ("in-process copies", LocalClient(registry, ADMIN))):
            held, count = await informer_bytes(client, rt)
            print(f"  informer memory, {label:<26} {held / count:>7,.0f} bytes per cached object"
                  f" ({count:,} objects, {held / 2**20:.1f} MiB)")
        nursery.cancel_scope.cancel()


async def main(quick: bool) -> None:
    n = 1_000 if quick else 10_000
    print(f"reconciles per second, no-op reconciler, 1 worker, {n:,} object changes")
    await bench_pipeline(n)
    await bench_initial_sync(n)
    with tempfile.TemporaryDirectory() as tmp:
        await bench_live(n, False, Path(tmp))
        await bench_live(n, True, Path(tmp))
    print(f"informer memory per cached object (tracemalloc, {n:,} ClusterRoles)")
    await bench_memory(n)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the objects")
    trio.run(main, parser.parse_args().quick)
