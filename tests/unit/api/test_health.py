"""The health endpoints' answers with checks that fail (`api.health`), as kube-apiserver's healthz package words them.

On trio's MockClock: a probe that hangs is cut at the check's timeout, and
the reuse of an outcome is timed without sleeping.
"""

from __future__ import annotations

import trio

from api.health import BASE_CHECKS, CHECK_REUSE, CHECK_TIMEOUT, HealthCheck, etcd_checks, health_answer


class Etcd:
    """A probe target: answers, refuses or hangs; counts the probes."""

    def __init__(self) -> None:
        self.state, self.probes = "up", 0

    async def revision(self) -> int:
        self.probes += 1
        if self.state == "down":
            raise ConnectionRefusedError("connection refused")
        if self.state == "hung":
            await trio.sleep_forever()
        return 7


def checks(etcd: Etcd) -> list[HealthCheck]:
    return [*BASE_CHECKS, *etcd_checks(etcd.revision)]


async def test_passing_checks_answer_ok_and_verbose_lists_each_on_its_endpoints(autojump_clock):
    etcd = Etcd()
    mine = checks(etcd)
    assert await health_answer("/readyz", {}, mine) == (200, b"ok")
    assert await health_answer("/readyz", {"verbose": [""]}, mine) == (
        200, b"[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]etcd-readiness ok\nreadyz check passed\n")
    assert await health_answer("/livez", {"verbose": [""]}, mine) == (
        200, b"[+]ping ok\n[+]log ok\n[+]etcd ok\nlivez check passed\n")
    assert await health_answer("/readyz/etcd-readiness", {}, mine) == (200, b"ok")
    assert await health_answer("/livez/etcd-readiness", {}, mine) is None  # not a livez check: 404
    assert await health_answer("/healthz/nope", {}, mine) is None


async def test_a_failing_check_is_500_with_the_list_whatever_verbose_says(autojump_clock):
    etcd = Etcd()
    etcd.state = "down"
    failed = (500, b"[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\n"
                   b"[-]etcd-readiness failed: reason withheld\nreadyz check failed\n")
    assert await health_answer("/readyz", {}, checks(etcd)) == failed
    assert await health_answer("/readyz", {"verbose": [""]}, checks(etcd)) == failed
    assert await health_answer("/healthz/etcd", {}, checks(etcd)) == (
        500, b"internal server error: error getting data from etcd: connection refused\n")
    # Excluding the failing ones passes; an unknown name is warned of.
    assert await health_answer("/readyz", {"verbose": [""], "exclude": ["etcd", "etcd-readiness", "x"]},
                               checks(etcd)) == (
        200, b'[+]ping ok\n[+]log ok\n[+]etcd excluded: ok\n[+]etcd-readiness excluded: ok\n'
             b'warn: some health checks cannot be excluded: no matches for "x"\nreadyz check passed\n')


async def test_a_hung_probe_fails_at_the_timeout(autojump_clock):
    etcd = Etcd()
    etcd.state = "hung"
    start = trio.current_time()
    status, body = await health_answer("/livez/etcd", {}, checks(etcd))
    assert (status, trio.current_time() - start) == (500, CHECK_TIMEOUT)
    assert body == f"internal server error: error getting data from etcd: no answer within {CHECK_TIMEOUT:g}s\n" \
        .encode()


async def test_an_outcome_is_reused_for_a_second_then_probed_again(autojump_clock):
    etcd = Etcd()
    mine = checks(etcd)
    for _ in range(5):
        assert (await health_answer("/livez", {}, mine))[0] == 200
        assert (await health_answer("/readyz", {}, mine))[0] == 200  # etcd and etcd-readiness share it
    assert etcd.probes == 1  # ten probes, two checks each on /readyz: one read of etcd
    etcd.state = "down"
    assert (await health_answer("/livez", {}, mine))[0] == 200  # still the reused outcome
    await trio.sleep(CHECK_REUSE)
    assert (await health_answer("/livez", {}, mine))[0] == 500
    etcd.state = "up"
    await trio.sleep(CHECK_REUSE)
    assert (await health_answer("/livez", {}, mine))[0] == 200 and etcd.probes == 3
