"""The manager: shared informers plus controllers (and other long-running parts) in one nursery.

`Manager(client)` owns an `InformerFactory` (one informer per kind per
process) and a set of runnables: controllers built with
`manager.controller(...)` (see `runtime.controller.controller.Builder`) and anything
added with `manager.add(name, runnable)`, where a runnable has
`async def run(self, *, task_status)`.

`run()`:

1. starts the informers and waits until every one has synced;
2. starts every runnable, each under a supervisor: a runnable that raises is
   reported (logged at ERROR, counted in `statistics()`) and restarted after a
   per-runnable exponential backoff (1 s doubling to 60 s); the others keep
   running. A runnable that returns on its own is done (not restarted);
3. calls `task_status.started()`;
4. on cancellation, stops gracefully: controllers stop taking new keys, finish
   their running reconciles and drain the keys already queued, then other
   runnables are cancelled; whatever is still running after `grace_period`
   seconds is cancelled. The informers stop at once (reconciles finishing
   during the grace period read the last cached state).

Leader election (`leader_election=LeaderElectionConfig(namespace, name,
identity)`, see `runtime.controller.leaderelection`): when several managers run the
same controllers against one cluster, only the holder of that Lease runs
its controllers and the runnables added with `needs_leader=True` (the
default, as in controller-runtime); informers and `needs_leader=False`
runnables run on every manager, so a new leader starts with warm caches.
`run()` is started() before leadership (informers synced, non-leader parts
running); `wait_leading()` blocks until this manager leads. A leader that
cannot renew the lease for `renew_deadline` seconds, or sees another holder,
cancels its controllers at once (no drain: another manager may be starting
them) and campaigns again; their keys are not lost, as a controller that
starts again replays every cached object. A graceful stop drains the
controllers while still renewing, then releases the lease so that a
follower takes over at its next retry rather than after the lease expires.

Reads (`manager.client`, `runtime.controller.cachedclient`): a get or list of a
kind the manager informs on is answered from that informer's cache, as
controller-runtime's delegating client; writes, and reads of other kinds,
go to the server. `manager.api_reader` is the server client itself (reads
and writes, controller-runtime's `GetAPIReader()`): read through it where
the server's latest state matters. `cache_reads=False` makes
`manager.client` that server client too.

Probes (`runtime.controller.probes`): `manager.healthz` and `manager.readyz`
are named checks; ready once running with every informer synced and, with
leader election, a leader known. `add_healthz_check` / `add_readyz_check`
add more; `serve_probes(manager, bind_address)` serves them.

Example::

    manager = Manager(LocalClient(registry, user))
    manager.controller().for_(scheme.by_kind("Namespace")).complete(reconcile)
    async with trio.open_nursery() as nursery:
        await nursery.start(manager.run)   # informers synced, controllers running
        ...
        nursery.cancel_scope.cancel()      # graceful stop

Caveats:
    Without leader election every manager runs its controllers: two managers
    with the same controllers both act (reconcilers being idempotent, that is
    wasteful, not wrong). Leader election has no fencing (see
    `runtime.controller.leaderelection`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, Protocol

import trio

from runtime.client.interface import Client
from runtime.controller.cachedclient import CachedClient
from runtime.controller.controller import Builder, Controller, ControllerStatistics
from runtime.controller.recorder import EventBroadcaster, EventRecorder
from runtime.controller.informerfactory import InformerFactory
from runtime.controller.leaderelection import LeaderElectionConfig, LeaderElector, LeaderElectorStatistics
from runtime.controller.metrics import ControllerMetrics
from runtime.controller.probes import Check, HealthChecks, ping
from runtime.controller.ratelimit import ItemExponentialRateLimiter

__all__ = ["Manager", "Runnable", "RunnableStatus", "ManagerStatistics"]

log = logging.getLogger(__name__)

#: A restarted runnable that ran this long before failing starts its backoff afresh.
_HEALTHY_RUN_SECONDS = 60.0


class Runnable(Protocol):
    """A long-running part: runs until cancelled, started() once ready."""

    async def run(self, *, task_status: trio.TaskStatus[Any] = trio.TASK_STATUS_IGNORED) -> None: ...


@dataclass(frozen=True)
class RunnableStatus:
    """A runnable as the manager sees it: running or not, restarts so far, the last failure."""

    name: str
    running: bool
    restarts: int
    last_error: str


@dataclass(frozen=True)
class ManagerStatistics:
    """Runnables and controllers by name, informer restarts; `leading` and the elector's figures (None without election)."""

    runnables: dict[str, RunnableStatus]
    controllers: dict[str, ControllerStatistics]
    informer_restarts: int
    leading: bool = False
    leader_election: LeaderElectorStatistics | None = None


class _Started:
    """A task_status for a supervised run: reports the first started() of the runnable."""

    def __init__(self, on_started: Callable[[], None]) -> None:
        self._on_started = on_started

    def started(self, value: Any = None) -> None:
        self._on_started()


class Manager:
    """Runs shared informers and supervised runnables (see the module docs).

    `client` is the server client (in-process or HTTP): `api_reader`; controllers use `client`,
    which reads from the informer caches unless `cache_reads` is False (see the module docs);
    `resync_period` is passed to every informer; `grace_period` bounds the
    graceful stop; `leader_election` makes the controllers run only while
    this manager holds that Lease (`client` needs get, create and update on
    leases in its namespace). `metrics` records every controller's queue and
    reconciles (`runtime.controller.metrics`; default: on a registry of its own, served
    by whoever exposes `manager.metrics.registry`).
    """

    def __init__(self, client: Client, *, name: str = "manager", grace_period: float = 10.0,
                 resync_period: float | None = None, leader_election: LeaderElectionConfig | None = None,
                 metrics: ControllerMetrics | None = None, cache_reads: bool = True) -> None:
        #: The server client: every read and write goes to the server (controller-runtime's GetAPIReader()).
        self.api_reader: Client = client
        self.scheme = client.scheme
        self.name = name
        self.grace_period = grace_period
        self.informers = InformerFactory(client, resync_period=resync_period)
        #: What controllers use: reads from the informer caches where they can answer, writes to the server.
        self.client: Client = CachedClient(client, self.informers) if cache_reads else client
        self.elector = LeaderElector(client, leader_election) if leader_election is not None else None
        self.healthz = HealthChecks("healthz")
        self.readyz = HealthChecks("readyz")
        self.healthz.add("ping", ping)
        self.readyz.add("informers", self._check_informers_synced)
        if self.elector is not None:
            self.readyz.add("leader-election", self._check_leader_known)
        self.metrics = metrics if metrics is not None else ControllerMetrics()
        #: The event broadcaster (`runtime.controller.recorder`), made by the first `event_recorder()` call.
        self.events: EventBroadcaster | None = None
        self.controllers: dict[str, Controller] = {}
        self._runnables: dict[str, Runnable] = {}
        self._needs_leader: dict[str, bool] = {}
        self._leading = False
        self._leading_changed = trio.Event()
        self._status: dict[str, dict[str, Any]] = {}
        self._backoff = ItemExponentialRateLimiter(base=1.0, cap=60.0)
        self._running = False
        self._stopping = False
        self._stop_requested = trio.Event()

    # ---- registration ----------------------------------------------------------------------------

    def controller(self, name: str = "") -> Builder:
        """A builder whose `complete()` adds the controller to this manager."""
        return Builder(self.informers, self._add_controller, name)

    def event_recorder(self, name: str) -> EventRecorder:
        """The recorder of events from component `name` (see `runtime.controller.recorder`).

        Its events are written by the manager's `event-broadcaster` runnable (on every manager, leader or
        not), added by the first call: make that call before `run()` (else RuntimeError), e.g. in `setup()`.
        """
        if self.events is None:
            self.add("event-broadcaster", broadcaster := EventBroadcaster(self.api_reader), needs_leader=False)
            self.events = broadcaster
        return self.events.recorder(name)

    def _add_controller(self, controller: Controller) -> None:
        # The builder's `complete()` lands here: the one way to add a controller.
        self.add(controller.name, controller)
        self.controllers[controller.name] = controller
        controller.metrics = self.metrics
        self.metrics.watch(controller)

    def add(self, name: str, runnable: Runnable, *, needs_leader: bool = True) -> None:
        """Add a supervised runnable. Raises ValueError for a taken name, RuntimeError once running.

        With leader election, a runnable that `needs_leader` runs only on the
        leader (controllers always do); others run on every manager.
        """
        if self._running:
            raise RuntimeError("add runnables before the manager runs")
        if name in self._runnables:
            raise ValueError(f"a runnable named {name!r} is already added")
        self._runnables[name] = runnable
        self._needs_leader[name] = needs_leader
        self._status[name] = {"running": False, "restarts": 0, "last_error": ""}

    def add_healthz_check(self, name: str, check: Check) -> None:
        """Add a liveness check served at `/healthz` (controller-runtime's AddHealthzCheck; see
        `runtime.controller.probes`): returns when healthy, raises with the reason when not."""
        self.healthz.add(name, check)

    def add_readyz_check(self, name: str, check: Check) -> None:
        """Add a readiness check served at `/readyz` (controller-runtime's AddReadyzCheck)."""
        self.readyz.add(name, check)

    def _check_informers_synced(self) -> None:
        if not self._running:
            raise RuntimeError("the manager is not running")
        waiting = [i for i in self.informers.informers() if not i.has_synced()]
        if waiting:
            raise RuntimeError("not synced: " + ", ".join(i.kind.group_resource for i in waiting))

    def _check_leader_known(self) -> None:
        assert self.elector is not None
        if not self.elector.leader:
            config = self.elector.config
            raise RuntimeError(f"no leader known yet for lease {config.namespace}/{config.name}")

    def statistics(self) -> ManagerStatistics:
        return ManagerStatistics(
            {name: RunnableStatus(name, s["running"], s["restarts"], s["last_error"])
             for name, s in self._status.items()},
            {name: c.statistics() for name, c in self.controllers.items()},
            self.informers.restarts, self._leading,
            self.elector.statistics() if self.elector is not None else None)

    @property
    def leading(self) -> bool:
        """Whether the leader-only runnables run here now (always, while running, without election)."""
        return self._leading

    async def wait_leading(self) -> None:
        """Block until this manager leads (returns at once if it does)."""
        while not self._leading:
            await self._leading_changed.wait()

    def _set_leading(self, leading: bool) -> None:
        self._leading = leading
        self._leading_changed.set()
        self._leading_changed = trio.Event()

    # ---- running ---------------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run until cancelled, then stop gracefully (see the module docs). started() once all are running.

        With leader election, started() once the informers synced and the
        runnables that do not need the lease run; see `wait_leading()`.
        Raises RuntimeError when already running.
        """
        if self._running:
            raise RuntimeError("the manager is already running")
        self._running = True
        self._stopping = False
        self._stop_requested = trio.Event()
        for controller in self.controllers.values():
            controller.stopping = False
        try:
            async with trio.open_nursery() as nursery:
                await nursery.start(self.informers.run)
                # The runnables live in a shielded scope so that cancelling run()
                # starts a graceful stop instead of killing reconciles mid-write.
                work_scope = trio.CancelScope(shield=True)
                nursery.start_soon(self._stop_on_cancel, work_scope)
                with work_scope:
                    async with trio.open_nursery() as work:
                        if self.elector is None:
                            await work.start(self._run_group, list(self._runnables))
                            self._set_leading(True)
                        else:
                            followers = [n for n in self._runnables if not self._leads_only(n)]
                            await work.start(self._run_group, followers)
                            work.start_soon(self._lead, [n for n in self._runnables if self._leads_only(n)])
                        task_status.started()
                nursery.cancel_scope.cancel()
        finally:
            self._running = False
            self._set_leading(False)

    def _leads_only(self, name: str) -> bool:
        return name in self.controllers or self._needs_leader[name]

    async def _run_group(self, names: list[str], *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                         ) -> None:
        """Run the named runnables supervised until a stop is requested; then drain controllers, cancel the rest."""
        controllers = [self.controllers[n] for n in names if n in self.controllers]
        controllers_done = trio.Event()
        pending = {"controllers": len(controllers)}
        if not controllers:
            controllers_done.set()
        async with trio.open_nursery() as group:
            for name in names:
                await group.start(self._supervise, name, self._runnables[name], controllers_done, pending)
            task_status.started()
            await self._stop_requested.wait()
            for controller in controllers:
                controller.shut_down()
            await controllers_done.wait()
            group.cancel_scope.cancel()

    async def _lead(self, names: list[str]) -> None:
        """Campaign for the lease; while leading run `names`; campaign again after a loss; end on stop."""
        elector = self.elector
        assert elector is not None
        while not self._stopping:
            if not await self._campaign(elector):
                return
            log.info("%s: leading as %s", self.name, elector.config.identity)
            self._set_leading(True)
            try:
                completed = await elector.lead(lambda: self._run_group(names))
            finally:
                self._set_leading(False)
            if completed:
                return
            log.error("%s: lost the lease %s/%s; controllers stopped, campaigning again", self.name,
                      elector.config.namespace, elector.config.name)

    async def _campaign(self, elector: LeaderElector) -> bool:
        """Acquire the lease; False when a stop was requested first (a lease got meanwhile is released)."""
        async with trio.open_nursery() as race:
            async def give_up_on_stop() -> None:
                await self._stop_requested.wait()
                race.cancel_scope.cancel()

            race.start_soon(give_up_on_stop)
            await elector.acquire()
            race.cancel_scope.cancel()
        if self._stopping:
            if elector.is_leader() and elector.config.release_on_cancel:
                with trio.CancelScope(shield=True) as scope:
                    scope.deadline = trio.current_time() + elector.config.renew_deadline
                    await elector.release()
            return False
        return True

    async def _stop_on_cancel(self, work_scope: trio.CancelScope) -> None:
        try:
            await trio.sleep_forever()
        finally:
            if not self._stopping:
                self._stopping = True
                log.info("%s: stopping (grace period %.1fs)", self.name, self.grace_period)
            work_scope.deadline = min(work_scope.deadline, trio.current_time() + self.grace_period)
            self._stop_requested.set()

    async def _supervise(self, name: str, runnable: Runnable, controllers_done: trio.Event,
                         pending: dict[str, int], *, task_status: trio.TaskStatus[None]) -> None:
        status = self._status[name]
        announced = False
        try:
            def announce() -> None:
                nonlocal announced
                status["running"] = True
                if not announced:
                    announced = True
                    task_status.started()

            while True:
                began = trio.current_time()
                try:
                    await runnable.run(task_status=_Started(announce))
                except Exception as exc:
                    status["running"] = False
                    status["restarts"] += 1
                    status["last_error"] = f"{type(exc).__name__}: {exc}"
                    if not announced:
                        announced = True
                        task_status.started()
                    if self._stopping:
                        return
                    if trio.current_time() - began >= _HEALTHY_RUN_SECONDS:
                        self._backoff.forget(name)
                    delay = self._backoff.when(name)
                    log.error("%s: %s crashed; restarting in %.1fs", self.name, name, delay, exc_info=exc)
                    with trio.move_on_after(delay):
                        await self._stop_requested.wait()
                    if self._stopping:
                        return
                    continue
                status["running"] = False
                if not announced:
                    announced = True
                    task_status.started()
                return
        finally:
            status["running"] = False
            if name in self.controllers:
                pending["controllers"] -= 1
                if pending["controllers"] == 0:
                    controllers_done.set()
