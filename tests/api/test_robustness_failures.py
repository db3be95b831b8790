"""Robustness under failure and within memory bounds, through the HTTP app in process, real HTTPS where
the connection matters (stalled bodies, oversized heads), and the registry where HTTP cannot reach.

- Failure: store errors answer 500 and the server recovers, the watch cache
  resumes after its store watch fails, SQLite's failed or misreported commits
  wedge nothing, corrupt rows are contained, malformed or oversized requests
  answer 4xx.
- Memory: the watch history is bounded in bytes, slow watchers are cut off
  (and resume without loss), the RBAC index forgets deleted bindings, the
  namespace gate forgets idle namespaces.

Concurrency and disconnects are in `test_robustness.py`. The tests of
SQLite's own failures run on SQLite only; those with a store of their own on
memory (tests/api/conftest.py).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import ssl

import httpx
import pytest
import trio

from api import assembly as server_module
from api.codecs import MAX_NESTING
from runtime.machinery import errors
from runtime.machinery.options import Body
from runtime.machinery.options import ListOptions
from runtime.machinery.scheme import Scheme
from runtime.server.storage import MemoryStore
from tests.support.robustness import ADMIN, MERGE, RBAC, cr, create, settle
from tests.support.server import Server, start_in_process


# ---- 3. store failures ------------------------------------------------------------------------

class FlakyStore(MemoryStore):
    """A MemoryStore whose listed operations fail like SQLite on a failing disk, while `failing` names them."""

    def __init__(self) -> None:
        super().__init__()
        self.failing: set[str] = set()
        self.break_watch = 0  # the next N store watches fail at their next event

    def _check(self, op: str) -> None:
        if op in self.failing:
            raise sqlite3.OperationalError("disk I/O error")

    async def create(self, key, encode):
        self._check("create")
        return await super().create(key, encode)

    async def update(self, key, encode, *, expected_revision):
        self._check("update")
        return await super().update(key, encode, expected_revision=expected_revision)

    async def delete(self, key, *, expected_revision):
        self._check("delete")
        return await super().delete(key, expected_revision=expected_revision)

    async def get(self, key):
        self._check("get")
        return await super().get(key)

    async def list(self, prefix, **options):
        self._check("list")
        return await super().list(prefix, **options)

    follow = None  # no hand-over at commit: every event goes through `watch`, where it may break

    async def watch(self, prefix, *, after_revision):
        async for event in super().watch(prefix, after_revision=after_revision):
            if self.break_watch:
                self.break_watch -= 1
                raise sqlite3.OperationalError("disk I/O error")
            yield event


@pytest.fixture
def flaky(monkeypatch) -> FlakyStore:
    store = FlakyStore()

    async def open_store(kind, path=None):
        return store

    monkeypatch.setattr(server_module, "open_store", open_store)
    return store


@pytest.mark.stores("memory")  # its own store, or none
async def test_store_errors_answer_500_statuses_and_the_server_recovers(nursery, tmp_path, flaky, caplog,
                                                                        autojump_clock):
    srv = await start_in_process(nursery, tmp_path)
    url = f"{srv.rbac}/clusterroles"
    caplog.set_level(logging.CRITICAL, logger="api.app")  # the 500s are logged with their traceback
    async with srv.client() as c:
        await create(c, srv, "kept")
        flaky.failing = {"create", "update", "delete", "get", "list"}
        answers = [
            await c.post(url, json=cr("new")),
            await c.put(f"{url}/kept", json=cr("kept", labels={"a": "b"})),
            await c.patch(f"{url}/kept", json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE),
            await c.delete(f"{url}/kept"),
        ]
        for r in answers:
            assert r.status_code == 500, r.text
            status = r.json()
            assert status["kind"] == "Status" and status["reason"] == "InternalError"
            assert "disk I/O error" in status["message"]
        # Reads the watch cache answers still work while the store fails.
        assert (await c.get(f"{url}/kept")).status_code == 200
        flaky.failing = set()
        assert (await c.post(url, json=cr("new"))).status_code == 201
        r = await c.patch(f"{url}/kept", json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE)
        assert r.status_code == 200
        assert (await c.delete(f"{url}/new")).status_code == 200
        assert (await c.get(f"{url}/kept")).json()["metadata"]["labels"] == {"a": "b"}


@pytest.mark.stores("memory")  # its own store, or none
async def test_the_watch_cache_resumes_after_its_store_watch_fails(nursery, tmp_path, flaky, caplog, autojump_clock):
    srv = await start_in_process(nursery, tmp_path)
    cache = srv.registry.cache
    caplog.set_level(logging.CRITICAL, logger="runtime.server.watchcache.cache")
    async with srv.client() as c:
        flaky.break_watch = 3  # three failures in a row: backoff, then resume where it stopped
        for i in range(5):
            await create(c, srv, f"after-failure-{i}")
        await settle(lambda: cache.revision == flaky.statistics().revision)
        names = [o["metadata"]["name"] for o in (await c.get(f"{srv.rbac}/clusterroles")).json()["items"]]
        assert {f"after-failure-{i}" for i in range(5)} <= set(names)
        # Watches are fed again: a change made now reaches a new watcher.
        rv = (await c.get(f"{srv.rbac}/clusterroles")).json()["metadata"]["resourceVersion"]
        await create(c, srv, "later")
        async with c.stream("GET", f"{srv.rbac}/clusterroles", params={
                "watch": "1", "resourceVersion": rv, "timeoutSeconds": "1"}) as r:
            events = [json.loads(line) async for line in r.aiter_lines() if line]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "later")]


@pytest.mark.stores("sqlite")  # SQLite's own failures
async def test_a_failed_group_commit_fails_only_its_writes_and_the_next_one_succeeds(nursery, tmp_path,
                                                                                   monkeypatch, caplog):
    from runtime.server.storage.sqlite import store as sqlite
    srv = await start_in_process(nursery, tmp_path, store="sqlite")
    real = sqlite.apply_batch  # a group commit's transaction
    failures = [1]

    def apply_batch(conn, batch, head, **options):
        if failures[0]:
            failures[0] -= 1
            raise sqlite3.OperationalError("disk I/O error")
        return real(conn, batch, head, **options)

    monkeypatch.setattr(sqlite, "apply_batch", apply_batch)
    caplog.set_level(logging.CRITICAL, logger="api.app")
    url = f"{srv.rbac}/clusterroles"
    async with srv.client() as c:
        before = int((await c.get(url)).json()["metadata"]["resourceVersion"])
        failed = await c.post(url, json=cr("lost"))
        assert failed.status_code == 500 and "disk I/O error" in failed.json()["message"]
        created = await create(c, srv, "next")
        # The failed batch used no revision: the next write takes the very next one.
        assert int(created["metadata"]["resourceVersion"]) == before + 1
        assert (await c.get(f"{url}/lost")).status_code == 404
        listed = (await c.get(url, params={"resourceVersion": str(before + 1), "resourceVersionMatch": "Exact"}))
        assert "next" in [o["metadata"]["name"] for o in listed.json()["items"]]


@pytest.mark.stores("sqlite")  # SQLite's own failures
async def test_a_commit_that_lands_but_reports_an_error_does_not_wedge_the_store(nursery, tmp_path, monkeypatch,
                                                                                caplog):
    from runtime.server.storage.sqlite import store as sqlite
    srv = await start_in_process(nursery, tmp_path, store="sqlite")
    real = sqlite.apply_batch  # a group commit's transaction
    failures = [1]

    def apply_batch(conn, batch, head, **options):
        result = real(conn, batch, head, **options)  # committed...
        if failures[0]:
            failures[0] -= 1
            raise sqlite3.OperationalError("disk I/O error")  # ...but reported as failed
        return result

    monkeypatch.setattr(sqlite, "apply_batch", apply_batch)
    caplog.set_level(logging.CRITICAL, logger="api.app")
    url = f"{srv.rbac}/clusterroles"
    async with srv.client() as c:
        before = int((await c.get(url)).json()["metadata"]["resourceVersion"])
        async with c.stream("GET", url, params={"watch": "1", "resourceVersion": str(before)},
                            timeout=httpx.Timeout(30, read=None)) as watch:
            assert (await c.post(url, json=cr("unknown-outcome"))).status_code == 500
            # Later writes take the next revisions (no collision with the landed one) ...
            created = await create(c, srv, "next")
            assert int(created["metadata"]["resourceVersion"]) == before + 2
            # ... and watchers see both writes, in order.
            lines = watch.aiter_lines()
            seen = []
            with trio.fail_after(30):
                while len(seen) < 2:
                    line = await lines.__anext__()
                    if line:
                        seen.append(json.loads(line)["object"]["metadata"]["name"])
    assert seen == ["unknown-outcome", "next"]


@pytest.mark.stores("sqlite")  # SQLite's own failures
async def test_corrupt_rows_in_the_log_are_contained(nursery, tmp_path):
    scheme = Scheme()
    key = scheme.by_kind("ClusterRole").storage_key
    first = trio.CancelScope()
    done = trio.Event()

    async def run_first(task_status=trio.TASK_STATUS_IGNORED) -> None:
        with first:
            async with trio.open_nursery() as inner:
                task_status.started(await start_in_process(inner, tmp_path, store="sqlite"))
                await trio.sleep_forever()
        done.set()

    srv = await nursery.start(run_first)
    async with srv.client() as c:
        await create(c, srv, "fine")
        await create(c, srv, "victim")
    first.cancel()
    await done.wait()

    # Damage the log behind the server's back: an update of "victim" that is not JSON, a new key holding
    # a JSON array, and a row with no value at all.
    db = sqlite3.connect(tmp_path / "data" / "state.db")
    with db:
        head = db.execute("SELECT max(rev) FROM kv").fetchone()[0]
        create_rev, prev_rev = db.execute(
            "SELECT k.create_rev, k.rev FROM latest AS l JOIN kv AS k ON k.rev = l.rev WHERE l.key = ?",
            (key(None, "victim"),)).fetchone()
        db.execute("INSERT INTO kv VALUES (?, ?, ?, 0, ?, ?)",
                   (head + 1, key(None, "victim"), b'{"metadata": broken', create_rev, prev_rev))
        db.execute("UPDATE latest SET rev = ? WHERE key = ?", (head + 1, key(None, "victim")))
        for rev, name, value in ((head + 2, "array", b"[1, 2, 3]"), (head + 3, "null", None)):
            db.execute("INSERT INTO kv VALUES (?, ?, ?, 0, ?, NULL)", (rev, key(None, name), value, rev))
            db.execute("INSERT INTO latest(key, rev) VALUES (?, ?)", (key(None, name), rev))
    db.close()

    srv = await start_in_process(nursery, tmp_path, store="sqlite")
    url = f"{srv.rbac}/clusterroles"
    async with srv.client() as c:
        for name in ("victim", "array", "null"):
            r = await c.get(f"{url}/{name}")
            assert r.status_code == 500 and "corrupt object" in r.json()["message"], r.text
        listed = await c.get(url)
        assert listed.status_code == 200
        names = {o["metadata"]["name"] for o in listed.json()["items"]}
        assert "fine" in names and not names & {"victim", "array", "null"}
        # An exact list at a past revision is read from the log: the corrupt row is a 500, not a crash.
        r = await c.get(url, params={"resourceVersion": str(head + 1), "resourceVersionMatch": "Exact"})
        assert r.status_code == 500 and "corrupt object" in r.json()["message"]
        # A watch replaying the damaged log (older than the cache's history): victim turned unreadable
        # is DELETED, the others were never readable and are not shown.
        async with c.stream("GET", url, params={"watch": "1", "resourceVersion": str(head),
                                                "timeoutSeconds": "1"}) as r:
            events = [json.loads(line) async for line in r.aiter_lines() if line]
        assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("DELETED", "victim")]
        assert (await c.post(url, json=cr("still-writable"))).status_code == 201
        assert (await c.get(f"{url}/fine")).status_code == 200


def nested(depth: int, leaf: str = "1") -> str:
    return '{"a":' * depth + leaf + "}" * depth


@pytest.mark.parametrize("content_type,body", [
    ("application/json", b'{"apiVersion": "rbac.authorization.svc.io/v1", "kind": "Cluster'),
    ("application/json", b'{"apiVersion":"rbac.authorization.svc.io/v1","kind":"ClusterRole",'
                         b'"metadata":{"name":"\xff\xfe"}}'),
    ("application/yaml", b"apiVersion: rbac.authorization.svc.io/v1\nkind: ClusterRole\nmetadata: {name: \xff}\n"),
    ("application/json", nested(10_000).encode()),
    ("application/json", b"[" * 100_000 + b"]" * 100_000),
    ("application/yaml", b"a: " + b"[" * 10_000 + b"]" * 10_000),
    ("application/json", ('{"apiVersion":"rbac.authorization.svc.io/v1","kind":"ClusterRole","metadata":{"name":"d"},'
                          f'"x":{nested(MAX_NESTING)}}}').encode()),
    ("application/vnd.kubernetes.protobuf", b"k8s\x00\x0a\x02\x0a"),
], ids=["truncated", "invalid-utf8-json", "invalid-utf8-yaml", "json-10k-deep", "array-100k-deep",
        "yaml-10k-deep", "just-too-deep", "truncated-protobuf"])
async def test_malformed_bodies_are_400(server, content_type, body):
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", content=body, headers={"Content-Type": content_type})
        assert r.status_code == 400, r.text
        assert r.json()["reason"] == "BadRequest"
        assert (await c.get("/healthz")).status_code == 200


@pytest.mark.parametrize("patch_type,body", [
    ("application/strategic-merge-patch+json", '{"x":' + nested(MAX_NESTING - 1) + "}"),
    ("application/merge-patch+json", '{"x":' + nested(MAX_NESTING - 1) + "}"),
    ("application/json-patch+json", '[{"op":"add","path":"/metadata/labels","value":' + nested(MAX_NESTING - 2) + "}]"),
    ("application/apply-patch+yaml", '{"apiVersion":"rbac.authorization.svc.io/v1","kind":"ClusterRole",'
                                     '"metadata":{"name":"deep"},"x":' + nested(MAX_NESTING - 1) + "}"),
    ("application/strategic-merge-patch+json", '{"x":' + nested(MAX_NESTING) + "}"),
])
async def test_deeply_nested_patches_are_answered_not_500(server, patch_type, body):
    # Patch engines, copies and validation all recurse: at the nesting limit they must still answer.
    async with server.client() as c:
        await create(c, server, "deep")
        r = await c.patch(f"{server.rbac}/clusterroles/deep", content=body.encode(),
                          headers={"Content-Type": patch_type}, params={"fieldManager": "m"})
        assert r.status_code < 500, r.text


async def test_escaped_lone_surrogates_become_replacement_characters(server):
    body = b'{"apiVersion":"rbac.authorization.svc.io/v1","kind":"ClusterRole",' \
           b'"metadata":{"name":"s","annotations":{"k":"a\\ud800b"}}}'
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", content=body, headers={"Content-Type": "application/json"})
        assert r.status_code == 201, r.text
        assert r.json()["metadata"]["annotations"] == {"k": "a\ufffdb"}


async def raw_request(srv: Server, data: bytes, *, wait: float) -> bytes:
    """Send `data` over a fresh TLS connection and return what arrives within `wait` s (trio time)."""
    host, port = srv.url.split("://", 1)[1].rsplit(":", 1)
    ctx = ssl.create_default_context(cadata=srv.ca_pem.decode())
    stream = await trio.open_ssl_over_tcp_stream(host, int(port), ssl_context=ctx, https_compatible=True)
    received = b""
    try:
        await stream.send_all(data)
        with trio.move_on_after(wait):
            while chunk := await stream.receive_some():
                received += chunk
    finally:
        await stream.aclose()
    return received


async def test_a_body_that_stops_arriving_is_a_504_and_the_server_keeps_serving(https_server, caplog, autojump_clock):
    server = https_server  # real HTTPS: a connection that hangs up or stalls mid-body
    head = (f"POST {server.rbac}/clusterroles HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.token}\r\n"
            "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n").encode()
    # Hung up mid-body: nothing to answer, nothing logged as a server error.
    assert await raw_request(server, head + b'{"apiVersion"', wait=0) == b""
    # Stalled mid-body: the body timeout answers (trio time), the connection is not held forever.
    stalled = await raw_request(server, head + b'{"apiVersion"', wait=600)
    assert stalled.startswith(b"HTTP/1.1 504") and b'"reason":"Timeout"' in stalled
    async with server.client() as c:
        assert (await c.post(f"{server.rbac}/clusterroles", json=cr("after"))).status_code == 201
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR and r.name.startswith("api")]


async def test_huge_request_heads_are_refused_before_the_app(https_server):
    server = https_server  # real HTTPS: Hypercorn's limits
    async with server.client() as c:
        assert (await c.get(f"{server.rbac}/clusterroles", headers={"X-Big": "a" * 100_000})).status_code == 431
        # A request line past hypercorn's 16 KiB head limit: refused before the app (400 or 431).
        selector = ",".join(f"k{i}=v{i}" for i in range(10_000))
        for params in ({"labelSelector": selector[:30_000]}, {"continue": "A" * 30_000}):
            assert (await c.get(f"{server.rbac}/clusterroles", params=params)).status_code in (400, 431)
        assert (await c.get(f"{server.rbac}/clusterroles")).status_code == 200


@pytest.mark.stores("memory")  # its own store, or none
async def test_a_selector_of_ten_thousand_terms_is_served(registry):
    rt = registry.scheme.by_kind("ClusterRole")
    await registry.create(ADMIN, rt, "", Body(cr("labelled", labels={f"k{i}": f"v{i}" for i in range(50)})))
    everything = ",".join(f"k{i}=v{i}" for i in range(10_000))
    first_fifty = ",".join(f"k{i}=v{i}" for i in range(50)) + "," + ",".join(f"!z{i}" for i in range(9_950))
    assert (await registry.list(ADMIN, rt, "", ListOptions(label_selector=everything))).items == []
    assert [o.name for o in (await registry.list(ADMIN, rt, "", ListOptions(label_selector=first_fifty))).items] \
        == ["labelled"]
    stream = await registry.open_watch(ADMIN, rt, "", ListOptions(label_selector=first_fifty, timeout_seconds=1))
    assert [(t, o.name) async for t, o in stream] == [("ADDED", "labelled")]


@pytest.mark.stores("memory")  # its own store, or none
async def test_a_continue_token_of_a_megabyte_is_400(registry):
    rt = registry.scheme.by_kind("ClusterRole")
    for token in ("A" * 1_000_000, "%%%" * 300_000):
        with pytest.raises(errors.BadRequest):
            await registry.list(ADMIN, rt, "", ListOptions(limit=1, continue_token=token))


# ---- 4. memory bounds -------------------------------------------------------------------------

@pytest.mark.stores("memory")  # its own store, or none
async def test_watch_history_is_bounded_in_bytes_and_watches_from_before_it_lose_nothing(registry, autojump_clock):
    cache = registry.cache
    cache.max_history_bytes = 200_000
    rt = registry.scheme.by_kind("ClusterRole")
    created = await registry.create(ADMIN, rt, "", Body(cr("big")))
    first = created.obj.revision
    revisions = [first]
    for i in range(600):
        written = await registry.patch(ADMIN, rt, "", "big", "application/merge-patch+json",
                                       Body({"metadata": {"annotations": {"pad": f"{i:04}" + "x" * 2000}}}))
        revisions.append(written.obj.revision)
        assert await cache.wait_for(written.obj.revision, timeout=5)
        assert cache.history_bytes <= cache.max_history_bytes
    assert cache.oldest_revision > first  # the oldest events were shed
    # A watch from before the kept history replays the store's log, then follows the cache.
    stream = await registry.open_watch(ADMIN, rt, "", ListOptions(resource_version=str(first - 1)))
    seen: list[int] = []
    events = stream.__aiter__()
    try:
        while not seen or seen[-1] < revisions[-1]:
            event_type, obj = await events.__anext__()
            seen.append(obj.revision)
    finally:
        await events.aclose()
    assert seen == revisions


@pytest.mark.stores("memory")  # its own store, or none
async def test_a_slow_watcher_is_cut_off_and_resumes_without_loss(registry, autojump_clock):
    rt = registry.scheme.by_kind("ClusterRole")
    roles = registry.kind_cache(rt)
    start = registry.cache.revision
    baseline = roles.watchers
    stream = await registry.open_watch(ADMIN, rt, "", ListOptions(resource_version=str(start)))
    events = stream.__aiter__()
    written = []
    for i in range(1_200):  # more than a watcher's queue (1000) while it reads nothing
        written.append((await registry.create(ADMIN, rt, "", Body(cr(f"slow-{i:04}")))).obj.revision)
        if i == 0:
            await events.__anext__()  # registered and reading, then stalls
    await registry.cache.wait_for(written[-1])
    assert roles.watchers == baseline  # closed as overflowed: its queue is not growing any more
    seen = [written[0]]
    async for _, obj in events:  # the queued events, then the end of the stream
        seen.append(obj.revision)
    assert len(seen) < len(written)
    resumed = await registry.open_watch(ADMIN, rt, "", ListOptions(resource_version=str(seen[-1]),
                                                                   timeout_seconds=1))
    seen += [obj.revision async for _, obj in resumed]
    assert seen == written


@pytest.mark.stores("memory")  # its own store, or none
async def test_the_rbac_index_forgets_deleted_bindings(registry):
    assert await registry.cache.wait_fresh()  # the bootstrap policy is in the index
    before = registry.rbac.statistics()
    ns_rt, rb_rt, crb_rt = (registry.scheme.by_kind(k) for k in ("Namespace", "RoleBinding", "ClusterRoleBinding"))
    ref = {"apiGroup": "rbac.authorization.svc.io", "kind": "ClusterRole", "name": "view"}
    for n in range(10):
        await registry.create(ADMIN, ns_rt, "", Body({"apiVersion": "v1", "kind": "Namespace",
                                                      "metadata": {"name": f"tenant-{n}"}}))
        for b in range(5):
            await registry.create(ADMIN, rb_rt, f"tenant-{n}", Body({
                "apiVersion": RBAC, "kind": "RoleBinding", "metadata": {"name": f"b{b}"}, "roleRef": ref,
                "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.svc.io", "name": f"u-{n}-{b}"},
                             {"kind": "Group", "apiGroup": "rbac.authorization.svc.io", "name": f"g-{n}-{b}"}]}))
    for b in range(30):
        await registry.create(ADMIN, crb_rt, "", Body({
            "apiVersion": RBAC, "kind": "ClusterRoleBinding", "metadata": {"name": f"c{b}"}, "roleRef": ref,
            "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.svc.io", "name": f"cu-{b}"}]}))
    assert await registry.cache.wait_fresh()
    after = registry.rbac.statistics()
    assert after.role_bindings == before.role_bindings + 50
    for n in range(10):
        for b in range(5):
            await registry.delete(ADMIN, rb_rt, f"tenant-{n}", f"b{b}")
    for b in range(30):
        await registry.delete(ADMIN, crb_rt, "", f"c{b}")
    assert await registry.cache.wait_fresh()
    # Nothing is kept for subjects or namespaces that no binding names any more: each namespace and
    # subject was counted while bound (10 namespaces; 2 subjects in each of 50 bindings, 30 users) and is gone.
    assert (after.binding_namespaces, after.subjects) == (before.binding_namespaces + 10, before.subjects + 130)
    assert registry.rbac.statistics() == before
    assert len(registry.namespace_gate) == 0
