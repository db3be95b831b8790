"""The garbage collector follows kinds that come and go while it runs (custom kinds), as Kubernetes' GC monitors.

`controllers.gc.setup` builds one controller per kind the scheme serves at
setup, each fed by its own kind's events and by one route per kind from the
others'. A CRD adds kinds later, and removes them; `KindFollower(collector,
workers)` is the runnable that keeps the collector current with
`scheme.wait_changed()`:

- for each stored kind that appears (one per storage: a CRD's several served
  versions are one kind here, the first registered, which is the one
  `resolve_owner` names) it runs a metadata-only informer (`ownership_metadata`,
  as `setup`'s) with the owner-uid index, and a controller reconciling that
  kind, as `setup` would have built;
- it routes a new kind's events to every kind's controller, as `gc.setup`
  does for the kinds built at setup (`GarbageCollector.router`), and every
  kind's events reach a new kind's controller through those routes;
- a kind that goes away (its CRD deleted, after its objects) has its
  informer and controller stopped and leaves the collector's view.

Its controllers are not the manager's: on a graceful stop they are
cancelled rather than drained (the collector recomputes everything from the
current state, so the next start finishes their work).

Caveats:
    A kind that goes and comes back within one scheme change is not
    restarted (its informer lists again on its own when the kind is served
    again). An object whose owner is of a kind the collector does not follow
    yet (a CRD applied after the dependent, or an owner deleted before the
    follower started on its kind) is reconciled again once that kind's
    informer has listed: every cached object owned by one of its objects is.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import trio

from controllers.gc import (
    CONTROLLER_PREFIX, OWNER_UID_INDEX, GarbageCollector, InvalidOwnerReference, needs_attention, owner_references,
    owner_uids, resolve_owner,
)
from runtime.client.interface import key_of
from runtime.controller.controller import Controller, Source
from runtime.controller.informer import Informer
from runtime.controller.manager import Manager
from runtime.controller.transforms import ownership_metadata
from runtime.machinery.scheme import ResourceType, Scheme

__all__ = ["KindFollower", "collected_kinds", "setup"]

log = logging.getLogger(__name__)


def collected_kinds(scheme: Scheme) -> list[ResourceType]:
    """The kinds the collector works on: one per storage (the kind `resolve_owner` names), stored kinds only."""
    seen: set[str] = set()
    out = []
    for rt in scheme.stored_types():
        if rt.storage_prefix in seen or scheme.by_kind(rt.kind, rt.group) is not rt:
            continue
        seen.add(rt.storage_prefix)
        out.append(rt)
    return out


@dataclass
class _Followed:
    informer: Informer
    controller: Controller
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)


class KindFollower:
    """Runnable: keeps `collector` working on every kind the scheme serves (see the module docs)."""

    def __init__(self, collector: GarbageCollector, *, workers: int = 4) -> None:
        self.collector = collector
        self.scheme = collector.scheme
        self.workers = workers
        #: The kinds built at setup; everything else is followed here.
        self.static = set(collector.informers)
        self._followed: dict[ResourceType, _Followed] = {}
        self._handlers: list[tuple[Informer, Any]] = []

    def followed(self) -> list[ResourceType]:
        """The kinds followed now (beyond those built at setup)."""
        return list(self._followed)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Follow the scheme until cancelled; started() once the kinds served now are followed."""
        try:
            async with trio.open_nursery() as nursery:
                generation = self.scheme.generation
                self._sync(nursery)
                task_status.started()
                while True:
                    generation = await self.scheme.wait_changed(generation)
                    self._sync(nursery)
        finally:
            for informer, handler in self._handlers:
                informer.remove_handler(handler)
            self._handlers.clear()
            for kind in list(self._followed):
                self._forget(kind)

    def _sync(self, nursery: trio.Nursery) -> None:
        wanted = [k for k in collected_kinds(self.scheme) if k not in self.static]
        for kind in set(self._followed) - set(wanted):
            log.info("garbage collector: %s is no longer served", kind.group_resource)
            self._forget(kind)
        for kind in wanted:
            if kind not in self._followed:
                log.info("garbage collector: following %s", kind.group_resource)
                nursery.start_soon(self._run_followed, kind, self._add(kind))

    def _add(self, kind: ResourceType) -> _Followed:
        informer = Informer(self.collector.client, kind, indexers={OWNER_UID_INDEX: owner_uids},
                            transform=ownership_metadata)
        controller = Controller(CONTROLLER_PREFIX + kind.group_resource, self.collector.reconciler(kind),
                                [Source(informer, predicates=(needs_attention,))],
                                max_concurrent_reconciles=self.workers)
        followed = self._followed[kind] = _Followed(informer, controller)
        self.collector.informers[kind] = informer
        self.collector.controllers[kind] = controller
        self._map_events(kind, informer)
        return followed

    async def _run_followed(self, kind: ResourceType, followed: _Followed) -> None:
        with followed.scope:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(followed.informer.run)
                await nursery.start(followed.controller.run)
                await followed.informer.wait_synced()
                self._recheck_dependents_of(kind)

    def _recheck_dependents_of(self, kind: ResourceType) -> None:
        """Once a new kind's informer has listed: every cached object owned by an object of that kind is
        reconciled again. An owner deleted before its kind was followed left no event to route, and its
        dependent, reconciled while the owner stood, would be kept for good (Kubernetes' GC verifies such
        "virtual" owners live the same way). A CRD's arrival is rare; the scan is over the caches once."""
        for target, informer in list(self.collector.informers.items()):
            for obj in informer.list():
                for ref in owner_references(obj):
                    try:
                        owner = resolve_owner(self.scheme, obj, ref)
                    except InvalidOwnerReference:
                        continue
                    if owner.kind is kind:
                        self.collector.enqueue(target, key_of(obj))
                        break

    def _forget(self, kind: ResourceType) -> None:
        followed = self._followed.pop(kind, None)
        if followed is None:
            return
        followed.scope.cancel()
        self.collector.informers.pop(kind, None)
        self.collector.controllers.pop(kind, None)
        self._handlers = [(i, h) for i, h in self._handlers if i is not followed.informer]

    def _map_events(self, source: ResourceType, informer: Informer) -> None:
        handle = self.collector.router(source)
        informer.add_handler(handle, replay=False)
        self._handlers.append((informer, handle))


def setup(manager: Manager, collector: GarbageCollector, *, workers: int = 4) -> KindFollower:
    """Add a `KindFollower` of `collector` to `manager` (a runnable that needs the lease, as controllers do)."""
    follower = KindFollower(collector, workers=workers)
    manager.add("garbage-collector-kinds", follower)
    return follower
