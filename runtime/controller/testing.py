"""Testing controllers without a cluster: an in-process server and manager for pytest-trio.

`open_test_env()` starts a `Registry` over a memory store (bootstrapped as
the server is: `runtime.server.bootstrap`) and the built-in controllers `miniplane
serve` runs (namespace lifecycle, ClusterRole aggregation, garbage
collection, CRD establishment, event TTL), and yields a `TestEnv` with an
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

Or as a fixture: `pytest_plugins = ["runtime.controller.testing"]` in the root
conftest, then ask for `miniplane_env`. Its options are fixtures a test
suite overrides (in a conftest, a module, or by `@pytest.mark.parametrize`,
as pytest's own `anyio_backend`): `miniplane_domain` (default `svc.io`)
and `miniplane_controllers` (default True)::

    @pytest.fixture
    def miniplane_domain():
        return "k8s.io"   # manifests written for apiextensions.k8s.io/v1, rbac.authorization.k8s.io/v1

`env.wait_for(kind, name, condition)` watches one object until
`condition(obj)` holds (`obj` is None while the object does not exist) and
returns it: no polling and no sleeps. Bound it with `trio.fail_after`.

Caveats:
    The built-in controllers are found by their module's name
    (`BUILTIN_CONTROLLERS`), imported when an env opens with them: `runtime`
    imports nothing of `controllers` (the layering rule of docs/design.md),
    so importing this module loads none of them.
"""

from __future__ import annotations

import importlib
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable

import trio

from runtime.server.bootstrap import SYSTEM_USER, bootstrap as bootstrap_registry
from runtime.client.interface import Client, Kind, ObjectKey, key_of
from runtime.client.local import LocalClient
from runtime.controller.manager import Manager
from runtime.server.rbac.aggregation import aggregate_rules, same_rules
from runtime.server.rbac.user import UserInfo
from runtime.server.registry import Registry
from runtime.machinery.scheme import DEFAULT_DOMAIN, Scheme
from runtime.server.storage import MemoryStore

__all__ = ["ADMIN", "BUILTIN_CONTROLLERS", "TestEnv", "open_test_env", "wait_for_object", "wait_aggregated",
           "miniplane_env", "miniplane_domain", "miniplane_controllers"]

#: Allowed everything (system:masters), like the server's admin token.
ADMIN = UserInfo("admin", uid="admin", groups=("system:masters", "system:authenticated"))
#: The module whose `builtin_manager(client)` and `FIELD_MANAGER` the server's controllers are (`api.assembly`).
BUILTIN_CONTROLLERS = "controllers.builtin"
#: How long (trio's clock) opening an env waits for the aggregated ClusterRoles to be filled.
READY_SECONDS = 30.0


@dataclass
class TestEnv:
    """A running in-process server: its registry, an admin client, a nursery for managers, and the manager of
    the built-in controllers (None when they are off)."""

    __test__ = False  # not a pytest test class

    registry: Registry
    client: LocalClient
    nursery: trio.Nursery
    controllers: Manager | None = None

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


ObjectsByKey = dict[ObjectKey, dict[str, Any]]


async def _watch_until(client: Client, kind: Kind, condition: Callable[[ObjectsByKey], Any], *,
                       namespace: str = "", field_selector: str = "") -> ObjectsByKey:
    """List, then watch from the list's version, until `condition(objects by key)` holds; return them."""
    rt = client.resource(kind)
    page = await client.list(rt, namespace=namespace, field_selector=field_selector)
    current = {key_of(o): o for o in page.items}
    if condition(current):
        return current
    async with client.watch(rt, namespace=namespace, field_selector=field_selector,
                            resource_version=page.resource_version) as events:
        async for event in events:
            if event.type == "ERROR":
                raise event.error() or RuntimeError("watch failed")
            if event.type not in ("ADDED", "MODIFIED", "DELETED"):
                continue
            if event.type == "DELETED":
                current.pop(key_of(event.object), None)
            else:
                current[key_of(event.object)] = event.object
            if condition(current):
                return current
    raise RuntimeError(f"the watch of {rt.plural} ended before the condition held")


async def wait_for_object(client: Client, kind: Kind, name: str, condition: Callable[[dict[str, Any] | None], Any],
                          *, namespace: str = "") -> dict[str, Any] | None:
    """Return the object once `condition(obj)` is truthy (`obj` is None while absent); any transport.

    Lists, then watches from the list's version: every state is seen, none is
    polled. Raises the watch's error (e.g. 410) or RuntimeError if it ends.
    """
    def the_one(objects: ObjectsByKey) -> dict[str, Any] | None:
        return next(iter(objects.values()), None)  # selected by name (and namespace, when given)
    found = await _watch_until(client, kind, lambda objects: condition(the_one(objects)), namespace=namespace,
                               field_selector=f"metadata.name={name}")
    return the_one(found)


def _aggregated(roles: ObjectsByKey) -> bool:
    """Whether every aggregated ClusterRole holds what its aggregation of the others gives (a fixed point)."""
    everyone = list(roles.values())
    return all(same_rules(r.get("rules") or [], aggregate_rules(r, everyone)) for r in everyone
               if r.get("aggregationRule"))


async def wait_aggregated(client: Client) -> None:
    """Return once every aggregated ClusterRole (admin, edit, view, ...) holds the rules it aggregates.

    Blocks until the aggregation controller has reached its fixed point; raises as `wait_for_object`.
    """
    await _watch_until(client, client.scheme.by_kind("ClusterRole"), _aggregated)


async def _start_builtin_controllers(env: TestEnv) -> Manager:
    """Start the server's built-in controllers in `env`, as `api.assembly` does; return their manager once the
    aggregated roles are filled (trio.TooSlowError after READY_SECONDS)."""
    # By name: runtime never imports controllers (they import runtime; the layering cycle docs/design.md forbids).
    builtin = importlib.import_module(BUILTIN_CONTROLLERS)
    client = LocalClient(env.registry, SYSTEM_USER, field_manager=builtin.FIELD_MANAGER,
                         user_agent=builtin.FIELD_MANAGER)
    # The registry's signer, as the assembly hands the server's: token Secrets get tokens (no ca.crt: no TLS here).
    manager = await env.start(builtin.builtin_manager(client, tokens=builtin.TokenSigning(env.registry.tokens)))
    with trio.fail_after(READY_SECONDS):
        await wait_aggregated(env.client)
    return manager


@asynccontextmanager
async def open_test_env(*, domain: str = DEFAULT_DOMAIN, controllers: bool = True, bootstrap: bool = True,
                        history_seconds: float = 300.0) -> AsyncIterator[TestEnv]:
    """Start an in-process server (memory store) and its built-in controllers; yield a `TestEnv`; stop on exit.

    `domain` is the API domain (`runtime.machinery.scheme.Scheme`): the default
    `svc.io` serves `rbac.authorization.svc.io/v1`,
    `apiextensions.svc.io/v1`, ...; `domain="k8s.io"` serves Kubernetes'
    names, for manifests written for a real cluster.

    `controllers=True` (the default) runs the built-in controllers `miniplane
    serve` runs (`controllers.builtin_manager`, as `env.controllers`): CRDs
    become Established, deleted namespaces finish deleting, dependents of
    deleted owners are collected, aggregated ClusterRoles are filled, service
    account token Secrets get their tokens (`controllers.tokens`). The env
    is yielded once they run and `admin`, `edit` and `view` hold their rules
    (no sleeps: a watch sees the aggregation's fixed point).
    `controllers=False` runs none (e.g. to test one of them alone): then
    nothing of that happens and aggregated roles have no rules.

    `history_seconds` is the watch history kept: make it small to provoke 410 Gone.
    """
    registry = Registry(MemoryStore(), Scheme(domain), history_seconds=history_seconds)
    async with trio.open_nursery() as nursery:
        await nursery.start(registry.run)
        if bootstrap:
            await bootstrap_registry(registry)
        env = TestEnv(registry, LocalClient(registry, ADMIN, field_manager="test"), nursery)
        if controllers:
            env.controllers = await _start_builtin_controllers(env)
        yield env
        nursery.cancel_scope.cancel()


try:
    import pytest
except ImportError:  # pragma: no cover - pytest is only needed for the fixture
    pass
else:
    @pytest.fixture
    def miniplane_domain() -> str:
        """The API domain `miniplane_env` serves; override it (conftest, module, or parametrize) for another."""
        return DEFAULT_DOMAIN

    @pytest.fixture
    def miniplane_controllers() -> bool:
        """Whether `miniplane_env` runs the built-in controllers; override it to return False for none."""
        return True

    @pytest.fixture
    async def miniplane_env(request: pytest.FixtureRequest) -> AsyncIterator[TestEnv]:
        """pytest-trio fixture: a running `TestEnv` (see `open_test_env`) under `miniplane_domain`, with the
        built-in controllers unless `miniplane_controllers` is False.

        The two options are looked up by name, so a suite that imports only this fixture gets their defaults.
        """
        domain = _fixture_or(request, "miniplane_domain", DEFAULT_DOMAIN)
        controllers = _fixture_or(request, "miniplane_controllers", True)
        async with open_test_env(domain=domain, controllers=controllers) as env:
            yield env

    def _fixture_or(request: pytest.FixtureRequest, name: str, default: Any) -> Any:
        try:
            return request.getfixturevalue(name)
        except pytest.FixtureLookupError:
            return default
