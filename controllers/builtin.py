"""The built-in controllers, assembled on one manager.

`builtin_manager(registry, user)` is what the server runs in-process: a
`Manager` on a `LocalClient` acting as `user`, with every built-in
controller (`setup`). `controllers.cli` runs the same `setup` out of process
over HTTP.

Built in: namespace lifecycle (`controllers.namespace`), ClusterRole
aggregation (`controllers.aggregation`) and the garbage collector
(`controllers.gc`).
"""

from __future__ import annotations

from runtime.client_local import LocalClient
from runtime.manager import Manager
from runtime.rbac.user import UserInfo
from runtime.registry import Registry

from controllers import aggregation, gc, namespace

__all__ = ["FIELD_MANAGER", "setup", "builtin_manager"]

#: The field manager of writes the built-in controllers make without naming their own.
FIELD_MANAGER = "miniplane-controller-manager"


def setup(manager: Manager) -> None:
    """Add every built-in controller to `manager`."""
    namespace.setup(manager)
    aggregation.setup(manager)
    gc.setup(manager)


def builtin_manager(registry: Registry, user: UserInfo) -> Manager:
    """A manager running the built-in controllers in-process against `registry` as `user` (not started)."""
    client = LocalClient(registry, user, field_manager=FIELD_MANAGER, user_agent=FIELD_MANAGER)
    manager = Manager(client, name=FIELD_MANAGER)
    setup(manager)
    return manager
