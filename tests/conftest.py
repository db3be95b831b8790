"""Shared fixtures: an in-process registry, a control plane served in process, and one behind real HTTPS.

Helpers live in `tests/support/`; this file holds fixtures only.
"""

from __future__ import annotations

import pytest

from runtime.bootstrap import bootstrap
from runtime.registry import Registry
from runtime.scheme import Scheme
from runtime.storage import MemoryStore
from tests.support.server import STARTERS, Server, start_in_process, start_server


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
