"""The API tests run on every store: memory, sqlite and etcd (the session's, a fresh prefix per test).

`store_under_test` (autouse, parametrized by `pytest_generate_tests`) makes the store the default of
every control plane a test starts without naming one (`tests.support.server.use_store`); a module or
test marked `@pytest.mark.stores("memory")` runs on the stores it names only (it starts its own servers
on a store of its choosing, or none). On sqlite and etcd `autojump_clock` is a `QuietClock`
(tests/support/clock.py): virtual time that jumps only while no SQLite thread runs and etcd has
nothing in flight.
"""

from __future__ import annotations

from typing import Iterator

import pytest
import trio
from trio.testing import MockClock

from tests.support.clock import QuietClock, track_busy
from tests.support.etcd import fresh_prefix
from tests.support.server import use_store

_STORES = ("memory", "sqlite", "etcd")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "store_under_test" in metafunc.fixturenames:
        marker = metafunc.definition.get_closest_marker("stores")
        metafunc.parametrize("store_under_test", marker.args if marker else _STORES, indirect=True)


@pytest.fixture(autouse=True)
def store_under_test(request: pytest.FixtureRequest) -> Iterator[str]:
    """The default store of this test's control planes (see the module doc)."""
    name = request.param
    if name == "etcd":
        use_store(f"etcd://{request.getfixturevalue('etcd_endpoint')}", prefix=fresh_prefix())
    else:
        use_store(name)
    yield name
    use_store("memory")


@pytest.fixture
def autojump_clock(store_under_test: str, monkeypatch: pytest.MonkeyPatch) -> trio.abc.Clock:
    """trio's autojump clock; on sqlite and etcd one that waits for their real work before jumping."""
    if store_under_test == "memory":
        return MockClock(autojump_threshold=0)
    return QuietClock(track_busy(monkeypatch))
