"""Shared helpers of the watch, list and resourceVersion tests: ClusterRoles and the collection's version."""

from __future__ import annotations

__all__ = ["cr", "create", "collection_rv"]

def cr(name: str, *, rules: list | None = None, **labels: str) -> dict:
    """A ClusterRole body (svc.io domain) named `name` with these labels (no rules by default)."""
    meta: dict = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "ClusterRole", "metadata": meta,
            "rules": rules if rules is not None else []}


async def create(c, srv, name: str, **labels: str) -> int:
    """Create a ClusterRole; returns its resourceVersion (asserting the 201)."""
    r = await c.post(f"{srv.rbac}/clusterroles", json=cr(name, **labels))
    assert r.status_code == 201, r.text
    return int(r.json()["metadata"]["resourceVersion"])


async def collection_rv(c, srv) -> int:
    """The ClusterRole collection's current resourceVersion (from a list)."""
    return int((await c.get(f"{srv.rbac}/clusterroles")).json()["metadata"]["resourceVersion"])
