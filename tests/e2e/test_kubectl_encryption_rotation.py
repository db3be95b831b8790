"""Key rotation as Kubernetes documents it, with the real kubectl: objects sealed with key1; the config gets
key2 first (key1 still read), the server restarts, `kubectl get serviceaccounts -A -o json | kubectl replace -f -`
rewrites every object unchanged; then each is sealed with key2 and reads back after key1 is gone."""

from __future__ import annotations

import base64
import sqlite3

import trio

from tests.support.kubectl import Kubectl
from tests.support.server import start_server

KEY1 = base64.b64encode(b"1" * 32).decode()
KEY2 = base64.b64encode(b"2" * 32).decode()


def write_config(path, *keys: tuple[str, str]) -> str:
    listed = ", ".join(f"{{name: {name}, secret: {secret}}}" for name, secret in keys)
    path.write_text("apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n"
                    f"  - resources: [serviceaccounts, secrets]\n    providers:\n      - aesgcm: {{keys: [{listed}]}}\n"
                    "      - identity: {}\n")
    return str(path)


def sealed_with(db_path) -> dict[str, bytes]:
    """The key name each current service account value of `default` is sealed with, by name."""
    with sqlite3.connect(db_path) as db:
        rows = db.execute("SELECT kv.key, kv.value FROM kv JOIN latest ON kv.rev = latest.rev "
                          "WHERE kv.key LIKE '/core/serviceaccounts/default/sa-%'").fetchall()
    return {key.rsplit("/", 1)[1]: value.split(b":")[4] for key, value in rows}


async def serve(nursery, tmp_path, config: str):
    return await start_server(nursery, tmp_path, store="sqlite", api_domain="k8s.io",
                              encryption_provider_config=config)


async def test_kubectl_replace_of_every_object_rotates_it_to_the_new_key(nursery, tmp_path):
    async with trio.open_nursery() as first:
        srv = await serve(first, tmp_path, write_config(tmp_path / "one.yaml", ("key1", KEY1)))
        kubectl = Kubectl(srv, str(tmp_path / "cache"))
        for i in range(3):
            await kubectl("create", "serviceaccount", f"sa-{i}", "-n", "default")
        first.cancel_scope.cancel()
    db = tmp_path / "data" / "state.db"
    assert sealed_with(db) == {f"sa-{i}": b"key1" for i in range(3)}

    async with trio.open_nursery() as second:
        srv = await serve(second, tmp_path, write_config(tmp_path / "two.yaml", ("key2", KEY2), ("key1", KEY1)))
        kubectl = Kubectl(srv, str(tmp_path / "cache"))
        listed = await kubectl("get", "serviceaccounts", "-A", "-o", "json")
        replaced = await kubectl("replace", "-f", "-", stdin=listed.out.encode())
        assert "serviceaccount/sa-0 replaced" in replaced.out
        second.cancel_scope.cancel()
    assert sealed_with(db) == {f"sa-{i}": b"key2" for i in range(3)}

    srv = await serve(nursery, tmp_path, write_config(tmp_path / "three.yaml", ("key2", KEY2)))
    kubectl = Kubectl(srv, str(tmp_path / "cache"))
    names = (await kubectl("get", "serviceaccounts", "-n", "default", "-o", "name")).out.split()
    assert {f"serviceaccount/sa-{i}" for i in range(3)} <= set(names)
