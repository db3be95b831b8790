"""Force delete of corrupt objects (ignoreStoreReadErrorWithClusterBreakingPotential), gate AllowUnsafeMalformedObjectDeletion.

An object is made corrupt the way a broken disk or a bad encryption key
would: garbage written into its row of the SQLite `kv` table while the
server is stopped; the restarted server's watch cache meets it on its first
list.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
import trio

from runtime.server.featuregates import DEFAULT_GATES
from tests.support.server import start_in_process

# The test corrupts SQLite rows: it runs on that store only.
pytestmark = pytest.mark.stores("sqlite")

RULES = [{"verbs": ["get"], "apiGroups": [""], "resources": ["namespaces"]}]
GARBAGE = b"\x00\xffnot json at all"
FORCE = "ignoreStoreReadErrorWithClusterBreakingPotential"


def cr(domain: str, name: str, **meta) -> dict:
    return {"apiVersion": f"rbac.authorization.{domain}/v1", "kind": "ClusterRole",
            "metadata": dict(name=name, **meta), "rules": RULES}


def corrupt(db_path, key: str) -> None:
    """Overwrite the current value of `key` in the store's log with bytes that are not an object."""
    with sqlite3.connect(db_path) as db:
        changed = db.execute("UPDATE kv SET value = ? WHERE rev = (SELECT rev FROM latest WHERE key = ?)",
                             (GARBAGE, key)).rowcount
    assert changed == 1


def stored_keys(db_path) -> set[str]:
    with sqlite3.connect(db_path) as db:
        return {k for (k,) in db.execute("SELECT key FROM latest")}


async def broken_server(nursery, tmp_path, *, gate: bool):
    """A sqlite server holding ClusterRoles `fine`, and `broken` and `held` (finalizer) made corrupt."""
    gates = dict(DEFAULT_GATES, AllowUnsafeMalformedObjectDeletion=gate)
    async with trio.open_nursery() as first:
        srv = await start_in_process(first, tmp_path, store="sqlite", feature_gates=gates)
        async with srv.client() as c:
            for name, meta in (("fine", {}), ("broken", {}), ("held", {"finalizers": ["x/hold"]})):
                r = await c.post(f"{srv.rbac}/clusterroles", json=cr(srv.domain, name, **meta))
                assert r.status_code == 201, r.text
            # deleter may delete clusterroles but lacks the unsafe verb
            group = f"rbac.authorization.{srv.domain}"
            await c.post(f"{srv.rbac}/clusterroles", json={
                "apiVersion": f"{group}/v1", "kind": "ClusterRole", "metadata": {"name": "deleter"},
                "rules": [{"verbs": ["delete", "get"], "apiGroups": [group], "resources": ["clusterroles"]}]})
            await c.post(f"{srv.rbac}/clusterrolebindings", json={
                "apiVersion": f"{group}/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "deleter"},
                "roleRef": {"kind": "ClusterRole", "name": "deleter", "apiGroup": group},
                "subjects": [{"kind": "User", "name": "dee"}]})
        first.cancel_scope.cancel()
    db = tmp_path / "data" / "state.db"
    for name in ("broken", "held"):
        corrupt(db, f"/rbac.authorization/clusterroles/{name}")
    return await start_in_process(nursery, tmp_path, store="sqlite", feature_gates=gates), db


@pytest.fixture
async def gated(nursery, tmp_path):
    return await broken_server(nursery, tmp_path, gate=True)


@pytest.fixture
async def ungated(nursery, tmp_path):
    return await broken_server(nursery, tmp_path, gate=False)


def corrupt_message(name: str) -> str:
    return ("Internal error occurred: StorageError: corrupt object, Code: 7, "
            f"Key: /rbac.authorization/clusterroles/{name}, ResourceVersion: 0, AdditionalErrorMsg: ")


async def test_get_of_a_corrupt_object_is_500_corrupt_object(gated):
    srv, _ = gated
    async with srv.client() as c:
        r = await c.get(f"{srv.rbac}/clusterroles/broken")
        assert r.status_code == 500 and r.json()["reason"] == "InternalError"
        assert r.json()["message"].startswith(corrupt_message("broken"))


async def test_the_watch_cache_skips_a_corrupt_object_and_serves_the_rest(gated):
    srv, _ = gated
    async with srv.client() as c:
        listed = (await c.get(f"{srv.rbac}/clusterroles")).json()["items"]
        names = {o["metadata"]["name"] for o in listed}
        assert "fine" in names and "broken" not in names and "held" not in names
        assert (await c.get(f"{srv.rbac}/clusterroles/fine")).status_code == 200


async def test_normal_delete_of_a_corrupt_object_is_500(gated):
    srv, db = gated
    async with srv.client() as c:
        r = await c.delete(f"{srv.rbac}/clusterroles/broken")
        assert r.status_code == 500 and r.json()["message"].startswith(corrupt_message("broken"))
        assert "/rbac.authorization/clusterroles/broken" in stored_keys(db)


async def test_force_delete_removes_a_corrupt_object_ignoring_its_finalizers(gated):
    srv, db = gated
    async with srv.client() as c:
        for name in ("broken", "held"):
            r = await c.delete(f"{srv.rbac}/clusterroles/{name}", params={FORCE: "true"})
            assert r.status_code == 200, r.text
            assert r.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                                "code": 200, "details": {"name": name, "kind": "ClusterRole"}}
            assert (await c.get(f"{srv.rbac}/clusterroles/{name}")).status_code == 404
        assert {"/rbac.authorization/clusterroles/broken", "/rbac.authorization/clusterroles/held"}.isdisjoint(
            stored_keys(db))
        again = await c.post(f"{srv.rbac}/clusterroles", json=cr(srv.domain, "broken"))
        assert again.status_code == 201


async def test_force_delete_option_in_the_body(gated):
    srv, _ = gated
    async with srv.client() as c:
        r = await c.request("DELETE", f"{srv.rbac}/clusterroles/broken", content=json.dumps({FORCE: True}),
                            headers={"Content-Type": "application/json"})
        assert r.status_code == 200 and r.json()["status"] == "Success"


async def test_force_delete_of_a_readable_object_aborts_with_422(gated):
    srv, _ = gated
    async with srv.client() as c:
        for name in ("fine", "missing"):
            r = await c.delete(f"{srv.rbac}/clusterroles/{name}", params={FORCE: "true"})
            assert r.status_code == 422
            assert r.json()["message"] == (
                f'clusterroles.rbac.authorization.{srv.domain} "{name}" is invalid: {FORCE}: Invalid value: true: '
                "is exclusively used to delete corrupt object(s), try again by removing this option")
        assert (await c.get(f"{srv.rbac}/clusterroles/fine")).status_code == 200


@pytest.mark.parametrize("other,value", [
    ("dryRun", ["All"]), ("propagationPolicy", "Background"), ("orphanDependents", True),
    ("gracePeriodSeconds", 0), ("preconditions", {"uid": "x"}),
])
async def test_force_delete_with_another_option_set_is_422(gated, other, value):
    srv, db = gated
    async with srv.client() as c:
        r = await c.request("DELETE", f"{srv.rbac}/clusterroles/broken", content=json.dumps({FORCE: True, other: value}),
                            headers={"Content-Type": "application/json"})
        assert r.status_code == 422
        assert r.json()["message"] == (f'DeleteOptions.meta.k8s.io "" is invalid: {FORCE}: Invalid value: true: '
                                       f"cannot be set together with .{other}")
        assert "/rbac.authorization/clusterroles/broken" in stored_keys(db)


async def test_force_delete_needs_the_unsafe_delete_verb(gated):
    srv, db = gated
    async with srv.client(headers={"Impersonate-User": "dee"}) as c:
        r = await c.delete(f"{srv.rbac}/clusterroles/broken", params={FORCE: "true"})
        assert r.status_code == 403
        assert r.json()["message"].startswith(f'clusterroles.rbac.authorization.{srv.domain} "broken" is forbidden: '
                                              'not permitted to do "unsafe-delete-ignore-read-errors", reason: ')
        assert "/rbac.authorization/clusterroles/broken" in stored_keys(db)


async def test_force_delete_is_refused_on_deletecollection(gated):
    srv, _ = gated
    async with srv.client() as c:
        r = await c.delete(f"{srv.rbac}/clusterroles", params={FORCE: "true"})
        assert r.status_code == 422
        assert r.json()["message"] == (f'DeleteOptions.meta.k8s.io "" is invalid: {FORCE}: Invalid value: true: '
                                       "is not allowed with DELETECOLLECTION, try again after removing the option")
        assert (await c.get(f"{srv.rbac}/clusterroles/fine")).status_code == 200


async def test_force_delete_is_refused_while_the_gate_is_off(ungated):
    """With the gate off the option is dropped (Kubernetes' handler): the corrupt object cannot be removed."""
    srv, db = ungated
    async with srv.client() as c:
        r = await c.delete(f"{srv.rbac}/clusterroles/broken", params={FORCE: "true"})
        assert r.status_code == 500 and r.json()["message"].startswith(corrupt_message("broken"))
        assert "/rbac.authorization/clusterroles/broken" in stored_keys(db)
        assert (await c.get(f"{srv.rbac}/clusterroles/broken")).status_code == 500
        # ...and on a readable object it is an ordinary delete, other options allowed.
        r = await c.delete(f"{srv.rbac}/clusterroles/fine", params={FORCE: "true", "propagationPolicy": "Background"})
        assert r.status_code == 200 and (await c.get(f"{srv.rbac}/clusterroles/fine")).status_code == 404


async def test_a_corrupt_write_seen_by_the_running_cache_is_skipped_and_can_be_force_deleted(registry):
    """The cache's live path: garbage arriving as a change neither stops the cache nor reaches readers."""
    from runtime.server.bootstrap import SYSTEM_USER
    from runtime.machinery import errors
    from runtime.machinery.options import Body, ParsedDeleteOptions, WriteOptions
    from runtime.machinery.storedobject import CorruptObject

    rt = registry.scheme.by_kind("ClusterRole")
    created = await registry.create(SYSTEM_USER, rt, "", Body(cr(registry.scheme.domain, "victim")), WriteOptions())
    assert await registry.cache.wait_for(created.obj.revision, timeout=5)
    watcher = registry.kind_cache(rt).watch(lambda o: True, after_revision=None, initial=False)
    entry = await registry.store.update(rt.storage_key(None, "victim"), lambda rev: GARBAGE, expected_revision=None)
    assert await registry.cache.wait_for(entry.mod_revision, timeout=5)
    event_type, gone = watcher.events.receive_nowait()
    assert (event_type, gone.name) == ("DELETED", "victim")  # unreadable: gone from every watcher's view
    with pytest.raises(CorruptObject) as err:
        await registry.get(SYSTEM_USER, rt, "", "victim")
    assert err.value.message.startswith(corrupt_message("victim"))
    await registry.create(SYSTEM_USER, rt, "", Body(cr(registry.scheme.domain, "after")), WriteOptions())
    assert (await registry.get(SYSTEM_USER, rt, "", "after")).name == "after"
    registry.feature_gates["AllowUnsafeMalformedObjectDeletion"] = True
    result = await registry.delete(SYSTEM_USER, rt, "", "victim", ParsedDeleteOptions(ignore_store_read_error=True))
    assert result.code == 200 and result.body["status"] == "Success"
    with pytest.raises(errors.NotFound):
        await registry.get(SYSTEM_USER, rt, "", "victim")
    assert "/rbac.authorization/clusterroles/victim" not in registry.kind_cache(rt).corrupt
