"""Read-modify-write retries: a write retried after a conflict is rebuilt from what won."""

from __future__ import annotations

import copy

from runtime.server.bootstrap import SYSTEM_USER
from runtime.machinery.options import Body, WriteOptions

ROLE = {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "r", "annotations": {"o": "1"}}, "rules": []}


def managers(obj: dict) -> set[str]:
    return {entry["manager"] for entry in obj["metadata"].get("managedFields", [])}


async def test_a_put_retried_after_a_conflict_keeps_the_concurrent_managers_ownership(registry, monkeypatch):
    rt = registry.scheme.by_kind("ClusterRole")
    await registry.create(SYSTEM_USER, rt, "", Body(copy.deepcopy(ROLE)), WriteOptions(field_manager="creator"))
    store_update = registry.store.update
    raced, attempts = [], []

    async def update_after_a_rival(key, encode, *, expected_revision):
        attempts.append(expected_revision)
        if not raced:  # another manager writes between this PUT's read and its write
            raced.append(True)
            rival = copy.deepcopy(ROLE)
            rival["metadata"]["labels"] = {"rival": "yes"}
            await registry.update(SYSTEM_USER, rt, "", "r", Body(rival), WriteOptions(field_manager="rival"))
        return await store_update(key, encode, expected_revision=expected_revision)

    monkeypatch.setattr(registry.store, "update", update_after_a_rival)
    put = copy.deepcopy(ROLE)
    put["metadata"]["labels"] = {"rival": "yes"}
    put["rules"] = [{"verbs": ["get"], "apiGroups": [""], "resources": ["namespaces"]}]
    result = await registry.update(SYSTEM_USER, rt, "", "r", Body(put), WriteOptions(field_manager="putter"))
    # Three writes: the PUT's stale one (refused), the rival's, the PUT's retry at the rival's revision.
    assert len(attempts) == 3 and attempts[0] == attempts[1] < attempts[2]
    assert result.obj.obj["rules"] == put["rules"]
    # The rival's label is untouched by the PUT, so the rival still owns it after the retry.
    assert {"creator", "rival", "putter"} <= managers(result.obj.obj)
