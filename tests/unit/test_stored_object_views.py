"""Each stored object parsed once at start: the watch cache's check keeps the view in-process informers cache.

A budget with a `view` (a server running its built-in controllers: their `ownership_metadata`) has each
object's check keep that view of it; `StoredObject.take_view` hands it out once, and any other view is made
from a decode that is not kept. `LocalClient.viewed_reads(transform)` reads through it: lists and watch
events give views, a watch's ERROR and BOOKMARK events come as sent.
"""

from __future__ import annotations

from runtime.client.local import LocalClient
from runtime.controller.testing import ADMIN
from runtime.controller.transforms import ownership_metadata, partial_metadata
from runtime.machinery.scheme import Scheme
from runtime.machinery.storedobject import DecodeBudget, StoredObject, decode_stored, dumps_json, loads_json
from runtime.server.registry import Registry
from runtime.server.storage import MemoryStore
from runtime.server.watchcache import WatchCache

ROLES = "/rbac.authorization/roles/"


def role_bytes(name: str, namespace: str, revision: int) -> bytes:
    return dumps_json({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                       "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}",
                                    "resourceVersion": str(revision), "labels": {"app": "x"},
                                    "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o",
                                                         "uid": "u-o"}]},
                       "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]})


def lazy(budget: DecodeBudget, name: str = "r", revision: int = 7) -> StoredObject:
    return decode_stored(f"{ROLES}ns/{name}", role_bytes(name, "ns", revision), revision, lazy=budget)


def test_a_budgets_view_is_made_by_the_check_and_handed_out_once():
    budget = DecodeBudget(view=ownership_metadata)
    stored = lazy(budget)
    first = stored.take_view(ownership_metadata)
    assert first == ownership_metadata(loads_json(role_bytes("r", "ns", 7)))
    assert "labels" not in first["metadata"] and first["metadata"]["ownerReferences"][0]["uid"] == "u-o"
    assert budget.decodes == 0 and not stored.is_decoded
    again = stored.take_view(ownership_metadata)  # handed out already: made again, from a decode not kept
    assert again == first and again is not first
    assert budget.decodes == 1 and not stored.is_decoded


def test_a_view_of_another_transform_is_made_from_a_decode_that_is_not_kept():
    budget = DecodeBudget(capacity=1, view=ownership_metadata)
    held, other = lazy(budget, "held"), lazy(budget, "other")
    assert held.obj["metadata"]["name"] == "held" and budget.decodes == 1  # the budget's one dict
    view = other.take_view(partial_metadata)
    assert view["metadata"]["labels"] == {"app": "x"} and "rules" not in view
    assert not other.is_decoded and held.is_decoded and budget.decodes == 2
    assert other.take_view(ownership_metadata)["metadata"]["name"] == "other" and budget.decodes == 2


def test_without_a_budgets_view_the_check_keeps_nothing():
    budget = DecodeBudget()
    stored = lazy(budget)
    assert stored.take_view(ownership_metadata)["metadata"]["uid"] == "uid-r" and budget.decodes == 1


def test_a_decoded_objects_view_is_made_from_its_dict():
    obj = loads_json(role_bytes("r", "ns", 3))
    stored = StoredObject(f"{ROLES}ns/r", obj, 3)
    view = stored.take_view(ownership_metadata)
    assert view["metadata"]["ownerReferences"] is obj["metadata"]["ownerReferences"]  # shared, not copied


async def test_viewed_reads_list_and_watch_views_and_pass_bookmarks_as_sent(nursery):
    scheme, store = Scheme(), MemoryStore()
    for i in range(5):
        await store.create(f"{ROLES}ns/r{i}", lambda rev, i=i: role_bytes(f"r{i}", "ns", rev))
    cache = WatchCache(store, [t.storage_prefix for t in scheme.stored_types()], decode_view=ownership_metadata)
    registry = Registry(store, scheme, cache=cache)
    await nursery.start(registry.run)
    client, roles = LocalClient(registry, ADMIN).viewed_reads(ownership_metadata), scheme.by_kind("Role")
    page = await client.list(roles, namespace="ns")
    assert [o["metadata"]["name"] for o in page.items] == [f"r{i}" for i in range(5)]
    assert all(set(o) == {"apiVersion", "kind", "metadata"} and "labels" not in o["metadata"] for o in page.items)
    assert cache.decodes.decodes == 0  # the check's views: no object parsed a second time
    async with client.watch(roles, namespace="ns", send_initial_events=True, allow_watch_bookmarks=True) as events:
        seen = []
        async for event in events:
            seen.append(event)
            if event.type == "BOOKMARK":
                break
    assert [e.type for e in seen] == ["ADDED"] * 5 + ["BOOKMARK"]
    assert all("rules" not in e.object and "labels" not in e.object["metadata"] for e in seen[:5])
    annotations = seen[-1].object["metadata"]["annotations"]  # the bookmark as sent, not a view of it
    assert annotations == {"k8s.io/initial-events-end": "true"}
    assert cache.decodes.decodes == 5  # the first list took the views; the watch's made its own
