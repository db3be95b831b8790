"""A client's scheme follows the server's custom kinds: `CustomKindsFollower`, a manager runnable.

An in-process client shares the server's scheme, which serves a CRD's kinds
once it is Established (`runtime.server.kinds.customresource`). An HTTP client has
its own scheme, built from the built-in kinds: controllers that act on every
kind of the server (namespace deletion, garbage collection) would never see
a custom one. `CustomKindsFollower(client)` watches the CRDs (an informer)
and registers each Established CRD's served versions on `client.scheme`
(`runtime.machinery.crds.kinds_of`, as a server does, but without a strategy: a
client loads none of the server's schemas or CEL), so that `scheme.stored_types()` and
`scheme.wait_changed()` follow the server's kinds within one watch event.

    manager.add("custom-kinds", CustomKindsFollower(manager.client), needs_leader=False)

`run()` is started() once the CRDs were listed and their kinds registered.
`miniplane controllers` (`controllers.cli`) adds one to its manager. Never
give it a client whose scheme is a server's (an in-process `LocalClient`):
the server already follows its CRDs, and the informer, which lags behind
the server, would briefly serve an older schema.

Without the permission to list customresourcedefinitions (a least-privilege
controller identity: controller-runtime needs no such rule), `run()` logs one
WARNING saying the scheme will not follow custom kinds and why, is
started() and returns: the manager and the controllers run on, knowing the
kinds they name themselves (`bind_kind`) but not the server's others.

Caveats:
    It needs `list` and `watch` on customresourcedefinitions to follow. It follows the
    CRDs, not discovery: kinds served by other means (aggregated APIs) are
    not followed, and miniplane has none.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import trio

from runtime.client.interface import Client
from runtime.controller.informer import Informer, ObjectEvent
from runtime.machinery import errors
from runtime.machinery.crds import is_established, kinds_of
from runtime.machinery.scheme import ResourceType, Scheme

__all__ = ["CustomKindsFollower"]

log = logging.getLogger(__name__)


class CustomKindsFollower:
    """Registers the server's custom kinds on `client.scheme` while it runs (see the module docs)."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.scheme = client.scheme
        self.informer = Informer(client, client.scheme.by_kind("CustomResourceDefinition"))
        self.informer.add_handler(self._follow)
        #: CRD name -> (what its kinds were registered from, the kinds).
        self._followed: dict[str, tuple[str, list[ResourceType]]] = {}

    def _follow(self, event: ObjectEvent) -> None:
        # As the server's CustomKinds: an Established CRD's served versions, registered again when its spec or
        # accepted names change; a client's kinds have no strategy (it never serves them).
        crd = event.obj
        name = crd["metadata"]["name"]
        if event.type == "DELETED" or not is_established(crd):
            self._forget(name)
            return
        signature = json.dumps([crd.get("spec"), (crd.get("status") or {}).get("acceptedNames")], sort_keys=True)
        if name in self._followed and self._followed[name][0] == signature:
            return
        self._forget(name)
        kinds = []
        for info, _ in kinds_of(crd):
            try:
                kinds.append(self.scheme.register(info, _unserved))
            except ValueError:
                continue  # a name another kind has: the server's naming controller refuses it in status
        self._followed[name] = (signature, kinds)

    def _forget(self, name: str) -> None:
        for rt in self._followed.pop(name, ("", []))[1]:
            self.scheme.unregister(rt)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Follow the CRDs until cancelled; started() once the first list is registered.

        A Forbidden first list or watch (no `list` or `watch` on customresourcedefinitions): one WARNING,
        started(), and return, never retrying (the informer would retry it forever and never be started()).
        """
        verb = "listing"
        try:
            page = await self.client.list(self.informer.kind, limit=1)
            verb = "watching"
            async with self.client.watch(self.informer.kind, resource_version=page.resource_version,
                                         timeout_seconds=1):
                pass  # opened: allowed (the informer opens its own)
        except errors.Forbidden as exc:
            log.warning("custom-kinds: the client's scheme will not follow the server's custom kinds: "
                        "%s customresourcedefinitions was refused (%s)", verb, exc)
            task_status.started()
            return
        await self.informer.run(task_status=task_status)


def _unserved(scheme: Scheme, rt: ResourceType) -> Any:
    """A client's custom kind has no strategy: it names the kind, never serves it."""
    return None
