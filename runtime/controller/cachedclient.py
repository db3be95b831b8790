"""The manager's client: reads from the informer caches, writes to the server (controller-runtime's delegating client).

`CachedClient(client, informers)` is a `Client`. Writes and watches go to
`client` (the server). A `get` or `list` of a kind that has an informer of
the whole kind in `informers` (the manager's `InformerFactory`: no
namespace or selector of its own), once that informer has synced, is
answered from its cache without a request; any other read goes to the
server. So a reconcile reads what the informers hold, as controller-runtime's
`manager.GetClient()` does, and `manager.api_reader` (the server client) reads
live, as `manager.GetAPIReader()`.

What the cache answers, and what still goes to the server:

- `get`: from the cache unless a `subresource` or a `resource_version` other
  than "0" (any version) is asked; a name not cached is NotFound, as the
  server words it.
- `list`: from the cache with a label selector (any), a field selector on
  `metadata.name` and `metadata.namespace` only, a namespace, and no `limit`,
  `continue_token` or `resource_version` other than "0". Items come sorted by
  namespace and name, as the server lists them; the list's resourceVersion is
  the informer's. A selector that does not parse goes to the server, which
  answers its BadRequest.
- Every answer is a fresh copy (a caller may change it; the cache is not
  touched), with `apiVersion` and `kind` set; a kind named by its model class
  comes back as model instances, as from the server.

`statistics()` counts the reads answered from the cache and those sent to the
server. `shared_reads()` is what an `Informer` given this client lists and
watches through: always the server (an informer listing its own cache would
never see the server's changes).

Caveats:
    The cache lags behind the server: a read just after a write may not see
    it (no read-your-writes). A conditional write from a stale read is a
    Conflict; a controller requeues its key quietly (`runtime.controller.controller`).
    Where a reconcile must see the server's state (a namespace's remaining
    contents, an owner's existence), read through `manager.api_reader`.
    Unlike controller-runtime, a read of a kind with no informer (or one not
    synced yet) goes to the server instead of starting an informer or
    blocking, and a limited list goes to the server instead of being cut
    short without a continue token.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from pydantic import BaseModel

from runtime.client.interface import Client, Kind, ObjectKey, ObjectList, PatchType, MERGE_PATCH, WatchStream, \
    key_of, object_meta
from runtime.controller.informer import Informer
from runtime.controller.informerfactory import InformerFactory
from runtime.machinery import errors
from runtime.machinery.scheme import ResourceType, Scheme
from runtime.machinery.selectors import SelectorError, parse_field_selector, parse_label_selector
from runtime.machinery.storedobject import copy_json

__all__ = ["CachedClient", "CachedClientStatistics"]

#: Field selectors the cache answers (every object has them); others need the server's field sets.
_CACHED_FIELDS = ("metadata.name", "metadata.namespace")


@dataclass(frozen=True)
class CachedClientStatistics:
    """Reads answered from a cache, reads sent to the server (monotonic)."""

    cache_reads: int
    server_reads: int


class CachedClient:
    """Reads through `informers`' caches where they can answer, else and for writes through `client`.

    See the module docs for which reads the cache answers.
    """

    def __init__(self, client: Client, informers: InformerFactory) -> None:
        self.server = client
        self.informers = informers
        self._cache_reads = self._server_reads = 0

    def __repr__(self) -> str:
        return f"<CachedClient over {self.server!r}>"

    def __getattr__(self, name: str) -> Any:
        # The server client's other attributes (field_manager, ...) read through.
        if name == "server":  # not set yet (a copy being built): no recursion
            raise AttributeError(name)
        return getattr(self.server, name)

    @property
    def scheme(self) -> Scheme:
        return self.server.scheme

    def resource(self, kind: Kind) -> ResourceType:
        return self.server.resource(kind)

    def shared_reads(self) -> Any:
        """What an informer given this client lists and watches through: the server, never the cache."""
        shared = getattr(self.server, "shared_reads", None)
        return shared() if callable(shared) else self.server

    def statistics(self) -> CachedClientStatistics:
        return CachedClientStatistics(self._cache_reads, self._server_reads)

    def _cache(self, rt: ResourceType) -> Informer | None:
        informer = self.informers.find(rt)
        return informer if informer is not None and informer.has_synced() else None

    @staticmethod
    def _answer(rt: ResourceType, model: type[BaseModel] | None, obj: dict[str, Any]) -> Any:
        fresh = copy_json(obj)
        fresh.setdefault("apiVersion", rt.api_version)
        fresh.setdefault("kind", rt.kind)
        return fresh if model is None else model.model_validate(fresh)

    # ---- Reader ----------------------------------------------------------------------------------

    async def get(self, kind: Kind, name: str, *, namespace: str = "", resource_version: str | None = None,
                  subresource: str = "") -> Any:
        rt = self.resource(kind)
        informer = self._cache(rt) if not subresource and resource_version in (None, "", "0") else None
        if informer is None:
            self._server_reads += 1
            return await self.server.get(kind, name, namespace=namespace, resource_version=resource_version,
                                         subresource=subresource)
        self._cache_reads += 1
        obj = informer.get(ObjectKey(namespace if rt.namespaced else "", name))
        if obj is None:
            raise errors.NotFound(f'{rt.group_resource} "{name}" not found', name=name, group=rt.group,
                                  kind=rt.plural)
        return self._answer(rt, None if isinstance(kind, ResourceType) else kind, obj)

    async def list(self, kind: Kind, *, namespace: str = "", label_selector: str = "", field_selector: str = "",
                   limit: int = 0, continue_token: str = "", resource_version: str | None = None,
                   resource_version_match: str = "") -> ObjectList[Any]:
        rt = self.resource(kind)
        informer = None
        if not limit and not continue_token and resource_version in (None, "0", "") and not resource_version_match:
            informer = self._cache(rt)
        picked = self._from_cache(informer, rt, namespace, label_selector, field_selector) if informer else None
        if informer is None or picked is None:
            self._server_reads += 1
            return await self.server.list(kind, namespace=namespace, label_selector=label_selector,
                                          field_selector=field_selector, limit=limit, continue_token=continue_token,
                                          resource_version=resource_version,
                                          resource_version_match=resource_version_match)
        self._cache_reads += 1
        model = None if isinstance(kind, ResourceType) else kind
        items = [self._answer(rt, model, obj) for obj in sorted(picked, key=key_of)]
        return ObjectList(items, informer.resource_version)

    @staticmethod
    def _from_cache(informer: Informer, rt: ResourceType, namespace: str, label_selector: str,
                    field_selector: str) -> list[dict[str, Any]] | None:
        """The cached objects a list selects, or None when the cache cannot answer it."""
        try:
            labels = parse_label_selector(label_selector)
            fields = parse_field_selector(field_selector)
        except SelectorError:
            return None  # the server answers its BadRequest
        if any(r.field not in _CACHED_FIELDS for r in fields.requirements):
            return None
        objects = informer.list(namespace) if rt.namespaced and namespace else informer.list()
        if labels.empty and fields.empty:
            return objects
        picked = []
        for obj in objects:
            meta = object_meta(obj)
            if not labels.matches(meta.get("labels") or {}):
                continue
            if fields.matches({"metadata.name": meta.get("name") or "",
                               "metadata.namespace": meta.get("namespace") or ""}):
                picked.append(obj)
        return picked

    def watch(self, kind: Kind, *, namespace: str = "", resource_version: str | None = None,
              label_selector: str = "", field_selector: str = "", allow_watch_bookmarks: bool = False,
              send_initial_events: bool | None = None, timeout_seconds: int | None = None) -> WatchStream:
        return self.server.watch(kind, namespace=namespace, resource_version=resource_version,
                                 label_selector=label_selector, field_selector=field_selector,
                                 allow_watch_bookmarks=allow_watch_bookmarks,
                                 send_initial_events=send_initial_events, timeout_seconds=timeout_seconds)

    # ---- Writer: straight to the server ----------------------------------------------------------

    async def create(self, obj: Any, *, namespace: str | None = None, dry_run: bool = False,
                     field_manager: str = "", field_validation: str = "") -> Any:
        return await self.server.create(obj, namespace=namespace, dry_run=dry_run, field_manager=field_manager,
                                        field_validation=field_validation)

    async def update(self, obj: Any, *, subresource: str = "", dry_run: bool = False, field_manager: str = "",
                     field_validation: str = "") -> Any:
        return await self.server.update(obj, subresource=subresource, dry_run=dry_run, field_manager=field_manager,
                                        field_validation=field_validation)

    async def patch(self, kind: Kind, name: str, patch: Any, *, patch_type: PatchType | str = MERGE_PATCH,
                    namespace: str = "", subresource: str = "", dry_run: bool = False, field_manager: str = "",
                    force: bool = False) -> Any:
        return await self.server.patch(kind, name, patch, patch_type=patch_type, namespace=namespace,
                                       subresource=subresource, dry_run=dry_run, field_manager=field_manager,
                                       force=force)

    async def delete(self, kind: Kind, name: str, *, namespace: str = "",
                     preconditions: Mapping[str, str] | None = None, propagation_policy: str | None = None,
                     grace_period_seconds: int | None = None, dry_run: bool = False) -> dict[str, Any]:
        return await self.server.delete(kind, name, namespace=namespace, preconditions=preconditions,
                                        propagation_policy=propagation_policy,
                                        grace_period_seconds=grace_period_seconds, dry_run=dry_run)

    async def delete_collection(self, kind: Kind, *, namespace: str = "", label_selector: str = "",
                                field_selector: str = "", dry_run: bool = False) -> dict[str, Any]:
        return await self.server.delete_collection(kind, namespace=namespace, label_selector=label_selector,
                                                   field_selector=field_selector, dry_run=dry_run)
