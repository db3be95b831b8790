"""Fixtures of the storage tests: stores of every backend (etcd: the session's, `tests/conftest.py`).

`make_store` (memory, sqlite, etcd) and `make_local_store` (memory, sqlite:
the backends with a `watch_buffer`) are async factories of fresh stores,
closed after the test; `store` is one of them, `rev` counts revisions from
that store's revision when the test began (etcd's are cluster-wide).
"""

from __future__ import annotations

import itertools
from typing import AsyncIterator

import pytest

from runtime.server.storage import EtcdStore, MemoryStore, Store
from runtime.server.storage.sqlite.store import SqliteStore
from tests.support.stores import Backend, Revs, StoreFactory

_prefixes = itertools.count()


def _backend(request: pytest.FixtureRequest) -> Backend:
    # A sync fixture's work: etcd starts (once) outside the tests' trio runs.
    if request.param == "etcd":
        return Backend("etcd", request.getfixturevalue("etcd_endpoint"))
    return Backend(request.param)


@pytest.fixture(params=["memory", "sqlite", "etcd"])
def backend(request: pytest.FixtureRequest) -> Backend:
    return _backend(request)


@pytest.fixture(params=["memory", "sqlite"])
def local_backend(request: pytest.FixtureRequest) -> Backend:
    """Stores of this process, whose watches go through `WatchFanout` and its `watch_buffer`
    (etcd buffers watches on its server: a slow etcd watcher is etcd's to resync)."""
    return _backend(request)


async def _factory(backend: Backend, tmp_path) -> AsyncIterator[StoreFactory]:
    opened: list[Store] = []

    async def make(**options) -> Store:
        if backend.name == "memory":
            store: Store = MemoryStore(**options)
        elif backend.name == "sqlite":
            store = await SqliteStore.open(tmp_path / f"store{len(opened)}.db", **options)
        else:
            store = await EtcdStore.open(backend.etcd_endpoint, prefix=f"/conformance/{next(_prefixes)}",
                                         **options)
        opened.append(store)
        return store

    yield make
    for store in opened:
        await store.aclose()


@pytest.fixture
async def make_store(backend: Backend, tmp_path) -> AsyncIterator[StoreFactory]:
    """An async factory of fresh stores of the parametrized backend; all closed afterwards."""
    async for make in _factory(backend, tmp_path):
        yield make


@pytest.fixture
async def make_local_store(local_backend: Backend, tmp_path) -> AsyncIterator[StoreFactory]:
    """An async factory of fresh memory or sqlite stores; all closed afterwards."""
    async for make in _factory(local_backend, tmp_path):
        yield make


@pytest.fixture
async def store(make_store: StoreFactory) -> Store:
    """A fresh store of each backend."""
    return await make_store()


@pytest.fixture
async def rev(store: Store) -> Revs:
    """Revisions of `store` counted from its revision now."""
    return Revs(await store.current_revision())
