"""Several API servers on one etcd: each sees the others' writes, watches see every write once in order,
RBAC changes and continue tokens carry across servers, the built-in controllers run on one of them.

The servers run in process (two control planes in one trio run) on the session's etcd, each test under
a fresh key prefix; no mock clock: etcd answers in real time.
"""

from __future__ import annotations

import json

import httpx
import pytest
import trio

from api.assembly import CONTINUE_KEY, CONTROLLERS_LEASE
from runtime.server.storage import Compacted
from runtime.server.storage.etcd.store import COMPACT_KEY
from tests.support.etcd import fresh_prefix, raw_keys
from tests.support.objects import cr
from tests.support.rbac import grant, namespaces, ok, rule, token_file, user
from tests.support.server import Server, start_in_process


# These tests start their own servers on etcd: the default store does not matter.
pytestmark = pytest.mark.stores("memory")



async def two_servers(nursery, tmp_path, endpoint: str, **options) -> tuple[Server, Server, str]:
    """Two control planes on one etcd prefix (their data directories apart, as two machines')."""
    prefix = fresh_prefix()
    a, b = [await start_in_process(nursery, tmp_path / name, store=f"etcd://{endpoint}", etcd_prefix=prefix,
                                   **options) for name in ("a", "b")]
    return a, b, prefix


@pytest.fixture
async def servers(nursery, tmp_path, etcd_endpoint) -> tuple[Server, Server]:
    a, b, _ = await two_servers(nursery, tmp_path, etcd_endpoint, token_auth_file=token_file(tmp_path))
    return a, b


async def test_objects_are_kept_as_kube_apiserver_lays_them_out_under_the_prefix(nursery, tmp_path, etcd_endpoint):
    srv = await start_in_process(nursery, tmp_path, store=f"etcd://{etcd_endpoint}", etcd_prefix=(p := fresh_prefix()))
    await namespaces(srv, "team-a")
    async with srv.client() as c:
        await ok(await c.post(f"{srv.rbac}/namespaces/team-a/roles",
                              json={"metadata": {"name": "reader"}, "rules": []}), 201)
        await ok(await c.post(f"{srv.rbac}/clusterroles", json=cr("viewer")), 201)
    held = await raw_keys(etcd_endpoint, p + "/")
    # /<prefix>/<group>/<resource>/[<namespace>/]<name>: the group without the API domain, "core" for "".
    assert {f"{p}/core/namespaces/team-a", f"{p}/rbac.authorization/roles/team-a/reader",
            f"{p}/rbac.authorization/clusterroles/viewer"} <= set(held)
    assert json.loads(held[f"{p}/rbac.authorization/roles/team-a/reader"])["kind"] == "Role"
    assert f"{p}{CONTINUE_KEY}" in held  # the continue-token key lives with the objects


async def test_a_write_through_one_server_is_read_through_the_other_at_once(servers):
    a, b = servers
    async with a.client() as ca, b.client() as cb:
        created = await ok(await ca.post(f"{a.rbac}/clusterroles", json=cr("from-a")), 201)
        got = await ok(await cb.get(f"{b.rbac}/clusterroles/from-a"))  # a consistent read: no retry
        assert got["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
        listed = await ok(await cb.get(f"{b.rbac}/clusterroles"))
        assert "from-a" in [i["metadata"]["name"] for i in listed["items"]]
        await ok(await cb.delete(f"{b.rbac}/clusterroles/from-a"))
        assert (await ca.get(f"{a.rbac}/clusterroles/from-a")).status_code == 404


async def test_a_watch_on_either_server_sees_every_write_through_both_once_in_revision_order(servers):
    a, b = servers
    async with a.client() as ca, b.client() as cb:
        start = (await ok(await ca.get(f"{a.rbac}/clusterroles")))["metadata"]["resourceVersion"]
        written: list[tuple[str, str, int]] = []
        for i in range(12):
            c, srv = (ca, a) if i % 2 else (cb, b)
            name = f"w-{i % 4}"
            if i < 4:
                r = await ok(await c.post(f"{srv.rbac}/clusterroles", json=cr(name)), 201)
                written.append(("ADDED", name, int(r["metadata"]["resourceVersion"])))
            elif i < 8:
                r = await ok(await c.patch(f"{srv.rbac}/clusterroles/{name}", json={"metadata": {"labels": {"i": str(i)}}},
                                           headers={"Content-Type": "application/merge-patch+json"}))
                written.append(("MODIFIED", name, int(r["metadata"]["resourceVersion"])))
            else:
                r = await c.delete(f"{srv.rbac}/clusterroles/{name}")
                assert r.status_code == 200, r.text
                # A delete answers the object as last stored; its deletion's revision is the event's.
                written.append(("DELETED", name, 0))
        for c, srv in ((ca, a), (cb, b)):
            seen = []
            async with c.stream("GET", f"{srv.rbac}/clusterroles", timeout=httpx.Timeout(30, read=None),
                                params={"watch": "1", "resourceVersion": start, "timeoutSeconds": "5"}) as r:
                with trio.fail_after(20):
                    async for line in r.aiter_lines():
                        if not line:
                            continue
                        event = json.loads(line)
                        if event["object"]["metadata"]["name"].startswith("w-"):
                            seen.append((event["type"], event["object"]["metadata"]["name"],
                                         int(event["object"]["metadata"]["resourceVersion"])))
                        if len(seen) == len(written):
                            break
            assert [(t, n) for t, n, _ in seen] == [(t, n) for t, n, _ in written]
            revisions = [rv for _, _, rv in seen]
            assert revisions == sorted(set(revisions))  # each once, in revision order
            assert [rv for _, _, rv in seen[:8]] == [rv for _, _, rv in written[:8]]


async def test_an_rbac_change_through_one_server_decides_requests_on_the_other(servers):
    a, b = servers
    async with b.client(token="alice-token") as alice_b:
        assert (await alice_b.get("/api/v1/namespaces")).status_code == 403
        await grant(a, user("alice"), rule(["list"], ["namespaces"]))  # through server A
        # Any request B answers after etcd acknowledged the binding sees it: B's authorizer follows
        # B's watch cache, and a request waits for the cache to reach etcd's revision when it reads.
        async with b.client() as admin_b:
            await ok(await admin_b.get("/api/v1/namespaces"))
        assert (await alice_b.get("/api/v1/namespaces")).status_code == 200


async def test_a_continue_token_issued_by_one_server_is_honoured_by_the_other(servers):
    a, b = servers
    async with a.client() as ca, b.client() as cb:
        for i in range(5):
            await ok(await ca.post(f"{a.rbac}/clusterroles", json=cr(f"page-{i}", set="paged")), 201)
        first = await ok(await ca.get(f"{a.rbac}/clusterroles", params={"limit": "2", "labelSelector": "set=paged"}))
        token = first["metadata"]["continue"]
        rest = await ok(await cb.get(f"{b.rbac}/clusterroles",
                                     params={"limit": "10", "labelSelector": "set=paged", "continue": token}))
    assert [i["metadata"]["name"] for i in first["items"] + rest["items"]] == [f"page-{i}" for i in range(5)]
    assert rest["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


async def test_the_built_in_controllers_run_on_one_server_only(nursery, tmp_path, etcd_endpoint):
    a, b, _ = await two_servers(nursery, tmp_path, etcd_endpoint, controllers=True)
    managers = [srv.plane.controllers for srv in (a, b)]
    with trio.fail_after(30):
        while not any(m.leading for m in managers):
            await trio.sleep(0.05)  # two elections in real time: nothing to wait on but their polls
    assert sorted(m.leading for m in managers) == [False, True]
    leader = next(m for m in managers if m.leading)
    async with b.client() as cb:
        namespace, name = CONTROLLERS_LEASE
        lease = await ok(await cb.get(f"/apis/coordination.{b.domain}/v1/namespaces/{namespace}/leases/{name}"))
        assert lease["spec"]["holderIdentity"] == leader.elector.config.identity
        # The leader's namespace controller finalizes a namespace deleted through either server.
        await namespaces(b, "doomed")
        await ok(await cb.delete("/api/v1/namespaces/doomed"))
        with trio.fail_after(30):
            while (await cb.get("/api/v1/namespaces/doomed")).status_code != 404:
                await trio.sleep(0.05)


async def test_a_control_plane_on_etcd_takes_part_in_compaction_through_the_shared_key(nursery, tmp_path,
                                                                                       etcd_endpoint):
    a, b, prefix = await two_servers(nursery, tmp_path, etcd_endpoint, etcd_compaction_interval=0.2)
    with trio.fail_after(30):
        # Each tick one txn wins and bumps the key's version; the key's value is the revision compacted.
        while True:
            held = await raw_keys(etcd_endpoint, prefix + "/")
            if int(held.get(f"{prefix}{COMPACT_KEY}", b"0")) > 0:
                break
            await trio.sleep(0.1)
    compacted = int(held[f"{prefix}{COMPACT_KEY}"])
    # The winner compacts right after its txn put the key (kube-apiserver's order): the key can be read
    # before that compaction is done, so wait for it (bounded), then etcd's history before it is gone for
    # both servers' stores.
    with trio.fail_after(30):
        while True:
            try:
                await a.plane.store.list("/", revision=compacted - 1)
            except Compacted:
                break
            await trio.sleep(0.05)  # the winner compacts in its own compactor task: nothing to wait on but a poll
    with pytest.raises(Compacted):
        await b.plane.store.list("/", revision=compacted - 1)
