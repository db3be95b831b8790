"""The controller runtime works unchanged with custom kinds: informers, indexers, the work queue, `for_`/`owns`,
on plain dicts (a `ResourceType` named by its facts) and on typed models (`runtime.client.typed`); the garbage collector
follows a custom kind while its CRD exists."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
import trio

from controllers import crd, gc, gckinds
from runtime.machinery import errors
from runtime.client.interface import ObjectKey, ignore_not_found
from runtime.controller.controller import Result
from runtime.machinery.scheme import ResourceType
from runtime.controller.testing import TestEnv, open_test_env
from runtime.client.typed import CustomResource, KubeModel, TypedCache, bind_kind, bound_kind
from tests.support.crds import GROUP, widget, widget_crd

#: Named by its facts, before the CRD exists: nothing asks the server.
WIDGETS = ResourceType.of(f"{GROUP}/v1", "Widget", "widgets")
OWNER_INDEX = "owner-uid"


class WidgetSpec(KubeModel):
    size: int
    max_size: int | None = None
    replicas: int = 0


class WidgetStatus(KubeModel):
    replicas: int | None = None


class Widget(CustomResource):
    spec: WidgetSpec
    status: WidgetStatus = WidgetStatus()


TYPED_WIDGETS = bind_kind(Widget, f"{GROUP}/v1", "widgets")


async def serve_widgets(env: TestEnv) -> None:
    """The Widget CRD, established (by the env's built-in controllers)."""
    await env.client.create(widget_crd())
    with trio.fail_after(30):
        await env.wait_for(env.scheme.by_kind("CustomResourceDefinition"), f"widgets.{GROUP}", lambda o: o and any(
            c["type"] == "Established" and c["status"] == "True" for c in o.get("status", {}).get("conditions", [])))


def children_of(obj: dict[str, Any]) -> list[str]:
    refs = obj["metadata"].get("ownerReferences") or []
    return [r["uid"] for r in refs if r.get("controller")]


def replica_set(env: TestEnv, manager) -> list[ObjectKey]:
    """A dict controller: each Widget keeps `spec.replicas` child Widgets `<name>-<i>` it owns, counted in status."""
    cache = manager.informers.informer(WIDGETS)
    cache.add_indexer(OWNER_INDEX, children_of)
    reconciled: list[ObjectKey] = []

    async def reconcile(key: ObjectKey) -> Result | None:
        reconciled.append(key)
        parent = cache.get(key)
        if parent is None or parent["metadata"].get("deletionTimestamp"):
            return None
        wanted = parent["spec"].get("replicas") or 0
        children = {c["metadata"]["name"]: c for c in cache.by_index(OWNER_INDEX, parent["metadata"]["uid"])}
        ref = {"apiVersion": parent["apiVersion"], "kind": "Widget", "name": key.name,
               "uid": parent["metadata"]["uid"], "controller": True}
        for i in range(wanted):
            name = f"{key.name}-{i}"
            if name not in children:
                child = widget(name, key.namespace)
                child["metadata"]["ownerReferences"] = [ref]
                with contextlib.suppress(errors.AlreadyExists):  # made by a run the cache has not seen yet
                    await manager.client.create(child)
        for name in sorted(children):
            if int(name.rsplit("-", 1)[1]) >= wanted:
                with ignore_not_found():
                    await manager.client.delete(WIDGETS, name, namespace=key.namespace)
        if (parent.get("status") or {}).get("replicas") != wanted:
            with ignore_not_found():  # deleted since the cache saw it
                    await manager.client.patch(WIDGETS, key.name, {"status": {"replicas": wanted}},
                                           namespace=key.namespace, subresource="status")
        return None

    manager.controller("replicas").for_(WIDGETS).owns(WIDGETS).complete(reconcile)
    return reconciled


async def test_a_dict_controller_owns_custom_objects_through_informers_indexers_and_the_queue(autojump_clock):
    async with open_test_env() as env:
        await serve_widgets(env)
        manager = env.manager()
        reconciled = replica_set(env, manager)
        await env.start(manager)
        await env.client.create(widget("w", "default", replicas=3))
        with trio.fail_after(30):
            await env.wait_for(WIDGETS, "w", lambda o: o and o.get("status", {}).get("replicas") == 3,
                               namespace="default")
            await env.wait_for(WIDGETS, "w-2", lambda o: o is not None, namespace="default")
        # A child deleted by hand: its owner's controller is woken (owns) and makes it again.
        await env.client.delete(WIDGETS, "w-1", namespace="default")
        with trio.fail_after(30):
            await env.wait_for(WIDGETS, "w-1", lambda o: o is not None, namespace="default")
        # Scaled down through the scale subresource: the extra children go.
        await env.client.patch(WIDGETS, "w", {"spec": {"replicas": 1}}, namespace="default", subresource="scale")
        with trio.fail_after(30):
            await env.wait_for(WIDGETS, "w-2", lambda o: o is None, namespace="default")
            await env.wait_for(WIDGETS, "w-1", lambda o: o is None, namespace="default")
        names = sorted(o["metadata"]["name"] for o in (await env.client.list(WIDGETS, namespace="default")).items)
        assert names == ["w", "w-0"]
        stats = manager.controllers["replicas"].statistics()
        assert ObjectKey("default", "w") in reconciled and stats.terminal_errors == 0
        assert stats.queue is not None and stats.queue.adds >= stats.reconciles  # the queue deduplicated wakes


async def test_typed_models_bound_to_a_custom_kind_read_and_write_through_client_and_cache(autojump_clock):
    assert bound_kind(Widget) == TYPED_WIDGETS and TYPED_WIDGETS.model is Widget
    async with open_test_env() as env:
        await serve_widgets(env)
        created = await env.client.create(Widget(metadata={"name": "w", "namespace": "default"},
                                                 spec=WidgetSpec(size=2)))
        assert isinstance(created, Widget) and created.spec.max_size == 10  # the server's default, read back typed
        manager = env.manager()
        cache = TypedCache(manager.informers.informer(TYPED_WIDGETS), Widget)
        seen: list[Widget] = []

        async def reconcile(key: ObjectKey) -> None:
            current = cache.get(key)
            if current is not None and current.status.replicas is None:
                current.status.replicas = current.spec.size
                await manager.client.update(current, subresource="status")
            seen.append(current)

        manager.controller("typed").for_(TYPED_WIDGETS).complete(reconcile)
        await env.start(manager)
        with trio.fail_after(30):
            await env.wait_for(Widget, "w", lambda o: o and o.get("status", {}).get("replicas") == 2,
                               namespace="default")
        listed = await env.client.list(Widget, namespace="default")
        assert [w.status.replicas for w in listed.items] == [2]
        cached = cache.list("default")
        assert len(cached) == 1 and all(isinstance(w, Widget) for w in cached)
        with pytest.raises(ValueError):
            env.client.resource(WidgetStatus)  # a model bound to nothing names no kind


async def test_the_garbage_collector_follows_a_custom_kind_while_its_crd_exists(autojump_clock):
    async with open_test_env(controllers=False) as env:
        manager = env.manager()
        crd.setup(manager)
        collector = gc.setup(manager)
        follower = gckinds.setup(manager, collector)
        await env.start(manager)
        assert follower.followed() == []
        crds = env.scheme.by_kind("CustomResourceDefinition")
        await env.client.create(widget_crd())
        with trio.fail_after(30):
            await env.wait_for(crds, f"widgets.{GROUP}", lambda o: o and any(
                c["type"] == "Established" for c in o.get("status", {}).get("conditions", [])))
        await trio.sleep(1)  # mock time: the follower's task runs on the scheme's change
        [followed] = follower.followed()
        assert followed.group_resource == f"widgets.{GROUP}"
        assert followed in collector.informers and followed in collector.controllers
        await env.client.delete(crds, f"widgets.{GROUP}")
        with trio.fail_after(30):
            await env.wait_for(crds, f"widgets.{GROUP}", lambda o: o is None)
        await trio.sleep(1)
        assert follower.followed() == [] and followed not in collector.informers
