"""What one event costs the built-in controllers does not grow with the store (informer indexes, work counters).

Each test builds the same scene twice, around 1,000 and 50,000 bystander
objects, and counts the objects the controllers' informer reads visited
(`InformerStatistics.visited`) while one event is handled: the map functions
and every reconcile it causes, until the controllers are idle again. The
same small count at both sizes proves the work is per event, not per store;
a single scan would visit every bystander. (Counts may differ by a read or
two between runs: trio's scheduler may run a reconcile once more, before or
after the cache saw its own write; `SLACK` allows for that, far below what
one scan costs.) The stores are built fast: a `FeedClient`
answers the informers' lists with prepared dicts and feeds their watches
directly (no registry, no HTTP); its writes change its state and send the
events a server would.
"""

from __future__ import annotations

import copy
import math
from collections import defaultdict
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import trio

from controllers import aggregation, gc, namespace
from runtime.machinery import errors
from runtime.client.interface import ObjectKey, ObjectList, WatchEvent, key_of
from runtime.controller.indexers import LABEL_INDEX, by_label_selector, label_index_values
from runtime.controller.informer import Informer
from runtime.controller.manager import Manager
from runtime.server.rbac import RBACAuthorizer, RBACIndex
from runtime.server.rbac.attributes import resource_attributes
from runtime.server.rbac.user import UserInfo
from runtime.machinery.scheme import ResourceType, Scheme
from runtime.machinery.selectors import label_selector_from_dict

SIZES = (1_000, 50_000)
#: Visits a re-run of a quick reconcile may add (see the module docs); a scan adds 1,000 or 50,000.
SLACK = 5


def assert_per_event(costs: list[int], bound: int) -> None:
    """The visits of one event at each of `SIZES`: the same (within SLACK), and below `bound`."""
    assert max(costs) - min(costs) <= SLACK and max(costs) < bound, f"objects visited at {SIZES}: {costs}"
RBAC = "rbac.authorization.svc.io/v1"


class FeedClient:
    """A client whose state is a dict per kind: lists answer it, writes change it and feed the watches."""

    def __init__(self, scheme: Scheme) -> None:
        self.scheme = scheme
        self.objects: dict[ResourceType, dict[ObjectKey, dict[str, Any]]] = defaultdict(dict)
        self.revision = 1
        self.writes = 0
        self._watches: dict[ResourceType, list[trio.MemorySendChannel]] = defaultdict(list)

    def resource(self, kind: ResourceType) -> ResourceType:
        return kind

    def put(self, rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        """Store `obj` at the next revision, without an event (the initial state)."""
        self.revision += 1
        meta = obj["metadata"]
        meta["resourceVersion"] = str(self.revision)
        meta.setdefault("uid", f"uid-{meta['name']}")
        self.objects[rt][key_of(obj)] = obj
        return obj

    def feed(self, rt: ResourceType, event_type: str, obj: dict[str, Any]) -> dict[str, Any]:
        """Apply a change and send its event to the kind's watches."""
        if event_type == "DELETED":
            self.revision += 1
            self.objects[rt].pop(key_of(obj), None)
            obj = dict(obj, metadata=dict(obj["metadata"], resourceVersion=str(self.revision)))
        else:
            obj = self.put(rt, obj)
        for send in self._watches[rt]:
            send.send_nowait(WatchEvent(event_type, copy.deepcopy(obj)))
        return obj

    # ---- Reader -------------------------------------------------------------------------------------

    async def get(self, rt: ResourceType, name: str, *, namespace: str = "", **_: Any) -> dict[str, Any]:
        await trio.lowlevel.checkpoint()
        obj = self.objects[rt].get(ObjectKey(namespace if rt.namespaced else "", name))
        if obj is None:
            raise errors.NotFound(f'{rt.plural} "{name}" not found')
        return copy.deepcopy(obj)

    async def list(self, rt: ResourceType, *, namespace: str = "", limit: int = 0, continue_token: str = "",
                   **_: Any) -> ObjectList:
        await trio.lowlevel.checkpoint()
        items = [o for k, o in self.objects[rt].items() if not namespace or k.namespace == namespace]
        start = int(continue_token or 0)  # a page's token: where the next one starts
        end = start + limit if limit else len(items)
        return ObjectList(items[start:end], str(self.revision), str(end) if end < len(items) else "")

    @asynccontextmanager
    async def watch(self, rt: ResourceType, **_: Any) -> AsyncIterator[trio.MemoryReceiveChannel]:
        send, receive = trio.open_memory_channel[WatchEvent](math.inf)
        self._watches[rt].append(send)
        try:
            yield receive
        finally:
            self._watches[rt].remove(send)

    # ---- Writer -------------------------------------------------------------------------------------

    async def patch(self, rt: ResourceType, name: str, body: dict[str, Any], *, namespace: str = "",
                    **_: Any) -> dict[str, Any]:
        current = await self.get(rt, name, namespace=namespace)
        for field, value in body.items():
            if field == "metadata":
                for k, v in value.items():
                    if k not in ("name", "namespace", "resourceVersion"):
                        current["metadata"].pop(k, None) if v is None else current["metadata"].__setitem__(k, v)
            elif field not in ("apiVersion", "kind"):
                current[field] = value
        self.writes += 1
        return self.feed(rt, "MODIFIED", current)

    async def update(self, obj: dict[str, Any], *, subresource: str = "", **_: Any) -> dict[str, Any]:
        rt = self.scheme.by_api_version_kind(obj["apiVersion"], obj["kind"])
        await self.get(rt, obj["metadata"]["name"], namespace=obj["metadata"].get("namespace") or "")
        self.writes += 1
        if subresource == "finalize" and not obj["spec"].get("finalizers"):
            return self.feed(rt, "DELETED", obj)
        return self.feed(rt, "MODIFIED", copy.deepcopy(obj))

    async def delete(self, rt: ResourceType, name: str, *, namespace: str = "", **_: Any) -> dict[str, Any]:
        current = await self.get(rt, name, namespace=namespace)
        self.writes += 1
        if current["metadata"].get("finalizers"):
            current["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
            return self.feed(rt, "MODIFIED", current)
        self.feed(rt, "DELETED", current)
        return {"kind": "Status", "apiVersion": "v1", "status": "Success"}


def cluster_role(name: str, labels: dict[str, str] | None = None, *, selects: dict[str, str] | None = None,
                 rules: list[dict[str, Any]] | None = None, owner: dict[str, Any] | None = None,
                 block: bool = False) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": name},
                           "rules": rules or []}
    if labels:
        obj["metadata"]["labels"] = labels
    if selects:
        obj["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": selects}]}
    if owner:
        obj["metadata"]["ownerReferences"] = [{"apiVersion": RBAC, "kind": "ClusterRole", "name": owner["name"],
                                               "uid": owner["uid"], "blockOwnerDeletion": block}]
    return obj


def role(name: str, ns: str) -> dict[str, Any]:
    return {"apiVersion": RBAC, "kind": "Role", "metadata": {"name": name, "namespace": ns, "labels": {"app": "bulk"}},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}


def rule(i: int) -> dict[str, Any]:
    return {"apiGroups": [""], "resources": [f"things{i}"], "verbs": ["get"]}


def visited(manager: Manager) -> int:
    """Objects visited so far by reads of every informer of `manager`."""
    return sum(informer.statistics().visited for informer in manager.informers.informers())


async def cost_of(manager: Manager, client: FeedClient, change) -> tuple[int, int]:
    """Run `manager`, let it settle, apply `change()`, let it settle: (objects visited, writes) meanwhile."""
    async with trio.open_nursery() as nursery:
        await nursery.start(manager.run)
        await trio.sleep(60)
        before, writes = visited(manager), client.writes
        change()
        await trio.sleep(60)
        cost = visited(manager) - before, client.writes - writes
        nursery.cancel_scope.cancel()
    return cost


# ---- ClusterRole aggregation ------------------------------------------------------------------------

async def aggregation_cost(bystanders: int, event: str) -> tuple[int, int]:
    """(objects visited, writes) for one ClusterRole event among `bystanders` unrelated ClusterRoles."""
    scheme = Scheme()
    roles = scheme.by_kind("ClusterRole")
    client = FeedClient(scheme)
    for i in range(bystanders):
        client.put(roles, cluster_role(f"bulk-{i:05d}", {"app": "bulk", "tier": f"t{i % 10}"}, rules=[rule(0)]))
    for target in ("view", "edit", "admin"):
        client.put(roles, cluster_role(target, selects={f"aggregate-to-{target}": "true"}))
    for i in range(5):
        client.put(roles, cluster_role(f"source-{i}", {"aggregate-to-view": "true"}, rules=[rule(i)]))
    manager = Manager(client)
    aggregation.setup(manager)
    labels = {"aggregate-to-view": "true"} if event == "selected" else {"app": "bulk", "tier": "t1"}
    return await cost_of(manager, client,
                         lambda: client.feed(roles, "ADDED", cluster_role("new", labels, rules=[rule(9)])))


async def test_a_selected_clusterrole_costs_the_aggregation_the_same_at_1000_and_50000_roles(autojump_clock):
    costs = [await aggregation_cost(n, "selected") for n in SIZES]
    # The aggregating roles and view's sources, a few times over (the event, view's reconcile, view's own event).
    assert_per_event([visits for visits, _ in costs], 50)
    assert [writes for _, writes in costs] == [1, 1]  # view got the new rule, once


async def test_an_unselected_clusterrole_costs_the_aggregation_only_the_aggregating_roles(autojump_clock):
    costs = [await aggregation_cost(n, "unselected") for n in SIZES]
    assert costs == [(3, 0), (3, 0)], f"objects visited, writes at {SIZES}: {costs}"  # view, edit, admin


# ---- namespace deletion -----------------------------------------------------------------------------

async def namespace_cost(bystanders: int) -> tuple[int, bool]:
    """(objects visited, namespace gone) deleting a namespace of 7 objects among `bystanders` Roles elsewhere."""
    scheme = Scheme()
    namespaces, roles, bindings = (scheme.by_kind(k) for k in ("Namespace", "Role", "RoleBinding"))
    client = FeedClient(scheme)
    for i in range(100):
        client.put(namespaces, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"ns-{i}"},
                                "spec": {"finalizers": ["kubernetes"]}})
    for i in range(bystanders):
        client.put(roles, role(f"r-{i:05d}", f"ns-{i % 100}"))
    doomed = client.put(namespaces, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "doomed"},
                                     "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
    for i in range(5):
        client.put(roles, role(f"r-{i}", "doomed"))
    for i in range(2):
        client.put(bindings, {"apiVersion": RBAC, "kind": "RoleBinding", "metadata": {"name": f"b-{i}", "namespace": "doomed"},
                              "roleRef": {"apiGroup": "rbac.authorization.svc.io", "kind": "Role", "name": "r-0"},
                              "subjects": [{"kind": "User", "name": "u"}]})
    manager = Manager(client)
    namespace.setup(manager)
    terminating = copy.deepcopy(doomed)
    terminating["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    terminating["status"]["phase"] = "Terminating"
    cost, _ = await cost_of(manager, client, lambda: client.feed(namespaces, "MODIFIED", terminating))
    gone = ObjectKey("", "doomed") not in client.objects[namespaces] and \
        not any(k.namespace == "doomed" for rt in (roles, bindings) for k in client.objects[rt])
    return cost, gone


async def test_deleting_a_namespace_visits_its_content_not_the_store(autojump_clock):
    costs = [await namespace_cost(n) for n in SIZES]
    assert_per_event([visits for visits, _ in costs], 50)
    assert [gone for _, gone in costs] == [True, True]


# ---- garbage collection -----------------------------------------------------------------------------

async def gc_cost(bystanders: int) -> tuple[int, int]:
    """(objects visited, dependents left) after deleting an owner of 3 ClusterRoles among `bystanders`."""
    scheme = Scheme()
    roles = scheme.by_kind("ClusterRole")
    client = FeedClient(scheme)
    for i in range(bystanders):
        client.put(roles, cluster_role(f"bulk-{i:05d}", {"app": "bulk"}))
    owner = client.put(roles, cluster_role("owner"))
    for i in range(3):
        client.put(roles, cluster_role(f"dependent-{i}", owner=owner["metadata"]))
    manager = Manager(client)
    gc.setup(manager)
    cost, _ = await cost_of(manager, client, lambda: client.feed(roles, "DELETED", owner))
    return cost, sum(1 for k in client.objects[roles] if k.name.startswith("dependent-"))


async def test_deleting_an_owner_finds_its_dependents_by_owner_uid_not_by_scanning(autojump_clock):
    costs = [await gc_cost(n) for n in SIZES]
    assert_per_event([visits for visits, _ in costs], 50)
    assert [left for _, left in costs] == [0, 0]


async def foreground_cost(bystanders: int) -> tuple[int, int, list[str]]:
    """(objects visited, dependents left, the owner's finalizers) after an owner of 3 blocking ClusterRoles
    among `bystanders` starts a foreground deletion."""
    scheme = Scheme()
    roles = scheme.by_kind("ClusterRole")
    client = FeedClient(scheme)
    for i in range(bystanders):
        client.put(roles, cluster_role(f"bulk-{i:05d}", {"app": "bulk"}))
    owner = client.put(roles, cluster_role("owner"))
    for i in range(3):
        client.put(roles, cluster_role(f"dependent-{i}", owner=owner["metadata"], block=True))
    manager = Manager(client)
    gc.setup(manager)
    deleting = copy.deepcopy(owner)
    deleting["metadata"].update(deletionTimestamp="2024-01-01T00:00:00Z", finalizers=["foregroundDeletion"])
    cost, _ = await cost_of(manager, client, lambda: client.feed(roles, "MODIFIED", deleting))
    left = sum(1 for k in client.objects[roles] if k.name.startswith("dependent-"))
    return cost, left, client.objects[roles][ObjectKey("", "owner")]["metadata"].get("finalizers") or []


async def test_a_foreground_deletion_finds_the_owners_dependents_by_owner_uid_not_by_scanning(autojump_clock):
    costs = [await foreground_cost(n) for n in SIZES]
    assert_per_event([visits for visits, _, _ in costs], 50)
    assert [(left, finalizers) for _, left, finalizers in costs] == [(0, []), (0, [])]


# ---- the indexes themselves -------------------------------------------------------------------------

async def test_a_label_selector_visits_only_its_most_selective_bucket(autojump_clock):
    scheme = Scheme()
    roles = scheme.by_kind("ClusterRole")
    client = FeedClient(scheme)
    for i in range(1_000):
        client.put(roles, cluster_role(f"bulk-{i:04d}", {"app": "bulk", "pick": "yes" if i % 100 == 0 else "no"}))
    informer = Informer(client, roles, indexers={LABEL_INDEX: label_index_values})
    async with trio.open_nursery() as nursery:
        await nursery.start(informer.run)
        before = informer.statistics().visited
        picked = by_label_selector(informer, label_selector_from_dict({"matchLabels": {"app": "bulk", "pick": "yes"}}))
        assert sorted(o["metadata"]["name"] for o in picked) == [f"bulk-{i:04d}" for i in range(0, 1_000, 100)]
        assert informer.statistics().visited - before == 10
        nursery.cancel_scope.cancel()


async def test_listing_one_namespace_visits_that_namespace_not_the_cache(autojump_clock):
    async def cost(n: int) -> tuple[int, list[str]]:
        scheme = Scheme()
        roles = scheme.by_kind("Role")
        client = FeedClient(scheme)
        for i in range(n):
            client.put(roles, role(f"r-{i:05d}", f"ns-{i % 100}"))
        informer = Informer(client, roles)
        async with trio.open_nursery() as nursery:
            await nursery.start(informer.run)
            before = informer.statistics().visited
            names = sorted(o["metadata"]["name"] for o in informer.list("ns-7"))
            visits = informer.statistics().visited - before
            nursery.cancel_scope.cancel()
        assert names == [f"r-{i:05d}" for i in range(7, n, 100)]
        return visits, names

    assert [visits for visits, _ in [await cost(n) for n in SIZES]] == [n // 100 for n in SIZES]


def test_an_authorization_decision_visits_the_bindings_of_its_subject_not_all_of_them():
    def decision_cost(bystanders: int) -> int:
        objects: list[dict[str, Any]] = [
            {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": "reader"},
             "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}]
        for i in range(bystanders):
            objects.append({"apiVersion": RBAC, "kind": "RoleBinding",
                            "metadata": {"name": f"b-{i}", "namespace": f"ns-{i % 10}"},
                            "roleRef": {"apiGroup": "rbac.authorization.svc.io", "kind": "ClusterRole", "name": "reader"},
                            "subjects": [{"kind": "User", "name": f"user-{i}"}]})
        objects.append({"apiVersion": RBAC, "kind": "RoleBinding", "metadata": {"name": "alice", "namespace": "ns-1"},
                        "roleRef": {"apiGroup": "rbac.authorization.svc.io", "kind": "ClusterRole", "name": "reader"},
                        "subjects": [{"kind": "User", "name": "alice"}]})
        index = RBACIndex(objects)
        alice = UserInfo("alice", groups=("system:authenticated",))
        before = index.statistics().bindings_visited
        assert RBACAuthorizer(index).authorize(resource_attributes(alice, "get", "pods", namespace="ns-1")).allowed
        assert not RBACAuthorizer(index).authorize(resource_attributes(alice, "get", "pods", namespace="ns-2")).allowed
        return index.statistics().bindings_visited - before

    assert decision_cost(1_000) == decision_cost(50_000) == 1
