"""The Quart-trio application: every path of the spec, HTTP only.

A handler classifies the request (`requestinfo`), authenticates it
(`authn`), negotiates the media types (`negotiation`), decodes the body
(`codecs`), then calls the registry, which authorizes, validates and stores.
Every non-2xx answer is a `Status` in the negotiated media type.
"""

from __future__ import annotations

import gzip
import itertools
import json
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from typing import Any, AsyncIterator, Callable

import trio
from quart import Response, request
from quart_trio import QuartTrio

from api import discovery, openapi
from api.codecs import coalesce, decode_body, encode, encode_list_chunks, encode_stored, gzip_chunks
from api.health import health_answer
from api.negotiation import Choice, negotiate, parse_accept, request_codec, wants_pretty
from api.requestinfo import RequestInfo, request_info
from api.tables import include_object_option, partial_object_metadata, partial_object_metadata_list, table
from runtime import errors
from runtime.codec import cbor, protobuf
from runtime.objects import StoredObject, dumps_json
from runtime.rbac import non_resource_attributes, resource_attributes
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
    #: Seconds a request body may take to arrive (a client that stalls mid-body gets a 504, then is cut off).
    body_timeout: float = 60.0
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


#: The options kind each write method's query parameters decode into (named by its 422s).
_OPTIONS_KIND = {"POST": "CreateOptions", "PUT": "UpdateOptions", "PATCH": "PatchOptions",
                 "DELETE": "DeleteOptions"}


def _options_invalid(kind: str, field_path: str, reason: str, message: str) -> errors.Invalid:
    """apimachinery's 422 for bad request options: `CreateOptions.meta.k8s.io "" is invalid: ...`."""
    return errors.Invalid(f'{kind}.meta.k8s.io "" is invalid: {field_path}: {message}', group="meta.k8s.io",
                          kind=kind, causes=[errors.Cause(reason, message, field_path)])


def _options_kind(kind: str | None) -> str:
    if kind is not None:
        return kind
    from quart import has_request_context
    return _OPTIONS_KIND.get(request.method, "CreateOptions") if has_request_context() else "CreateOptions"


def _go_bool(value: str) -> bool:
    # Kubernetes' query-parameter conversion: anything but "0" or "false" is true (`?force` too).
    return value != "0" and value.lower() != "false"


def _dry_run(values: Sequence[str], kind: str) -> bool:
    """The dryRun values (`?dryRun` is [""]): only "All" (or bare) is known.

    Others are 400 BadRequest, as the issue asks; the message keeps Kubernetes' words
    (Kubernetes itself answers 422 Invalid here).
    """
    if any(v not in ("", "All") for v in values):
        listed = ", ".join(json.dumps(v) for v in values)
        message = f'Unsupported value: []string{{{listed}}}: supported values: "All"'
        raise errors.BadRequest(f'{kind}.meta.k8s.io "" is invalid: dryRun: {message}',
                                causes=[errors.Cause("FieldValueNotSupported", message, "dryRun")])
    return bool(values)


def write_options(args: Any, user_agent: str, *, kind: str | None = None) -> WriteOptions:
    """Create, update and patch options from the query (dryRun, fieldManager, fieldValidation, force).

    `kind` names the options in a 422 (CreateOptions, UpdateOptions,
    PatchOptions); by default it follows the request's method. Raises BadRequest
    for an unknown dryRun value (as the issue asks), Invalid (422) for an unknown
    fieldValidation value and for a fieldManager over 128 bytes or with
    unprintable characters, as apimachinery does.
    """
    kind = _options_kind(kind)
    level = args.get("fieldValidation") or "Warn"
    if level not in FIELD_VALIDATION_LEVELS:
        raise _options_invalid(kind, "fieldValidation", "FieldValueNotSupported",
                               f'Unsupported value: {json.dumps(level)}: supported values: "", "Ignore", '
                               '"Strict", "Warn"')
    manager = args.get("fieldManager", "")
    if len(manager.encode()) > 128:
        raise _options_invalid(kind, "fieldManager", "FieldValueTooLong",
                               "Too long: may not be more than 128 bytes")
    for i, ch in enumerate(manager):
        if not ch.isprintable():
            raise _options_invalid(kind, "fieldManager", "FieldValueInvalid",
                                   f"Invalid value: {json.dumps(manager)}: invalid character U+{ord(ch):04X} "
                                   f"(at position {i})")
    return WriteOptions(dry_run=_dry_run(args.getlist("dryRun"), kind), field_manager=manager,
                        field_validation=level, force=_go_bool(args.get("force")) if "force" in args else False,
                        user_agent=user_agent)


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
    """A DeleteOptions body merged with the query parameters of the same names; the body wins per field.

    Raises BadRequest for a body that is not a DeleteOptions (wrong kind, wrong
    type of a field), a query value that does not parse, or an unknown dryRun value.
    """
    from pydantic import ValidationError
    from runtime.models.meta import DeleteOptions as DeleteOptionsModel
    from runtime.registry.decode import type_error_message
    data: dict[str, Any] = {}
    if body is not None:
        if not isinstance(body.data, dict):
            raise errors.BadRequest("json: cannot unmarshal array into Go value of type v1.DeleteOptions"
                                    if isinstance(body.data, list) else "DeleteOptions must be an object")
        if body.data.get("kind") not in (None, "", "DeleteOptions"):
            raise errors.BadRequest(f"the kind in the data ({body.data['kind']}) does not match the expected "
                                    "kind (DeleteOptions)")
        try:
            DeleteOptionsModel.model_validate(body.data)
        except ValidationError as exc:
            raise errors.BadRequest(type_error_message(DeleteOptionsModel, exc.errors()[0])) from None
        data = body.data

    def pick(name: str, parse: Callable[[str], Any]) -> Any:
        if data.get(name) is not None:
            return data[name]
        value = args.get(name)
        return None if value is None else parse(value)

    def parse_int(value: str) -> int:
        try:
            return int(value)
        except ValueError:
            raise errors.BadRequest(f'strconv.ParseInt: parsing {json.dumps(value)}: invalid syntax') from None

    dry = _dry_run(data["dryRun"] if data.get("dryRun") is not None else args.getlist("dryRun"), "DeleteOptions")
    return DeleteOptions(
        dry_run=dry, grace_period_seconds=pick("gracePeriodSeconds", parse_int),
        preconditions=data.get("preconditions"), orphan_dependents=pick("orphanDependents", _go_bool),
        propagation_policy=pick("propagationPolicy", str),
        ignore_store_read_error=bool(pick("ignoreStoreReadErrorWithClusterBreakingPotential", _go_bool)))


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

    # ---- plumbing ------------------------------------------------------------------------------

    def _choice(self, **kw: Any) -> Choice:
        return negotiate(request.headers.get("Accept"), domain=self.domain,
                         cbor=self.state.gate("CBORServingAndStorage"), **kw)

    def _pretty(self) -> bool:
        return wants_pretty(request.args.get("pretty"), request.headers.get("User-Agent", ""))

    def _gzip_wanted(self) -> bool:
        """Compression asked (`Accept-Encoding: gzip`, q not 0) and allowed (gate APIResponseCompression)."""
        if not self.state.gate("APIResponseCompression"):
            return False
        for part in request.headers.get("Accept-Encoding", "").split(","):
            coding, _, params = part.strip().partition(";")
            if coding.strip().lower() == "gzip":
                q = params.strip().removeprefix("q=").strip() if params.strip().startswith("q=") else "1"
                try:
                    return float(q) > 0
                except ValueError:
                    return False
        return False

    def _respond(self, code: int, doc: dict[str, Any] | bytes | Iterator[bytes], choice: Choice, *,
                 warnings: list[str] = (), compressible: bool = False) -> Response:
        """The answer: a document (encoded in `choice`), its bytes, or a chunk iterator streamed as written.

        `compressible` (get and list) answers are gzipped when the client
        accepts it and the body reaches `min_compress_bytes`; a stream is
        compressed incrementally, the decision taken on its first bytes.
        """
        headers = {"Content-Type": choice.media_type, "Cache-Control": "no-cache, private"}
        if isinstance(doc, dict):
            doc = encode(choice.codec, doc, pretty=choice.codec == "json" and self._pretty())
        if isinstance(doc, bytes):
            body: bytes | AsyncIterator[bytes] = self._maybe_gzip(doc, headers) if compressible else doc
        else:
            body = self._stream_body(doc, headers, compressible)
        response = Response(body, status=code, headers=headers)
        if not isinstance(body, bytes):
            response.timeout = None
        for w in warnings:
            response.headers.add("Warning", f'299 - {json.dumps(w)}')
        return response

    def _stream_body(self, chunks: Iterator[bytes], headers: dict[str, str], compressible: bool
                     ) -> AsyncIterator[bytes]:
        """An async body over `chunks`, regrouped into writes of `CHUNK_BYTES`, gzipped when wanted.

        The first writes are produced here, before the answer starts, so an
        encoding error still becomes a Status, and enough is read to compare
        with `min_compress_bytes`.
        """
        grouped = coalesce(chunks)
        head: list[bytes] = []
        held = 0
        for chunk in grouped:
            head.append(chunk)
            held += len(chunk)
            if held >= self.state.min_compress_bytes:
                break
        stream: Iterator[bytes] = itertools.chain(head, grouped)
        if compressible and self._gzip_wanted() and held >= self.state.min_compress_bytes:
            headers["Content-Encoding"] = "gzip"
            headers["Vary"] = "Accept-Encoding"
            stream = gzip_chunks(stream)

        async def body() -> AsyncIterator[bytes]:
            for chunk in stream:  # each write to the client is a checkpoint
                if chunk:
                    yield chunk
        return body()

    def _maybe_gzip(self, body: bytes, headers: dict[str, str]) -> bytes:
        if self._gzip_wanted() and len(body) >= self.state.min_compress_bytes:
            headers["Content-Encoding"] = "gzip"
            headers["Vary"] = "Accept-Encoding"
            return gzip.compress(body, compresslevel=1)
        return body

    def _status(self, exc: errors.StatusError) -> Response:
        """A Status answer in the negotiated codec (JSON when nothing fits; conversions do not apply)."""
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

    def _openapi_answer(self, data: bytes, content_type: str, *, immutable: bool = False) -> Response:
        """OpenAPI bytes with their ETag; 304 when If-None-Match names it; hash-pinned URLs cached a year."""
        etag = openapi.content_etag(data)
        headers = {"Content-Type": content_type, "Etag": etag, "Vary": "Accept"}
        if immutable:
            headers["Cache-Control"] = "public, immutable"
            headers["Expires"] = format_datetime(datetime.now(timezone.utc) + timedelta(days=365), usegmt=True)
        else:
            headers["Cache-Control"] = "no-cache, private"
        if etag in [t.strip() for t in request.headers.get("If-None-Match", "").split(",")]:
            return Response(b"", status=304, headers=headers)
        return Response(data, status=200, headers=headers)

    async def _body(self, *, allow_empty: bool = False, codec: str | None = None) -> Body | None:
        limit = self.state.max_body_bytes
        chunks: list[bytes] = []
        size = 0
        # Read to the end even past the limit (discarding), so the client gets its 413; but not forever.
        with trio.move_on_after(self.state.body_timeout) as reading:
            async for chunk in request.body:
                size += len(chunk)
                if size <= limit:
                    chunks.append(chunk)
        if reading.cancelled_caught:
            raise errors.Timeout(f"Timeout: the request body did not arrive within {self.state.body_timeout:g} s")
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
            user = impersonate(user, request.headers, self.registry.authorizer.authorize, domain=self.domain)
        return user

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
        # Authorized on the path as sent (rules list both `/version` and `/version/`), served without the slash.
        self.registry.authorize(non_resource_attributes(user, info.verb, info.path))
        path = info.path.rstrip("/") or "/"
        json_choice = Choice("json", "application/json")
        answer = health_answer(path, {k: request.args.getlist(k) for k in request.args.keys()})
        if answer is not None:
            return Response(answer[1], status=answer[0], headers={"Content-Type": "text/plain; charset=utf-8",
                                                                  "X-Content-Type-Options": "nosniff"})
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
        if path == "/openapi/v2":
            accept = request.headers.get("Accept") or "application/json"
            for r in parse_accept(accept):
                if r.type in openapi.V2_PROTOBUF_ACCEPT:
                    return self._openapi_answer(openapi.openapi_v2_protobuf(self.scheme),
                                                openapi.V2_PROTOBUF_CONTENT_TYPE)
                if r.type in ("application/json", "application/*", "*/*"):
                    return self._openapi_answer(openapi.openapi_v2_json(self.scheme), "application/json")
            raise errors.NotAcceptable("only the following media types are accepted: application/json, "
                                       + openapi.V2_PROTOBUF_ACCEPT[0])
        if path == "/openapi/v3" or path.startswith("/openapi/v3/"):
            accept = request.headers.get("Accept") or "application/json"
            if not any(r.type in ("application/json", "application/*", "*/*") for r in parse_accept(accept)):
                raise errors.NotAcceptable("only the following media types are accepted: application/json")
            if path == "/openapi/v3":
                return self._openapi_answer(dumps_json(openapi.openapi_v3_index(self.scheme)), "application/json")
            gv = path[len("/openapi/v3/"):]
            gv = gv[len("api/"):] if gv.startswith("api/") else gv[len("apis/"):] if gv.startswith("apis/") else None
            doc_bytes = openapi.openapi_v3_document_bytes(self.scheme, gv) if gv else None
            if doc_bytes is not None:
                asked = request.args.get("hash")
                digest = openapi.openapi_v3_hash(doc_bytes)
                if asked and asked != digest:  # a stale pinned URL: send the client to the current one
                    return Response(b"", status=301, headers={
                        "Location": f"/openapi/v3/{openapi.openapi_v3_path(gv)}?hash={digest}"})
                return self._openapi_answer(doc_bytes, "application/json", immutable=bool(asked))
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
        try:
            rt = self._resource_type(info)
        except errors.NotFound:
            # Authorization comes before routing (as Kubernetes' filter chain): only a caller
            # allowed to ask learns that a resource does not exist.
            self.registry.authorize(resource_attributes(
                user, info.verb, info.resource, api_group=info.group, api_version=info.version,
                namespace=info.namespace, name=info.name, subresource=info.subresource))
            raise
        namespace = info.namespace if rt.namespaced else ""
        name = info.name
        verb = info.verb
        # Kubernetes' routes: a namespaced kind's path across all namespaces serves only list and
        # watch of the collection (no item path: 404); a collection path takes no PUT or PATCH, and
        # a path that exists answers 405 to a method it does not serve.
        if rt.namespaced and not namespace and (name or verb not in ("list", "watch")):
            if name:
                raise errors.NotFound("the server could not find the requested resource")
            raise errors.MethodNotAllowed("the server does not allow this method on the requested resource")
        if verb in ("update", "patch") and not name:
            raise errors.MethodNotAllowed("the server does not allow this method on the requested resource")
        ua = request.headers.get("User-Agent", "")
        args = request.args
        if rt.virtual:
            if verb != "create":
                raise errors.MethodNotAllowed("the server does not allow this method on the requested resource")
            # No Table (reviews have no table convertor in Kubernetes); the metadata form as for any object.
            choice = self._choice(allowed_as=("", "PartialObjectMetadata", "PartialObjectMetadataList"))
            result = await self.registry.review(user, rt, namespace, await self._body(), write_options(args, ua))
            doc = result.obj.obj
            if choice.as_kind == "PartialObjectMetadataList":
                raise errors.NotAcceptable("you requested PartialObjectMetadataList, but the requested object is not "
                                           "a list")
            if choice.as_kind == "PartialObjectMetadata":
                doc = partial_object_metadata(doc, choice.meta_api_version)
            return self._respond(201, doc, choice, warnings=result.warnings)
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
            choice = self._choice(stream=True)
            opts = list_options(args)
            if name:  # a watch on an item path is a watch of the collection pinned to that name
                pinned = f"metadata.name={name}"
                opts = replace(opts, field_selector=f"{opts.field_selector},{pinned}" if opts.field_selector else pinned)
            stream = await self.registry.open_watch(user, rt, namespace, opts)
            return self._watch_response(stream, choice, rt)
        if verb == "create":
            if name:
                raise errors.MethodNotAllowed("the server does not allow this method on the requested resource")
            # Writes answer in any negotiated form, Table included, as Kubernetes' transformResponseObject.
            choice = self._choice()
            result = await self.registry.create(user, rt, namespace, await self._body(), write_options(args, ua))
            return self._object_response(201, result.obj, choice, rt, warnings=result.warnings)
        if verb == "update":
            choice = self._choice()
            result = await self.registry.update(user, rt, namespace, name, await self._body(),
                                                write_options(args, ua), subresource=info.subresource)
            return self._object_response(201 if result.created else 200, result.obj, choice, rt,
                                         warnings=result.warnings)
        if verb == "patch":
            choice = self._choice()
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
            choice = self._choice()
            body = await self._body(allow_empty=True)
            deleted = await self.registry.delete(user, rt, namespace, name, delete_options(args, body))
            return self._delete_response(deleted, choice, rt)
        if verb == "deletecollection":
            choice = self._choice()
            body = await self._body(allow_empty=True)
            status = await self.registry.delete_collection(user, rt, namespace, list_options(args),
                                                           delete_options(args, body))
            return self._respond(200, status, choice)
        raise errors.MethodNotAllowed("the server does not allow this method on the requested resource")

    # ---- answers -------------------------------------------------------------------------------

    def _without_protobuf(self, choice: Choice, api_version: str, kind: str, *, stream: bool = False) -> Choice:
        """`choice`, or the next acceptable plain answer when it is Protobuf and the kind has no Protobuf form.

        Kubernetes leaves Protobuf out of negotiation for such kinds, so
        `application/vnd.kubernetes.protobuf, application/json` gets JSON;
        Protobuf alone gets 406.
        """
        if choice.codec != "protobuf" or protobuf.supports(api_version, kind):
            return choice
        return self._choice(protobuf_ok=False, allowed_as=("",), stream=stream)

    def _object_response(self, code: int, obj: StoredObject, choice: Choice, rt: ResourceType, *,
                         warnings: list[str] = (), compressible: bool = False) -> Response:
        """One object, as itself, a one-row Table or a PartialObjectMetadata (406 if a list form was asked)."""
        if choice.as_kind == "Table":
            doc = table(rt.kind, [obj], meta_api_version=choice.meta_api_version,
                        resource_version=obj.obj["metadata"].get("resourceVersion", ""),
                        include_object=include_object_option(request.args.get("includeObject")))
            return self._respond(code, doc, choice, warnings=warnings, compressible=compressible)
        if choice.as_kind == "PartialObjectMetadataList":
            raise errors.NotAcceptable("you requested PartialObjectMetadataList, but the requested object is not "
                                       "a list")
        if choice.as_kind == "PartialObjectMetadata":
            doc = partial_object_metadata(obj.obj, choice.meta_api_version)
            return self._respond(code, doc, choice, warnings=warnings, compressible=compressible)
        choice = self._without_protobuf(choice, rt.api_version, rt.kind)
        pretty = choice.codec == "json" and self._pretty()
        return self._respond(code, encode_stored(choice.codec, obj, pretty=pretty), choice, warnings=warnings,
                             compressible=compressible)

    def _delete_response(self, deleted: DeleteResult, choice: Choice, rt: ResourceType) -> Response:
        if isinstance(deleted.body, StoredObject):
            return self._object_response(deleted.code, deleted.body, choice, rt, warnings=deleted.warnings)
        return self._respond(deleted.code, deleted.body, choice, warnings=deleted.warnings)

    def _list_response(self, listed: ListResult, choice: Choice, rt: ResourceType) -> Response:
        """A list, as itself, a Table or a PartialObjectMetadataList (406 if the one-object form was asked).

        JSON and Protobuf lists are streamed item by item (`encode_list_chunks`),
        gzipped on the fly when asked; pretty JSON and Tables are built whole.
        """
        meta: dict[str, Any] = {"resourceVersion": str(listed.resource_version)}
        if listed.continue_token:
            meta["continue"] = listed.continue_token
        if listed.remaining is not None:
            meta["remainingItemCount"] = listed.remaining
        if choice.as_kind == "Table":
            doc = table(rt.kind, listed.items, meta_api_version=choice.meta_api_version, list_meta=meta,
                        include_object=include_object_option(request.args.get("includeObject")))
            return self._respond(200, doc, choice, compressible=True)
        if choice.as_kind == "PartialObjectMetadata":
            raise errors.NotAcceptable("you requested PartialObjectMetadata, but the requested object is a list")
        if choice.as_kind == "PartialObjectMetadataList":
            mv = choice.meta_api_version
            header = partial_object_metadata_list(meta, mv)
            items: Sequence[Any] = _Mapped(listed.items, lambda o: partial_object_metadata(o.obj, mv))
        else:
            choice = self._without_protobuf(choice, rt.api_version, rt.list_kind)
            header = {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta}
            items = listed.items
        if choice.codec == "json" and self._pretty():
            return self._respond(200, dict(header, items=[i.obj if isinstance(i, StoredObject) else i
                                                          for i in items]), choice, compressible=True)
        return self._respond(200, encode_list_chunks(choice.codec, header, items), choice, compressible=True)

    def _watch_response(self, stream: Any, choice: Choice, rt: ResourceType) -> Response:
        """A watch: JSON lines, Protobuf length-prefixed frames, or a CBOR Sequence.

        Negotiated again for a stream (no YAML form; `application/cbor-seq`).
        With `as=Table` each event's object is a Table (columns on the first
        only); with `as=PartialObjectMetadata(List)` a PartialObjectMetadata.
        ERROR events carry the Status unchanged.
        """
        choice = self._choice(stream=True)
        if not choice.as_kind:
            choice = self._without_protobuf(choice, rt.api_version, rt.kind, stream=True)
        codec, as_kind, meta_version = choice.codec, choice.as_kind, choice.meta_api_version
        include = include_object_option(request.args.get("includeObject")) if as_kind == "Table" else ""
        first = [True]

        def converted(event_type: str, payload: Any) -> dict[str, Any] | StoredObject:
            if not as_kind or event_type == "ERROR":
                return payload
            obj = payload.obj if isinstance(payload, StoredObject) else payload
            if as_kind == "Table":
                objects = [payload] if isinstance(payload, StoredObject) else []
                doc = table(rt.kind, objects, meta_api_version=meta_version, include_object=include,
                            list_meta={"resourceVersion": obj.get("metadata", {}).get("resourceVersion", "")},
                            with_columns=first[0])
                first[0] = False
                return doc
            return partial_object_metadata(obj, meta_version)

        def frame(event_type: str, payload: Any) -> bytes:
            doc = converted(event_type, payload)
            if codec == "json":
                body = doc.json_bytes() if isinstance(doc, StoredObject) else dumps_json(doc)
                return b'{"type":' + dumps_json(event_type) + b',"object":' + body + b"}\n"
            if codec == "protobuf":
                if isinstance(doc, StoredObject):
                    return protobuf.encode_watch_event(event_type, encoded=encode_stored("protobuf", doc))
                return protobuf.encode_watch_event(event_type, doc)
            if isinstance(doc, StoredObject):
                return cbor.encode_watch_event(event_type, None, encoded_object=encode_stored("cbor", doc))
            return cbor.encode_watch_event(event_type, doc)

        async def events() -> AsyncIterator[bytes]:
            async for event_type, payload in stream:
                yield frame(event_type, payload)

        media = {"protobuf": choice.media_type + ";stream=watch", "cbor": "application/cbor-seq"}.get(
            codec, "application/json")
        response = Response(events(), status=200, headers={"Content-Type": media,
                                                             "Cache-Control": "no-cache, private"})
        response.timeout = None
        return response


class _Mapped(Sequence):
    """`items` seen through `fn`, computed on access (a list's items converted without a second list)."""

    def __init__(self, items: Sequence[Any], fn: Callable[[Any], Any]) -> None:
        self._items, self._fn = items, fn

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index: Any) -> Any:
        return self._fn(self._items[index])

    def __iter__(self) -> Iterator[Any]:
        return map(self._fn, self._items)
