"""Testing controllers without a cluster: an in-process server and manager for pytest-trio.

`open_test_env()` starts a `Registry` over a memory store (bootstrapped as
the server is: `runtime.bootstrap`), and yields a `TestEnv` with an
admin `LocalClient`. Controllers run in a `Manager` on that client, with the
same authorization, validation and admission as the real server. Time is
trio's, so `autojump_clock` makes backoffs, requeues and resyncs instant and
deterministic.

Example::

    async def test_labels_are_copied(autojump_clock):
        async with open_test_env() as env:
            manager = env.manager()
            my_controllers.setup(manager)
            await env.start(manager)
            await env.client.create(role)
            done = await env.wait_for(roles_rt, "r", lambda o: o and o["metadata"].get("labels"))

Or as a fixture: `pytest_plugins = ["runtime.testing"]` in the root
conftest, then ask for `miniplane_env`.

`env.wait_for(kind, name, condition)` watches one object until
`condition(obj)` holds (`obj` is None while the object does not exist) and
returns it: no polling and no sleeps. Bound it with `trio.fail_after`.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable

import trio

from runtime.bootstrap import bootstrap as bootstrap_registry
from runtime.client import Client, Kind
from runtime.client_local import LocalClient
from runtime.manager import Manager
from runtime.rbac.user import UserInfo
from runtime.registry import Registry
from runtime.scheme import DEFAULT_DOMAIN, Scheme
from runtime.storage import MemoryStore

__all__ = ["ADMIN", "TestEnv", "open_test_env", "wait_for_object", "miniplane_env"]

#: Allowed everything (system:masters), like the server's admin token.
ADMIN = UserInfo("admin", uid="admin", groups=("system:masters", "system:authenticated"))


@dataclass
class TestEnv:
    """A running in-process server: its registry, an admin client, and a nursery for managers."""

    __test__ = False  # not a pytest test class

    registry: Registry
    client: LocalClient
    nursery: trio.Nursery

    @property
    def scheme(self) -> Scheme:
        return self.registry.scheme

    def client_as(self, user: UserInfo, *, field_manager: str = "") -> LocalClient:
        """A client acting as `user` (authorized by RBAC like any caller)."""
        return LocalClient(self.registry, user, field_manager=field_manager)

    def manager(self, *, user: UserInfo = ADMIN, field_manager: str = "", **options: Any) -> Manager:
        """A new manager on a client acting as `user` (not started)."""
        return Manager(self.client_as(user, field_manager=field_manager), **options)

    async def start(self, manager: Manager) -> Manager:
        """Run `manager` in the environment's nursery; return once its informers synced."""
        await self.nursery.start(manager.run)
        return manager

    async def wait_for(self, kind: Kind, name: str, condition: Callable[[dict[str, Any] | None], Any], *,
                       namespace: str = "") -> dict[str, Any] | None:
        """`wait_for_object` with the environment's admin client."""
        return await wait_for_object(self.client, kind, name, condition, namespace=namespace)


async def wait_for_object(client: Client, kind: Kind, name: str, condition: Callable[[dict[str, Any] | None], Any],
                          *, namespace: str = "") -> dict[str, Any] | None:
    """Return the object once `condition(obj)` is truthy (`obj` is None while absent); any transport.

    Lists, then watches from the list's version: every state is seen, none is
    polled. Raises the watch's error (e.g. 410) or RuntimeError if it ends.
    """
    rt = client.resource(kind)
    selector = f"metadata.name={name}"
    page = await client.list(rt, namespace=namespace, field_selector=selector)
    current = page.items[0] if page.items else None
    if condition(current):
        return current
    async with client.watch(rt, namespace=namespace, field_selector=selector,
                            resource_version=page.resource_version) as events:
        async for event in events:
            if event.type in ("ADDED", "MODIFIED"):
                current = event.object
            elif event.type == "DELETED":
                current = None
            elif event.type == "ERROR":
                raise event.error() or RuntimeError("watch failed")
            else:
                continue
            if condition(current):
                return current
    raise RuntimeError(f"the watch of {name!r} ended before the condition held")


@asynccontextmanager
async def open_test_env(*, domain: str = DEFAULT_DOMAIN, bootstrap: bool = True,
                        history_seconds: float = 300.0) -> AsyncIterator[TestEnv]:
    """Start an in-process server (memory store); yield a `TestEnv`; stop everything on exit.

    `history_seconds` is the watch history kept: make it small to provoke 410 Gone.
    """
    registry = Registry(MemoryStore(), Scheme(domain), history_seconds=history_seconds)
    async with trio.open_nursery() as nursery:
        await nursery.start(registry.run)
        if bootstrap:
            await bootstrap_registry(registry)
        yield TestEnv(registry, LocalClient(registry, ADMIN, field_manager="test"), nursery)
        nursery.cancel_scope.cancel()


try:
    import pytest
except ImportError:  # pragma: no cover - pytest is only needed for the fixture
    pass
else:
    @pytest.fixture
    async def miniplane_env() -> AsyncIterator[TestEnv]:
        """pytest-trio fixture: a running `TestEnv` (see `open_test_env`)."""
        async with open_test_env() as env:
            yield env
