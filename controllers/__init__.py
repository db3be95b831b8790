"""Built-in controllers: ClusterRole aggregation, namespace lifecycle, finalizers, garbage collection.

They talk to the server only through the client (in-process or HTTP), never
through the store, and are level-based: a restart finishes what was started.
"""

from __future__ import annotations

import trio

__all__ = ["run_builtin_controllers"]


async def run_builtin_controllers(registry, user, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """Run every built-in controller against `registry` as `user` until cancelled."""
    from controllers.builtin import builtin_manager
    manager = builtin_manager(registry, user)
    await manager.run(task_status=task_status)
