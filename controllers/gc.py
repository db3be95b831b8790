"""Garbage collection: `ownerReferences` honoured, as Kubernetes' pkg/controller/garbagecollector does.

An object's `metadata.ownerReferences` name its owners (apiVersion, kind,
name, uid). Scope rules: a namespaced dependent's namespaced owners are in
its own namespace, its cluster-scoped owners anywhere; a cluster-scoped
dependent can only have cluster-scoped owners (a reference to a namespaced
kind, or to a kind the server does not serve, is invalid: such a dependent is
never collected, as in Kubernetes). An owner is present only when an object
of that kind exists at that place with the reference's uid: one with another
uid is another object, so the owner is gone.

What the collector does (one controller per stored kind, each reconciling
its own kind and fed by the events of every kind):

- a dependent whose owners are all gone is deleted, with preconditions uid
  and resourceVersion, propagation Background unless it already carries
  `orphan` or `foregroundDeletion`; a dependent that still has a live owner
  only loses its references to the gone ones. So deleting an owner with
  propagationPolicy Background (the default) removes it at once and its
  dependents after it;
- an owner deleted in Foreground keeps `foregroundDeletion` (set by the
  registry, `runtime.server.registry.propagation`) while its dependents are
  deleted: a dependent with dependents of its own is deleted in Foreground
  too, one with another live owner only loses the reference. Once no
  dependent with `blockOwnerDeletion: true` is left the finalizer is
  removed, and the owner goes;
- an owner deleted with Orphan is removed from the `ownerReferences` of
  every dependent, then its `orphan` finalizer is removed.

The informers' caches say where to look; before acting the collector reads
the live state, as Kubernetes' attemptToDeleteItem does: the dependent
itself, and each owner by GET with a uid compare (owners confirmed gone are
remembered by their whole reference, `Identity`, as Kubernetes'
absentOwnerCache is: a real uid under a wrong name or kind is gone there,
while the object with that uid stays present for the references that name it
rightly). References are told apart so throughout: two with one uid and
different names are two owners, and dropping a gone one leaves a live one
with its uid. Before removing an owner's finalizer it lists the kinds that
may depend on it, so a lagging cache never releases an owner too early or
orphans too few. Everything is recomputed from the current state: a restart
finishes what was started.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from runtime.machinery import errors
from runtime.client.interface import MERGE_PATCH, Client, ObjectKey, key_of, object_meta
from runtime.controller.controller import Controller, MapFunc, Reconciler, Result
from runtime.controller.finalizers import has_finalizer, is_terminating, remove_finalizer
from runtime.controller.informer import EventHandler, Informer, ObjectEvent
from runtime.controller.manager import Manager
from runtime.controller.transforms import ownership_metadata
from runtime.machinery.crds import is_custom
from runtime.machinery.wellknown import FOREGROUND_FINALIZER, ORPHAN_FINALIZER
from runtime.machinery.scheme import ResourceType, Scheme

__all__ = [
    "OWNER_UID_INDEX", "CONTROLLER_PREFIX", "Identity", "InvalidOwnerReference", "OwnerRef", "Dependent",
    "Classification", "GarbageCollector", "identity", "owner_references", "resolve_owner", "classify",
    "propagation_for", "is_deleting_dependents", "is_orphaning", "needs_attention", "owner_uids", "owner_progress",
    "dependent_change", "setup",
]

log = logging.getLogger(__name__)

#: Informer index: the uids an object's ownerReferences name.
OWNER_UID_INDEX = "gc-owner-uid"
#: The collector's controllers are named this plus the kind's group-resource.
CONTROLLER_PREFIX = "garbage-collector-"

_RETRIES = 5  # conflicts retried in place before the reconcile fails (and is retried with backoff)

#: An owner as a reference names it: group, kind, namespace (empty when cluster-scoped), name, uid.
Identity = tuple[str, str, str, str, str]


class InvalidOwnerReference(ValueError):
    """An ownerReference that cannot name an owner: an unknown kind, or a namespaced owner of a cluster-scoped object."""


@dataclass(frozen=True)
class OwnerRef:
    """One ownerReference resolved: where its owner must be, the uid it must have, whether it blocks."""

    kind: ResourceType
    key: ObjectKey
    uid: str
    block: bool

    @property
    def identity(self) -> Identity:
        """The owner it names (not whether it blocks). The uid alone is not enough:
        `{Namespace no-such <uid of kube-public>}` is gone, `{Namespace kube-public <uid of kube-public>}` present.
        """
        return identity(self.kind, self.key, self.uid)


@dataclass(frozen=True)
class Dependent:
    """An object whose ownerReferences name a given owner; `block`: its reference has blockOwnerDeletion."""

    kind: ResourceType
    obj: dict[str, Any]
    block: bool


@dataclass(frozen=True)
class Classification:
    """A dependent's references by their owner's state: present (solid), gone (dangling), deleting their
    dependents (waiting)."""

    solid: tuple[OwnerRef, ...] = ()
    dangling: tuple[OwnerRef, ...] = ()
    waiting: tuple[OwnerRef, ...] = ()


# ---- pure rules ----------------------------------------------------------------------------------

def identity(kind: ResourceType, key: ObjectKey, uid: str) -> Identity:
    """The `Identity` of the object of `kind` at `key` with `uid`."""
    return (kind.group, kind.kind, key.namespace, key.name, uid)


def owner_references(obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The object's ownerReferences (empty when none)."""
    return list(object_meta(obj).get("ownerReferences") or [])


def _uid(obj: Mapping[str, Any]) -> str:
    return object_meta(obj).get("uid") or ""


def resolve_owner(scheme: Scheme, dependent: Mapping[str, Any], ref: Mapping[str, Any]) -> OwnerRef:
    """Where `ref`'s owner must be for `dependent`. Raises InvalidOwnerReference (see the module docs)."""
    group = (ref.get("apiVersion") or "").rpartition("/")[0]
    kind = scheme.by_kind(ref.get("kind") or "", group)
    if kind is None or kind.virtual:
        raise InvalidOwnerReference(f"no stored kind {ref.get('kind')!r} in {ref.get('apiVersion')!r}")
    namespace = object_meta(dependent).get("namespace") or ""
    if kind.namespaced and not namespace:
        raise InvalidOwnerReference(f"a cluster-scoped object cannot have a namespaced owner "
                                    f"({kind.kind} {ref.get('name')!r})")
    return OwnerRef(kind, ObjectKey(namespace if kind.namespaced else "", ref.get("name") or ""),
                    ref.get("uid") or "", bool(ref.get("blockOwnerDeletion")))


def is_deleting_dependents(obj: dict[str, Any]) -> bool:
    """Terminating and holding `foregroundDeletion`: its dependents go first."""
    return is_terminating(obj) and has_finalizer(obj, FOREGROUND_FINALIZER)


def is_orphaning(obj: dict[str, Any]) -> bool:
    """Terminating and holding `orphan`: its dependents are to be released."""
    return is_terminating(obj) and has_finalizer(obj, ORPHAN_FINALIZER)


def classify(refs: Iterable[OwnerRef], owners: Mapping[Identity, dict[str, Any] | None]) -> Classification:
    """Sort resolved references by their owner's state; `owners` maps a reference's `identity` to the
    live object at its place (None: gone).

    An owner with another uid than the reference's is gone (Kubernetes' classifyReferences).
    """
    solid, dangling, waiting = [], [], []
    for ref in refs:
        owner = owners.get(ref.identity)
        if owner is None or _uid(owner) != ref.uid:
            dangling.append(ref)
        elif is_deleting_dependents(owner):
            waiting.append(ref)
        else:
            solid.append(ref)
    return Classification(tuple(solid), tuple(dangling), tuple(waiting))


def propagation_for(obj: Mapping[str, Any]) -> str:
    """The policy a collected object is deleted with: what its GC finalizer asked for, else Background."""
    finalizers = object_meta(obj).get("finalizers") or []
    if ORPHAN_FINALIZER in finalizers:
        return "Orphan"
    if FOREGROUND_FINALIZER in finalizers:
        return "Foreground"
    return "Background"


def owner_uids(obj: dict[str, Any]) -> list[str]:
    """The uids the object's ownerReferences name (the values of `OWNER_UID_INDEX`)."""
    return [ref["uid"] for ref in owner_references(obj) if isinstance(ref, dict) and ref.get("uid")]


# ---- event filters -------------------------------------------------------------------------------

def needs_attention(event: ObjectEvent) -> bool:
    """An object's own events worth a reconcile: it has owners, or it waits on its dependents."""
    if event.type == "DELETED":
        return False
    return bool(owner_references(event.obj)) or is_deleting_dependents(event.obj) or is_orphaning(event.obj)


def owner_progress(event: ObjectEvent) -> bool:
    """An event that concerns an object's dependents: it is gone, or it deletes them first."""
    return event.type == "DELETED" or is_deleting_dependents(event.obj)


def dependent_change(event: ObjectEvent) -> bool:
    """An event that may unblock an owner: a dependent added, gone, or with other ownerReferences."""
    if event.type != "MODIFIED" or event.old is None:
        return True
    return owner_references(event.old) != owner_references(event.obj)


# ---- the collector -------------------------------------------------------------------------------

class GarbageCollector:
    """The reconcilers and event maps of the garbage collector (see the module docs).

    `informers` holds one informer per stored kind (metadata-only ones do:
    only apiVersion, kind and metadata of cached objects are read; the rest
    is read live); an index of owner uids is added to each (it narrows a
    search; `_as_dependent` then matches the whole reference).
    `absent_cache_size` bounds the memory of owners known gone.
    """

    def __init__(self, client: Client, informers: Mapping[ResourceType, Informer], *,
                 absent_cache_size: int = 10_000) -> None:
        self.client = client
        self.scheme = client.scheme
        self.informers = dict(informers)
        self.controllers: dict[ResourceType, Controller] = {}
        self._absent: OrderedDict[Identity, None] = OrderedDict()
        self._absent_size = absent_cache_size
        for informer in self.informers.values():
            informer.add_indexer(OWNER_UID_INDEX, owner_uids)

    # ---- the cache ---------------------------------------------------------------------------------

    def _cached(self, ref: OwnerRef) -> dict[str, Any] | None:
        informer = self.informers.get(ref.kind)
        return informer.get(ref.key) if informer is not None else None

    def _resolve(self, obj: Mapping[str, Any]) -> list[OwnerRef]:
        return [resolve_owner(self.scheme, obj, ref) for ref in owner_references(obj)]

    def _as_dependent(self, kind: ResourceType, obj: dict[str, Any], owner: Identity) -> Dependent | None:
        """`obj` as a dependent of `owner` when one of its references names it (uid, kind and place)."""
        for ref in owner_references(obj):
            if ref.get("uid") != owner[-1]:
                continue
            try:
                resolved = resolve_owner(self.scheme, obj, ref)
            except InvalidOwnerReference:
                continue
            if resolved.identity == owner:
                return Dependent(kind, obj, resolved.block)
        return None

    def dependents(self, kind: ResourceType, owner: Mapping[str, Any]) -> list[Dependent]:
        """The cached objects whose ownerReferences validly name `owner` (of `kind`)."""
        uid = _uid(owner)
        if not uid:
            return []
        named = identity(kind, key_of(owner), uid)
        found = []
        for dependent_kind, informer in self.informers.items():
            for obj in informer.by_index(OWNER_UID_INDEX, uid):
                dependent = self._as_dependent(dependent_kind, obj, named)
                if dependent is not None:
                    found.append(dependent)
        return found

    async def live_dependents(self, kind: ResourceType, owner: Mapping[str, Any]) -> list[Dependent]:
        """`dependents`, from live lists of every kind that may depend on `owner` (not the cache)."""
        key = key_of(owner)
        named = identity(kind, key, _uid(owner))
        found = []
        for dependent_kind in list(self.informers):  # kinds may come and go meanwhile
            if kind.namespaced and not dependent_kind.namespaced:
                continue  # a cluster-scoped object cannot depend on a namespaced one
            page = await self.client.list(dependent_kind, namespace=key.namespace if kind.namespaced else "")
            for obj in page.items:
                dependent = self._as_dependent(dependent_kind, obj, named)
                if dependent is not None:
                    found.append(dependent)
        return found

    # ---- event maps --------------------------------------------------------------------------------

    def dependents_map(self, source: ResourceType, target: ResourceType) -> MapFunc:
        """Map an object of kind `source` to its cached dependents of kind `target`."""
        return lambda obj: self.dependent_keys(source, target, obj)

    def dependent_keys(self, source: ResourceType, target: ResourceType, obj: dict[str, Any]) -> list[ObjectKey]:
        """The keys of the cached dependents of kind `target` of `obj` (of kind `source`): found by owner uid
        in the index, kept when a reference names `obj` wholly (`Identity`)."""
        uid = _uid(obj)
        if not uid:
            return []
        informer = self.informers.get(target)
        if informer is None or not informer.index_size(OWNER_UID_INDEX, uid):
            return []
        named = identity(source, key_of(obj), uid)
        return [key_of(d) for d in informer.by_index(OWNER_UID_INDEX, uid)
                if self._as_dependent(target, d, named) is not None]

    def waiting_owners_map(self, source: ResourceType, target: ResourceType) -> MapFunc:
        """Map an object of kind `source` to its owners of kind `target` that wait for their dependents."""
        return lambda obj: [key for kind, key in self.waiting_owners(obj) if kind == target]

    def waiting_owners(self, obj: dict[str, Any]) -> list[tuple[ResourceType, ObjectKey]]:
        """The (kind, key) of `obj`'s cached owners that wait for their dependents (foreground deletion)."""
        found = []
        for ref in owner_references(obj):
            try:
                resolved = resolve_owner(self.scheme, obj, ref)
            except InvalidOwnerReference:
                continue
            owner = self._cached(resolved)
            if owner is not None and _uid(owner) == resolved.uid and is_deleting_dependents(owner):
                found.append((resolved.kind, resolved.key))
        return found

    def router(self, source: ResourceType) -> EventHandler:
        """The handler routing the events of kind `source` to every kind's controller, one call per event
        (not a source per pair of kinds, which would call kinds x 2 handlers per event).

        An event that concerns its dependents (`owner_progress`) wakes them, found by owner uid in each
        kind's index; a dependent's change (`dependent_change`) wakes its owners that wait for it, found
        from its own ownerReferences. Old and new object are both mapped.
        """
        def handle(event: ObjectEvent) -> None:
            objs = [event.obj] if event.old is None or event.old is event.obj else [event.obj, event.old]
            if owner_progress(event):
                for target in list(self.controllers):
                    keys: set[ObjectKey] = set()
                    for obj in objs:
                        keys.update(self.dependent_keys(source, target, obj))
                    for key in sorted(keys):
                        self.enqueue(target, key)
            if dependent_change(event):
                owners: set[tuple[ResourceType, ObjectKey]] = set()
                for obj in objs:
                    owners.update(self.waiting_owners(obj))
                for kind, key in sorted(owners, key=lambda owner: (owner[0].group_resource, owner[1])):
                    self.enqueue(kind, key)
        return handle

    def enqueue(self, kind: ResourceType, key: ObjectKey) -> None:
        """Reconcile `key` in `kind`'s controller (nothing while that controller is not running)."""
        controller = self.controllers.get(kind)
        if controller is not None and controller.queue is not None:
            controller.queue.add(key)

    # ---- reconcile ---------------------------------------------------------------------------------

    def reconciler(self, kind: ResourceType) -> Reconciler:
        """The reconcile function of `kind`'s controller."""
        async def reconcile(key: ObjectKey) -> Result:
            return await self.reconcile(kind, key)
        return reconcile

    async def reconcile(self, kind: ResourceType, key: ObjectKey) -> Result:
        """Collect, orphan for, or delete the dependents of the object at `key`, as its state asks."""
        obj = self.informers[kind].get(key)
        if obj is None:
            return Result()
        if is_terminating(obj):
            # Being deleted is a one-way trip: only an owner's own dependents may need work.
            if has_finalizer(obj, ORPHAN_FINALIZER):
                await self._orphan_dependents(kind, obj)
            if has_finalizer(obj, FOREGROUND_FINALIZER):
                await self._delete_dependents(kind, obj)
            return Result()
        if owner_references(obj):
            await self._attempt_to_delete(kind, obj)
        return Result()

    async def _live(self, kind: ResourceType, obj: Mapping[str, Any]) -> dict[str, Any] | None:
        """The stored state of `obj`; None when it is gone or was replaced (another uid)."""
        meta = object_meta(obj)
        try:
            latest = await self.client.get(kind, meta.get("name") or "", namespace=meta.get("namespace") or "")
        except errors.NotFound:
            return None
        return latest if _uid(latest) == meta.get("uid") else None

    def _remember_absent(self, ref: OwnerRef) -> None:
        self._absent[ref.identity] = None
        self._absent.move_to_end(ref.identity)
        while len(self._absent) > self._absent_size:
            self._absent.popitem(last=False)

    async def _live_owner(self, ref: OwnerRef) -> dict[str, Any] | None:
        """The owner `ref` names, read live; None when it is gone (missing, or another uid)."""
        if ref.identity in self._absent:
            return None
        try:
            owner = await self.client.get(ref.kind, ref.key.name, namespace=ref.key.namespace)
        except errors.NotFound:
            owner = None
        if owner is None or _uid(owner) != ref.uid:
            self._remember_absent(ref)
            return None
        return owner

    def _cached_solid(self, ref: OwnerRef) -> bool:
        owner = self._cached(ref)
        return (owner is not None and _uid(owner) == ref.uid and ref.identity not in self._absent
                and not is_deleting_dependents(owner))

    async def _attempt_to_delete(self, kind: ResourceType, obj: dict[str, Any]) -> None:
        """Kubernetes' attemptToDeleteItem for a live object with ownerReferences."""
        try:
            refs = self._resolve(obj)
        except InvalidOwnerReference as exc:
            log.warning("garbage collector: %s %s is never collected: %s", kind.kind, key_of(obj), exc)
            return
        if all(self._cached_solid(ref) for ref in refs):
            return  # every owner is there and keeps its dependents: nothing to verify
        latest = await self._live(kind, obj)
        if latest is None or is_terminating(latest) or not owner_references(latest):
            return
        try:
            refs = self._resolve(latest)
        except InvalidOwnerReference as exc:
            log.warning("garbage collector: %s %s is never collected: %s", kind.kind, key_of(latest), exc)
            return
        owners = {ref.identity: await self._live_owner(ref) for ref in refs}
        found = classify(refs, owners)
        if found.solid:
            if found.dangling or found.waiting:
                # Exactly those: a live reference may share a gone one's uid under another name or kind.
                gone = {ref.identity for ref in found.dangling + found.waiting}
                await self._remove_references(kind, latest, self._names_one_of(latest, gone))
            return
        if found.waiting:
            dependents = self.dependents(kind, latest)
            if dependents:
                if any(is_deleting_dependents(d.obj) for d in dependents):
                    # A dependent waits on us while our owner waits on us: unblock to break a cycle.
                    latest = await self._unblock(kind, latest)
                    if latest is None:
                        return
                await self._delete(kind, latest, "Foreground")
                return
        await self._delete(kind, latest, propagation_for(latest))

    async def _delete(self, kind: ResourceType, latest: dict[str, Any], policy: str) -> None:
        """Delete the object as it was read (uid and resourceVersion preconditions)."""
        meta = object_meta(latest)
        name, namespace = meta.get("name") or "", meta.get("namespace") or ""
        rv = meta.get("resourceVersion") or ""
        for _ in range(_RETRIES):
            try:
                await self.client.delete(kind, name, namespace=namespace, propagation_policy=policy,
                                         preconditions={"uid": meta.get("uid") or "", "resourceVersion": rv})
                return
            except errors.NotFound:
                return
            except errors.Conflict:
                fresh = await self._live(kind, latest)
                if fresh is None or is_terminating(fresh) or owner_references(fresh) != owner_references(latest):
                    return  # gone, or its owners changed: its own event brings it back if need be
                rv = object_meta(fresh).get("resourceVersion") or ""
        raise errors.Conflict(f"garbage collector: {kind.kind} {key_of(latest)} kept changing")

    async def _write_references(self, kind: ResourceType, obj: dict[str, Any],
                                refs: list[dict[str, Any]]) -> dict[str, Any]:
        meta = object_meta(obj)
        patch = {"metadata": {"resourceVersion": meta.get("resourceVersion"), "ownerReferences": refs or None}}
        return await self.client.patch(kind, meta.get("name") or "", patch, patch_type=MERGE_PATCH,
                                       namespace=meta.get("namespace") or "")

    def _names_one_of(self, obj: Mapping[str, Any], owners: set[Identity]) -> Callable[[Mapping[str, Any]], bool]:
        """Whether a reference of `obj` names one of `owners` (`OwnerRef.identity`)."""
        def names(ref: Mapping[str, Any]) -> bool:
            try:
                return resolve_owner(self.scheme, obj, ref).identity in owners
            except InvalidOwnerReference:
                return False
        return names

    async def _remove_references(self, kind: ResourceType, obj: dict[str, Any],
                                 drops: Callable[[Mapping[str, Any]], bool]) -> None:
        """Drop the references `drops` picks from the object (conditional on its resourceVersion, retried)."""
        current: dict[str, Any] | None = obj
        for _ in range(_RETRIES):
            if current is None:
                return
            refs = owner_references(current)
            kept = [ref for ref in refs if not drops(ref)]
            if len(kept) == len(refs):
                return
            try:
                await self._write_references(kind, current, kept)
                return
            except errors.NotFound:
                return
            except errors.Conflict:
                current = await self._live(kind, current)
        raise errors.Conflict(f"garbage collector: {kind.kind} {key_of(obj)} kept changing")

    async def _unblock(self, kind: ResourceType, obj: dict[str, Any]) -> dict[str, Any] | None:
        """Set blockOwnerDeletion false on every reference of the object; the object as written."""
        refs = [dict(ref, blockOwnerDeletion=False) if ref.get("blockOwnerDeletion") else ref
                for ref in owner_references(obj)]
        try:
            return await self._write_references(kind, obj, refs)
        except errors.NotFound:
            return None

    async def _delete_dependents(self, kind: ResourceType, obj: dict[str, Any]) -> None:
        """Foreground: get the dependents deleted; release the owner once none blocks it."""
        latest = await self._live(kind, obj)
        if latest is None or not is_deleting_dependents(latest):
            return
        dependents = self.dependents(kind, latest)
        for dependent in dependents:
            if not is_terminating(dependent.obj):
                self.enqueue(dependent.kind, key_of(dependent.obj))
        if any(d.block for d in dependents):
            return  # each one's deletion brings us back
        if any(d.block for d in await self.live_dependents(kind, latest)):
            return  # the cache lags; their events bring us back
        try:
            await remove_finalizer(self.client, latest, FOREGROUND_FINALIZER)
        except errors.NotFound:
            pass

    async def _orphan_dependents(self, kind: ResourceType, obj: dict[str, Any]) -> None:
        """Orphan: remove the owner from every dependent's ownerReferences, then release it."""
        latest = await self._live(kind, obj)
        if latest is None or not is_orphaning(latest):
            return
        uid = _uid(latest)
        for dependent in await self.live_dependents(kind, latest):
            # By uid, as Kubernetes' orphanDependents: a reference with this uid under another name goes
            # too, or its dependent, left with a gone owner, would be collected instead of orphaned.
            await self._remove_references(dependent.kind, dependent.obj, lambda ref: ref.get("uid") == uid)
        try:
            await remove_finalizer(self.client, latest, ORPHAN_FINALIZER)
        except errors.NotFound:
            pass


def setup(manager: Manager, *, workers: int = 4) -> GarbageCollector:
    """Add the garbage collector to `manager`: one controller per stored built-in kind, fed by its own
    kind's events and, through one route per kind (`GarbageCollector.router`), by every kind's. Custom
    kinds come and go: `controllers.gckinds` follows them."""
    kinds = [kind for kind in manager.scheme.stored_types() if not is_custom(kind)]
    # The server client: the collector confirms owners and dependents live, as Kubernetes' GC does.
    # Metadata-only informers (as Kubernetes' GC), of the metadata ownership and deletion turn on: the
    # collector reads nothing else from its caches, and 100,000 stored objects cost it a few hundred bytes each.
    # A kind another controller caches whole already (the aggregation controller's ClusterRoles) is read from
    # that informer: one watch and one cache, not two.
    collector = GarbageCollector(manager.api_reader, {
        kind: manager.informers.informer_keeping(kind, ownership_metadata) for kind in kinds})
    for target in kinds:
        builder = manager.controller(CONTROLLER_PREFIX + target.group_resource)
        builder.for_(target, needs_attention, keeping=ownership_metadata)
        builder.with_options(max_concurrent_reconciles=workers).complete(collector.reconciler(target))
        assert builder.controller is not None
        collector.controllers[target] = builder.controller
    for kind in kinds:
        # Before the manager runs, for good: no event slips between a controller's start and its routes
        # (a dependent's deletion that an owner waits for). At the first list each object passes once.
        collector.informers[kind].add_handler(collector.router(kind), replay=False)
    return collector
