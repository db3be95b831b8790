"""The Quart-trio application: every path of the spec, HTTP only.

A handler classifies the request (`requestinfo`), authenticates it
(`authn`), negotiates the media types (`negotiation`), decodes the body
(`codecs`), then calls the registry, which authorizes, validates and stores.
Every non-2xx answer is a `Status` in the negotiated media type.
"""

from __future__ import annotations

import gzip
import json
import logging
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable

from quart import Response, request
from quart_trio import QuartTrio

from api import discovery, openapi
from api.codecs import decode_body, encode, encode_list_chunks, encode_stored
from api.negotiation import Choice, negotiate, request_codec
from api.requestinfo import RequestInfo, request_info
from api.tables import partial_object_metadata, table
from runtime import errors
from runtime.codec import protobuf
from runtime.objects import StoredObject, dumps_json
from runtime.rbac import non_resource_attributes
from runtime.rbac.user import UserInfo
from runtime.registry import Registry
from runtime.registry.decode import FIELD_VALIDATION_LEVELS, Body
from runtime.registry.options import DeleteOptions, ListOptions, WriteOptions
from runtime.registry.registry import DeleteResult, ListResult
from runtime.scheme import ResourceType

__all__ = ["ServerState", "create_app"]

log = logging.getLogger(__name__)

_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


@dataclass
class ServerState:
    """What the HTTP layer needs: the registry, the authenticator and the server options."""

    registry: Registry
    authenticator: Any
    version: str = "0.1.0"
    max_body_bytes: int = 3 * 1024 * 1024
    min_compress_bytes: int = 0
    server_address: str = ""
    feature_gates: dict[str, bool] = field(default_factory=dict)

    @property
    def scheme(self):
        return self.registry.scheme

    def gate(self, name: str) -> bool:
        return self.feature_gates.get(name, False)


def _truthy(value: str | None) -> bool:
    return value is not None and value.lower() in ("1", "true", "")


def _int_param(args: Any, name: str) -> int | None:
    value = args.get(name)
    if value in (None, ""):
        return None
    try:
        return int(value)
    except ValueError:
        raise errors.BadRequest(f'invalid value "{value}" for query parameter {name}: must be an integer') from None


def _dry_run(args: Any) -> bool:
    if "dryRun" not in args:
        return False
    for value in args.getlist("dryRun"):
        if value not in ("", "All"):
            raise errors.BadRequest(f'Invalid dryRun value "{value}": supported values: "All"')
    return True


def write_options(args: Any, user_agent: str) -> WriteOptions:
    level = args.get("fieldValidation") or "Warn"
    if level not in FIELD_VALIDATION_LEVELS:
        raise errors.BadRequest(f'fieldValidation: Unsupported value: "{level}": supported values: '
                                '"Ignore", "Strict", "Warn"')
    manager = args.get("fieldManager", "")
    if len(manager) > 128:
        raise errors.BadRequest("fieldManager: Too long: may not be more than 128 bytes")
    return WriteOptions(dry_run=_dry_run(args), field_manager=manager, field_validation=level,
                        force=_truthy(args.get("force")) if "force" in args else False, user_agent=user_agent)


def list_options(args: Any) -> ListOptions:
    send_initial = args.get("sendInitialEvents")
    return ListOptions(
        label_selector=args.get("labelSelector", ""), field_selector=args.get("fieldSelector", ""),
        limit=_int_param(args, "limit") or 0, continue_token=args.get("continue", ""),
        resource_version=args.get("resourceVersion"), resource_version_match=args.get("resourceVersionMatch", ""),
        timeout_seconds=_int_param(args, "timeoutSeconds"),
        allow_watch_bookmarks=_truthy(args.get("allowWatchBookmarks")) if "allowWatchBookmarks" in args else False,
        send_initial_events=None if send_initial is None else _truthy(send_initial))


def delete_options(args: Any, body: Body | None) -> DeleteOptions:
    data: dict[str, Any] = {}
    if body is not None:
        if not isinstance(body.data, dict):
            raise errors.BadRequest("DeleteOptions must be an object")
        data = body.data
    def pick(name: str, parse: Callable[[str], Any]) -> Any:
        if data.get(name) is not None:
            return data[name]
        value = args.get(name)
        return None if value is None else parse(value)
    dry = bool(data.get("dryRun")) or _dry_run(args)
    if data.get("dryRun") and any(v != "All" for v in data["dryRun"]):
        raise errors.BadRequest(f'Invalid dryRun value "{data["dryRun"]}": supported values: "All"')
    grace = pick("gracePeriodSeconds", int)
    return DeleteOptions(
        dry_run=dry, grace_period_seconds=grace, preconditions=data.get("preconditions"),
        orphan_dependents=pick("orphanDependents", _truthy), propagation_policy=pick("propagationPolicy", str),
        ignore_store_read_error=bool(pick("ignoreStoreReadErrorWithClusterBreakingPotential", _truthy)))


def create_app(state: ServerState) -> QuartTrio:
    """The ASGI app serving `state.registry`."""
    app = QuartTrio(__name__)
    app.config["MAX_CONTENT_LENGTH"] = None
    app.config["RESPONSE_TIMEOUT"] = None
    app.config["BODY_TIMEOUT"] = 60
    handler = Handler(state)
    app.add_url_rule("/", "root", handler.handle, methods=_METHODS, defaults={"path": ""})
    app.add_url_rule("/<path:path>", "all", handler.handle, methods=_METHODS)
    return app


class Handler:
    def __init__(self, state: ServerState) -> None:
        self.state = state
        self.scheme = state.scheme
        self.registry = state.registry
        self.domain = self.scheme.domain
        self.meta_api_version = "meta.k8s.io/v1"
        self._openapi_cache: dict[str, bytes] = {}

    # ---- plumbing ------------------------------------------------------------------------------

    def _choice(self, **kw: Any) -> Choice:
        return negotiate(request.headers.get("Accept"), domain=self.domain,
                         cbor=self.state.gate("CBORServingAndStorage"), **kw)

    def _respond(self, code: int, doc: dict[str, Any] | bytes, choice: Choice, *, warnings: list[str] = (),
                 compressible: bool = False) -> Response:
        pretty = _truthy(request.args.get("pretty")) if "pretty" in request.args else False
        body = doc if isinstance(doc, bytes) else encode(choice.codec, doc, pretty=pretty)
        headers = {"Content-Type": choice.media_type, "Cache-Control": "no-cache, private"}
        if compressible:
            body = self._maybe_gzip(body, headers)
        response = Response(body, status=code, headers=headers)
        for w in warnings:
            response.headers.add("Warning", f'299 - {json.dumps(w)}')
        return response

    def _maybe_gzip(self, body: bytes, headers: dict[str, str]) -> bytes:
        if (self.state.gate("APIResponseCompression") and "gzip" in request.headers.get("Accept-Encoding", "")
                and len(body) >= self.state.min_compress_bytes):
            headers["Content-Encoding"] = "gzip"
            headers["Vary"] = "Accept-Encoding"
            return gzip.compress(body, compresslevel=1)
        return body

    def _status(self, exc: errors.StatusError) -> Response:
        try:
            choice = self._choice(allowed_as=("", "Table", "PartialObjectMetadata", "PartialObjectMetadataList",
                                              "APIGroupDiscoveryList"))
            if choice.as_kind:
                choice = Choice(choice.codec, choice.media_type)
        except errors.StatusError:
            choice = Choice("json", "application/json")
        response = self._respond(exc.code, exc.status(), choice)
        if exc.retry_after is not None:
            response.headers["Retry-After"] = str(exc.retry_after)
        for key, value in exc.headers.items():
            response.headers[key] = value
        return response

    async def _body(self, *, allow_empty: bool = False, codec: str | None = None) -> Body | None:
        limit = self.state.max_body_bytes
        chunks: list[bytes] = []
        size = 0
        # Read to the end even past the limit (discarding), so the client gets its 413.
        async for chunk in request.body:
            size += len(chunk)
            if size <= limit:
                chunks.append(chunk)
        if size > limit:
            raise errors.RequestEntityTooLarge("the request is too large")
        raw = b"".join(chunks)
        if not raw.strip():
            if allow_empty:
                return None
            raise errors.BadRequest("the body of the request was empty")
        if codec is None:
            codec = request_codec(request.headers.get("Content-Type"), domain=self.domain,
                                  cbor=self.state.gate("CBORServingAndStorage"))
        return decode_body(codec, raw)

    def _authenticate(self) -> UserInfo:
        from api.authn import peer_certificate_der
        user = self.state.authenticator.authenticate(request.headers, peer_certificate_der(request.scope))
        if any(h.lower().startswith("impersonate-") for h in request.headers.keys()):
            from api.authn import impersonate
            user = impersonate(user, request.headers, self._allowed, domain=self.domain)
        return user

    def _allowed(self, attrs: Any) -> bool:
        return self.registry.authorizer.authorize(attrs).allowed

    # ---- entry ---------------------------------------------------------------------------------

    async def handle(self, path: str) -> Response:
        try:
            user = self._authenticate()
            info = request_info(request.method, "/" + path, request.args)
            if not info.is_resource:
                return await self.non_resource(info, user)
            return await self.resource(info, user)
        except errors.StatusError as exc:
            return self._status(exc)
        except Exception as exc:  # the answer is still a Status
            log.exception("internal error serving %s %s", request.method, request.path)
            return self._status(errors.InternalError(f"an error on the server ({exc}) has prevented the "
                                                     "request from succeeding"))

    # ---- non-resource paths ---------------------------------------------------------------------

    async def non_resource(self, info: RequestInfo, user: UserInfo) -> Response:
        path = info.path.rstrip("/") or "/"
        self.registry.authorize(non_resource_attributes(user, info.verb, path))
        json_choice = Choice("json", "application/json")
        if path in ("/healthz", "/livez", "/readyz"):
            return Response(b"ok", status=200, headers={"Content-Type": "text/plain; charset=utf-8"})
        if path == "/version":
            return self._respond(200, discovery.version_info(self.state.version), json_choice)
        if path in ("/api", "/apis"):
            choice = self._choice(allowed_as=("", "APIGroupDiscoveryList"))
            if choice.as_kind == "APIGroupDiscoveryList":
                doc = discovery.aggregated_discovery(self.scheme, core=path == "/api", version=choice.version)
                choice = Choice(choice.codec if choice.codec != "protobuf" else "json",
                                f"application/json;g=apidiscovery.k8s.io;v={choice.version};as=APIGroupDiscoveryList")
                response = self._respond(200, doc, choice)
                response.headers["Content-Type"] = choice.media_type
                return response
            doc = discovery.api_versions(self.state.server_address) if path == "/api" else \
                discovery.api_group_list(self.scheme)
            return self._respond(200, doc, Choice("json", "application/json"))
        parts = path.strip("/").split("/")
        if parts[0] == "api" and len(parts) == 2:
            doc = discovery.api_resource_list(self.scheme, parts[1])
            if doc is not None:
                return self._respond(200, doc, json_choice)
        if parts[0] == "apis" and len(parts) in (2, 3):
            doc = discovery.api_group(self.scheme, parts[1]) if len(parts) == 2 else \
                discovery.api_resource_list(self.scheme, f"{parts[1]}/{parts[2]}")
            if doc is not None:
                return self._respond(200, doc, json_choice)
        if path == "/openapi/v3":
            return self._respond(200, openapi.openapi_v3_index(self.scheme), json_choice)
        if path.startswith("/openapi/v3/"):
            gv = path[len("/openapi/v3/"):]
            gv = gv[len("api/"):] if gv.startswith("api/") else gv[len("apis/"):] if gv.startswith("apis/") else None
            doc_bytes = openapi.openapi_v3_document_bytes(self.scheme, gv) if gv else None
            if doc_bytes is not None:
                response = Response(doc_bytes, status=200, headers={"Content-Type": "application/json"})
                if request.args.get("hash"):
                    response.headers["Cache-Control"] = "public, immutable"
                response.headers["Etag"] = '"' + openapi.openapi_v3_hash(doc_bytes) + '"'
                return response
        raise errors.NotFound("the server could not find the requested resource")

    # ---- resources -----------------------------------------------------------------------------

    def _resource_type(self, info: RequestInfo) -> ResourceType:
        rt = self.scheme.by_resource(info.group, info.version, info.resource)
        if rt is None or (info.subresource and info.subresource not in rt.info.subresources):
            raise errors.NotFound("the server could not find the requested resource")
        if info.namespace and not rt.namespaced and rt.kind != "Namespace":
            raise errors.NotFound("the server could not find the requested resource")
        return rt

    async def resource(self, info: RequestInfo, user: UserInfo) -> Response:
        rt = self._resource_type(info)
        namespace = info.namespace if rt.namespaced else ""
        if rt.namespaced and not namespace and info.verb not in ("list", "watch"):
            raise errors.NotFound("the server could not find the requested resource")
        name = info.name
        verb = info.verb
        ua = request.headers.get("User-Agent", "")
        args = request.args
        if rt.virtual:
            if verb != "create":
                raise errors.MethodNotAllowed(f"the server does not allow this method on the requested resource")
            choice = self._choice(allowed_as=("",))
            result = await self.registry.review(user, rt, namespace, await self._body(), write_options(args, ua))
            return self._respond(201, result.obj.obj, choice, warnings=result.warnings)
        if verb == "get":
            choice = self._choice()
            obj = await self.registry.get(user, rt, namespace, name, resource_version=args.get("resourceVersion"),
                                          subresource=info.subresource)
            return self._object_response(200, obj, choice, rt, compressible=True)
        if verb == "list":
            choice = self._choice()
            listed = await self.registry.list(user, rt, namespace, list_options(args))
            return self._list_response(listed, choice, rt)
        if verb == "watch":
            choice = self._choice()
            stream = await self.registry.open_watch(user, rt, namespace, list_options(args))
            return self._watch_response(stream, choice, rt)
        if verb == "create":
            if name:
                raise errors.MethodNotAllowed("the server does not allow this method on the requested resource")
            choice = self._choice(allowed_as=("",))
            result = await self.registry.create(user, rt, namespace, await self._body(), write_options(args, ua))
            return self._object_response(201, result.obj, choice, rt, warnings=result.warnings)
        if verb == "update":
            choice = self._choice(allowed_as=("",))
            result = await self.registry.update(user, rt, namespace, name, await self._body(),
                                                write_options(args, ua), subresource=info.subresource)
            return self._object_response(201 if result.created else 200, result.obj, choice, rt,
                                         warnings=result.warnings)
        if verb == "patch":
            choice = self._choice(allowed_as=("",))
            patch_type = (request.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            from runtime.registry.patching import PATCH_TYPES
            if patch_type not in PATCH_TYPES:
                raise errors.UnsupportedMediaType(
                    f'the body of the request was in an unknown format - accepted media types include: '
                    f'{", ".join(PATCH_TYPES)}')
            if patch_type == "application/apply-patch+cbor" and not self.state.gate("CBORServingAndStorage"):
                raise errors.UnsupportedMediaType("application/apply-patch+cbor requires the "
                                                  "CBORServingAndStorage feature gate")
            codec = {"application/apply-patch+yaml": "yaml", "application/apply-patch+cbor": "cbor"}.get(
                patch_type, "json")
            body = await self._body(codec=codec)
            result = await self.registry.patch(user, rt, namespace, name, patch_type, body,
                                               write_options(args, ua), subresource=info.subresource)
            return self._object_response(201 if result.created else 200, result.obj, choice, rt,
                                         warnings=result.warnings)
        if verb == "delete":
            choice = self._choice(allowed_as=("",))
            body = await self._body(allow_empty=True)
            deleted = await self.registry.delete(user, rt, namespace, name, delete_options(args, body))
            return self._delete_response(deleted, choice, rt)
        if verb == "deletecollection":
            choice = self._choice(allowed_as=("",))
            body = await self._body(allow_empty=True)
            status = await self.registry.delete_collection(user, rt, namespace, list_options(args),
                                                           delete_options(args, body))
            return self._respond(200, status, choice)
        raise errors.MethodNotAllowed("the server does not allow this method on the requested resource")

    # ---- answers -------------------------------------------------------------------------------

    def _meta_version(self, choice: Choice) -> str:
        return f"{choice.group}/{choice.version}"

    def _object_response(self, code: int, obj: StoredObject, choice: Choice, rt: ResourceType, *,
                         warnings: list[str] = (), compressible: bool = False) -> Response:
        if choice.as_kind == "Table":
            doc = table(rt.kind, [obj], meta_api_version=self._meta_version(choice),
                        resource_version=obj.obj["metadata"].get("resourceVersion", ""),
                        include_object=request.args.get("includeObject", "Metadata"))
            return self._respond(code, doc, choice, warnings=warnings, compressible=compressible)
        if choice.as_kind in ("PartialObjectMetadata", "PartialObjectMetadataList"):
            if choice.as_kind != "PartialObjectMetadata":
                raise errors.NotAcceptable("only the following media types are accepted: application/json")
            doc = partial_object_metadata(obj.obj, self._meta_version(choice))
            return self._respond(code, doc, choice, warnings=warnings, compressible=compressible)
        pretty = _truthy(request.args.get("pretty")) if "pretty" in request.args else False
        return self._respond(code, encode_stored(choice.codec, obj, pretty=pretty), choice, warnings=warnings,
                             compressible=compressible)

    def _delete_response(self, deleted: DeleteResult, choice: Choice, rt: ResourceType) -> Response:
        if isinstance(deleted.body, StoredObject):
            return self._object_response(deleted.code, deleted.body, choice, rt, warnings=deleted.warnings)
        return self._respond(deleted.code, deleted.body, choice, warnings=deleted.warnings)

    def _list_response(self, listed: ListResult, choice: Choice, rt: ResourceType) -> Response:
        meta: dict[str, Any] = {"resourceVersion": str(listed.resource_version)}
        if listed.continue_token:
            meta["continue"] = listed.continue_token
        if listed.remaining is not None:
            meta["remainingItemCount"] = listed.remaining
        if choice.as_kind == "Table":
            doc = table(rt.kind, listed.items, meta_api_version=self._meta_version(choice),
                        resource_version=meta["resourceVersion"], continue_token=listed.continue_token,
                        remaining=listed.remaining, include_object=request.args.get("includeObject", "Metadata"))
            return self._respond(200, doc, choice, compressible=True)
        if choice.as_kind in ("PartialObjectMetadata", "PartialObjectMetadataList"):
            if choice.as_kind != "PartialObjectMetadataList":
                raise errors.NotAcceptable("only the following media types are accepted: application/json")
            mv = self._meta_version(choice)
            doc = {"kind": "PartialObjectMetadataList", "apiVersion": mv, "metadata": meta,
                   "items": [partial_object_metadata(o.obj, mv) for o in listed.items]}
            return self._respond(200, doc, choice, compressible=True)
        header = {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta}
        pretty = _truthy(request.args.get("pretty")) if "pretty" in request.args else False
        if pretty:
            return self._respond(200, dict(header, items=[o.obj for o in listed.items]), choice, compressible=True)
        body = b"".join(encode_list_chunks(choice.codec, header, listed.items))
        return self._respond(200, body, choice, compressible=True)

    def _watch_response(self, stream: Any, choice: Choice, rt: ResourceType) -> Response:
        codec = choice.codec
        meta_version = self._meta_version(choice)
        as_kind = choice.as_kind
        include = request.args.get("includeObject", "Metadata")
        first = [True]

        def object_doc(payload: Any) -> dict[str, Any] | bytes:
            if isinstance(payload, dict):
                return payload
            if as_kind == "Table":
                doc = table(rt.kind, [payload], meta_api_version=meta_version, include_object=include,
                            with_columns=first[0])
                first[0] = False
                return doc
            if as_kind:
                return partial_object_metadata(payload.obj, meta_version)
            return payload.json_bytes() if codec == "json" else payload.obj

        async def events() -> AsyncIterator[bytes]:
            async for event_type, payload in stream:
                doc = object_doc(payload)
                if codec == "json":
                    body = doc if isinstance(doc, bytes) else dumps_json(doc)
                    yield b'{"type":"' + event_type.encode() + b'","object":' + body + b"}\n"
                elif codec == "protobuf":
                    yield protobuf.encode_watch_event(event_type, doc if isinstance(doc, dict) else payload.obj)
                elif codec == "cbor":
                    yield encode("cbor", {"type": event_type, "object": doc if isinstance(doc, dict)
                                          else payload.obj})[3:]
                else:
                    yield b"---\n" + encode("yaml", {"type": event_type,
                                                     "object": doc if isinstance(doc, dict) else payload.obj})

        media = choice.media_type
        if codec == "protobuf":
            media += ";stream=watch"
        elif codec == "cbor":
            media = "application/cbor-seq"
        response = Response(events(), status=200, headers={"Content-Type": media,
                                                             "Cache-Control": "no-cache, private"})
        response.timeout = None
        return response
