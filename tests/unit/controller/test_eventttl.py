"""Event time to live (kube-apiserver's `--event-ttl`): events go an hour after their last write, each on its own timer."""

from __future__ import annotations

import time
from typing import Any

import pytest
import trio

from controllers import builtin, eventttl
from runtime.machinery import errors
from runtime.models.catalog import EVENTS_EVENT
from runtime.controller.testing import TestEnv, open_test_env
from tests.support.event_objects import core_event, events_v1_event

HOUR = 3600.0


@pytest.fixture
async def env():
    async with open_test_env(controllers=False) as env:
        await env.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ci"}})
        yield env


async def exists(env: TestEnv, name: str, rt: Any = None) -> bool:
    try:
        await env.client.get(rt or env.scheme.by_kind("Event"), name, namespace="ci")
    except errors.NotFound:
        return False
    return True


async def run_ttl(env: TestEnv, ttl: float = HOUR) -> list[eventttl.EventTTLController]:
    manager = env.manager()
    controllers = eventttl.setup(manager, ttl=ttl)
    await env.start(manager)
    return controllers


async def test_an_event_is_deleted_one_hour_after_its_last_write(env, autojump_clock):
    await env.client.create(core_event("a.1"))
    await run_ttl(env)
    await trio.sleep(HOUR - 5)
    assert await exists(env, "a.1")
    await trio.sleep(10)
    assert not await exists(env, "a.1")


async def test_a_write_pushes_the_expiry_back_by_a_full_ttl(env, autojump_clock):
    await env.client.create(core_event("a.1"))
    await run_ttl(env)
    await trio.sleep(HOUR / 2)
    await env.client.patch(env.scheme.by_kind("Event"), "a.1", {"count": 2}, namespace="ci")
    await trio.sleep(HOUR / 2 + 60)
    assert await exists(env, "a.1")
    await trio.sleep(HOUR / 2)
    assert not await exists(env, "a.1")


async def test_the_ttl_is_configurable(env, autojump_clock):
    await env.client.create(core_event("a.1"))
    await run_ttl(env, ttl=60)
    await trio.sleep(55)
    assert await exists(env, "a.1")
    await trio.sleep(10)
    assert not await exists(env, "a.1")


async def test_an_event_written_before_the_controller_started_expires_after_its_recorded_write(env, autojump_clock):
    await env.client.create(core_event("old.1"))
    manager = env.manager()
    (core, _) = eventttl.setup(manager)
    core.wall_clock = lambda: time.time() + 50 * 60  # its write was 50 minutes ago
    await env.start(manager)
    await trio.sleep(9 * 60)
    assert await exists(env, "old.1")
    await trio.sleep(2 * 60)
    assert not await exists(env, "old.1")


async def test_each_event_is_reconciled_on_its_own_timer_not_by_polling(env, autojump_clock):
    manager = env.manager()
    eventttl.setup(manager)
    await env.start(manager)
    for i in range(5):
        await env.client.create(core_event(f"a.{i}"))
        await trio.sleep(600)
    await trio.sleep(2 * HOUR)
    assert [await exists(env, f"a.{i}") for i in range(5)] == [False] * 5
    stats = manager.statistics().controllers["event-ttl-events"]
    assert stats.reconciles <= 5 * 3 and stats.errors == 0  # seen, expired (and the deletion): no polling


async def test_events_k8s_io_events_expire_too(env, autojump_clock):
    rt = next(t for t in env.scheme.types if t.info is EVENTS_EVENT)
    await env.client.create({**events_v1_event("b.1"), "apiVersion": rt.api_version})
    await run_ttl(env)
    await trio.sleep(HOUR + 5)
    assert not await exists(env, "b.1", rt)


def test_last_write_is_the_latest_of_creation_and_managed_fields_times():
    obj = {"metadata": {"creationTimestamp": "2024-01-02T03:04:05Z", "managedFields": [
        {"manager": "a", "time": "2024-01-02T04:04:05Z"}, {"manager": "b", "time": "2024-01-02T03:30:00Z"}]}}
    assert eventttl.last_write(obj) == 1704168245.0
    assert eventttl.last_write({"metadata": {}}) is None


def test_a_ttl_must_be_positive():
    with pytest.raises(ValueError, match="positive"):
        eventttl.EventTTLController(None, None, 0)  # type: ignore[arg-type]


async def test_the_built_in_controllers_expire_events(env):
    manager = builtin.builtin_manager(env.client)
    assert {"event-ttl-events", f"event-ttl-events.events.{env.scheme.domain}"} <= set(manager.controllers)
