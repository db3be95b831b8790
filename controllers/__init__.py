"""Built-in controllers: ClusterRole aggregation, namespace lifecycle, finalizers, garbage collection.

Contract: each controller module has `setup(manager)`, as every user
controller does (the one way to add controllers: a builder from
`manager.controller()`); `controllers.builtin.setup` adds them all and
`builtin_manager(registry, user)` is the in-process manager the server runs.
They talk to the server only through the client (in-process or HTTP), never
through the store, and are level-based: a restart finishes what was started.
Controllers import neither `api` nor storage nor registry internals.
"""

from controllers.builtin import FIELD_MANAGER, builtin_manager, setup

__all__ = ["FIELD_MANAGER", "builtin_manager", "setup"]
