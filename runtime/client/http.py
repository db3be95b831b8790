"""`HTTPClient`: the `Client` interface over HTTP(S), with httpx on anyio (runs under trio).

Connection settings are a `KubeConfig` (server URL, CA, token or client
certificate), as `runtime.client.kubeconfig.load_kubeconfig` reads it from a file or
as built in code. The CA is trusted for TLS; the token goes in
`Authorization: Bearer`; a client certificate is presented in the TLS
handshake.

With `protobuf=True` the client asks for `application/vnd.kubernetes.protobuf`
(JSON as fallback) and sends create/update bodies in Protobuf where the kind
has a Protobuf form; a Protobuf answer must start with `k8s\\0` or it is a
`DecodeError`. Patches always travel as JSON (apply patches too: JSON is YAML).

Example::

    async with open_http_client(load_kubeconfig("admin.kubeconfig")) as client:
        roles = await client.list(models.ClusterRole)

Caveats:
    Exec and auth-provider credential plugins are not supported. Status
    answers raise the `runtime.machinery.errors` class of their reason; a non-Status
    error body raises the class of its HTTP code.
"""

from __future__ import annotations

import json
import struct
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator
from urllib.parse import quote

import httpx

from runtime.machinery import errors
from runtime.client.interface import BaseClient, DecodeError, ObjectList, TransportError, WatchEvent, WatchStream
from runtime.machinery.options import ListOptions, ParsedDeleteOptions, WriteOptions
from runtime.client.kubeconfig import KubeConfig, ssl_context
from runtime.machinery.scheme import DEFAULT_DOMAIN, ResourceType, Scheme

__all__ = ["HTTPClient", "open_http_client", "discover_domain", "http_client"]

PROTOBUF = "application/vnd.kubernetes.protobuf"
_FRAME = struct.Struct(">I")


def http_client(config: KubeConfig, user_agent: str, timeout: float,
                transport: httpx.AsyncBaseTransport | None = None, *,
                headers: dict[str, str] | None = None) -> httpx.AsyncClient:
    """An httpx client for `config`'s server: its URL, bearer token and TLS (unless `transport` is given)."""
    headers = {"User-Agent": user_agent, **(headers or {})}
    if config.token:
        headers["Authorization"] = f"Bearer {config.token}"
    kwargs: dict[str, Any] = {"base_url": config.server.rstrip("/"), "headers": headers,
                              "timeout": httpx.Timeout(timeout)}
    if transport is not None:
        kwargs["transport"] = transport
    elif config.server.startswith("https:"):
        kwargs["verify"] = ssl_context(config)
    return httpx.AsyncClient(**kwargs)


def _status_error(code: int, doc: Any, text: str) -> errors.StatusError:
    if isinstance(doc, dict) and doc.get("kind") == "Status":
        return errors.status_from_dict(doc)
    return errors.status_from_dict({"code": code, "reason": errors.reason_for_code(code),
                                    "message": text.strip() or f"the server answered {code}"})


class HTTPClient(BaseClient):
    """A `Client` over HTTP(S). Close it with `aclose()` (or use it as an async context manager).

    `scheme` must use the server's API domain (see `open_http_client`, which
    asks the server). `transport` replaces the network (e.g.
    `httpx.ASGITransport` for in-process tests).
    """

    def __init__(self, config: KubeConfig, *, scheme: Scheme | None = None, protobuf: bool = False,
                 field_manager: str = "", user_agent: str = "miniplane-client/0.1", timeout: float = 30.0,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        super().__init__(scheme or Scheme(DEFAULT_DOMAIN), field_manager=field_manager)
        self.config = config
        self.protobuf = protobuf
        self._http = http_client(config, user_agent, timeout, transport)
        self._accept = f"{PROTOBUF}, application/json" if protobuf else "application/json"

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def __aenter__(self) -> "HTTPClient":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # ---- plumbing --------------------------------------------------------------------------------

    def _path(self, rt: ResourceType, namespace: str, name: str = "", subresource: str = "") -> str:
        base = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
        if rt.namespaced and namespace:
            base += f"/namespaces/{quote(namespace, safe='')}"
        path = f"{base}/{rt.plural}"
        if name:
            path += f"/{quote(name, safe='')}"
        if subresource:
            path += f"/{subresource}"
        return path

    def _decode(self, response: httpx.Response, raw: bytes) -> Any:
        media = (response.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        try:
            if media == PROTOBUF or (media.startswith("application/vnd.") and media.endswith(".protobuf")):
                # late import: the Protobuf codec (~30 ms) only for a Protobuf answer
                from runtime.machinery.serializer import protobuf

                return protobuf.decode(raw)
            return json.loads(raw)
        except ValueError as exc:  # a ProtobufError is one
            raise DecodeError(f"cannot decode the {media or 'untyped'} answer: {exc}") from None

    async def _request(self, method: str, path: str, *, params: dict[str, Any] | None = None,
                       body: bytes | None = None, content_type: str | None = None) -> Any:
        headers = {"Accept": self._accept}
        if content_type is not None:
            headers["Content-Type"] = content_type
        try:
            response = await self._http.request(method, path, params=params, content=body, headers=headers)
        except httpx.TransportError as exc:
            raise TransportError(f"{method} {path}: {exc!r}") from exc
        raw = response.content
        if response.status_code >= 400:
            try:
                doc = self._decode(response, raw) if raw else None
            except DecodeError:
                doc = None
            raise _status_error(response.status_code, doc, raw.decode("utf-8", "replace"))
        return self._decode(response, raw)

    def _body(self, obj: dict[str, Any]) -> tuple[bytes, str]:
        if self.protobuf:
            # late import: the Protobuf codec (~30 ms) only for a client that sends Protobuf
            from runtime.machinery.serializer import protobuf

            if protobuf.supports(obj.get("apiVersion", ""), obj.get("kind", "")):
                return protobuf.encode(obj), PROTOBUF
        return json.dumps(obj, separators=(",", ":")).encode(), "application/json"

    @staticmethod
    def _write_params(opts: WriteOptions) -> dict[str, Any]:
        params: dict[str, Any] = {}
        if opts.dry_run:
            params["dryRun"] = "All"
        if opts.field_manager:
            params["fieldManager"] = opts.field_manager
        if opts.field_validation:
            params["fieldValidation"] = opts.field_validation
        if opts.force:
            params["force"] = "true"
        return params

    @staticmethod
    def _list_params(opts: ListOptions) -> dict[str, Any]:
        params: dict[str, Any] = {}
        if opts.label_selector:
            params["labelSelector"] = opts.label_selector
        if opts.field_selector:
            params["fieldSelector"] = opts.field_selector
        if opts.limit:
            params["limit"] = str(opts.limit)
        if opts.continue_token:
            params["continue"] = opts.continue_token
        if opts.resource_version is not None:
            params["resourceVersion"] = opts.resource_version
        if opts.resource_version_match:
            params["resourceVersionMatch"] = opts.resource_version_match
        if opts.timeout_seconds is not None:
            params["timeoutSeconds"] = str(opts.timeout_seconds)
        if opts.allow_watch_bookmarks:
            params["allowWatchBookmarks"] = "true"
        if opts.send_initial_events is not None:
            params["sendInitialEvents"] = "true" if opts.send_initial_events else "false"
        return params

    # ---- primitives ------------------------------------------------------------------------------

    async def _get(self, rt: ResourceType, namespace: str, name: str, resource_version: str | None,
                   subresource: str) -> dict[str, Any]:
        params = {"resourceVersion": resource_version} if resource_version is not None else None
        return await self._request("GET", self._path(rt, namespace, name, subresource), params=params)

    async def _list(self, rt: ResourceType, namespace: str, opts: ListOptions) -> ObjectList[dict[str, Any]]:
        doc = await self._request("GET", self._path(rt, namespace), params=self._list_params(opts))
        meta = doc.get("metadata") or {}
        items = []
        for item in doc.get("items") or []:
            # Items of a list carry no apiVersion/kind on the wire; give them back.
            items.append({"apiVersion": rt.api_version, "kind": rt.kind, **item})
        return ObjectList(items, meta.get("resourceVersion") or "", meta.get("continue") or "",
                          meta.get("remainingItemCount"))

    def _watch(self, rt: ResourceType, namespace: str, opts: ListOptions) -> WatchStream:
        return self._open_watch(rt, namespace, opts)

    @asynccontextmanager
    async def _open_watch(self, rt: ResourceType, namespace: str,
                          opts: ListOptions) -> AsyncIterator[AsyncIterator[WatchEvent]]:
        params = dict(self._list_params(opts), watch="1")
        accept = f"{PROTOBUF};stream=watch, application/json" if self.protobuf else "application/json"
        path = self._path(rt, namespace)
        try:
            async with self._http.stream("GET", path, params=params, headers={"Accept": accept},
                                         timeout=httpx.Timeout(self._http.timeout.connect, read=None)) as response:
                if response.status_code >= 400:
                    raw = await response.aread()
                    try:
                        doc = self._decode(response, raw) if raw else None
                    except DecodeError:
                        doc = None
                    raise _status_error(response.status_code, doc, raw.decode("utf-8", "replace"))
                media = (response.headers.get("Content-Type") or "").split(";")[0].strip().lower()
                if media == "application/json":
                    yield self._json_events(response, path)
                elif media.endswith(".protobuf"):
                    yield self._protobuf_events(response, path)
                else:
                    raise DecodeError(f"unexpected watch media type {media!r}")
        except httpx.TransportError as exc:
            raise TransportError(f"watch {path}: {exc!r}") from exc

    async def _chunks(self, response: httpx.Response, path: str) -> AsyncIterator[bytes]:
        try:
            async for chunk in response.aiter_bytes():
                yield chunk
        except httpx.TransportError as exc:
            raise TransportError(f"watch {path}: {exc!r}") from exc

    async def _json_events(self, response: httpx.Response, path: str) -> AsyncIterator[WatchEvent]:
        buffer = b""
        async for chunk in self._chunks(response, path):
            buffer += chunk
            # One JSON document per line (compact JSON never holds a raw newline).
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                if line.strip():
                    yield self._json_event(line)
        if buffer.strip():
            yield self._json_event(buffer)

    @staticmethod
    def _json_event(line: bytes) -> WatchEvent:
        try:
            doc = json.loads(line)
            return WatchEvent(str(doc["type"]), doc["object"])
        except (ValueError, KeyError, TypeError) as exc:
            raise DecodeError(f"bad watch event: {exc}") from None

    async def _protobuf_events(self, response: httpx.Response, path: str) -> AsyncIterator[WatchEvent]:
        # late import: the Protobuf codec (~30 ms) only for a Protobuf watch stream
        from runtime.machinery.serializer import protobuf

        buffer = b""
        async for chunk in self._chunks(response, path):
            buffer += chunk
            while len(buffer) >= _FRAME.size:
                (size,) = _FRAME.unpack_from(buffer)
                end = _FRAME.size + size
                if len(buffer) < end:
                    break
                frame, buffer = buffer[:end], buffer[end:]
                try:
                    ((event_type, obj),) = protobuf.decode_watch_frames(frame)
                except protobuf.ProtobufError as exc:
                    raise DecodeError(f"bad watch frame: {exc}") from None
                yield WatchEvent(event_type, obj)
        if buffer:
            raise DecodeError("watch stream ended inside a frame")

    async def _create(self, rt: ResourceType, namespace: str, obj: dict[str, Any],
                      opts: WriteOptions) -> dict[str, Any]:
        body, content_type = self._body(obj)
        return await self._request("POST", self._path(rt, namespace), params=self._write_params(opts),
                                   body=body, content_type=content_type)

    async def _update(self, rt: ResourceType, namespace: str, name: str, obj: dict[str, Any],
                      opts: WriteOptions, subresource: str) -> dict[str, Any]:
        body, content_type = self._body(obj)
        return await self._request("PUT", self._path(rt, namespace, name, subresource),
                                   params=self._write_params(opts), body=body, content_type=content_type)

    async def _patch(self, rt: ResourceType, namespace: str, name: str, patch_type: str, patch: Any,
                     opts: WriteOptions, subresource: str) -> dict[str, Any]:
        body = json.dumps(patch, separators=(",", ":")).encode()
        return await self._request("PATCH", self._path(rt, namespace, name, subresource),
                                   params=self._write_params(opts), body=body, content_type=patch_type)

    @staticmethod
    def _delete_body(opts: ParsedDeleteOptions) -> bytes:
        doc: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if opts.dry_run:
            doc["dryRun"] = ["All"]
        if opts.grace_period_seconds is not None:
            doc["gracePeriodSeconds"] = opts.grace_period_seconds
        if opts.preconditions:
            doc["preconditions"] = opts.preconditions
        if opts.propagation_policy is not None:
            doc["propagationPolicy"] = opts.propagation_policy
        return json.dumps(doc).encode()

    async def _delete(self, rt: ResourceType, namespace: str, name: str, opts: ParsedDeleteOptions) -> dict[str, Any]:
        return await self._request("DELETE", self._path(rt, namespace, name), body=self._delete_body(opts),
                                   content_type="application/json")

    async def _delete_collection(self, rt: ResourceType, namespace: str, list_opts: ListOptions,
                                 opts: ParsedDeleteOptions) -> dict[str, Any]:
        return await self._request("DELETE", self._path(rt, namespace), params=self._list_params(list_opts),
                                   body=self._delete_body(opts), content_type="application/json")


async def discover_domain(config: KubeConfig, *, timeout: float = 30.0,
                          transport: httpx.AsyncBaseTransport | None = None) -> str:
    """The server's API domain, read from `/apis` (the group `rbac.authorization.<domain>`).

    Raises the Status error of a failed request, `TransportError` without an
    answer, `DecodeError` when no RBAC group is served.
    """
    async with http_client(config, "miniplane-client/0.1", timeout, transport) as http:
        try:
            response = await http.get("/apis", headers={"Accept": "application/json"})
        except httpx.TransportError as exc:
            raise TransportError(f"GET /apis: {exc!r}") from exc
        if response.status_code >= 400:
            raise _status_error(response.status_code, None, response.text)
        try:
            groups = [g.get("name", "") for g in response.json().get("groups") or []]
        except ValueError as exc:
            raise DecodeError(f"bad /apis answer: {exc}") from None
    for group in groups:
        if group.startswith("rbac.authorization."):
            return group[len("rbac.authorization."):]
    raise DecodeError("the server serves no rbac.authorization group")


@asynccontextmanager
async def open_http_client(config: KubeConfig, *, domain: str | None = None, protobuf: bool = False,
                           field_manager: str = "", user_agent: str = "miniplane-client/0.1",
                           timeout: float = 30.0,
                           transport: httpx.AsyncBaseTransport | None = None) -> AsyncIterator[HTTPClient]:
    """An `HTTPClient` for `config`, closed on exit; the API domain is asked from the server when not given."""
    if domain is None:
        domain = await discover_domain(config, timeout=timeout, transport=transport)
    client = HTTPClient(config, scheme=Scheme(domain), protobuf=protobuf, field_manager=field_manager,
                        user_agent=user_agent, timeout=timeout, transport=transport)
    try:
        yield client
    finally:
        await client.aclose()
