"""Health and readiness probes (controller-runtime's healthz): `/healthz` 200 while alive; `/readyz` 500 with
each failing check's reason until the manager runs with its informers synced and, with leader election, a
leader known; added checks, single checks, `verbose` and `exclude`; served over HTTP by `serve_probes`."""

from __future__ import annotations

import httpx
import pytest
import trio

from runtime.controller import HealthChecks, LeaderElectionConfig, probes_app, serve_probes
from runtime.controller.testing import open_test_env
from tests.support.asgi import ASGITransport


async def probe(env, manager, path: str) -> tuple[int, str]:
    async with httpx.AsyncClient(transport=ASGITransport(probes_app(manager), env.nursery),
                                 base_url="http://probes") as client:
        answer = await client.get(path)
    return answer.status_code, answer.text


def election(identity: str) -> LeaderElectionConfig:
    return LeaderElectionConfig("default", "probed", identity=identity)


async def test_readyz_fails_with_its_reason_until_the_informers_synced_and_healthz_is_ok_meanwhile(autojump_clock):
    async with open_test_env() as env:
        manager = env.manager()
        manager.controller("maps").for_(env.scheme.by_kind("ConfigMap")).complete(lambda key: trio.sleep(0))
        assert await probe(env, manager, "/healthz") == (200, "ok")
        assert await probe(env, manager, "/readyz") == (
            500, "[-]informers failed: the manager is not running\nreadyz check failed\n")
        await env.start(manager)
        assert await probe(env, manager, "/readyz") == (200, "ok")
        secrets = manager.informers.informer(env.scheme.by_kind("Secret"))  # a new informer: not listed yet
        assert await probe(env, manager, "/readyz/informers") == (500, "internal server error: not synced: secrets\n")
        await secrets.wait_synced()
        assert await probe(env, manager, "/readyz/informers") == (200, "ok")
        assert await probe(env, manager, "/readyz?verbose") == (200, "[+]informers ok\nreadyz check passed\n")


async def test_added_checks_are_served_alone_excluded_or_with_the_others(autojump_clock):
    async with open_test_env() as env:
        manager = env.manager()
        broken = {"webhook": "certificates not loaded"}

        def webhook_ready() -> None:
            if broken.get("webhook"):
                raise RuntimeError(broken["webhook"])

        manager.add_readyz_check("webhook", webhook_ready)
        manager.add_healthz_check("deadlock", lambda: None)
        with pytest.raises(ValueError):
            manager.add_readyz_check("webhook", webhook_ready)
        await env.start(manager)
        assert await probe(env, manager, "/readyz") == (
            500, "[+]informers ok\n[-]webhook failed: certificates not loaded\nreadyz check failed\n")
        assert await probe(env, manager, "/readyz?exclude=webhook") == (200, "ok")
        assert await probe(env, manager, "/readyz?exclude=webhook&verbose") == (
            200, "[+]informers ok\n[+]webhook excluded: ok\nreadyz check passed\n")
        assert await probe(env, manager, "/readyz/webhook") == (500, "internal server error: certificates not loaded\n")
        broken.clear()
        assert await probe(env, manager, "/readyz") == (200, "ok")
        assert await probe(env, manager, "/healthz?verbose") == (
            200, "[+]ping ok\n[+]deadlock ok\nhealthz check passed\n")
        assert (await probe(env, manager, "/readyz/nothing"))[0] == 404
        assert (await probe(env, manager, "/other"))[0] == 404


async def test_with_leader_election_ready_once_a_leader_is_known_here_or_elsewhere(autojump_clock):
    async with open_test_env() as env:
        leader = env.manager(leader_election=election("a"))
        follower = env.manager(leader_election=election("b"))
        assert await probe(env, leader, "/readyz") == (
            500, "[-]informers failed: the manager is not running\n"
                 "[-]leader-election failed: no leader known yet for lease default/probed\nreadyz check failed\n")
        await env.start(leader)
        with trio.fail_after(30):
            await leader.wait_leading()
        assert await probe(env, leader, "/readyz") == (200, "ok")
        await env.start(follower)
        with trio.fail_after(30):
            while follower.elector.leader != "a":
                await trio.sleep(0.01)
        assert not follower.leading
        assert await probe(env, follower, "/readyz") == (200, "ok")  # another holder of the lease leads


def test_check_names_are_unique_and_plain():
    checks = HealthChecks("readyz")
    checks.add("a", lambda: None)
    for bad in ("a", "", "x/y"):
        with pytest.raises(ValueError):
            checks.add(bad, lambda: None)


async def test_serve_probes_answers_over_http_on_its_bound_port(autojump_clock):
    async with open_test_env() as env:
        manager = env.manager()
        url = await env.nursery.start(serve_probes, manager, "127.0.0.1:0")
        assert url.startswith("http://127.0.0.1:")
        async with httpx.AsyncClient() as client:
            before = await client.get(f"{url}/readyz")
            await env.start(manager)
            after = await client.get(f"{url}/readyz")
            alive = await client.get(f"{url}/healthz")
        assert (before.status_code, after.status_code, alive.text) == (500, 200, "ok")
        assert "[-]informers failed: the manager is not running" in before.text
