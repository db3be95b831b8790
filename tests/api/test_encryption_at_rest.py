"""Encryption at rest (`--encryption-provider-config`) through the API, on every store: what the store holds is
ciphertext with kube's prefix, what the API answers is the object; a snapshot holds ciphertext; a key rotation
done as Kubernetes documents it (new key first, restart, replace every object) leaves everything readable and
sealed with the new key; a value no provider reads answers 500 with kube's words, and the rest is served."""

from __future__ import annotations

import base64
import json
import sqlite3

import pytest
import trio

from api.cli import main
from runtime.server.featuregates import DEFAULT_GATES
from runtime.server.storage.encryption import RELOAD_INTERVAL, load_config
from tests.support.crds import GROUP, crd_path, established, widget, widget_crd, widgets_path
from tests.support.etcd import raw_keys
from tests.support.server import start_in_process
from tests.support.workers import start_workers_in_process

KEY1 = base64.b64encode(b"1" * 32).decode()
KEY2 = base64.b64encode(b"2" * 32).decode()
SAS = "/api/v1/namespaces/default/serviceaccounts"
LEASES = "/apis/coordination.svc.io/v1/namespaces/default/leases"
MARKER = "plaintext-marker-7f3a"


def write_config(path, *keys: tuple[str, str], resources=("serviceaccounts", "leases.coordination.svc.io",
                                                            f"widgets.{GROUP}", "secrets", "configmaps")) -> str:
    """An aesgcm-then-identity EncryptionConfiguration (YAML) with `keys`, the first writing."""
    lines = ["apiVersion: apiserver.config.k8s.io/v1", "kind: EncryptionConfiguration", "resources:",
             f"  - resources: [{', '.join(resources)}]", "    providers:", "      - aesgcm:", "          keys:"]
    lines += [f"            - {{name: {name}, secret: {secret}}}" for name, secret in keys]
    lines += ["      - identity: {}"]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def sa(name: str) -> dict:
    return {"metadata": {"name": name, "annotations": {"note": MARKER}}}


def lease(name: str) -> dict:
    return {"metadata": {"name": name}, "spec": {"holderIdentity": MARKER}}


async def stored_values(srv, prefix: str) -> dict[str, bytes]:
    """What the backend holds under `prefix`: read from the raw store, below the encryption."""
    page = await srv.plane.store.list(prefix)
    return {entry.key: entry.value for entry in page.entries}


async def test_objects_written_through_the_api_are_ciphertext_in_the_store_and_read_back(
        nursery, tmp_path, store_under_test):
    config = write_config(tmp_path / "enc.yaml", ("key1", KEY1))
    srv = await start_in_process(nursery, tmp_path, encryption_provider_config=config)
    async with srv.client() as c:
        assert (await c.post(SAS, json=sa("robot"))).status_code == 201
        assert (await c.post(LEASES, json=lease("held"))).status_code == 201
        assert (await c.get(f"{SAS}/robot")).json()["metadata"]["annotations"]["note"] == MARKER
        assert (await c.get(f"{LEASES}/held")).json()["spec"]["holderIdentity"] == MARKER
        listed = (await c.get(SAS)).json()["items"]
        assert MARKER in [o["metadata"].get("annotations", {}).get("note") for o in listed]
    for prefix, key in (("/core/serviceaccounts/", "/core/serviceaccounts/default/robot"),
                        ("/coordination/leases/", "/coordination/leases/default/held")):
        value = (await stored_values(srv, prefix))[key]
        assert value.startswith(b"k8s:enc:aesgcm:v1:key1:") and MARKER.encode() not in value
    if store_under_test == "sqlite":
        with sqlite3.connect(srv.data_dir / "state.db") as db:
            rows = db.execute("SELECT value FROM kv WHERE key = ?", ("/core/serviceaccounts/default/robot",)).fetchall()
        assert rows and all(v.startswith(b"k8s:enc:aesgcm:v1:key1:") and MARKER.encode() not in v for v, in rows)
    if store_under_test == "etcd":
        options = srv.plane.options
        endpoint = options.store.split("://", 1)[1]
        held = await raw_keys(endpoint, f"{options.etcd_prefix}/core/serviceaccounts/")
        value = held[f"{options.etcd_prefix}/core/serviceaccounts/default/robot"]
        assert value.startswith(b"k8s:enc:aesgcm:v1:key1:") and MARKER.encode() not in value


async def test_a_secret_is_ciphertext_in_the_store_and_reads_back(nursery, tmp_path, store_under_test):
    """The acceptance's words: aesgcm then identity; the Secret is not readable in the SQLite file, nor in
    etcd (its key read with an etcd client), and reads back through the API."""
    config = write_config(tmp_path / "enc.yaml", ("key1", KEY1))
    srv = await start_in_process(nursery, tmp_path, encryption_provider_config=config)
    value = base64.b64encode(MARKER.encode()).decode()
    async with srv.client() as c:
        r = await c.post("/api/v1/namespaces/default/secrets",
                         json={"metadata": {"name": "creds"}, "stringData": {"user": MARKER},
                               "data": {"password": value}})
        assert r.status_code == 201, r.text
        read = (await c.get("/api/v1/namespaces/default/secrets/creds")).json()["data"]
        assert read == {"password": value, "user": value}
    sealed = [(await stored_values(srv, "/core/secrets/"))["/core/secrets/default/creds"]]
    if store_under_test == "sqlite":
        with sqlite3.connect(srv.data_dir / "state.db") as db:
            sealed += [v for v, in db.execute("SELECT value FROM kv WHERE key = ?", ("/core/secrets/default/creds",))]
        assert len(sealed) > 1
    if store_under_test == "etcd":
        options = srv.plane.options
        held = await raw_keys(options.store.split("://", 1)[1], f"{options.etcd_prefix}/core/secrets/")
        sealed.append(held[f"{options.etcd_prefix}/core/secrets/default/creds"])
    for stored in sealed:
        assert stored.startswith(b"k8s:enc:aesgcm:v1:key1:")
        assert value.encode() not in stored and MARKER.encode() not in stored


async def test_a_configmap_named_in_the_config_is_ciphertext_in_the_store_and_reads_back(nursery, tmp_path):
    config = write_config(tmp_path / "enc.yaml", ("key1", KEY1))
    srv = await start_in_process(nursery, tmp_path, encryption_provider_config=config)
    async with srv.client() as c:
        r = await c.post("/api/v1/namespaces/default/configmaps",
                         json={"metadata": {"name": "settings"}, "data": {"mode": MARKER}})
        assert r.status_code == 201, r.text
        assert (await c.get("/api/v1/namespaces/default/configmaps/settings")).json()["data"] == {"mode": MARKER}
    stored = (await stored_values(srv, "/core/configmaps/"))["/core/configmaps/default/settings"]
    assert stored.startswith(b"k8s:enc:aesgcm:v1:key1:") and MARKER.encode() not in stored


async def test_a_watch_sees_plaintext_of_encrypted_writes(nursery, tmp_path, autojump_clock):
    config = write_config(tmp_path / "enc.yaml", ("key1", KEY1))
    srv = await start_in_process(nursery, tmp_path, encryption_provider_config=config)
    async with srv.client() as c:
        rv = (await c.get(SAS)).json()["metadata"]["resourceVersion"]
        assert (await c.post(SAS, json=sa("watched"))).status_code == 201
        async with c.stream("GET", SAS, params={"watch": "1", "resourceVersion": rv, "timeoutSeconds": "1"}) as r:
            events = [json.loads(line) async for line in r.aiter_lines() if line]
    names = {e["object"]["metadata"]["name"]: e["object"] for e in events if e["type"] == "ADDED"}
    assert names["watched"]["metadata"]["annotations"]["note"] == MARKER


async def test_a_custom_resource_named_in_the_config_is_encrypted(nursery, tmp_path):
    config = write_config(tmp_path / "enc.yaml", ("key1", KEY1))
    srv = await start_in_process(nursery, tmp_path, controllers=True, encryption_provider_config=config)
    async with srv.client() as c:
        assert (await c.post(crd_path(), json=widget_crd())).status_code == 201
        await established(c)
        body = widget("w1", color="red")
        body["metadata"]["labels"] = {"note": MARKER}
        assert (await c.post(widgets_path(), json=body)).status_code == 201
        assert (await c.get(f"{widgets_path()}/w1")).json()["metadata"]["labels"]["note"] == MARKER
    held = await stored_values(srv, f"/{GROUP}/widgets/")
    assert held and all(v.startswith(b"k8s:enc:aesgcm:v1:key1:") and MARKER.encode() not in v
                        for v in held.values())


async def replace_all(c) -> None:
    """`kubectl get serviceaccounts -o json | kubectl replace -f -`: each object put back unchanged; each written."""
    for obj in (await c.get(SAS)).json()["items"]:
        r = await c.put(f"{SAS}/{obj['metadata']['name']}", json={"apiVersion": "v1", "kind": "ServiceAccount", **obj})
        assert r.status_code == 200, r.text
        assert r.json()["metadata"]["resourceVersion"] != obj["metadata"]["resourceVersion"]  # written


async def assert_all_sealed_with(srv, key_name: str, count: int) -> None:
    held = await stored_values(srv, "/core/serviceaccounts/default/")
    assert len([k for k in held if "/sa-" in k]) == count
    assert all(v.startswith(f"k8s:enc:aesgcm:v1:{key_name}:".encode()) for v in held.values())


# The restart keeps the objects: a store that outlives the process.
@pytest.mark.stores("sqlite", "etcd")
async def test_key_rotation_by_rewriting_every_object_leaves_all_readable_and_sealed_with_the_new_key(
        nursery, tmp_path):
    data = tmp_path / "data"
    first = write_config(tmp_path / "one.yaml", ("key1", KEY1))
    async with trio.open_nursery() as inner:
        srv = await start_in_process(inner, tmp_path, encryption_provider_config=first)
        async with srv.client() as c:
            for i in range(3):
                assert (await c.post(SAS, json=sa(f"sa-{i}"))).status_code == 201
        inner.cancel_scope.cancel()
    # A new key first (reading the old one still), a restart, then every object replaced unchanged.
    rotated = write_config(tmp_path / "two.yaml", ("key2", KEY2), ("key1", KEY1))
    srv = await start_in_process(nursery, tmp_path, encryption_provider_config=rotated)
    assert srv.data_dir == data
    async with srv.client() as c:
        await replace_all(c)
    await assert_all_sealed_with(srv, "key2", 3)
    # The old key can go now: everything reads with the new one alone.
    only_new = write_config(tmp_path / "three.yaml", ("key2", KEY2))
    srv.plane.registry.store.swap(load_config(only_new, "svc.io"))
    async with srv.client() as c:
        for i in range(3):
            r = await c.get(f"{SAS}/sa-{i}")
            assert r.status_code == 200 and r.json()["metadata"]["annotations"]["note"] == MARKER


async def test_key_rotation_by_automatic_reload_then_rewriting_leaves_all_readable(nursery, tmp_path, autojump_clock):
    path = tmp_path / "enc.yaml"
    write_config(path, ("key1", KEY1))
    srv = await start_in_process(nursery, tmp_path, encryption_provider_config=str(path),
                                 encryption_provider_config_automatic_reload=True)
    async with srv.client() as c:
        for i in range(2):
            assert (await c.post(SAS, json=sa(f"sa-{i}"))).status_code == 201
        write_config(path, ("key2", KEY2), ("key1", KEY1))
        await trio.sleep(RELOAD_INTERVAL + 1)
        await replace_all(c)
        await assert_all_sealed_with(srv, "key2", 2)
        write_config(path, ("key2", KEY2))
        await trio.sleep(RELOAD_INTERVAL + 1)
        for i in range(2):
            assert (await c.get(f"{SAS}/sa-{i}")).json()["metadata"]["annotations"]["note"] == MARKER


async def test_an_unchanged_replace_of_a_fresh_value_is_still_no_write(nursery, tmp_path):
    config = write_config(tmp_path / "enc.yaml", ("key1", KEY1))
    srv = await start_in_process(nursery, tmp_path, encryption_provider_config=config)
    async with srv.client() as c:
        created = (await c.post(SAS, json=sa("same"))).json()
        r = await c.put(f"{SAS}/same", json={"apiVersion": "v1", "kind": "ServiceAccount", **created})
    assert r.status_code == 200 and r.json()["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


@pytest.mark.stores("sqlite", "etcd")
async def test_a_value_no_provider_reads_is_500_with_kubes_words_and_the_rest_is_served(nursery, tmp_path):
    first = write_config(tmp_path / "one.yaml", ("key1", KEY1))
    async with trio.open_nursery() as inner:
        srv = await start_in_process(inner, tmp_path, encryption_provider_config=first)
        async with srv.client() as c:
            assert (await c.post(SAS, json=sa("sealed"))).status_code == 201
        inner.cancel_scope.cancel()
    other = write_config(tmp_path / "two.yaml", ("key2", KEY2))  # key1 is lost
    srv = await start_in_process(nursery, tmp_path, encryption_provider_config=other)
    async with srv.client() as c:
        r = await c.get(f"{SAS}/sealed")
        assert r.status_code == 500 and r.json()["reason"] == "InternalError"
        assert r.json()["message"].endswith("no matching key was found for the provided AES transformer")
        assert (await c.post(SAS, json=sa("new"))).status_code == 201
        assert (await c.get(f"{SAS}/new")).status_code == 200
        listed = (await c.get(SAS)).json()["items"]
        assert "new" in {o["metadata"]["name"] for o in listed} and "sealed" not in {
            o["metadata"]["name"] for o in listed}


# KEP-3926's case: an object whose key is lost, removed unread (gate AllowUnsafeMalformedObjectDeletion).
@pytest.mark.stores("sqlite", "etcd")
async def test_a_value_no_provider_reads_is_deleted_unread_with_the_unsafe_option(nursery, tmp_path):
    first = write_config(tmp_path / "one.yaml", ("key1", KEY1))
    async with trio.open_nursery() as inner:
        srv = await start_in_process(inner, tmp_path, encryption_provider_config=first)
        async with srv.client() as c:
            assert (await c.post(SAS, json=sa("lost"))).status_code == 201
        inner.cancel_scope.cancel()
    other = write_config(tmp_path / "two.yaml", ("key2", KEY2))
    gates = dict(DEFAULT_GATES, AllowUnsafeMalformedObjectDeletion=True)
    srv = await start_in_process(nursery, tmp_path, encryption_provider_config=other, feature_gates=gates)
    async with srv.client() as c:
        r = await c.delete(f"{SAS}/lost", params={"ignoreStoreReadErrorWithClusterBreakingPotential": "true"})
        assert r.status_code == 200, r.text
        assert (await c.get(f"{SAS}/lost")).status_code == 404
    assert "/core/serviceaccounts/default/lost" not in await stored_values(srv, "/core/serviceaccounts/default/")


@pytest.mark.stores("sqlite")
async def test_a_snapshot_of_an_encrypting_server_holds_ciphertext(nursery, tmp_path, capsys):
    config = write_config(tmp_path / "enc.yaml", ("key1", KEY1))
    srv = await start_in_process(nursery, tmp_path, store="sqlite", encryption_provider_config=config)
    async with srv.client() as c:
        assert (await c.post(SAS, json=sa("saved"))).status_code == 201
    snapshot = tmp_path / "backup.db"
    code = await trio.to_thread.run_sync(main, ["snapshot", "save", str(snapshot), "--data-dir", str(srv.data_dir)])
    assert code == 0
    with sqlite3.connect(snapshot) as db:
        (value,), = db.execute("SELECT value FROM kv WHERE key = ?", ("/core/serviceaccounts/default/saved",))
    assert value.startswith(b"k8s:enc:aesgcm:v1:key1:") and MARKER.encode() not in value
    assert MARKER.encode() not in snapshot.read_bytes()


# Two workers of one SQLite file in this process (tests.support.workers): real threads and sockets, real clock.
@pytest.mark.stores("memory")
async def test_workers_each_read_what_another_sealed_and_the_file_holds_ciphertext(nursery, tmp_path):
    config = write_config(tmp_path / "enc.yaml", ("key1", KEY1))
    a, b = await start_workers_in_process(nursery, tmp_path, 2, encryption_provider_config=config)
    async with a.client() as ca, b.client() as cb:
        for i, (writer, reader) in enumerate(((ca, cb), (cb, ca))):
            assert (await writer.post(SAS, json=sa(f"sa-{i}"))).status_code == 201
            got = await reader.get(f"{SAS}/sa-{i}")
            assert got.status_code == 200 and got.json()["metadata"]["annotations"]["note"] == MARKER
    with sqlite3.connect(a.data_dir / "state.db") as db:
        values = [v for v, in db.execute("SELECT value FROM kv WHERE key LIKE '/core/serviceaccounts/default/sa-%'")]
    assert len(values) == 2 and all(v.startswith(b"k8s:enc:aesgcm:v1:key1:") and MARKER.encode() not in v
                                    for v in values)
