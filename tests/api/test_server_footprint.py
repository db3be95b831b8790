"""A server over many stored objects keeps their bytes, not their decoded dicts (issue 41's memory target).

`miniplane serve`'s own assembly (`open_control_plane`, the built-in controllers running) over a SQLite
data directory filled with more Roles than the watch cache's decode budget: once every controller has
synced, no more cached objects hold a dict than the budget, no object was decoded after the watch cache's
check of it (whose view of each is what the metadata-only informers hold), and no controller's cache holds a
Role's rules.
"""

from __future__ import annotations

import pytest
import trio

from api import cli
from api.assembly import open_control_plane
from runtime.machinery.storedobject import DEFAULT_DECODE_BUDGET, dumps_json
from runtime.server.storage.sqlite.store import SqliteStore

ROLES = "/rbac.authorization/roles/"
COUNT = DEFAULT_DECODE_BUDGET + 1000

pytestmark = pytest.mark.stores("sqlite")  # its own SQLite data directory, as `miniplane serve` opens one


def role(name: str, namespace: str):
    def encode(revision: int) -> bytes:
        return dumps_json({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                           "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}",
                                        "resourceVersion": str(revision), "labels": {"app": "bulk"}},
                           "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]})
    return encode


async def test_a_server_over_more_roles_than_the_decode_budget_holds_at_most_the_budget_decoded(tmp_path):
    store = await SqliteStore.open(tmp_path / "state.db", synchronous="NORMAL")
    try:
        for i in range(COUNT):
            await store.create(f"{ROLES}ns-{i % 10}/r{i:05d}", role(f"r{i:05d}", f"ns-{i % 10}"))
    finally:
        await store.aclose()
    options = cli.serve_options(cli.parser().parse_args(["serve", "--data-dir", str(tmp_path), "--port", "0"]))
    async with open_control_plane(options) as plane:
        manager = plane.controllers
        assert manager is not None
        with trio.fail_after(60):
            await manager.informers.wait_synced()
        cache = plane.registry.cache
        roles = cache.kind(ROLES).list()
        assert len(roles) == COUNT
        assert sum(o.is_decoded for o in roles) <= DEFAULT_DECODE_BUDGET
        assert cache.decodes.decodes <= 100  # the bootstrap's reads: the informers took the check's views
        role_informers = [i for i in manager.informers.informers() if i.kind.kind == "Role"]
        assert role_informers and all(i.metadata_only for i in role_informers)
        assert all("rules" not in o and "managedFields" not in o["metadata"]
                   for i in role_informers for o in i.list())
