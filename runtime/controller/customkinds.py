"""A client's scheme follows the server's custom kinds: `CustomKindsFollower`, a manager runnable.

An in-process client shares the server's scheme, which serves a CRD's kinds
once it is Established (`runtime.server.kinds.customresource`). An HTTP client has
its own scheme, built from the built-in kinds: controllers that act on every
kind of the server (namespace deletion, garbage collection) would never see
a custom one. `CustomKindsFollower(client)` watches the CRDs (an informer)
and registers each Established CRD's served versions on `client.scheme`,
exactly as a server does, so that `scheme.stored_types()` and
`scheme.wait_changed()` follow the server's kinds within one watch event.

    manager.add("custom-kinds", CustomKindsFollower(manager.client), needs_leader=False)

`run()` is started() once the CRDs were listed and their kinds registered.
`miniplane controllers` (`controllers.cli`) adds one to its manager. Never
give it a client whose scheme is a server's (an in-process `LocalClient`):
the server already follows its CRDs, and the informer, which lags behind
the server, would briefly serve an older schema.

Caveats:
    It needs `list` and `watch` on customresourcedefinitions. It follows the
    CRDs, not discovery: kinds served by other means (aggregated APIs) are
    not followed, and miniplane has none.
"""

from __future__ import annotations

import trio

from runtime.client.interface import Client
from runtime.controller.informer import Informer, ObjectEvent

__all__ = ["CustomKindsFollower"]


class CustomKindsFollower:
    """Registers the server's custom kinds on `client.scheme` while it runs (see the module docs)."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.crds = client.scheme.by_kind("CustomResourceDefinition")
        self.informer = Informer(client, self.crds)
        self.informer.add_handler(self._follow)

    def _follow(self, event: ObjectEvent) -> None:
        # The CRD kind's strategy serves what a CRD defines, on the scheme it belongs to.
        self.crds.strategy.observe(event.type, event.obj)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Follow the CRDs until cancelled; started() once the first list is registered."""
        await self.informer.run(task_status=task_status)
