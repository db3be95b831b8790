"""The event recorder (client-go's `record.EventRecorder`) on an in-process server: what it writes, when, and what it drops."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import trio

from runtime import models
from runtime.machinery import errors
from runtime.client.interface import ClientError, ObjectKey, TransportError
from runtime.controller.recorder import EventBroadcaster, reference_of
from runtime.machinery.scheme import Scheme
from runtime.controller.testing import TestEnv, open_test_env

START = 1_700_000_000.0
RBAC = "rbac.authorization.svc.io/v1"


def clock() -> float:
    """Wall time that follows trio's (mock) clock."""
    return START + trio.current_time()


async def role(env: TestEnv, name: str = "reader", namespace: str = "team") -> dict[str, Any]:
    try:
        await env.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    except errors.AlreadyExists:
        pass
    return await env.client.create({"apiVersion": RBAC, "kind": "Role",
                                    "metadata": {"name": name, "namespace": namespace}, "rules": []})


async def events_about(env: TestEnv, name: str, namespace: str, count: int = 1) -> list[dict[str, Any]]:
    """The events about object `name` once there are `count` of them (waits on the mock clock)."""
    rt = env.scheme.by_kind("Event")
    with trio.fail_after(60):
        while True:
            found = (await env.client.list(rt, namespace=namespace, field_selector=f"involvedObject.name={name}")).items
            if len(found) >= count:
                return found
            await trio.sleep(0.05)


@pytest.fixture
async def env():
    async with open_test_env() as env:
        yield env


async def start(env: TestEnv, broadcaster: EventBroadcaster) -> EventBroadcaster:
    await env.nursery.start(broadcaster.run)
    return broadcaster


async def test_an_event_names_its_object_and_lives_in_the_objects_namespace(env, autojump_clock):
    obj = await role(env)
    broadcaster = await start(env, EventBroadcaster(env.client, clock=clock))
    broadcaster.recorder("role-controller").event(obj, "Normal", "Synced", "rules aggregated")
    (event,) = await events_about(env, "reader", "team")
    meta = obj["metadata"]
    assert event["metadata"]["namespace"] == "team" and event["metadata"]["name"].startswith("reader.")
    int(event["metadata"]["name"].removeprefix("reader."), 16)  # a hex suffix
    assert event["involvedObject"] == {"kind": "Role", "apiVersion": RBAC, "name": "reader", "namespace": "team",
                                       "uid": meta["uid"], "resourceVersion": meta["resourceVersion"]}
    assert (event["type"], event["reason"], event["message"], event["count"]) == ("Normal", "Synced",
                                                                                  "rules aggregated", 1)
    assert event["source"] == {"component": "role-controller"} and event["reportingComponent"] == "role-controller"
    assert event["firstTimestamp"] == event["lastTimestamp"] == "2023-11-14T22:13:20Z"


async def test_events_about_cluster_scoped_objects_live_in_default(env, autojump_clock):
    view = await env.client.get(env.scheme.by_kind("ClusterRole"), "view")
    broadcaster = await start(env, EventBroadcaster(env.client, clock=clock))
    broadcaster.recorder("c", host="node-1").event(view, "Warning", "Odd", "looked at")
    (event,) = await events_about(env, "view", "default")
    assert "namespace" not in event["involvedObject"] and event["source"] == {"component": "c", "host": "node-1"}
    assert event["reportingInstance"] == "node-1"


async def test_identical_events_patch_the_count_and_last_timestamp_of_the_first(env, autojump_clock):
    obj = await role(env)
    broadcaster = await start(env, EventBroadcaster(env.client, clock=clock))
    recorder = broadcaster.recorder("role-controller")
    for _ in range(3):
        recorder.event(obj, "Normal", "Synced", "rules aggregated")
        await trio.sleep(30)
    (event,) = await events_about(env, "reader", "team")
    assert event["count"] == 3 and event["firstTimestamp"] == "2023-11-14T22:13:20Z"
    assert event["lastTimestamp"] == "2023-11-14T22:14:20Z"
    assert broadcaster.statistics().created == 1 and broadcaster.statistics().patched == 2


async def test_similar_events_from_the_tenth_message_on_are_combined(env, autojump_clock):
    obj = await role(env)
    broadcaster = await start(env, EventBroadcaster(env.client, clock=clock))
    recorder = broadcaster.recorder("role-controller")
    for i in range(12):
        recorder.eventf(obj, "Normal", "Synced", "pass %d", i)
    await trio.sleep(1)
    events = await events_about(env, "reader", "team", count=10)
    combined = [e for e in events if e["message"].startswith("(combined from similar events): ")]
    assert len(events) == 10 and [(e["message"], e["count"]) for e in combined] == [
        ("(combined from similar events): pass 11", 3)]


async def test_eventf_formats_the_message_printf_style(env, autojump_clock):
    obj = await role(env)
    broadcaster = await start(env, EventBroadcaster(env.client, clock=clock))
    broadcaster.recorder("c").eventf(obj, "Warning", "BadRule", "rule %d of %s has no verbs", 3, "reader")
    (event,) = await events_about(env, "reader", "team")
    assert event["message"] == "rule 3 of reader has no verbs" and event["type"] == "Warning"


async def test_an_unknown_type_or_an_object_without_kind_is_a_programming_error(env):
    recorder = EventBroadcaster(env.client).recorder("c")
    with pytest.raises(ValueError, match="unsupported event type: 'Info'"):
        recorder.event({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}, "Info", "R", "m")
    with pytest.raises(ValueError, match="apiVersion, kind and metadata.name"):
        recorder.event({"metadata": {"name": "a"}}, "Normal", "R", "m")


def test_typed_objects_are_referenced_by_their_kind():
    obj = models.Role(metadata=models.ObjectMeta(name="r", namespace="ns", uid="u"))
    assert reference_of(obj, Scheme()) == {"kind": "Role", "namespace": "ns", "name": "r", "uid": "u",
                                           "apiVersion": RBAC}


async def test_a_full_queue_drops_the_event_with_a_log_line_and_never_blocks(env, caplog):
    obj = await role(env)
    broadcaster = EventBroadcaster(env.client, queue_size=2)  # not running: nothing drains the queue
    recorder = broadcaster.recorder("c")
    with caplog.at_level(logging.WARNING, logger="runtime.controller.recorder"):
        for i in range(3):
            recorder.event(obj, "Normal", f"R{i}", "m")
    assert broadcaster.statistics().queued == 2 and broadcaster.statistics().dropped == 1
    assert "event queue full: dropped event Normal R2 about Role team/reader" in caplog.text


async def test_a_repeat_of_an_event_gone_with_its_ttl_creates_it_again(env, autojump_clock):
    obj = await role(env)
    broadcaster = await start(env, EventBroadcaster(env.client, clock=clock))
    recorder = broadcaster.recorder("c")
    recorder.event(obj, "Normal", "Synced", "m")
    (event,) = await events_about(env, "reader", "team")
    await env.client.delete(env.scheme.by_kind("Event"), event["metadata"]["name"], namespace="team")
    recorder.event(obj, "Normal", "Synced", "m")
    (again,) = await events_about(env, "reader", "team")
    assert again["metadata"]["name"] == event["metadata"]["name"] and again["count"] == 2


class FlakyClient:
    """The env's client, whose creates first raise the given errors."""

    def __init__(self, inner: Any, failures: list[Exception]) -> None:
        self.inner, self.scheme, self.failures, self.creates = inner, inner.scheme, failures, 0

    async def create(self, obj: Any, **options: Any) -> Any:
        self.creates += 1
        if self.failures:
            raise self.failures.pop(0)
        return await self.inner.create(obj, **options)

    async def patch(self, *args: Any, **options: Any) -> Any:
        return await self.inner.patch(*args, **options)


async def test_unreachable_servers_are_retried_and_refusals_are_not(env, autojump_clock):
    obj = await role(env)
    flaky = FlakyClient(env.client, [TransportError("connection refused"), errors.ServiceUnavailable("busy")])
    broadcaster = await start(env, EventBroadcaster(flaky, clock=clock))  # type: ignore[arg-type]
    broadcaster.recorder("c").event(obj, "Normal", "Synced", "m")
    (event,) = await events_about(env, "reader", "team")
    assert flaky.creates == 3 and event["reason"] == "Synced"
    refusing = FlakyClient(env.client, [errors.Forbidden("no")])
    refused = await start(env, EventBroadcaster(refusing, clock=clock))  # type: ignore[arg-type]
    refused.recorder("c").event(obj, "Normal", "Other", "m")
    await trio.sleep(100)
    assert refusing.creates == 1 and refused.statistics().failed == 1


async def test_a_write_that_keeps_failing_is_dropped_after_max_tries(env, autojump_clock):
    obj = await role(env)
    failures: list[Exception] = [ClientError("down")] * 5
    flaky = FlakyClient(env.client, failures)
    broadcaster = await start(env, EventBroadcaster(flaky, clock=clock, max_tries=3))  # type: ignore[arg-type]
    broadcaster.recorder("c").event(obj, "Normal", "Synced", "m")
    await trio.sleep(60)
    assert flaky.creates == 3 and broadcaster.statistics().failed == 1


async def test_a_controller_records_through_its_manager(env, autojump_clock):
    manager = env.manager()
    recorder = manager.event_recorder("namespace-greeter")
    namespaces = env.scheme.by_kind("Namespace")
    cache = manager.informers.informer(namespaces)

    async def reconcile(key: ObjectKey) -> None:
        namespace = cache.get(key)
        if namespace is not None:
            recorder.event(namespace, "Normal", "Greeted", f"hello {key.name}")

    manager.controller("greeter").for_(namespaces).complete(reconcile)
    await env.start(manager)
    await env.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    (event,) = await events_about(env, "team", "default")
    assert event["message"] == "hello team" and event["source"] == {"component": "namespace-greeter"}
    assert manager.statistics().runnables["event-broadcaster"].running


async def test_the_first_recorder_is_asked_for_before_the_manager_runs(env, autojump_clock):
    manager = await env.start(env.manager())
    with pytest.raises(RuntimeError, match="before the manager runs"):
        manager.event_recorder("late")


async def test_queued_events_are_written_when_the_manager_stops(env, autojump_clock):
    obj = await role(env)
    manager = env.manager()
    recorder = manager.event_recorder("c")
    async with trio.open_nursery() as nursery:
        await nursery.start(manager.run)
        recorder.event(obj, "Normal", "Bye", "stopping")
        nursery.cancel_scope.cancel()
    (event,) = await events_about(env, "reader", "team")
    assert event["reason"] == "Bye"
