"""Shared fixtures: an in-process registry, a control plane served in process, one behind real HTTPS,
and a real etcd for the session.

Helpers live in `tests/support/`; this file holds fixtures only.
"""

from __future__ import annotations

from typing import AsyncIterator, Iterator

import pytest

from runtime.server.bootstrap import bootstrap
from runtime.server.registry import Registry
from runtime.machinery.scheme import Scheme
from runtime.server.storage import MemoryStore
from tests.support.etcd import EtcdNotFound, EtcdServer, start_etcd
from tests.support.server import STARTERS, Server, start_in_process, start_server


@pytest.fixture(scope="session")
def etcd_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdServer]:
    """One etcd child process for the session; every test uses its own key prefix.

    Fails (never skips) the tests that need it when etcd cannot be found.
    """
    try:
        server = start_etcd(tmp_path_factory.mktemp("etcd") / "data")
    except EtcdNotFound as exc:
        pytest.fail(str(exc), pytrace=False)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def etcd_endpoint(etcd_server: EtcdServer) -> str:
    """`127.0.0.1:PORT` of the session's etcd."""
    return etcd_server.endpoint


@pytest.fixture
async def own_etcd(tmp_path) -> AsyncIterator[EtcdServer]:
    """An etcd of this test alone, which it may stop and restart."""
    server = EtcdServer(tmp_path / "etcd")
    server.start()
    try:
        await server.wait_healthy()
        yield server
    finally:
        server.stop()


@pytest.fixture
async def registry(nursery):
    """A Registry over a memory store, bootstrapped (policy + default namespace)."""
    reg = Registry(MemoryStore(), Scheme())
    await nursery.start(reg.run)
    await bootstrap(reg)
    return reg


@pytest.fixture
async def server(nursery, tmp_path) -> Server:
    """A control plane served in process (memory store, no controllers) under the default domain."""
    return await start_in_process(nursery, tmp_path)


@pytest.fixture
async def https_server(nursery, tmp_path) -> Server:
    """The same behind real HTTPS (Hypercorn, TLS, a free port): for tests of sockets, TLS and processes."""
    return await start_server(nursery, tmp_path)


@pytest.fixture(params=sorted(STARTERS))
async def any_server(request, nursery, tmp_path) -> Server:
    """Each in turn: in process, then behind real HTTPS (the smoke tests of the HTTPS path)."""
    return await STARTERS[request.param](nursery, tmp_path)
