"""The watch cache's objects read from the store: checked at once, decoded when first read, within a budget.

A server of 100,000 objects keeps their bytes, not their decoded dicts: a GET or LIST in JSON, a selection
by namespace or labels and the RBAC index's Roles decode nothing; the budget bounds the dicts kept, the
server's own writes' and its deletions' events included.
"""

from __future__ import annotations

import pytest

from runtime.controller.testing import ADMIN
from runtime.machinery.options import Body, ListOptions, WriteOptions
from runtime.machinery.scheme import Scheme
from runtime.machinery.storedobject import (
    CorruptObject, DecodeBudget, StoredObject, decode_stored, dumps_json, loads_json,
)
from runtime.server.rbac.index import RBACIndex
from runtime.server.registry import Registry
from runtime.server.storage import MemoryStore
from runtime.server.watchcache import WatchCache

ROLES = "/rbac.authorization/roles/"


def role_bytes(name: str, namespace: str, revision: int, labels: dict[str, str] | None = None) -> bytes:
    return dumps_json({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                       "metadata": {"name": name, "namespace": namespace, "labels": labels or {"app": "x"},
                                    "resourceVersion": str(revision)},
                       "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]})


def lazy(name: str = "r", namespace: str = "ns", revision: int = 7, budget: DecodeBudget | None = None,
         labels: dict[str, str] | None = None) -> StoredObject:
    return decode_stored(f"{ROLES}{namespace}/{name}", role_bytes(name, namespace, revision, labels), revision,
                         lazy=budget or DecodeBudget())


# ---- one object ------------------------------------------------------------------------------------

def test_a_stored_value_is_decoded_only_when_its_object_is_first_read():
    budget = DecodeBudget()
    stored = lazy(budget=budget)
    assert not stored.is_decoded and budget.decodes == 0
    assert stored.obj["rules"][0]["verbs"] == ["get"]
    assert stored.obj is stored.obj and budget.decodes == 1


def test_json_bytes_name_namespace_and_revision_need_no_decode():
    budget = DecodeBudget()
    stored = lazy("web", "team-a", 12, budget)
    assert stored.json_bytes() == role_bytes("web", "team-a", 12)
    assert (stored.name, stored.namespace, stored.revision) == ("web", "team-a", 12)
    cluster = decode_stored("/rbac.authorization/clusterroles/admin", dumps_json(
        {"kind": "ClusterRole", "metadata": {"name": "admin", "resourceVersion": "3"}}), 3, lazy=budget)
    assert (cluster.name, cluster.namespace) == ("admin", "")
    assert budget.decodes == 0


def test_labels_are_kept_once_read_when_the_dict_is_dropped():
    budget = DecodeBudget(capacity=1)
    stored = lazy(labels={"tier": "web"}, budget=budget)
    assert stored.labels == {"tier": "web"}
    lazy("other", budget=budget).obj  # pushes the first out of the budget
    assert not stored.is_decoded
    assert stored.labels == {"tier": "web"} and budget.decodes == 2


def test_the_budget_keeps_the_newest_decodes_and_an_older_object_decodes_again_equal():
    budget = DecodeBudget(capacity=2)
    objects = [lazy(f"r{i}", budget=budget) for i in range(3)]
    first = objects[0].obj
    for stored in objects[1:]:
        stored.obj
    assert [o.is_decoded for o in objects] == [False, True, True]
    assert objects[0].obj == first and objects[0].obj is not first  # the holder of `first` keeps it
    assert budget.decodes == 4


def test_other_encodings_are_made_from_the_decoded_object_and_cached():
    stored = lazy()
    calls = []
    encode = lambda obj: calls.append(obj) or b"yaml"  # noqa: E731
    assert stored.encoded("yaml", encode) == b"yaml" == stored.encoded("yaml", encode)
    assert len(calls) == 1 and calls[0]["kind"] == "Role"


@pytest.mark.parametrize("value", [b"not json", b"[1, 2]", b'{"metadata": []}', b'{"a": 1', b""])
def test_a_corrupt_value_is_refused_at_once_not_when_first_read(value):
    with pytest.raises(CorruptObject):
        decode_stored(f"{ROLES}ns/r", value, 5, lazy=DecodeBudget())


def test_a_value_orjson_refuses_but_json_takes_is_decoded_at_once():
    value = b'{"metadata": {"name": "r", "resourceVersion": "5"}, "x": NaN}'
    stored = decode_stored(f"{ROLES}ns/r", value, 5, lazy=DecodeBudget())
    assert stored.is_decoded and stored.obj["x"] != stored.obj["x"]  # NaN


def test_a_value_without_its_revision_inside_is_decoded_and_stamped_at_once():
    stored = decode_stored(f"{ROLES}ns/r", role_bytes("r", "ns", 4), 9, lazy=DecodeBudget())
    assert stored.is_decoded and stored.obj["metadata"]["resourceVersion"] == "9"


# ---- the cache, the registry's selections, the RBAC index ----------------------------------------

async def filled_registry(nursery, count: int) -> tuple[Registry, WatchCache]:
    store = MemoryStore()
    for i in range(count):
        await store.create(f"{ROLES}ns-{i % 3}/r{i}",
                           lambda rev, i=i: role_bytes(f"r{i}", f"ns-{i % 3}", rev, {"n": str(i % 2)}))
    registry = Registry(store, Scheme())
    await nursery.start(registry.run)
    return registry, registry.cache


async def test_the_cache_lists_the_store_without_decoding_and_serves_json_from_the_bytes(nursery):
    registry, cache = await filled_registry(nursery, 300)
    objects = cache.kind(ROLES).list()
    assert len(objects) == 300
    assert all(o.json_bytes().startswith(b'{"apiVersion"') for o in objects)
    assert cache.decodes.decodes == 0


async def test_a_list_selected_by_namespace_decodes_nothing_and_by_labels_reads_each_once(nursery):
    registry, cache = await filled_registry(nursery, 300)
    roles = registry.scheme.by_kind("Role")
    page = await registry.list(ADMIN, roles, "ns-1", ListOptions())
    assert len(page.items) == 100 and cache.decodes.decodes == 0
    page = await registry.list(ADMIN, roles, "", ListOptions(label_selector="n=1"))
    assert len(page.items) == 150 and cache.decodes.decodes == 300
    await registry.list(ADMIN, roles, "", ListOptions(label_selector="n=0"))
    assert cache.decodes.decodes == 300  # labels kept: the second selection decodes nothing


def test_the_rbac_index_decodes_a_cached_role_only_when_a_decision_reads_it():
    budget = DecodeBudget()
    index = RBACIndex()
    index.replace(stored=[("Role", lazy(f"r{i}", budget=budget)) for i in range(50)])
    assert index.statistics().roles == 50 and budget.decodes == 0
    assert index.get_role("ns", "r7")["metadata"]["name"] == "r7"
    assert index.get_role("ns", "missing") is None
    assert budget.decodes == 1


async def test_the_caches_own_writes_and_deletions_are_held_as_bytes_within_the_budget(nursery):
    scheme = Scheme()
    store = MemoryStore()
    cache = WatchCache(store, [t.storage_prefix for t in scheme.stored_types()], decode_budget=2)
    registry = Registry(store, scheme, cache=cache)
    await nursery.start(registry.run)
    roles = scheme.by_kind("Role")
    await registry.create(ADMIN, scheme.by_kind("Namespace"), "", Body({"apiVersion": "v1", "kind": "Namespace",
                                                                        "metadata": {"name": "ns"}}), WriteOptions())
    written = [await registry.create(ADMIN, roles, "ns", Body({"apiVersion": roles.api_version,
                                                               "kind": "Role", "metadata": {"name": f"r{i}"}}),
                                     WriteOptions()) for i in range(4)]
    first = cache.kind(ROLES).get(f"{ROLES}ns/r0")
    assert first is written[0].obj  # the registry's own object, decoded and encoded once
    assert not first.is_decoded and first.json_bytes() == written[0].obj.json_bytes()
    decodes = cache.decodes.decodes
    assert first.obj == loads_json(first.json_bytes()) and first.name == "r0"
    assert cache.decodes.decodes == decodes + 1  # decoded again from the bytes it kept
    await registry.delete(ADMIN, roles, "ns", "r1")
    gone = cache.kind(ROLES).history[-1]
    assert gone.type == "DELETED" and gone.obj.json_bytes() and gone.obj.revision > written[1].obj.revision
    for i in range(4, 7):
        await registry.create(ADMIN, roles, "ns", Body({"apiVersion": roles.api_version, "kind": "Role",
                                                        "metadata": {"name": f"r{i}"}}), WriteOptions())
    assert not gone.obj.is_decoded and gone.obj.obj["metadata"]["name"] == "r1"
