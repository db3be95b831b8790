"""Metrics (issue 17.1): `/metrics` in Prometheus' text format, kube-apiserver's and client-go's names.

Each test makes known traffic and reads the exposition back with
`prometheus_client.parser` (`tests.support.metrics`), comparing counts before
and after, so the server's own start-up writes do not blur them.
"""

from __future__ import annotations

from functools import partial

import httpx
import pytest
import trio

from controllers.cli import serve_metrics
from runtime.controller.testing import open_test_env
from tests.support.metrics import Samples, scrape
from tests.support.rbac import token_file
from tests.support.server import start_in_process

RBAC = "rbac.authorization.svc.io"
CLUSTERROLES = {"group": RBAC, "version": "v1", "resource": "clusterroles"}


def cr(name: str, **extra) -> dict:
    return {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole", "metadata": {"name": name}, "rules": [], **extra}


def requests(samples: Samples, **labels: str) -> float:
    return samples.total("apiserver_request_total", **labels)


async def test_a_scrape_finds_the_requests_it_made_by_verb_scope_and_code(server, autojump_clock):
    url = f"{server.rbac}/clusterroles"
    async with server.client() as c, server.client(token=None) as anonymous:
        before = await scrape(c)
        start = (await c.get(url)).json()["metadata"]["resourceVersion"]
        for i in range(3):
            assert (await c.post(url, json=cr(f"m{i}"))).status_code == 201
        assert (await c.post(url, params={"dryRun": "All"}, json=cr("dry"))).status_code == 201
        for _ in range(2):
            assert (await c.get(f"{url}/m0")).status_code == 200
        assert (await c.get(f"{url}/missing")).status_code == 404
        assert (await c.patch(f"{url}/m1", params={"fieldManager": "t"}, content=f"apiVersion: {RBAC}/v1\nkind: ClusterRole\nmetadata: {{name: m1, labels: {{a: b}}}}\n".encode(),
                              headers={"Content-Type": "application/apply-patch+yaml"})).status_code == 200
        assert (await c.delete(f"{url}/m2")).status_code == 200
        assert (await c.get(f"/apis/{RBAC}/v1/widgets")).status_code == 404
        assert (await anonymous.get(url)).status_code == 403
        async with c.stream("GET", url, params={"watch": "1", "resourceVersion": start, "timeoutSeconds": "1"}) as w:
            events = [line async for line in w.aiter_lines() if line]
        after = await scrape(c)

    def delta(**labels: str) -> float:
        return requests(after, **labels) - requests(before, **labels)

    assert delta(verb="POST", scope="resource", code="201", dry_run="", **CLUSTERROLES) == 3
    assert delta(verb="POST", scope="resource", code="201", dry_run="All", **CLUSTERROLES) == 1
    assert delta(verb="GET", scope="resource", code="200", **CLUSTERROLES) == 2
    assert delta(verb="GET", scope="resource", code="404", **CLUSTERROLES) == 1
    assert delta(verb="LIST", scope="cluster", code="200", **CLUSTERROLES) == 1
    assert delta(verb="LIST", scope="cluster", code="403", **CLUSTERROLES) == 1
    assert delta(verb="APPLY", scope="resource", code="200", **CLUSTERROLES) == 1
    assert delta(verb="DELETE", scope="resource", code="200", **CLUSTERROLES) == 1
    assert delta(verb="WATCH", scope="cluster", code="200", **CLUSTERROLES) == 1
    assert delta(resource="other", code="404") == 1  # an unknown resource does not grow the label sets
    assert delta(verb="GET", subresource="/metrics", scope="", code="200", component="apiserver") == 1
    assert requests(after) - requests(before) == 14  # the 13 above and the first scrape
    # The histogram counts the same requests, in kube-apiserver's buckets.
    durations = after.value("apiserver_request_duration_seconds_count", verb="POST", dry_run="", **CLUSTERROLES)
    assert durations - before.total("apiserver_request_duration_seconds_count", verb="POST", dry_run="",
                                    **CLUSTERROLES) == 3
    buckets = {s[0]["le"] for s in after.matching("apiserver_request_duration_seconds_bucket", verb="POST",
                                                   dry_run="", **CLUSTERROLES)}
    assert {"0.005", "0.025", "0.05", "1.0", "60.0", "+Inf"} <= buckets
    # The watch sent the three ADDED and the apply's and the delete's events: 5.
    assert len(events) == 5
    sent = {"group": RBAC, "version": "v1", "kind": "ClusterRole"}
    assert after.total("apiserver_watch_events_total", **sent) - before.total("apiserver_watch_events_total",
                                                                              **sent) == 5
    # Store calls are timed per operation and resource (etcd_request_duration_seconds).
    store = {"type": f"clusterroles.{RBAC}"}
    assert after.total("etcd_request_duration_seconds_count", operation="create", **store) \
        - before.total("etcd_request_duration_seconds_count", operation="create", **store) == 3
    # Authorization: the anonymous list was denied, every admin request allowed.
    assert after.value("apiserver_authorization_decisions_total", decision="denied") \
        - before.value("apiserver_authorization_decisions_total", decision="denied") == 1
    assert after.value("apiserver_authorization_decisions_total", decision="allowed") \
        > before.value("apiserver_authorization_decisions_total", decision="allowed")


async def test_gauges_follow_stored_objects_open_watches_and_requests_in_flight(server, autojump_clock):
    url = f"{server.rbac}/clusterroles"
    kind = {"group": RBAC, "version": "v1", "kind": "ClusterRole"}
    async with server.client() as c:
        before = await scrape(c)
        for i in range(4):
            assert (await c.post(url, json=cr(f"g{i}"))).status_code == 201
        listed = len((await c.get(url)).json()["items"])
        async with c.stream("GET", url, params={"watch": "1", "timeoutSeconds": "60"}) as watch:
            await watch.aiter_lines().__anext__()  # the watch is open and sending
            during = await scrape(c)
        after = await scrape(c)  # the transport's hang-up ends the server's side before it returns
    assert during.value("apiserver_storage_objects", resource=f"clusterroles.{RBAC}") == listed
    assert listed == before.value("apiserver_storage_objects", resource=f"clusterroles.{RBAC}") + 4
    assert during.value("apiserver_registered_watchers", **kind) == before.value("apiserver_registered_watchers",
                                                                                 **kind) + 1
    assert during.value("apiserver_longrunning_requests", verb="WATCH", **CLUSTERROLES) == 1
    assert after.value("apiserver_longrunning_requests", verb="WATCH", **CLUSTERROLES) == 0
    assert after.value("apiserver_registered_watchers", **kind) == before.value("apiserver_registered_watchers",
                                                                                **kind)
    # The scrape itself is the one read-only request in flight while it is served; nothing mutating is.
    assert during.value("apiserver_current_inflight_requests", request_kind="readOnly") == 1
    assert during.value("apiserver_current_inflight_requests", request_kind="mutating") == 0
    assert "apiserver_audit_event_total" in after.names()


async def test_metrics_is_a_non_resource_url_authorized_by_system_monitoring(nursery, tmp_path, autojump_clock):
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(open(token_file(tmp_path)).read() + 'prom-token,prometheus,prom-uid,system:monitoring\n')
    server = await start_in_process(nursery, tmp_path, token_auth_file=str(tokens))
    async with server.client(token=None) as anonymous, server.client(token="bob-token") as bob, \
            server.client(token="prom-token") as prometheus:
        forbidden = await anonymous.get("/metrics")
        assert forbidden.status_code == 403
        assert forbidden.json()["message"] == ('forbidden: User "system:anonymous" cannot get path "/metrics"')
        assert (await bob.get("/metrics")).status_code == 403
        samples = await scrape(prometheus)
    assert samples.total("apiserver_request_total", subresource="/metrics", code="403") == 2


async def test_in_process_controllers_report_client_go_and_controller_runtime_metrics(nursery, tmp_path,
                                                                                      autojump_clock):
    server = await start_in_process(nursery, tmp_path, controllers=True)
    url = f"{server.rbac}/clusterroles"
    name = {"controller": "clusterrole-aggregation"}
    async with server.client() as c:
        before = await scrape(c)
        aggregate = cr("agg", aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"agg": "yes"}}]})
        assert (await c.post(url, json=aggregate)).status_code == 201
        assert (await c.post(url, json=cr("part", rules=[{"verbs": ["get"], "apiGroups": [""],
                                                          "resources": ["pods"]}]) | {
            "metadata": {"name": "part", "labels": {"agg": "yes"}}})).status_code == 201
        with trio.fail_after(30):
            while not (await c.get(f"{url}/agg")).json()["rules"]:
                await trio.sleep(0.1)  # the controller's work, seen from outside (trio time)
        after = await scrape(c)

    def grew(metric: str, /, **labels: str) -> float:
        return after.total(metric, **labels) - before.total(metric, **labels)

    assert grew("controller_runtime_reconcile_total", result="success", **name) >= 1
    assert grew("workqueue_adds_total", name="clusterrole-aggregation", **name) >= 1
    assert grew("workqueue_queue_duration_seconds_count", name="clusterrole-aggregation", **name) >= 1
    assert grew("workqueue_work_duration_seconds_count", name="clusterrole-aggregation", **name) >= 1
    assert grew("controller_runtime_reconcile_time_seconds_count", **name) >= 1
    assert after.value("controller_runtime_reconcile_errors_total", **name) == 0
    for gauge in ("workqueue_depth", "workqueue_unfinished_work_seconds", "workqueue_longest_running_processor_seconds"):
        assert after.value(gauge, name="clusterrole-aggregation", **name) >= 0
    assert after.value("controller_runtime_max_concurrent_reconciles", **name) >= 1
    assert {"workqueue_retries_total", "controller_runtime_active_workers"} <= after.names()


async def test_a_controller_manager_serves_its_own_metrics(nursery):
    # Real sockets (the metrics server is plain HTTP on a free port): the real clock.
    async with open_test_env() as env:
        manager = env.manager()
        roles = env.scheme.by_kind("ClusterRole")
        seen: list[object] = []

        async def reconcile(key):
            seen.append(key)

        manager.controller("role-watcher").for_(roles).complete(reconcile)
        await env.start(manager)
        metrics_url = await nursery.start(serve_metrics, manager.metrics.registry, "127.0.0.1:0")
        await env.client.create(cr("watched"))
        async with httpx.AsyncClient() as client:
            with trio.fail_after(30):
                while True:
                    samples = Samples.parse((await client.get(metrics_url)).text)
                    if samples.total("controller_runtime_reconcile_total", controller="role-watcher",
                                     result="success") >= len(seen) > 0:
                        break
                    await trio.sleep(0.05)
            missing = await client.get(metrics_url.replace("/metrics", "/other"))
        nursery.cancel_scope.cancel()
    assert missing.status_code == 404
    assert samples.value("workqueue_adds_total", name="role-watcher", controller="role-watcher") >= 1
    assert samples.value("workqueue_depth", name="role-watcher", controller="role-watcher") >= 0


@pytest.mark.stores("memory")  # starts its own servers, on sqlite and memory
async def test_the_sqlite_stores_group_commits_are_counted_with_the_writes_they_carried(nursery, tmp_path):
    server = await start_in_process(nursery, tmp_path / "sqlite", store="sqlite")
    async with server.client() as c:
        before = await scrape(c)
        async with trio.open_nursery() as writers:  # at once: they may share commits
            for i in range(6):
                writers.start_soon(partial(c.post, f"/apis/{RBAC}/v1/clusterroles", json=cr(f"committed-{i}")))
        after = await scrape(c)
    commits = after.value("miniplane_storage_commits_total") - before.value("miniplane_storage_commits_total")
    writes = after.value("miniplane_storage_committed_writes_total") - \
        before.value("miniplane_storage_committed_writes_total")
    assert writes == 6 and 1 <= commits <= 6
    assert after.value("miniplane_storage_committed_writes_total") >= after.value("miniplane_storage_commits_total")
    memory = await start_in_process(nursery, tmp_path / "memory", store="memory")
    async with memory.client() as c:
        assert "miniplane_storage_commits_total" not in (await scrape(c)).names()  # no group commit there
