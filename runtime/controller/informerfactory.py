"""The shared informers of a process (controller-runtime's cache, client-go's SharedInformerFactory).

`InformerFactory(client)` hands out one informer per kind (and namespace,
selectors and transform: full, `metadata_only` or another) per process and
runs them all. It names a kind as the client does: a `ResourceType` or a
model class (a built-in model of `runtime.models`, one bound by
`runtime.client.typed.bind_kind`, a generated one of `runtime.models.k8s`);
`informers.typed(Model)` is that informer's cache read as `Model` instances
(a `TypedCache`).

`informer_keeping(kind, transform)` is for a reader that only needs what
`transform` keeps: it is handed an informer of the kind (same namespace and
selectors) created already that keeps at least that
(`runtime.controller.transforms.keeps_at_least`: the whole objects, or a
transform keeping more), else the one of `transform`. One watch then feeds
both readers, where two informers would each decode, transform, store and
index every event (the garbage collector's metadata-only view of
ClusterRoles beside the aggregation controller's: a fifth of a create's
Python calls in a server running its controllers). Its reader must read only
what `transform` keeps, and expect more.
"""

from __future__ import annotations

import logging
import math
from typing import TypeVar

import trio
from pydantic import BaseModel

from runtime.client.interface import Kind, Reader
from runtime.client.typed import TypedCache, kind_of_model
from runtime.controller.informer import Informer
from runtime.controller.ratelimit import ItemExponentialRateLimiter
from runtime.controller.transforms import Transform, keeps_at_least, partial_metadata
from runtime.machinery.scheme import ResourceType

__all__ = ["InformerFactory"]

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)


class InformerFactory:
    """One informer per (kind, namespace, selectors, transform) per process, run together.

    `informer(...)` returns the shared instance, creating it on first use
    (with a `transform`, or `metadata_only=True`: a separate one caching its output);
    `run()` runs every informer (also ones created later) and calls
    `task_status.started()` once all informers created so far have synced.
    An informer whose `run()` raises is logged and restarted after a backoff
    (1 s doubling to 60 s); its store is kept and corrected by the relist.
    """

    def __init__(self, client: Reader, *, resync_period: float | None = None) -> None:
        self.client = client
        self.resync_period = resync_period
        self._informers: dict[tuple[str, str, str, str, Transform | None], Informer] = {}
        self._nursery: trio.Nursery | None = None
        self._backoff = ItemExponentialRateLimiter(base=1.0, cap=60.0)
        self.restarts = 0

    def resource(self, kind: Kind) -> ResourceType:
        """The ResourceType of `kind`, resolved as the client resolves kinds (`Reader.resource`) but without
        asking whether it is served yet (a controller may start before its CRD exists). Raises ValueError
        for a model class that names no kind."""
        if isinstance(kind, ResourceType):
            return kind
        rt = kind_of_model(kind, self.client.scheme)
        if rt is None or rt.virtual:
            raise ValueError(f"{kind!r} is not a stored kind of this scheme (bind it: runtime.client.typed.bind_kind)")
        return rt

    def informer(self, kind: Kind, *, namespace: str = "", label_selector: str = "",
                 field_selector: str = "", metadata_only: bool = False, transform: Transform | None = None) -> Informer:
        """The shared informer for these arguments (started at once if the factory is running).

        `kind`: a ResourceType or a model class (`resource()`); both name the same shared informer.
        `transform`: an informer of its own, caching what it returns (`runtime.controller.transforms`);
        `metadata_only`: the one of `partial_metadata`, the kind's metadata-only informer.
        """
        rt = self.resource(kind)
        transform = partial_metadata if metadata_only else transform
        key = (rt.storage_prefix, namespace, label_selector, field_selector, transform)
        informer = self._informers.get(key)
        if informer is None:
            informer = Informer(self.client, rt, namespace=namespace, label_selector=label_selector,
                                field_selector=field_selector, resync_period=self.resync_period,
                                transform=transform)
            self._informers[key] = informer
            if self._nursery is not None:
                self._nursery.start_soon(self._run_one, informer)
        return informer

    def informer_keeping(self, kind: Kind, transform: Transform, *, namespace: str = "", label_selector: str = "",
                         field_selector: str = "") -> Informer:
        """A shared informer of `kind` keeping at least what `transform` keeps: one created already if one
        does (the first found keeping the most), else `informer(kind, transform=transform)` (see the module
        doc)."""
        rt = self.resource(kind)
        found = [informer for (prefix, ns, labels, fields, have), informer in self._informers.items()
                 if (prefix, ns, labels, fields) == (rt.storage_prefix, namespace, label_selector, field_selector)
                 and keeps_at_least(have, transform)]
        for informer in found:
            if all(keeps_at_least(informer.transform, other.transform) for other in found):
                return informer
        return self.informer(rt, namespace=namespace, label_selector=label_selector, field_selector=field_selector,
                             transform=transform)

    def typed(self, model: type[M], *, namespace: str = "", label_selector: str = "",
              field_selector: str = "") -> TypedCache[M]:
        """The shared informer of `model`'s kind, its cache read as `model` instances."""
        return TypedCache(self.informer(model, namespace=namespace, label_selector=label_selector,
                                        field_selector=field_selector), model)

    def informers(self, *, metadata_only: bool | None = None) -> list[Informer]:
        """Every informer created (`metadata_only` True or False: only metadata-only or only full ones)."""
        return [i for i in self._informers.values() if metadata_only is None or i.metadata_only == metadata_only]

    def find(self, kind: Kind, *, namespace: str = "", label_selector: str = "", field_selector: str = "",
             metadata_only: bool = False, transform: Transform | None = None) -> Informer | None:
        """The shared informer for these arguments if one was created, else None (never creates one)."""
        key = (self.resource(kind).storage_prefix, namespace, label_selector, field_selector,
               partial_metadata if metadata_only else transform)
        return self._informers.get(key)

    @property
    def running(self) -> bool:
        """Whether `run()` runs, so that an informer created now starts at once."""
        return self._nursery is not None

    async def wait_synced(self) -> None:
        """Block until every informer created so far has synced."""
        for informer in list(self._informers.values()):
            await informer.wait_synced()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run every informer until cancelled; started() once those created so far have synced."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            try:
                for informer in list(self._informers.values()):
                    nursery.start_soon(self._run_one, informer)
                await self.wait_synced()
                task_status.started()
                await trio.sleep_forever()
            finally:
                self._nursery = None

    async def _run_one(self, informer: Informer) -> None:
        while True:
            try:
                await informer.run()
            except Exception as exc:  # a handler broke: report, back off, run again
                self.restarts += 1
                delay = self._backoff.when(id(informer))
                log.error("%r crashed; restarting in %.1fs", informer, delay, exc_info=exc)
                await trio.sleep(delay)
            else:  # pragma: no cover - run() only returns by raising
                await trio.sleep(math.inf)
