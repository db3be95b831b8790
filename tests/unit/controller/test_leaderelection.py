"""Leader election rules: one holder of the Lease, expiry on the observer's clock, conditional writes,
release on a clean stop, loss after the renew deadline; managers with election run controllers only
while leading, and fail over."""

from __future__ import annotations

import re

import pytest
import trio

from runtime.machinery import errors
from runtime.client.interface import ClientError, ObjectKey
from runtime.controller.leaderelection import LeaderElectionConfig, LeaderElector
from runtime.controller.testing import open_test_env

RBAC = "rbac.authorization.svc.io/v1"
MICRO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


def config(identity: str, **timing: float) -> LeaderElectionConfig:
    return LeaderElectionConfig("default", "controllers", identity=identity, **timing)


def role(name: str) -> dict:
    return {"apiVersion": RBAC, "kind": "Role", "metadata": {"name": name, "namespace": "default"}, "rules": []}


async def read_lease(env) -> dict:
    return await env.client.get(env.scheme.by_kind("Lease"), "controllers", namespace="default")


class FlakyClient:
    """Delegates to `client`; `broken` makes every call fail as a lost connection would;
    `before_update` runs once before the next update (to write meanwhile)."""

    def __init__(self, client) -> None:
        self.client = client
        self.scheme = client.scheme
        self.broken = False
        self.before_update = None

    def _check(self) -> None:
        if self.broken:
            raise ClientError("connection refused")

    async def get(self, *args, **kwargs):
        self._check()
        return await self.client.get(*args, **kwargs)

    async def create(self, *args, **kwargs):
        self._check()
        return await self.client.create(*args, **kwargs)

    def watch(self, *args, **kwargs):
        self._check()
        return self.client.watch(*args, **kwargs)

    async def update(self, *args, **kwargs):
        self._check()
        if self.before_update is not None:
            hook, self.before_update = self.before_update, None
            await hook()
        return await self.client.update(*args, **kwargs)


# ---- configuration and the record -------------------------------------------------------------------

@pytest.mark.parametrize("timing", [
    {"lease_duration": 10, "renew_deadline": 10},
    {"renew_deadline": 2.4, "retry_period": 2},
    {"retry_period": 0},
])
def test_config_requires_lease_duration_above_renew_deadline_above_jittered_retry(timing):
    with pytest.raises(ValueError):
        config("a", **timing)


async def test_the_first_candidate_creates_the_lease_and_holds_it(autojump_clock):
    async with open_test_env() as env:
        a = LeaderElector(env.client, config("a"))
        assert await a.try_acquire_or_renew()
        spec = (await read_lease(env))["spec"]
        assert spec["holderIdentity"] == "a" and spec["leaseDurationSeconds"] == 15
        assert spec["leaseTransitions"] == 0
        assert MICRO_TIME.match(spec["acquireTime"]) and MICRO_TIME.match(spec["renewTime"])
        assert a.is_leader()


async def test_a_lease_held_by_another_is_not_taken_before_it_expires(autojump_clock):
    async with open_test_env() as env:
        a, b = LeaderElector(env.client, config("a")), LeaderElector(env.client, config("b"))
        await a.try_acquire_or_renew()
        assert not await b.try_acquire_or_renew()
        await trio.sleep(14)
        assert not await b.try_acquire_or_renew()
        assert b.leader == "a" and not b.is_leader()


async def test_expiry_is_timed_from_the_last_change_the_follower_observed(autojump_clock):
    async with open_test_env() as env:
        a, b = LeaderElector(env.client, config("a")), LeaderElector(env.client, config("b"))
        await a.try_acquire_or_renew()
        await trio.sleep(10)
        assert not await b.try_acquire_or_renew()  # b sees the record for the first time now
        await trio.sleep(10)  # 20 s since a's renewal, but only 10 s since b saw it
        assert not await b.try_acquire_or_renew()
        await trio.sleep(5.5)
        assert await b.try_acquire_or_renew()
        spec = (await read_lease(env))["spec"]
        assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1


async def test_a_renewal_keeps_the_acquire_time_and_transitions(autojump_clock):
    async with open_test_env() as env:
        a = LeaderElector(env.client, config("a"))
        await a.try_acquire_or_renew()
        first = (await read_lease(env))["spec"]
        await trio.sleep(2)
        assert await a.try_acquire_or_renew()
        renewed = (await read_lease(env))["spec"]
        assert renewed["acquireTime"] == first["acquireTime"] and renewed["leaseTransitions"] == 0
        assert renewed["renewTime"] > first["renewTime"]


async def test_an_update_from_a_stale_read_conflicts_and_does_not_take_the_lease(autojump_clock):
    async with open_test_env() as env:
        racing = FlakyClient(env.client)
        a = LeaderElector(env.client, config("a"))
        b = LeaderElector(racing, config("b"))
        c = LeaderElector(env.client, config("c"))
        await a.try_acquire_or_renew()
        assert not await b.try_acquire_or_renew() and not await c.try_acquire_or_renew()
        await trio.sleep(16)  # expired for both b and c

        async def c_takes_it_meanwhile() -> None:
            assert await c.try_acquire_or_renew()

        racing.before_update = c_takes_it_meanwhile  # between b's read and b's write
        assert not await b.try_acquire_or_renew()
        assert (await read_lease(env))["spec"]["holderIdentity"] == "c"
        assert b.statistics().failed_attempts == 1


async def test_release_empties_the_holder_so_a_follower_takes_over_at_once(autojump_clock):
    async with open_test_env() as env:
        a, b = LeaderElector(env.client, config("a")), LeaderElector(env.client, config("b"))
        await a.try_acquire_or_renew()
        assert not await b.try_acquire_or_renew()
        assert await a.release()
        released = (await read_lease(env))["spec"]
        assert released["holderIdentity"] == "" and released["leaseDurationSeconds"] == 1
        assert await b.try_acquire_or_renew()
        assert (await read_lease(env))["spec"]["leaseTransitions"] == 1


async def test_lead_runs_work_and_releases_the_lease_when_it_returns(autojump_clock):
    async with open_test_env() as env:
        a = LeaderElector(env.client, config("a"))
        ran: list[float] = []

        async def work() -> None:
            await trio.sleep(60)  # several renewals
            ran.append(trio.current_time())

        assert await a.run(work)
        assert ran and (await read_lease(env))["spec"]["holderIdentity"] == ""


async def test_a_leader_that_cannot_renew_stops_by_the_renew_deadline(autojump_clock):
    async with open_test_env() as env:
        flaky = FlakyClient(env.client)
        a = LeaderElector(flaky, config("a"))
        b = LeaderElector(env.client, config("b"))
        await a.acquire()
        cancelled_at: list[float] = []

        async def work() -> None:
            try:
                await trio.sleep_forever()
            finally:
                cancelled_at.append(trio.current_time())

        async def cut_off() -> None:
            await trio.sleep(7)  # a renewed at 6 s (every retry_period of 2 s)
            flaky.broken = True
            assert not await b.try_acquire_or_renew()  # b observes the record as of 6 s

        async with trio.open_nursery() as nursery:
            nursery.start_soon(cut_off)
            assert not await a.lead(work)
        assert cancelled_at == [pytest.approx(16.0)]  # last renewal + renew_deadline (10 s)
        # b may take over only lease_duration (15 s) after it observed the record: after a stopped.
        assert not await b.try_acquire_or_renew()
        await trio.sleep(7 + 15 - trio.current_time() + 0.1)
        assert await b.try_acquire_or_renew()


async def test_a_leader_that_sees_another_holder_stops_at_once(autojump_clock):
    async with open_test_env() as env:
        a = LeaderElector(env.client, config("a"))
        await a.acquire()

        async def usurp() -> None:
            await trio.sleep(3)
            lease = await read_lease(env)
            lease["spec"]["holderIdentity"] = "intruder"
            await env.client.update(lease)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(usurp)
            assert not await a.lead(trio.sleep_forever)
            lost_at = trio.current_time()
        assert lost_at == pytest.approx(4.0)  # the first renewal after the change
        assert a.leader == "intruder" and a.statistics().lost == 1


# ---- managers ---------------------------------------------------------------------------------------

class Candidate:
    """A manager with a Role controller recording the keys it reconciles (`reconciled` is set on each)."""

    def __init__(self, manager, identity: str) -> None:
        self.identity = identity
        self.keys: list[str] = []
        self.reconciled = trio.Event()
        self.manager = manager

        async def reconcile(key: ObjectKey) -> None:
            self.keys.append(key.name)
            self.reconciled.set()
            self.reconciled = trio.Event()

        self.manager.controller("roles").for_(manager.scheme.by_kind("Role")).complete(reconcile)
        self.scope = trio.CancelScope()
        self.stopped = trio.Event()

    @classmethod
    def local(cls, env, identity: str, **options) -> "Candidate":
        return cls(env.manager(leader_election=config(identity, **options)), identity)

    async def wait_reconciled(self, name: str) -> None:
        while name not in self.keys:
            await self.reconciled.wait()

    async def start(self, nursery: trio.Nursery) -> None:
        async def run(task_status=trio.TASK_STATUS_IGNORED) -> None:
            with self.scope:
                await self.manager.run(task_status=task_status)
            self.stopped.set()
        await nursery.start(run)

    async def stop(self) -> None:
        self.scope.cancel()
        await self.stopped.wait()


async def test_two_managers_on_one_server_have_a_single_leader(autojump_clock):
    async with open_test_env() as env:
        a, b = Candidate.local(env, "a"), Candidate.local(env, "b")
        await a.start(env.nursery)
        await b.start(env.nursery)
        with trio.fail_after(30):
            await a.manager.wait_leading()
        for name in ("r1", "r2"):
            await env.client.create(role(name))
        await trio.sleep(60)  # many renewals and follower retries
        assert a.manager.leading and not b.manager.leading
        assert sorted(a.keys) == ["r1", "r2"] and b.keys == []
        assert b.manager.statistics().runnables["roles"].running is False
        assert all(i.has_synced() for i in b.manager.informers.informers())  # followers keep warm caches
        assert (await read_lease(env))["spec"]["holderIdentity"] == "a"
        await a.stop()
        await b.stop()


async def test_the_follower_takes_over_at_once_when_the_leader_stops_cleanly(autojump_clock):
    async with open_test_env() as env:
        a, b = Candidate.local(env, "a"), Candidate.local(env, "b")
        await a.start(env.nursery)
        await a.manager.wait_leading()
        await b.start(env.nursery)
        await env.client.create(role("before"))
        await trio.sleep(1)
        await a.stop()
        assert (await read_lease(env))["spec"]["holderIdentity"] == ""  # released
        stopped_at = trio.current_time()
        with trio.fail_after(10):
            await b.manager.wait_leading()
        assert trio.current_time() - stopped_at <= 2 * (1 + 1.2)  # its next retry, not the lease's expiry
        await env.client.create(role("after"))
        await trio.sleep(1)
        assert "after" in b.keys and "before" in b.keys  # the new leader reconciles everything it caches
        assert (await read_lease(env))["spec"]["leaseTransitions"] == 1
        await b.stop()


@pytest.mark.parametrize("lived", [1, 7.3])
async def test_the_follower_takes_over_within_the_lease_duration_when_the_leader_dies(autojump_clock, lived):
    # Not before the lease expired for b, and not later: b watches the Lease, so it observes each renewal
    # as it is made and tries when that lease expires (polling alone, client-go's, observed renewals up
    # to a jittered retry late and tried a retry later).
    async with open_test_env() as env:
        a = Candidate.local(env, "a", release_on_cancel=False)
        b = Candidate.local(env, "b")
        await a.start(env.nursery)
        await a.manager.wait_leading()
        await b.start(env.nursery)
        await trio.sleep(lived)
        await a.stop()  # dies without releasing, up to one retry period after its last renewal
        died_at = trio.current_time()
        assert (await read_lease(env))["spec"]["holderIdentity"] == "a"
        with trio.fail_after(60):
            await b.manager.wait_leading()
        assert 15 - 2 <= trio.current_time() - died_at <= 15
        await env.client.create(role("after"))
        await trio.sleep(1)
        assert b.keys == ["after"] and b.manager.leading
        await b.stop()


async def test_a_release_seen_by_the_watch_is_taken_at_once(autojump_clock):
    async with open_test_env() as env:
        a, b = LeaderElector(env.client, config("a")), LeaderElector(env.client, config("b"))
        await a.acquire()
        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(b.acquire)
                await trio.sleep(5)
                await a.release()
                released_at = trio.current_time()
        assert b.is_leader() and trio.current_time() - released_at < 0.01


class NoWatchClient(FlakyClient):
    """A client whose every watch is refused (an identity allowed get, create and update only)."""

    def watch(self, *args, **kwargs):
        raise errors.Forbidden('leases.coordination.svc.io is forbidden: User "x" cannot watch resource "leases"')


async def test_a_follower_that_may_not_watch_polls_as_client_go_does(autojump_clock):
    async with open_test_env() as env:
        a = LeaderElector(env.client, config("a", release_on_cancel=False))
        b = LeaderElector(NoWatchClient(env.client), config("b"))
        await a.acquire()
        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(b.acquire)
                with trio.move_on_after(3):
                    await a.lead(trio.sleep_forever)  # renewed at 2 s, then stops without releasing
                stopped_at = trio.current_time()
        assert b.is_leader() and trio.current_time() - stopped_at >= 15 - 1


async def test_a_manager_that_loses_the_lease_stops_its_controllers_and_campaigns_again(autojump_clock):
    async with open_test_env() as env:
        a = Candidate.local(env, "a")
        await a.start(env.nursery)
        await a.manager.wait_leading()
        lease = await read_lease(env)
        lease["spec"]["holderIdentity"] = "intruder"
        await env.client.update(lease)
        await trio.sleep(3)
        assert not a.manager.leading
        assert a.manager.statistics().runnables["roles"].running is False
        await env.client.create(role("while-following"))
        await trio.sleep(1)
        assert a.keys == []
        with trio.fail_after(60):
            await a.manager.wait_leading()  # the intruder never renews: a takes the lease back
        await trio.sleep(1)
        assert a.keys == ["while-following"]  # replayed from the cache: no key lost
        assert a.manager.statistics().leader_election.lost == 1
        await a.stop()


async def test_a_manager_stopped_while_following_never_leads(autojump_clock):
    async with open_test_env() as env:
        a, b = Candidate.local(env, "a"), Candidate.local(env, "b")
        await a.start(env.nursery)
        await a.manager.wait_leading()
        await b.start(env.nursery)
        await trio.sleep(5)
        await b.stop()
        assert b.keys == [] and not b.manager.leading
        assert (await read_lease(env))["spec"]["holderIdentity"] == "a"
        await a.stop()


# ---- over HTTP ----------------------------------------------------------------------------------------

async def test_two_managers_over_http_have_a_single_leader_and_fail_over(nursery, tmp_path):
    # A real server on real time (sockets and a mock clock do not mix): short leases, bounded waits.
    from runtime.client.kubeconfig import load_kubeconfig
    from runtime.client.http import open_http_client
    from runtime.controller.manager import Manager
    from tests.support.server import start_server

    server = await start_server(nursery, tmp_path)
    settings = load_kubeconfig(server.kubeconfig)
    timing = {"lease_duration": 4.0, "renew_deadline": 3.0, "retry_period": 0.5}
    async with open_http_client(settings) as client_a, open_http_client(settings) as client_b:
        a = Candidate(Manager(client_a, leader_election=config("a", **timing)), "a")
        b = Candidate(Manager(client_b, leader_election=config("b", **timing)), "b")
        await a.start(nursery)
        await b.start(nursery)
        with trio.fail_after(20):
            leader, follower = await _first_leader(a, b)
        await client_a.create({**role("over-http"), "apiVersion": client_a.scheme.rbac_group + "/v1"})
        with trio.fail_after(20):
            await leader.wait_reconciled("over-http")
        assert follower.keys == [] and not follower.manager.leading
        leases = client_a.scheme.by_kind("Lease")
        lease = await client_a.get(leases, "controllers", namespace="default")
        assert lease["spec"]["holderIdentity"] == leader.identity

        with trio.fail_after(20):
            await leader.stop()  # clean stop: drain, release
            await follower.manager.wait_leading()
            await follower.wait_reconciled("over-http")
        lease = await client_a.get(leases, "controllers", namespace="default")
        assert lease["spec"]["holderIdentity"] == follower.identity and lease["spec"]["leaseTransitions"] == 1
        with trio.fail_after(20):
            await follower.stop()


async def _first_leader(a: Candidate, b: Candidate) -> tuple[Candidate, Candidate]:
    """(leader, follower) once one of them leads."""
    winner: list[Candidate] = []
    async with trio.open_nursery() as race:
        for candidate in (a, b):
            async def wait(candidate=candidate) -> None:
                await candidate.manager.wait_leading()
                winner.append(candidate)
                race.cancel_scope.cancel()
            race.start_soon(wait)
    leader = winner[0]
    follower = b if leader is a else a
    assert not follower.manager.leading
    return leader, follower
