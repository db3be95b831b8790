"""Leader election over a Lease: of several candidates, one leads at a time (client-go's `leaderelection`).

The lock is a `Lease` (group `coordination.<domain>`, v1) named by
`LeaderElectionConfig(namespace, name, identity)`. Its spec is the election
record: `holderIdentity`, `leaseDurationSeconds`, `acquireTime`,
`renewTime` (MicroTime) and `leaseTransitions`.

`LeaderElector.try_acquire_or_renew()` is one attempt, as client-go's:

1. the leader first updates the Lease it last read (fast path);
2. otherwise it reads the Lease, creating it when absent (the creator leads);
3. a Lease held by another candidate is left alone until it expired: no
   change of the record was *observed* for `leaseDurationSeconds`, timed on
   the observer's own clock (`trio.current_time()`), never by comparing
   `renewTime` with local time, so clock skew between candidates does not
   matter (only their clock rates do);
4. else the update takes it (`leaseTransitions` + 1 when the holder changes).

Every update is conditional on the `resourceVersion` last read, so of two
candidates racing for an expired or released Lease one gets a Conflict and
stays a follower.

`acquire()` tries every `retry_period` (jittered by up to 1.2 times, as
client-go's `JitterUntil`) until it holds the lease. Meanwhile it watches the
Lease, so each renewal is observed when it is made rather than at the next
try, and tries again at the moment the lease it observed expires (or is
released): a leader that dies is replaced within `lease_duration` of its
last renewal, where client-go's polling can take two more retry periods.
Expiry is still timed on this candidate's own clock. A client that may not
watch leases only loses the head start. `lead(work)` runs
`work()` while renewing every `retry_period`; a renewal that has not
succeeded for `renew_deadline` seconds since the last success, or a Lease
seen held by another candidate, means leadership is lost: `work` is
cancelled and `lead` returns False. When `work` returns (or `lead` is
cancelled) the lease is released (`release_on_cancel`): holder emptied,
duration 1 s, so a follower takes over at its next retry instead of waiting
for the lease to expire.

Safety rests on `renew_deadline < lease_duration`: a leader that cannot renew
stops working before any follower may consider the lease expired.

Example::

    elector = LeaderElector(client, LeaderElectionConfig("default", "my-controllers", identity="pod-a"))
    await elector.acquire()
    await elector.lead(run_my_controllers)   # False: lost; True: run_my_controllers returned

`runtime.controller.manager.Manager(client, leader_election=LeaderElectionConfig(...))`
does this for a manager's controllers.

Caveats:
    No fencing (as client-go): a leader whose process stalls for longer than
    `lease_duration - renew_deadline` may still finish a write after a
    follower took over. A write the server applied but whose answer a
    cancellation interrupted leaves the lease held until it expires.
"""

from __future__ import annotations

import copy
import logging
import random
import socket
import uuid
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Awaitable, Callable

import trio

from runtime.machinery import errors
from runtime.client.interface import Client, ClientError
from runtime.machinery.scheme import ResourceType

__all__ = [
    "JITTER_FACTOR", "LeaderElectionConfig", "LeaderElectionRecord", "LeaderElector", "LeaderElectorStatistics",
    "default_identity", "micro_time",
]

log = logging.getLogger(__name__)

#: `acquire()` waits `retry_period * (1 + random() * JITTER_FACTOR)` between attempts (client-go's value).
JITTER_FACTOR = 1.2


def default_identity() -> str:
    """`<hostname>_<uuid4>`: unique per process, as client-go's callers usually build it."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def micro_time(when: datetime | None = None) -> str:
    """A MicroTime string (RFC 3339, microseconds, UTC), e.g. `2024-05-01T12:00:00.123456Z`; now by default."""
    when = (when or datetime.now(timezone.utc)).astimezone(timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class LeaderElectionConfig:
    """Which Lease, who we are, and the timing (seconds; client-go's defaults 15 / 10 / 2).

    Raises ValueError unless `lease_duration > renew_deadline >
    JITTER_FACTOR * retry_period > 0`, `lease_duration >= 1` (the record
    holds whole seconds) and name and identity are set.
    """

    namespace: str
    name: str
    identity: str = field(default_factory=default_identity)
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    release_on_cancel: bool = True

    def __post_init__(self) -> None:
        if not self.namespace or not self.name:
            raise ValueError("the lease needs a namespace and a name")
        if not self.identity:
            raise ValueError("identity must not be empty")
        if self.retry_period <= 0:
            raise ValueError("retry_period must be greater than zero")
        if self.lease_duration < 1:
            raise ValueError("lease_duration must be at least 1 second")
        if self.lease_duration <= self.renew_deadline:
            raise ValueError("lease_duration must be greater than renew_deadline")
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            raise ValueError(f"renew_deadline must be greater than retry_period * {JITTER_FACTOR}")


@dataclass(frozen=True)
class LeaderElectionRecord:
    """The election state a Lease's spec holds (client-go's `LeaderElectionRecord`)."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: str = ""
    renew_time: str = ""
    leader_transitions: int = 0

    @classmethod
    def from_lease(cls, lease: dict[str, Any]) -> "LeaderElectionRecord":
        spec = lease.get("spec") or {}
        return cls(spec.get("holderIdentity") or "", spec.get("leaseDurationSeconds") or 0,
                   spec.get("acquireTime") or "", spec.get("renewTime") or "", spec.get("leaseTransitions") or 0)

    def to_spec(self) -> dict[str, Any]:
        """The Lease spec of this record (unset times left out)."""
        spec: dict[str, Any] = {"holderIdentity": self.holder_identity,
                                "leaseDurationSeconds": self.lease_duration_seconds,
                                "leaseTransitions": self.leader_transitions}
        if self.acquire_time:
            spec["acquireTime"] = self.acquire_time
        if self.renew_time:
            spec["renewTime"] = self.renew_time
        return spec


@dataclass(frozen=True)
class LeaderElectorStatistics:
    """The holder last observed, whether that is us, and counts of acquisitions, losses and failed attempts."""

    identity: str
    leader: str
    is_leader: bool
    acquired: int
    lost: int
    failed_attempts: int


class LeaderElector:
    """One candidate for the Lease of `config` (see the module docs); `client` needs get/create/update on
    leases, and list/watch for the watch that times a follower's next try.

    `on_new_leader(identity)` is called (sync, inline) whenever the observed
    holder changes, "" when the lease was released.
    """

    def __init__(self, client: Client, config: LeaderElectionConfig, *,
                 on_new_leader: Callable[[str], None] | None = None) -> None:
        rt = client.scheme.by_kind("Lease", client.scheme.coordination_group)
        if rt is None:  # pragma: no cover - every scheme has Lease
            raise ValueError("the scheme has no Lease kind")
        self.client = client
        self.config = config
        self.kind: ResourceType = rt
        self.on_new_leader = on_new_leader
        self._lease: dict[str, Any] | None = None  # the Lease last read or written: its resourceVersion guards updates
        self._observed = LeaderElectionRecord()
        self._observed_time = -float("inf")
        self._changed = trio.Event()  # set (and replaced) at each change of the observed record
        self._reported_leader = ""
        self._acquired = self._lost = self._failed = 0

    def __repr__(self) -> str:
        return f"<LeaderElector {self.config.namespace}/{self.config.name} as {self.config.identity}>"

    # ---- state -----------------------------------------------------------------------------------

    @property
    def leader(self) -> str:
        """The holder of the lease as last observed ("" for none or unknown)."""
        return self._observed.holder_identity

    def is_leader(self) -> bool:
        """Whether the last observed record names us as holder (it may have expired since: see `lead`)."""
        return self._observed.holder_identity == self.config.identity

    @property
    def observed_record(self) -> LeaderElectionRecord:
        return self._observed

    def statistics(self) -> LeaderElectorStatistics:
        return LeaderElectorStatistics(self.config.identity, self.leader, self.is_leader(), self._acquired,
                                       self._lost, self._failed)

    def _lease_valid(self) -> bool:
        return self._observed_time + self._observed.lease_duration_seconds > trio.current_time()

    def _set_observed(self, record: LeaderElectionRecord) -> None:
        self._observed = record
        self._observed_time = trio.current_time()
        self._changed.set()
        self._changed = trio.Event()
        if record.holder_identity != self._reported_leader:
            self._reported_leader = record.holder_identity
            if record.holder_identity:
                log.info("%r: new leader %s", self, record.holder_identity)
            if self.on_new_leader is not None:
                self.on_new_leader(record.holder_identity)

    # ---- one attempt -----------------------------------------------------------------------------

    async def try_acquire_or_renew(self) -> bool:
        """Acquire or renew the lease once; True when we hold it now.

        Answers False (and logs) when another candidate holds an unexpired
        lease, on a Conflict, and on any API or transport error: the caller
        retries.
        """
        now = micro_time()
        record = LeaderElectionRecord(self.config.identity, int(self.config.lease_duration), now, now, 0)
        if self.is_leader() and self._lease_valid() and self._lease is not None:
            renewed = replace(record, acquire_time=self._observed.acquire_time,
                              leader_transitions=self._observed.leader_transitions)
            try:
                await self._write(renewed)
                return True
            except (errors.StatusError, ClientError) as exc:
                log.info("%r: optimistic renewal failed (%s); reading the lease", self, exc)
        try:
            self._lease = await self.client.get(self.kind, self.config.name, namespace=self.config.namespace)
        except errors.NotFound:
            return await self._create(record)
        except (errors.StatusError, ClientError) as exc:
            return self._failed_attempt("reading", exc)
        current = LeaderElectionRecord.from_lease(self._lease)
        if current != self._observed:
            self._set_observed(current)
        if current.holder_identity and self._lease_valid() and not self.is_leader():
            return False
        if self.is_leader():
            record = replace(record, acquire_time=current.acquire_time, leader_transitions=current.leader_transitions)
        else:
            record = replace(record, leader_transitions=current.leader_transitions + 1)
        try:
            await self._write(record)
        except (errors.StatusError, ClientError) as exc:
            return self._failed_attempt("updating", exc)
        return True

    async def _create(self, record: LeaderElectionRecord) -> bool:
        lease = {"apiVersion": self.kind.api_version, "kind": self.kind.kind,
                 "metadata": {"name": self.config.name, "namespace": self.config.namespace},
                 "spec": record.to_spec()}
        try:
            self._lease = await self.client.create(lease)
        except (errors.StatusError, ClientError) as exc:
            return self._failed_attempt("creating", exc)
        self._set_observed(record)
        return True

    async def _write(self, record: LeaderElectionRecord) -> None:
        """Update the Lease last read with `record`, conditional on its resourceVersion."""
        assert self._lease is not None
        lease = copy.deepcopy(self._lease)
        lease["spec"] = record.to_spec()
        self._lease = await self.client.update(lease)
        self._set_observed(record)

    def _failed_attempt(self, what: str, exc: BaseException) -> bool:
        self._failed += 1
        log.info("%r: %s the lease failed: %s", self, what, exc)
        return False

    # ---- the loops -------------------------------------------------------------------------------

    async def acquire(self) -> None:
        """Block until we hold the lease: one attempt at once, then one at the next of a jittered
        `retry_period`, the observed lease's expiry and its release (see the module docs)."""
        log.info("%r: attempting to acquire the lease", self)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._follow_lease)
            while not await self.try_acquire_or_renew():
                await self._until_next_attempt()
            nursery.cancel_scope.cancel()
        self._acquired += 1
        log.info("%r: acquired the lease", self)

    async def _until_next_attempt(self) -> None:
        retry_at = trio.current_time() + self.config.retry_period * (1 + random.random() * JITTER_FACTOR)
        while True:
            changed, at = self._changed, retry_at
            expiry = self._observed_time + self._observed.lease_duration_seconds
            if self._observed.holder_identity and expiry > trio.current_time():
                at = min(at, expiry)  # the moment `_lease_valid()` turns false: not a poll later
            with trio.move_on_at(at) as waiting:
                await changed.wait()
            if waiting.cancelled_caught or not self._observed.holder_identity:
                return  # time to try, or released (deleted): try now; else renewed or taken: wait on

    async def _follow_lease(self) -> None:
        """Observe each change of the Lease as it is made (a watch on its name); never raises."""
        selector = f"metadata.name={self.config.name}"
        while True:
            try:
                async with self.client.watch(self.kind, namespace=self.config.namespace,
                                             field_selector=selector) as events:
                    async for event in events:
                        if event.type == "DELETED":
                            self._observe(LeaderElectionRecord())
                        elif event.type in ("ADDED", "MODIFIED"):
                            self._observe(LeaderElectionRecord.from_lease(event.object))
                        elif event.type == "ERROR":
                            break
            except (errors.StatusError, ClientError) as exc:
                log.debug("%r: watching the lease failed (%s); polling until the next try", self, exc)
            await trio.sleep(self.config.retry_period)

    def _observe(self, record: LeaderElectionRecord) -> None:
        if record != self._observed:
            self._set_observed(record)

    async def keep_renewing(self) -> None:
        """Renew every `retry_period`; return once leadership is lost (see the module docs). Never raises."""
        renewed_at = trio.current_time()
        while True:
            await trio.sleep(self.config.retry_period)
            while True:
                remaining = renewed_at + self.config.renew_deadline - trio.current_time()
                ok = False
                if remaining > 0:
                    with trio.move_on_after(remaining):
                        ok = await self.try_acquire_or_renew()
                if ok:
                    renewed_at = trio.current_time()
                    break
                if not self.is_leader():
                    log.error("%r: the lease is held by %s now; leadership lost", self, self.leader or "nobody")
                    self._lost += 1
                    return
                remaining = renewed_at + self.config.renew_deadline - trio.current_time()
                if remaining <= 0:
                    log.error("%r: no renewal for %.1fs; leadership lost", self, self.config.renew_deadline)
                    self._lost += 1
                    return
                await trio.sleep(min(self.config.retry_period, remaining))

    async def lead(self, work: Callable[[], Awaitable[Any]]) -> bool:
        """Run `work()` while renewing the lease; True when it returned, False when the lease was lost.

        Call it holding the lease (after `acquire()`); raises RuntimeError
        otherwise. A lost lease cancels `work`. When `work` returns or
        raises, or `lead` is cancelled, the lease is released if
        `release_on_cancel` (shielded, bounded by `renew_deadline`).
        Exceptions of `work` propagate.
        """
        if not self.is_leader():
            raise RuntimeError(f"{self!r} does not hold the lease")
        lost = False
        try:
            async with trio.open_nursery() as nursery:
                async def renew() -> None:
                    nonlocal lost
                    await self.keep_renewing()
                    lost = True
                    nursery.cancel_scope.cancel()

                nursery.start_soon(renew)
                await work()
                nursery.cancel_scope.cancel()
        finally:
            if not lost and self.config.release_on_cancel:
                with trio.CancelScope(shield=True) as scope:
                    scope.deadline = trio.current_time() + self.config.renew_deadline
                    await self.release()
        return not lost

    async def run(self, work: Callable[[], Awaitable[Any]]) -> bool:
        """`acquire()`, then `lead(work)` (client-go's `Run`); returns what `lead` returns."""
        await self.acquire()
        return await self.lead(work)

    async def release(self) -> bool:
        """Give the lease up if we hold it (holder "", duration 1 s); True when released or not held.

        Returns False (and logs) when the update failed; the lease then
        expires on its own.
        """
        if not self.is_leader() or self._lease is None:
            return True
        now = micro_time()
        record = LeaderElectionRecord("", 1, now, now, self._observed.leader_transitions)
        try:
            await self._write(record)
        except (errors.StatusError, ClientError) as exc:
            log.warning("%r: releasing the lease failed: %s", self, exc)
            return False
        log.info("%r: released the lease", self)
        return True
