"""Shared helpers of the robustness tests (`tests/api/test_robustness*.py`): RBAC bodies, a create that
asserts its 201, a wait in trio time, and a count of the run's tasks."""

from __future__ import annotations

import httpx
import trio

from runtime.server.rbac.user import UserInfo
from tests.support.server import Server

__all__ = ["RBAC", "MERGE", "ADMIN", "cr", "role", "create", "count_tasks", "settle"]

RBAC = "rbac.authorization.svc.io/v1"
MERGE = {"Content-Type": "application/merge-patch+json"}
ADMIN = UserInfo("admin", groups=("system:masters",))


def cr(name: str, **meta) -> dict:
    """A ClusterRole with no rules; `meta` are further metadata fields (labels, finalizers...)."""
    return {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": name, **meta}, "rules": []}


def role(name: str, **meta) -> dict:
    """A Role with no rules; `meta` are further metadata fields."""
    return {"apiVersion": RBAC, "kind": "Role", "metadata": {"name": name, **meta}, "rules": []}


async def create(c: httpx.AsyncClient, srv: Server, name: str, **meta) -> dict:
    """Create a ClusterRole through `srv`; returns the object (asserting the 201)."""
    r = await c.post(f"{srv.rbac}/clusterroles", json=cr(name, **meta))
    assert r.status_code == 201, r.text
    return r.json()


def count_tasks() -> int:
    """Every task running in this trio run (the server's included)."""
    def walk(task: trio.lowlevel.Task) -> int:
        return 1 + sum(walk(child) for nursery in task.child_nurseries for child in nursery.child_tasks)
    return walk(trio.lowlevel.current_root_task())


async def settle(predicate, *, step: float = 0.05, limit: float = 30.0) -> None:
    """Wait (trio time) until `predicate()` holds; fail after `limit` s.

    Polls: only for what a real server notices about its sockets (a closed connection), where no event
    reaches the test; on the MockClock the polling costs no real time.
    """
    with trio.fail_after(limit):
        while not predicate():
            await trio.sleep(step)
