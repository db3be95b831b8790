"""Informer transforms (client-go's SetTransform) and metadata-only informers (PartialObjectMetadata).

The cache holds only what the transform returns, on list, on watch events
(ADDED, MODIFIED, DELETED) and on relist after 410 Gone; the transform's input
(a shared object of the in-process server) is never changed (bookmarks:
`test_informer`). `metadata_only` informers are distinct from full ones, and one
informer is shared per transform; the garbage collector, the namespace
controller and the quota controller's counts cache only `ownership_metadata`,
the aggregation controller its roles `without_managed_fields`.
"""

from __future__ import annotations

import copy
from contextlib import asynccontextmanager
from typing import Any

import trio

from runtime.client.interface import ObjectKey
from runtime.machinery import errors
from runtime.controller.controller import Builder
from runtime.controller.informer import Informer, ObjectEvent, partial_metadata
from runtime.controller.informerfactory import InformerFactory
from runtime.controller.testing import open_test_env
from runtime.controller.transforms import OWNERSHIP_FIELDS, keeps_at_least, ownership_metadata, without_managed_fields

RBAC = "rbac.authorization.svc.io/v1"
METADATA_KEYS = {"apiVersion", "kind", "metadata"}


def role(name: str, ns: str = "default", verbs: tuple[str, ...] = ("get",)) -> dict[str, Any]:
    return {"apiVersion": RBAC, "kind": "Role", "metadata": {"name": name, "namespace": ns, "labels": {"a": "b"}},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": list(verbs)}]}


class Recording:
    """`partial_metadata`, remembering each input and a deep copy of it as it came."""

    def __init__(self) -> None:
        self.inputs: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def __call__(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.inputs.append((obj, copy.deepcopy(obj)))
        return partial_metadata(obj)

    def untouched(self) -> bool:
        return all(obj == before for obj, before in self.inputs)


def is_partial(obj: dict[str, Any]) -> bool:
    return set(obj) <= METADATA_KEYS and "managedFields" not in obj["metadata"]


class Gate:
    """Wraps a client: `hold()` keeps new watches waiting; `expire()` has the next one answer 410 Gone."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.scheme = inner, inner.scheme
        self._open = trio.Event()
        self._open.set()
        self._expired = False

    def resource(self, kind):
        return self.inner.resource(kind)

    async def list(self, *args, **kwargs):
        return await self.inner.list(*args, **kwargs)

    def hold(self) -> None:
        self._open = trio.Event()

    def expire(self) -> None:
        self._expired = True
        self._open.set()

    @asynccontextmanager
    async def watch(self, kind, **kwargs):
        await self._open.wait()
        if self._expired:
            self._expired = False
            raise errors.Gone("too old resource version")
        async with self.inner.watch(kind, **kwargs) as events:
            yield events


def test_partial_metadata_keeps_metadata_without_managed_fields_and_leaves_its_input():
    obj = {"apiVersion": RBAC, "kind": "Role", "rules": [{"verbs": ["get"]}], "status": {"x": 1},
           "metadata": {"name": "r", "namespace": "default", "uid": "u", "resourceVersion": "7",
                        "finalizers": ["f"], "ownerReferences": [{"uid": "o"}], "managedFields": [{"manager": "m"}]}}
    before = copy.deepcopy(obj)
    partial = partial_metadata(obj)
    assert obj == before
    assert partial == {"apiVersion": RBAC, "kind": "Role",
                       "metadata": {"name": "r", "namespace": "default", "uid": "u", "resourceVersion": "7",
                                    "finalizers": ["f"], "ownerReferences": [{"uid": "o"}]}}
    assert partial["metadata"] is not obj["metadata"]


FULL = {"apiVersion": RBAC, "kind": "Role", "rules": [{"verbs": ["get"]}],
        "metadata": {"name": "r", "namespace": "default", "uid": "u", "resourceVersion": "7", "generation": 2,
                     "labels": {"a": "b"}, "annotations": {"last": "{...}"}, "creationTimestamp": "2026-12-03T00:00:00Z",
                     "finalizers": ["f"], "ownerReferences": [{"uid": "o"}], "deletionTimestamp": "2026-12-03T01:00:00Z",
                     "deletionGracePeriodSeconds": 0, "managedFields": [{"manager": "m"}]}}


def test_ownership_metadata_keeps_only_identity_owners_finalizers_and_deletion():
    before = copy.deepcopy(FULL)
    kept = ownership_metadata(FULL)
    assert FULL == before
    assert set(kept) == METADATA_KEYS and set(kept["metadata"]) == OWNERSHIP_FIELDS
    assert kept["metadata"]["ownerReferences"] is FULL["metadata"]["ownerReferences"]  # shared, not copied


def test_without_managed_fields_keeps_everything_else():
    before = copy.deepcopy(FULL)
    kept = without_managed_fields(FULL)
    assert FULL == before
    assert kept["rules"] is FULL["rules"] and kept["metadata"]["labels"] == {"a": "b"}
    assert "managedFields" not in kept["metadata"] and set(kept["metadata"]) == set(FULL["metadata"]) - {"managedFields"}


async def test_the_transform_shapes_listed_and_watched_objects_and_never_changes_its_input(autojump_clock):
    async with open_test_env(controllers=False) as env:
        rt = env.scheme.by_kind("Role")
        await env.client.create(role("before"))
        transform = Recording()
        informer = Informer(env.client, rt, transform=transform)
        events: list[ObjectEvent] = []
        informer.add_handler(events.append)
        await env.nursery.start(informer.run)
        assert is_partial(informer.get("default/before")) and len(transform.inputs) == 1
        await env.client.create(role("after"))
        after = await env.client.get(rt, "after", namespace="default")
        await env.client.update(dict(after, rules=role("after", verbs=("list",))["rules"]))
        await env.client.delete(rt, "before", namespace="default")
        marker = await env.client.create(role("marker"))
        await informer.wait_for(marker["metadata"]["resourceVersion"])
        assert [(e.type, e.key.name) for e in events] == [
            ("ADDED", "before"), ("ADDED", "after"), ("MODIFIED", "after"), ("DELETED", "before"), ("ADDED", "marker")]
        assert all(is_partial(e.obj) and (e.old is None or is_partial(e.old)) for e in events)
        assert events[2].old["metadata"]["resourceVersion"] != events[2].obj["metadata"]["resourceVersion"]
        assert len(transform.inputs) == 5 and transform.untouched()
        assert sorted(k.name for k in informer.keys()) == ["after", "marker"]
        assert all(is_partial(o) for o in informer.list())
        assert informer.get("default/after")["metadata"]["labels"] == {"a": "b"}
        # The server's own objects (shared with the informer's reads) still hold everything.
        live = await env.client.get(rt, "after", namespace="default")
        assert live["rules"][0]["verbs"] == ["list"] and live["metadata"]["managedFields"]
        assert informer.resource_version == marker["metadata"]["resourceVersion"]


async def test_a_relist_after_gone_transforms_its_objects_and_its_tombstones(autojump_clock):
    async with open_test_env(controllers=False) as env:
        rt = env.scheme.by_kind("Role")
        await env.client.create(role("doomed"))
        await env.client.create(role("kept"))
        gate = Gate(env.client)
        transform = Recording()
        informer = Informer(gate, rt, transform=transform, watch_timeout=(5, 5))
        events: list[ObjectEvent] = []
        informer.add_handler(events.append)
        await env.nursery.start(informer.run)
        gate.hold()
        await trio.sleep(10)  # the open watch times out; the next one waits
        await env.client.delete(rt, "doomed", namespace="default")
        kept = await env.client.get(rt, "kept", namespace="default")
        await env.client.update(dict(kept, rules=role("kept", verbs=("list",))["rules"]))
        latest = await env.client.create(role("new"))
        gate.expire()
        await informer.wait_for(latest["metadata"]["resourceVersion"])
        assert informer.statistics().relists_gone == 1 and informer.statistics().lists == 2
        after = [(e.type, e.key.name, e.final_state_unknown) for e in events[2:]]
        assert after == [("MODIFIED", "kept", False), ("ADDED", "new", False), ("DELETED", "doomed", True)]
        assert all(is_partial(e.obj) and (e.old is None or is_partial(e.old)) for e in events)
        assert all(is_partial(o) for o in informer.list()) and transform.untouched()
        assert sorted(k.name for k in informer.keys()) == ["kept", "new"]


async def test_metadata_only_informers_are_distinct_shared_informers(autojump_clock):
    async with open_test_env(controllers=False) as env:
        rt = env.scheme.by_kind("Role")
        await env.client.create(role("r"))
        factory = InformerFactory(env.client)
        full = factory.informer(rt)
        partial = factory.informer(rt, metadata_only=True)
        assert partial is not full and factory.informer(rt, metadata_only=True) is partial
        assert factory.find(rt) is full and factory.find(rt, metadata_only=True) is partial
        assert factory.informers(metadata_only=True) == [partial] and factory.informers(metadata_only=False) == [full]
        assert partial.metadata_only and not full.metadata_only
        await env.nursery.start(factory.run)
        key = ObjectKey("default", "r")
        assert full.get(key)["rules"] and full.get(key)["metadata"]["managedFields"]
        assert partial.get(key) == partial_metadata(full.get(key)) and is_partial(partial.get(key))
        # One shared informer per transform, none of them the full one.
        owned = factory.informer(rt, transform=ownership_metadata)
        assert owned is factory.informer(rt, transform=ownership_metadata) is factory.find(rt, transform=ownership_metadata)
        assert owned not in (full, partial) and owned.metadata_only
        lean = factory.informer(rt, transform=without_managed_fields)
        assert lean not in (full, partial, owned) and not lean.metadata_only
        # The builder picks the informer `metadata_only` names.
        builder = Builder(factory, lambda controller: None, "c").for_(rt, metadata_only=True)
        builder.watches(rt, lambda obj: [], metadata_only=True).watches(rt, lambda obj: [])

        async def reconcile(key):
            return None
        controller = builder.build(reconcile)
        assert [s.informer for s in controller.sources] == [partial, partial, full]


async def test_the_garbage_collector_and_the_namespace_controller_cache_only_metadata_or_share_a_fuller_cache(
        autojump_clock):
    async with open_test_env() as env:
        rt = env.scheme.by_kind("Role")
        await env.client.create(role("r"))
        owner = await env.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                         "metadata": {"name": "owner", "namespace": "default"}, "data": {"k": "v"}})
        dependent = role("dependent")
        dependent["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                                                     "uid": owner["metadata"]["uid"]}]
        await env.client.create(dependent)
        manager = env.controllers
        collectors = [c for name, c in manager.controllers.items() if name.startswith("garbage-collector-")]
        content = manager.controllers["namespace"].sources[1:]
        assert collectors and content
        informers = [s.informer for c in collectors for s in c.sources] + [s.informer for s in content]
        marker = await env.client.create(role("marker"))
        for informer in informers:
            await informer.wait_for(marker["metadata"]["resourceVersion"])
        assert all(keeps_at_least(informer.transform, ownership_metadata) for informer in informers)
        # A kind no other controller caches whole: its metadata of ownership alone.
        thin = [informer for informer in informers if informer.kind.kind in ("Role", "ConfigMap")]
        cached = [o for informer in thin for o in informer.list()]
        assert any(o["metadata"]["name"] == "r" for o in cached)
        assert all(informer.transform is ownership_metadata for informer in thin)
        assert all(set(o) <= METADATA_KEYS and set(o["metadata"]) <= OWNERSHIP_FIELDS for o in cached)
        # A kind another controller caches whole (or without managed fields): that informer, one per kind.
        shared = {informer.kind.kind: informer for informer in informers if informer.transform is not ownership_metadata}
        aggregation = {s.informer for s in manager.controllers["clusterrole-aggregation"].sources}
        assert aggregation == {shared["ClusterRole"]} and shared["ClusterRole"].transform is without_managed_fields
        quota = {s.informer.kind.kind: s.informer for s in manager.controllers["resourcequota"].sources[1:]}
        assert shared["Pod"] is quota["Pod"] and shared["Service"] is quota["Service"]  # usage reads spec
        assert quota["Pod"].transform is quota["Service"].transform is without_managed_fields
        assert quota["Role"].transform is ownership_metadata and quota["ConfigMap"].transform is ownership_metadata
        assert manager.controllers["namespace"].sources[0].informer.metadata_only is False
        for kind in ("ClusterRole", "Pod", "Service", "Secret", "ServiceAccount"):
            assert len([i for i in manager.informers.informers() if i.kind.kind == kind]) == 1, kind
        assert all("managedFields" not in o["metadata"] for i in aggregation for o in i.list())
        # Still collects: the owner's deletion takes its dependent (owners are confirmed live by GET).
        await env.client.delete(env.scheme.by_kind("ConfigMap"), "owner", namespace="default")
        with trio.fail_after(60):
            await env.wait_for(rt, "dependent", lambda o: o is None, namespace="default")
