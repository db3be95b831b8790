"""Controllers: a reconciler, the events that wake it, and the work queue between them.

The reconciler contract (controller-runtime's `pkg/reconcile`):

- `async def reconcile(key: ObjectKey) -> Result | None`: the request is a
  namespace/name, never the event; the reconciler reads the current state
  (informer caches, the client) and makes the world match. It must be
  idempotent: it runs again after restarts, resyncs and duplicate events.
- Returning `None` or `Result()`: done, backoff reset.
  `Result(requeue_after=s)`: done for now, run again in `s` seconds.
  `Result(requeue=True)`: run again after the key's backoff, which is not
  reset (as an error's, but not counted or logged as one); `requeue_after`
  wins when both are set (controller-runtime's `Requeue`).
- Raising an exception: logged, retried with per-key exponential backoff
  (`WorkQueue.add_rate_limited`; client-go's default limiter: 5 ms doubling
  to 1000 s, 10 qps overall). Raising `TerminalError`: logged, not retried
  until the next event for the key. A `Conflict` or `AlreadyExists` (a write
  from a stale cache read: an update of an older version, a create of what
  the cache did not hold yet) is retried the same way but logged at DEBUG,
  without a traceback: the next run reads the newer state
  (controller-runtime logs it as an error).
- A key is never reconciled by two workers at once; up to
  `max_concurrent_reconciles` different keys run in parallel.

Events reach the queue through sources: an informer, a map from an object to
the keys to reconcile, and predicates that drop events first. Handlers and
predicates are sync and run inline in the informer's task; an exception in
one crashes the controller (not the informer): the manager restarts it.

A running controller can watch more kinds (controller-runtime's `Build` +
`Watch`): `await controller.watch(kind, map, *predicates)` starts the kind's
informer in the manager if it is new, waits for its sync and routes its
events to the controller's queue from then on (and after restarts).

The builder wires it up::

    manager.controller("team-binder") \\
        .for_(teams_rt, generation_changed) \\
        .owns(bindings_rt) \\
        .watches(namespaces_rt, lambda ns: [ObjectKey(ns["metadata"]["name"], "marker")]) \\
        .with_options(max_concurrent_reconciles=4) \\
        .complete(reconcile)        # returns `reconcile` unchanged: usable as a decorator

Caveats:
    `generation_changed` also drops resync events (they carry no change), as
    controller-runtime's GenerationChangedPredicate does; and it drops
    metadata-only changes (labels, finalizers, deletionTimestamp). Only kinds
    whose strategy counts generations have one (custom resources, CRDs; not
    the RBAC kinds or Namespaces, as in Kubernetes): on the others it drops
    every update.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Iterable

import trio

from runtime.client.interface import Kind, ObjectKey, key_of, object_meta
from runtime.controller.informer import Informer, ObjectEvent
from runtime.controller.metrics import ControllerMetrics
from runtime.controller.ratelimit import RateLimiter, default_controller_rate_limiter
from runtime.controller.transforms import Transform
from runtime.machinery import errors
from runtime.machinery.scheme import ResourceType
from runtime.controller.workqueue import QueueShutDown, WorkQueue, WorkQueueStatistics

if TYPE_CHECKING:
    from runtime.controller.informerfactory import InformerFactory

__all__ = [
    "Result", "TerminalError", "Reconciler", "Predicate", "MapFunc", "Source", "Controller",
    "ControllerStatistics", "Builder",
    "enqueue_object", "enqueue_owner", "generation_changed", "labels_changed", "annotations_changed",
    "resource_version_changed", "all_of", "any_of",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Result:
    """What a reconcile asks for next: nothing (default), another run after `requeue_after` seconds, or
    (`requeue=True`) after the rate limiter's backoff for the key."""

    requeue_after: float | None = None
    requeue: bool = False


class TerminalError(Exception):
    """A reconcile failure that retrying cannot fix: logged, the key is not requeued.

    `raise TerminalError("spec.x is not valid") from exc`. The key runs again
    on its next event (kopf's PermanentError, controller-runtime's TerminalError).
    """


#: `async def reconcile(key) -> Result | None`.
Reconciler = Callable[[ObjectKey], Awaitable["Result | None"]]
#: Keep an event? Sync and quick.
Predicate = Callable[[ObjectEvent], bool]
#: The keys an object's change should reconcile.
MapFunc = Callable[[dict[str, Any]], Iterable[ObjectKey]]


# ---- stock maps ----------------------------------------------------------------------------------

def enqueue_object(obj: dict[str, Any]) -> list[ObjectKey]:
    """The object's own key (what `for_` uses)."""
    return [key_of(obj)]


def enqueue_owner(owner: ResourceType, *, only_controller: bool = True) -> MapFunc:
    """Map an object to its owners of kind `owner` (from `ownerReferences`; what `owns` uses).

    Only the reference marked `controller: true` counts unless
    `only_controller` is False. A namespaced owner is looked for in the
    object's namespace, as ownerReferences cannot cross namespaces.
    """
    def owners(obj: dict[str, Any]) -> list[ObjectKey]:
        meta = object_meta(obj)
        namespace = (meta.get("namespace") or "") if owner.namespaced else ""
        keys = []
        for ref in meta.get("ownerReferences") or []:
            if ref.get("kind") != owner.kind or ref.get("apiVersion", "").rpartition("/")[0] != owner.group:
                continue
            if only_controller and not ref.get("controller"):
                continue
            keys.append(ObjectKey(namespace, ref.get("name") or ""))
        return keys
    return owners


# ---- stock predicates ----------------------------------------------------------------------------

def _changed(path: Callable[[dict[str, Any]], Any]) -> Predicate:
    def predicate(event: ObjectEvent) -> bool:
        if event.type != "MODIFIED" or event.old is None:
            return True
        return path(event.old) != path(event.obj)
    return predicate


#: MODIFIED only when metadata.generation changed (spec changes); other events pass. See Caveats.
generation_changed: Predicate = _changed(lambda o: object_meta(o).get("generation"))
#: MODIFIED only when labels changed; other events pass.
labels_changed: Predicate = _changed(lambda o: object_meta(o).get("labels") or {})
#: MODIFIED only when annotations changed; other events pass.
annotations_changed: Predicate = _changed(lambda o: object_meta(o).get("annotations") or {})
#: MODIFIED only when resourceVersion changed (drops resyncs); other events pass.
resource_version_changed: Predicate = _changed(lambda o: object_meta(o).get("resourceVersion"))


def all_of(*predicates: Predicate) -> Predicate:
    """An event passes when every predicate keeps it."""
    return lambda event: all(p(event) for p in predicates)


def any_of(*predicates: Predicate) -> Predicate:
    """An event passes when some predicate keeps it."""
    return lambda event: any(p(event) for p in predicates)


# ---- the controller ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Source:
    """Events of `informer`, filtered by `predicates`, mapped to keys by `map`.

    On MODIFIED both the old and the new object are mapped (a label removed
    still reaches the keys it used to select). `replay`: when the controller
    starts, every cached object first comes as ADDED (see `Builder.watches`
    for when to turn that off).
    """

    informer: Informer
    map: MapFunc = enqueue_object
    predicates: tuple[Predicate, ...] = ()
    replay: bool = True


@dataclass(frozen=True)
class ControllerStatistics:
    """Reconciles run, failed (retried), terminal failures, timed requeues, crashes; the queue's numbers;
    `conflicts`, the failures (counted in `errors` too) that were a Conflict or an AlreadyExists."""

    reconciles: int
    errors: int
    terminal_errors: int
    requeues_after: int
    crashes: int
    queue: WorkQueueStatistics | None
    conflicts: int = 0


@dataclass
class _Counters:
    reconciles: int = 0
    errors: int = 0
    terminal_errors: int = 0
    requeues_after: int = 0
    crashes: int = 0
    conflicts: int = 0


class Controller:
    """Runs `reconcile` for keys from `sources` through a rate-limited work queue (see the module docs).

    `run()` may be called again after it ended (the manager restarts a
    crashed controller): each run gets a fresh queue, and re-registering the
    handlers replays every cached object, so nothing is lost. `metrics`
    (set by the manager that runs it) records its queue and reconciles;
    `informers` (set by the builder) is where `watch()` finds informers.
    """

    def __init__(self, name: str, reconcile: Reconciler, sources: Iterable[Source], *,
                 predicates: Iterable[Predicate] = (), max_concurrent_reconciles: int = 1,
                 rate_limiter: Callable[[], RateLimiter] = default_controller_rate_limiter) -> None:
        if max_concurrent_reconciles < 1:
            raise ValueError("max_concurrent_reconciles must be at least 1")
        self.name = name
        self.reconcile = reconcile
        self.sources = tuple(sources)
        self.predicates = tuple(predicates)
        self.max_concurrent_reconciles = max_concurrent_reconciles
        self._rate_limiter = rate_limiter
        self.queue: WorkQueue[ObjectKey] | None = None
        self._counts = _Counters()
        self._failure: BaseException | None = None
        self._scope: trio.CancelScope | None = None
        self.stopping = False
        self.metrics: ControllerMetrics | None = None
        self.informers: "InformerFactory | None" = None
        self._registered: list[tuple[Informer, Callable[[ObjectEvent], None]]] = []
        self._watching = False

    def __repr__(self) -> str:
        return f"<Controller {self.name}>"

    def statistics(self) -> ControllerStatistics:
        c = self._counts
        return ControllerStatistics(c.reconciles, c.errors, c.terminal_errors, c.requeues_after, c.crashes,
                                    self.queue.statistics() if self.queue is not None else None, c.conflicts)

    async def watch(self, kind: Kind, map: MapFunc = enqueue_object, *predicates: Predicate,
                    replay: bool = True) -> Source:
        """Add a source of `kind`'s events, mapped to keys by `map`, kept by `predicates` (`Builder.watches`).

        Before `run()` it is only added. While running (controller-runtime's
        `Controller.Watch` after `Start`): the kind's shared informer is
        created in `informers` if new (the running manager starts it), its
        events are routed to this controller's queue, and this blocks until
        that informer has synced. Returns the source. Raises RuntimeError
        without `informers`, or while running when they are not running.
        """
        if self.informers is None:
            raise RuntimeError(f"{self!r} has no informer factory: build it with a manager's controller()")
        running = self._watching
        if running and not self.informers.running:
            raise RuntimeError(f"{self!r}: the informers are not running, so a new one would never sync")
        source = Source(self.informers.informer(kind), map, predicates, replay)
        self.sources += (source,)
        if running:
            assert self.queue is not None
            self._register(self.queue, source)
            await source.informer.wait_synced()
        return source

    def _register(self, queue: WorkQueue[ObjectKey], source: Source) -> None:
        handler = self._handler(queue, source)
        source.informer.add_handler(handler, replay=source.replay)
        self._registered.append((source.informer, handler))

    def shut_down(self) -> None:
        """Stop taking keys: running and queued reconciles finish, then `run()` returns.

        Sets `stopping`; a `run()` started while it is set returns at once
        (after the sources synced). The manager clears it when it runs again.
        """
        self.stopping = True
        if self.queue is not None:
            self.queue.shut_down()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Register the handlers, wait for the sources to sync, run the workers; started() then.

        Returns after `shut_down()` once running reconciles finished; raises
        the exception of a handler, map or predicate that failed (a crash).
        """
        queue: WorkQueue[ObjectKey] = WorkQueue(
            self._rate_limiter(), metrics=self.metrics.queue_metrics(self.name) if self.metrics is not None else None)
        self.queue = queue
        self._failure = None
        self._registered = []
        try:
            async with trio.open_nursery() as nursery:
                self._scope = nursery.cancel_scope
                await nursery.start(queue.run)
                for source in self.sources:
                    self._register(queue, source)
                self._watching = True  # from here on, watch() registers its source on this run's queue
                for source in list(self.sources):
                    await source.informer.wait_synced()
                if self.stopping:
                    queue.shut_down()
                for _ in range(self.max_concurrent_reconciles):
                    nursery.start_soon(self._worker, queue)
                task_status.started()
        finally:
            self._scope = None
            self._watching = False
            for informer, handler in self._registered:
                informer.remove_handler(handler)
            self._registered = []
            queue.shut_down()
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure

    def _handler(self, queue: WorkQueue[ObjectKey], source: Source) -> Callable[[ObjectEvent], None]:
        predicates = source.predicates + self.predicates
        map_keys = source.map

        def handle(event: ObjectEvent) -> None:
            # Runs for every event of the informer: kept lean (no generators, no set for one key).
            if self._failure is not None:
                return
            try:
                for predicate in predicates:
                    if not predicate(event):
                        return
                keys = map_keys(event.obj)
                if event.old is not None and event.old is not event.obj:
                    keys = sorted(set(keys).union(map_keys(event.old)))
                elif not isinstance(keys, list) or len(keys) > 1:
                    keys = sorted(set(keys))
                for key in keys:
                    queue.add(key)
            except Exception as exc:  # the controller's code broke: crash the controller, not the informer
                self._crash(exc)
        return handle

    def _crash(self, exc: BaseException) -> None:
        self._counts.crashes += 1
        self._failure = exc
        if self._scope is not None:
            self._scope.cancel()

    async def _worker(self, queue: WorkQueue[ObjectKey]) -> None:
        while True:
            try:
                key = await queue.get()
            except QueueShutDown:
                return
            try:
                await self._reconcile_one(queue, key)
            finally:
                queue.done(key)

    async def _reconcile_one(self, queue: WorkQueue[ObjectKey], key: ObjectKey) -> None:
        self._counts.reconciles += 1
        began = trio.current_time()
        outcome = "success"
        try:
            result = await self.reconcile(key)
        except TerminalError as exc:
            outcome = "terminal_error"
            self._counts.terminal_errors += 1
            queue.forget(key)
            log.error("%s: reconcile of %s failed for good: %s", self.name, key, exc)
        except (errors.Conflict, errors.AlreadyExists) as exc:  # a stale read's write (the cache lags): read anew
            outcome = "error"
            self._counts.errors += 1
            self._counts.conflicts += 1
            queue.add_rate_limited(key)
            log.debug("%s: reconcile of %s hit a conflict (%s), requeued (retry %d): %s", self.name, key,
                      type(exc).__name__, queue.num_requeues(key), exc)
        except Exception as exc:
            outcome = "error"
            self._counts.errors += 1
            queue.add_rate_limited(key)
            log.error("%s: reconcile of %s failed (retry %d): %s", self.name, key, queue.num_requeues(key), exc,
                      exc_info=exc)
        else:
            if result is not None and result.requeue_after is not None:
                outcome = "requeue_after"
                self._counts.requeues_after += 1
                queue.forget(key)
                queue.add_after(key, result.requeue_after)
            elif result is not None and result.requeue:
                outcome = "requeue"
                queue.add_rate_limited(key)  # not forgotten: the backoff grows
            else:
                queue.forget(key)
        if self.metrics is not None:
            self.metrics.record_reconcile(self.name, outcome, trio.current_time() - began)


# ---- the builder ---------------------------------------------------------------------------------

class Builder:
    """Builds a `Controller` and adds it to a manager; `complete(reconcile)` finishes.

    Each step equals a low-level call:

    - `for_(kind, *p)`: the primary kind; `Source(informer(kind), enqueue_object, p)`.
    - `owns(kind, *p)`: `Source(informer(kind), enqueue_owner(primary), p)`:
      objects whose controller ownerReference names a primary object.
    - `watches(kind, map, *p, replay=True)`: `Source(informer(kind), map, p, replay)`.
    - `metadata_only=True` (of `for_` and `watches`; controller-runtime's
      `OnlyMetadata`): the kind's metadata-only shared informer, whose events
      carry only apiVersion, kind and metadata (read anything else live);
      `transform=t`: the shared informer caching `t`'s output
      (`runtime.controller.transforms`); `keeping=t`: a shared informer keeping
      at least that, one created already if one does
      (`InformerFactory.informer_keeping`), for a source that reads only
      what `t` keeps.
    - `with_predicate(*p)`: `p` added to every source (Controller(predicates=...)).
    - `with_options(...)`: Controller's `max_concurrent_reconciles` and `rate_limiter`.
    - `named(name)`: the controller's name (default: the primary kind, lower case).
    - `build(reconcile)`: as `complete`, returning the `Controller` (for `Controller.watch` once running).

    Informers come from the manager's shared factory (one per kind per process).
    A kind is a `ResourceType` or a model class (a built-in model, a bound
    custom one, a generated one), resolved as the client resolves kinds
    (`InformerFactory.resource`): `.for_(Tenant).owns(Namespace)`.
    """

    def __init__(self, informers: "InformerFactory", add: Callable[[Controller], None], name: str = "") -> None:
        self._informers = informers
        self._add = add
        self._name = name
        self._primary: ResourceType | None = None
        self._sources: list[Source] = []
        self._owned: list[tuple[Kind, tuple[Predicate, ...], bool]] = []
        self._predicates: list[Predicate] = []
        self._options: dict[str, Any] = {}
        self.controller: Controller | None = None

    def named(self, name: str) -> "Builder":
        self._name = name
        return self

    def for_(self, kind: Kind, *predicates: Predicate, metadata_only: bool = False,
             transform: Transform | None = None, keeping: Transform | None = None) -> "Builder":
        if self._primary is not None:
            raise ValueError("for_() may be called only once")
        self._primary = self._informers.resource(kind)
        informer = self._informer(kind, metadata_only, transform, keeping)
        self._sources.append(Source(informer, enqueue_object, predicates))
        return self

    def _informer(self, kind: Kind, metadata_only: bool, transform: Transform | None,
                  keeping: Transform | None) -> Informer:
        if keeping is None:
            return self._informers.informer(kind, metadata_only=metadata_only, transform=transform)
        if metadata_only or transform is not None:
            raise ValueError("keeping= names the least a source reads: give it alone, without transform= or "
                             "metadata_only=")
        return self._informers.informer_keeping(kind, keeping)

    def owns(self, kind: Kind, *predicates: Predicate, only_controller: bool = True) -> "Builder":
        self._owned.append((kind, predicates, only_controller))
        return self

    def watches(self, kind: Kind, map: MapFunc, *predicates: Predicate, replay: bool = True,
                metadata_only: bool = False, transform: Transform | None = None,
                keeping: Transform | None = None) -> "Builder":
        """Reconcile the keys `map` gives for each event of `kind` that `predicates` keep.

        `replay=False`: when the controller starts, the cached objects of
        `kind` are not replayed through `map` (only later changes are). Right
        when every key `map` could give is replayed anyway by `for_` and
        reconciled from the current state, as the keys of a level-based
        controller are; it spares a start-up pass over every object of
        `kind` (for each such source).
        """
        informer = self._informer(kind, metadata_only, transform, keeping)
        self._sources.append(Source(informer, map, predicates, replay))
        return self

    def with_predicate(self, *predicates: Predicate) -> "Builder":
        self._predicates.extend(predicates)
        return self

    def with_options(self, *, max_concurrent_reconciles: int | None = None,
                     rate_limiter: Callable[[], RateLimiter] | None = None) -> "Builder":
        if max_concurrent_reconciles is not None:
            self._options["max_concurrent_reconciles"] = max_concurrent_reconciles
        if rate_limiter is not None:
            self._options["rate_limiter"] = rate_limiter
        return self

    def complete(self, reconcile: Reconciler) -> Reconciler:
        """Build the controller, add it to the manager, and return `reconcile` unchanged.

        Raises ValueError without sources, or with `owns` but no `for_`.
        The built controller is `builder.controller`.
        """
        self.build(reconcile)
        return reconcile

    def build(self, reconcile: Reconciler) -> Controller:
        """`complete(reconcile)`, returning the built controller (controller-runtime's `Build`), e.g. to
        `await controller.watch(...)` more kinds once it runs."""
        sources = list(self._sources)
        if self._owned:
            if self._primary is None:
                raise ValueError("owns() needs for_() to name the owner kind")
            for kind, predicates, only_controller in self._owned:
                sources.append(Source(self._informers.informer(kind),
                                      enqueue_owner(self._primary, only_controller=only_controller), predicates))
        if not sources:
            raise ValueError("a controller needs for_() or watches()")
        name = self._name or (self._primary.kind.lower() if self._primary is not None else "")
        if not name:
            raise ValueError("name the controller (named()) when it has no for_()")
        self.controller = Controller(name, reconcile, sources, predicates=self._predicates, **self._options)
        self.controller.informers = self._informers
        self._add(self.controller)
        return self.controller
