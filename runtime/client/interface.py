"""The client: one async interface to the API, in-process or over HTTP.

`Reader` (get, list, watch) + `Writer` (create, update, patch, delete,
delete_collection) = `Client`, as controller-runtime composes them. Two
transports implement it and pass one conformance suite:

- `runtime.client.local.LocalClient(registry, user)`: straight to the
  registry, with the same authorization, validation and admission as HTTP
  and the caller's identity;
- `runtime.client.http.HTTPClient(config)`: httpx over anyio (trio), TLS with
  the kubeconfig's CA, token or client-certificate auth, JSON or Protobuf.

Kinds are named by their `ResourceType` (unstructured: objects are plain
dicts in Kubernetes' JSON form) or by their pydantic model class from
`runtime.models`, or a model of a custom kind bound by `runtime.client.typed.bind_kind`
(typed: objects are model instances). The same methods serve both; what goes
in comes out::

    role = await client.get(scheme.by_kind("ClusterRole"), "view")        # dict
    role = await client.get(models.ClusterRole, "view")                    # ClusterRole
    roles = await client.list(models.Role, namespace="team-a")             # ObjectList[Role]
    async with client.watch(rt, resource_version=roles.resource_version,
                            allow_watch_bookmarks=True) as events:
        async for event in events:                                         # WatchEvent
            ...

Watch events always carry dicts (bookmarks and errors have no model).
Writes take the object (dict or model); its kind comes from `apiVersion` and
`kind` (dict) or from the model class. Every call returns fresh objects the
caller may change. Status answers raise the `runtime.machinery.errors` class of their
reason, whichever transport; `ClientError` covers what is not a Status
(undecodable answers, transport failures).

Lists that set `resourceVersion` always set `resourceVersionMatch` too (the
spec asks clients to): `NotOlderThan` unless the caller chose.
"""

from __future__ import annotations

import abc

import contextlib
from dataclasses import dataclass
from typing import (
    Any, AsyncIterator, Generic, Mapping, Protocol, TypeVar, Union, overload, runtime_checkable,
)

from pydantic import BaseModel

from runtime.machinery import errors
from runtime.machinery.options import (
    APPLY_PATCH, JSON_PATCH, MERGE_PATCH, PATCH_TYPES, STRATEGIC_MERGE_PATCH, ListOptions, ParsedDeleteOptions,
    PatchType, WriteOptions, patch_content_type,
)
from runtime.machinery.scheme import ResourceType, Scheme
from runtime.client.typed import bound_kind_of, kind_of_model

__all__ = [
    "ObjectKey", "WatchEvent", "ObjectList", "Kind", "Obj", "WatchStream",
    "Reader", "Writer", "Client", "BaseClient",
    "ClientError", "DecodeError", "TransportError",
    "JSON_PATCH", "MERGE_PATCH", "STRATEGIC_MERGE_PATCH", "APPLY_PATCH", "PATCH_TYPES", "PatchType",
    "ignore_not_found", "ignore_conflict", "key_of", "object_meta",
]


M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

#: A kind: its ResourceType (dicts in and out) or its model class (model instances).
Kind = Union[ResourceType, type[BaseModel]]
#: An object: a dict in Kubernetes' JSON form, or a model instance.
Obj = Union[dict[str, Any], BaseModel]


class ClientError(Exception):
    """A client failure that is not a Status answer from the server."""


class DecodeError(ClientError):
    """The server's answer could not be decoded (bad JSON, a Protobuf body without `k8s\\0`, ...)."""


class TransportError(ClientError):
    """The request did not get an answer (connection refused or dropped, TLS failure, timeout)."""


@dataclass(frozen=True, order=True)
class ObjectKey:
    """Which object: namespace ("" for cluster-scoped kinds) and name. `str(key)` is `ns/name` or `name`."""

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @classmethod
    def parse(cls, text: str) -> "ObjectKey":
        """`ns/name` or `name` (client-go's MetaNamespaceKey form) as a key."""
        namespace, _, name = text.rpartition("/")
        return cls(namespace, name)


def object_meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """The object's metadata dict (empty when missing)."""
    return obj.get("metadata") or {}


def key_of(obj: Mapping[str, Any]) -> ObjectKey:
    """The `ObjectKey` of a dict-form object."""
    meta = object_meta(obj)
    return ObjectKey(meta.get("namespace") or "", meta.get("name") or "")


@dataclass(frozen=True)
class WatchEvent:
    """One watch event: type ADDED, MODIFIED, DELETED, BOOKMARK or ERROR, and its object (a dict).

    For BOOKMARK the object carries only `metadata.resourceVersion`; for ERROR
    it is a `Status` (see `error()`).
    """

    type: str
    object: dict[str, Any]

    @property
    def resource_version(self) -> str:
        return object_meta(self.object).get("resourceVersion") or ""

    def error(self) -> errors.StatusError | None:
        """For an ERROR event, the `StatusError` it carries (410 Gone: relist); else None."""
        if self.type != "ERROR":
            return None
        return errors.status_from_dict(self.object)


@dataclass(frozen=True)
class ObjectList(Generic[T]):
    """A page of a list: items, the collection's resourceVersion, the continue token, the remaining count."""

    items: list[T]
    resource_version: str
    continue_token: str = ""
    remaining_item_count: int | None = None


#: `async with client.watch(...) as events: async for event in events: ...`
WatchStream = contextlib.AbstractAsyncContextManager[AsyncIterator[WatchEvent]]


@runtime_checkable
class Reader(Protocol):
    """Reads: get, list and watch (see the module docs for kinds and objects)."""

    scheme: Scheme

    def resource(self, kind: Kind) -> ResourceType:
        """The ResourceType of `kind` (a ResourceType or a model class). Raises ValueError if unknown."""
        ...

    async def get(self, kind: Kind, name: str, *, namespace: str = "", resource_version: str | None = None,
                  subresource: str = "") -> Any:
        """One object. resourceVersion unset: most recent; "0": any; other: not older than. Raises NotFound."""
        ...

    async def list(self, kind: Kind, *, namespace: str = "", label_selector: str = "", field_selector: str = "",
                   limit: int = 0, continue_token: str = "", resource_version: str | None = None,
                   resource_version_match: str = "") -> ObjectList[Any]:
        """One page of a collection (all of it when `limit` is 0); namespace "" lists every namespace."""
        ...

    def watch(self, kind: Kind, *, namespace: str = "", resource_version: str | None = None,
              label_selector: str = "", field_selector: str = "", allow_watch_bookmarks: bool = False,
              send_initial_events: bool | None = None, timeout_seconds: int | None = None) -> WatchStream:
        """An async context manager yielding an async iterator of `WatchEvent`s.

        The iterator ends when the server closes the stream (timeout); a watch
        from a version no longer kept yields an ERROR event with code 410.
        """
        ...


@runtime_checkable
class Writer(Protocol):
    """Writes: create, update (also of `status` / `finalize`), patch (four types), delete."""

    async def create(self, obj: Any, *, namespace: str | None = None, dry_run: bool = False,
                     field_manager: str = "", field_validation: str = "") -> Any:
        """POST; returns the created object. Raises AlreadyExists, Invalid, Forbidden, ..."""
        ...

    async def update(self, obj: Any, *, subresource: str = "", dry_run: bool = False, field_manager: str = "",
                     field_validation: str = "") -> Any:
        """PUT; conditional when `metadata.resourceVersion` is set (stale: Conflict)."""
        ...

    async def patch(self, kind: Kind, name: str, patch: Any, *, patch_type: PatchType | str = MERGE_PATCH,
                    namespace: str = "", subresource: str = "", dry_run: bool = False, field_manager: str = "",
                    force: bool = False) -> Any:
        """PATCH with a `PatchType`, its value ("merge", ...) or one of `PATCH_TYPES` (`runtime.machinery.options`;
        TypeError for anything else); apply needs a field manager. Returns the patched object."""
        ...

    async def delete(self, kind: Kind, name: str, *, namespace: str = "",
                     preconditions: Mapping[str, str] | None = None, propagation_policy: str | None = None,
                     grace_period_seconds: int | None = None, dry_run: bool = False) -> dict[str, Any]:
        """DELETE; returns the object when it stays (finalizers) or as the kind answers, else a `Status`."""
        ...

    async def delete_collection(self, kind: Kind, *, namespace: str = "", label_selector: str = "",
                                field_selector: str = "", dry_run: bool = False) -> dict[str, Any]:
        """DELETE of a collection; returns a success `Status`."""
        ...


@runtime_checkable
class Client(Reader, Writer, Protocol):
    """Reader + Writer."""


def ignore_not_found() -> contextlib.AbstractContextManager[None]:
    """`with ignore_not_found(): await client.delete(...)`: a NotFound is success (controller-runtime's IgnoreNotFound)."""
    return contextlib.suppress(errors.NotFound)


def ignore_conflict() -> contextlib.AbstractContextManager[None]:
    """`with ignore_conflict(): await client.update(obj)`: a Conflict (409, stale resourceVersion) is success.

    For a write another run will redo from fresh state (the key is queued again by the event of the write
    that won). AlreadyExists, also a 409, is not suppressed.
    """
    return contextlib.suppress(errors.Conflict)


class BaseClient(abc.ABC):
    """The public API over a transport's primitives; `LocalClient` and `HTTPClient` subclass it.

    A transport implements the `_get`, `_list`, `_watch`, `_create`,
    `_update`, `_patch`, `_delete` and `_delete_collection` primitives on dicts
    and ResourceTypes; this class resolves kinds, converts typed objects and
    fills options from the client defaults (`field_manager`).
    """

    def __init__(self, scheme: Scheme, *, field_manager: str = "") -> None:
        self.scheme = scheme
        self.field_manager = field_manager

    # ---- kinds and objects -----------------------------------------------------------------------

    def resource(self, kind: Kind) -> ResourceType:
        """The ResourceType of a kind given as ResourceType or model class (a built-in kind's, or one bound
        by `runtime.client.typed.bind_kind`). Raises ValueError if unknown, TypeError for neither (a name)."""
        if isinstance(kind, ResourceType):
            return kind
        rt = kind_of_model(kind, self.scheme)
        if rt is None or rt.virtual:
            raise ValueError(f"{kind!r} is not a stored kind of this scheme")
        return rt

    def _model(self, kind: Kind) -> type[BaseModel] | None:
        return None if isinstance(kind, ResourceType) else kind

    def _object(self, obj: Obj) -> tuple[ResourceType, dict[str, Any], type[BaseModel] | None]:
        if isinstance(obj, BaseModel):
            rt = self.resource(type(obj))
            data = obj.model_dump(by_alias=True, exclude_none=True, mode="json")
            data["apiVersion"], data["kind"] = rt.api_version, rt.kind
            return rt, data, type(obj)
        if not isinstance(obj, dict):
            raise TypeError(f"expected a dict or a model instance, got {type(obj).__name__}")
        api_version, kind = obj.get("apiVersion") or "", obj.get("kind") or ""
        rt = self.scheme.by_api_version_kind(api_version, kind) or bound_kind_of(api_version, kind)
        if rt is None:
            raise ValueError(f"no stored kind {obj.get('kind')!r} in {obj.get('apiVersion')!r}")
        # Through `resource`, as a kind named by its model is: a transport may check it is served.
        return self.resource(rt), obj, None

    @staticmethod
    def _out(model: type[BaseModel] | None, data: dict[str, Any]) -> Any:
        return data if model is None else model.model_validate(data)

    def _write_options(self, dry_run: bool, field_manager: str, field_validation: str,
                       force: bool = False) -> WriteOptions:
        return WriteOptions(dry_run=dry_run, field_manager=field_manager or self.field_manager,
                            field_validation=field_validation or "Warn", force=force)

    # ---- Reader ----------------------------------------------------------------------------------

    @overload
    async def get(self, kind: type[M], name: str, *, namespace: str = ..., resource_version: str | None = ...,
                  subresource: str = ...) -> M: ...

    @overload
    async def get(self, kind: ResourceType, name: str, *, namespace: str = ...,
                  resource_version: str | None = ..., subresource: str = ...) -> dict[str, Any]: ...

    async def get(self, kind: Kind, name: str, *, namespace: str = "", resource_version: str | None = None,
                  subresource: str = "") -> Any:
        rt = self.resource(kind)
        data = await self._get(rt, namespace if rt.namespaced else "", name, resource_version, subresource)
        return self._out(self._model(kind), data)

    async def list(self, kind: Kind, *, namespace: str = "", label_selector: str = "", field_selector: str = "",
                   limit: int = 0, continue_token: str = "", resource_version: str | None = None,
                   resource_version_match: str = "") -> ObjectList[Any]:
        rt = self.resource(kind)
        if resource_version and not resource_version_match and not continue_token:
            resource_version_match = "NotOlderThan"
        opts = ListOptions(label_selector=label_selector, field_selector=field_selector, limit=limit,
                           continue_token=continue_token, resource_version=resource_version,
                           resource_version_match=resource_version_match)
        page = await self._list(rt, namespace if rt.namespaced else "", opts)
        model = self._model(kind)
        if model is None:
            return page
        return ObjectList([model.model_validate(i) for i in page.items], page.resource_version,
                          page.continue_token, page.remaining_item_count)

    def watch(self, kind: Kind, *, namespace: str = "", resource_version: str | None = None,
              label_selector: str = "", field_selector: str = "", allow_watch_bookmarks: bool = False,
              send_initial_events: bool | None = None, timeout_seconds: int | None = None) -> WatchStream:
        rt = self.resource(kind)
        opts = ListOptions(label_selector=label_selector, field_selector=field_selector,
                           resource_version=resource_version, allow_watch_bookmarks=allow_watch_bookmarks,
                           send_initial_events=send_initial_events, timeout_seconds=timeout_seconds,
                           resource_version_match="NotOlderThan" if send_initial_events else "")
        return self._watch(rt, namespace if rt.namespaced else "", opts)

    # ---- Writer ----------------------------------------------------------------------------------

    async def create(self, obj: Any, *, namespace: str | None = None, dry_run: bool = False,
                     field_manager: str = "", field_validation: str = "") -> Any:
        rt, data, model = self._object(obj)
        ns = namespace if namespace is not None else (object_meta(data).get("namespace") or "")
        created = await self._create(rt, ns if rt.namespaced else "", data,
                                     self._write_options(dry_run, field_manager, field_validation))
        return self._out(model, created)

    async def update(self, obj: Any, *, subresource: str = "", dry_run: bool = False, field_manager: str = "",
                     field_validation: str = "") -> Any:
        rt, data, model = self._object(obj)
        meta = object_meta(data)
        updated = await self._update(rt, (meta.get("namespace") or "") if rt.namespaced else "",
                                     meta.get("name") or "", data,
                                     self._write_options(dry_run, field_manager, field_validation), subresource)
        return self._out(model, updated)

    async def patch(self, kind: Kind, name: str, patch: Any, *, patch_type: PatchType | str = MERGE_PATCH,
                    namespace: str = "", subresource: str = "", dry_run: bool = False, field_manager: str = "",
                    force: bool = False) -> Any:
        content_type = patch_content_type(patch_type)
        rt = self.resource(kind)
        if isinstance(patch, BaseModel):
            patch = self._object(patch)[1]
        patched = await self._patch(rt, namespace if rt.namespaced else "", name, content_type, patch,
                                    self._write_options(dry_run, field_manager, "", force), subresource)
        return self._out(self._model(kind), patched)

    async def delete(self, kind: Kind, name: str, *, namespace: str = "",
                     preconditions: Mapping[str, str] | None = None, propagation_policy: str | None = None,
                     grace_period_seconds: int | None = None, dry_run: bool = False) -> dict[str, Any]:
        rt = self.resource(kind)
        opts = ParsedDeleteOptions(dry_run=dry_run, grace_period_seconds=grace_period_seconds,
                                   preconditions=dict(preconditions) if preconditions else None,
                                   propagation_policy=propagation_policy)
        return await self._delete(rt, namespace if rt.namespaced else "", name, opts)

    async def delete_collection(self, kind: Kind, *, namespace: str = "", label_selector: str = "",
                                field_selector: str = "", dry_run: bool = False) -> dict[str, Any]:
        rt = self.resource(kind)
        opts = ListOptions(label_selector=label_selector, field_selector=field_selector)
        return await self._delete_collection(rt, namespace if rt.namespaced else "", opts,
                                             ParsedDeleteOptions(dry_run=dry_run))

    # ---- transport primitives --------------------------------------------------------------------

    @abc.abstractmethod
    async def _get(self, rt: ResourceType, namespace: str, name: str, resource_version: str | None,
                   subresource: str) -> dict[str, Any]:
        raise NotImplementedError

    @abc.abstractmethod
    async def _list(self, rt: ResourceType, namespace: str, opts: ListOptions) -> ObjectList[dict[str, Any]]:
        raise NotImplementedError

    @abc.abstractmethod
    def _watch(self, rt: ResourceType, namespace: str, opts: ListOptions) -> WatchStream:
        raise NotImplementedError

    @abc.abstractmethod
    async def _create(self, rt: ResourceType, namespace: str, obj: dict[str, Any],
                      opts: WriteOptions) -> dict[str, Any]:
        raise NotImplementedError

    @abc.abstractmethod
    async def _update(self, rt: ResourceType, namespace: str, name: str, obj: dict[str, Any],
                      opts: WriteOptions, subresource: str) -> dict[str, Any]:
        raise NotImplementedError

    @abc.abstractmethod
    async def _patch(self, rt: ResourceType, namespace: str, name: str, patch_type: str, patch: Any,
                     opts: WriteOptions, subresource: str) -> dict[str, Any]:
        raise NotImplementedError

    @abc.abstractmethod
    async def _delete(self, rt: ResourceType, namespace: str, name: str, opts: ParsedDeleteOptions) -> dict[str, Any]:
        raise NotImplementedError

    @abc.abstractmethod
    async def _delete_collection(self, rt: ResourceType, namespace: str, list_opts: ListOptions,
                                 opts: ParsedDeleteOptions) -> dict[str, Any]:
        raise NotImplementedError
