"""The Quart-trio application: every path of the spec, HTTP only.

A handler classifies the request (`requestinfo`), authenticates it
(`authn`), negotiates the media types (`negotiation`), decodes the body
(`codecs`) and the query (`params`), then calls the registry, which
authorizes, validates and stores; `responses` writes the answer. Data is
reached only through the registry. Every non-2xx answer is a `Status` in the
negotiated media type.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

import trio
from quart import Response
from quart_trio import QuartTrio

from api import discovery, openapi
from api.audit import Auditor, current_record
from api.filters import RequestContext, build_handler_chain, track_watch
from api.codecs import decode_body
from api.health import BASE_CHECKS, HealthCheck, health_answer
from api.negotiation import Choice, parse_accept, request_codec
from api.params import delete_options, list_options, write_options
from api.limits import RequestLimits
from api.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE, APIServerMetrics
from api.request_class import MiniplaneRequest
from api.requestinfo import RequestInfo
from api.responses import Responder, not_modified
from api.tables import partial_object_metadata
from api.ui import ui_answer
from runtime import errors
from runtime.codec import protobuf
from runtime.objects import dumps_json
from runtime.rbac import non_resource_attributes, resource_attributes
from runtime.registry import Registry
from runtime.requests import Body, patch_type
from runtime.scheme import ResourceType

__all__ = ["ServerState", "create_app"]

log = logging.getLogger(__name__)

_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
#: The body codec of the apply patch types that are not JSON.
_APPLY_CODECS = {"application/apply-patch+yaml": "yaml", "application/apply-patch+cbor": "cbor"}


@dataclass
class ServerState:
    """What the HTTP layer needs: the registry, the authenticator and the server options.

    Feature gates are the registry's (`registry.gate`), one set for the whole server.
    """

    registry: Registry
    authenticator: Any
    version: str = "0.1.0"
    max_body_bytes: int = 3 * 1024 * 1024
    #: Seconds a request body may take to arrive (a client that stalls mid-body gets a 504, then is cut off).
    body_timeout: float = 60.0
    min_compress_bytes: int = 0
    server_address: str = ""
    metrics: APIServerMetrics = field(default_factory=APIServerMetrics)
    limits: RequestLimits = field(default_factory=RequestLimits)
    auditor: Auditor = field(default_factory=Auditor)
    health_checks: Sequence[HealthCheck] = BASE_CHECKS

    @property
    def scheme(self):
        return self.registry.scheme


def create_app(state: ServerState) -> QuartTrio:
    """The ASGI app serving `state.registry`."""
    app = QuartTrio(__name__)
    app.request_class = MiniplaneRequest
    app.config["MAX_CONTENT_LENGTH"] = None
    app.config["RESPONSE_TIMEOUT"] = None
    app.config["BODY_TIMEOUT"] = state.body_timeout
    answers = Responder(state)
    view = build_handler_chain(Routes(state, answers).serve, state, answers)
    app.add_url_rule("/", "root", view, methods=_METHODS, defaults={"path": ""})
    app.add_url_rule("/<path:path>", "all", view, methods=_METHODS)
    return app


class Routes:
    """Routes a request, once through the filter chain (`api.filters`), to the registry (resources) or
    to discovery, OpenAPI, health and metrics; `answers` writes the answers."""

    def __init__(self, state: ServerState, answers: Responder) -> None:
        self.state = state
        self.answers = answers
        self.scheme = state.scheme
        self.registry = state.registry
        self.domain = state.scheme.domain
        self.gate = state.registry.gate
        self.limits = state.limits
        self.metrics = state.metrics

    async def _body(self, ctx: RequestContext, *, allow_empty: bool = False, codec: str | None = None,
                    rt: ResourceType | None = None) -> Body | None:
        """The request body, decoded by its Content-Type (`codec` overrides it).

        A Protobuf body for a kind without a Protobuf form (custom kinds) is
        415, as Kubernetes answers; the body is read first either way.
        """
        request = ctx.request
        limit = self.state.max_body_bytes
        chunks: list[bytes] = []
        ctx.body_read = True
        # Until the last byte: an answer (a timeout above all) closes the connection, the body's rest may still come.
        ctx.body_incomplete = True
        # Read to the end even past the limit (discarding), so the client gets its 413; but not forever. When the
        # request's own deadline comes first (the defaults), it bounds the read and no second deadline is set.
        body_deadline = trio.current_time() + self.state.body_timeout
        reading: trio.CancelScope | None = None
        if body_deadline < trio.current_effective_deadline():
            with trio.move_on_at(body_deadline) as reading:
                size = await _read_body(request, limit, chunks)
        else:
            size = await _read_body(request, limit, chunks)
        if reading is not None and reading.cancelled_caught:
            raise errors.Timeout(f"Timeout: the request body did not arrive within {self.state.body_timeout:g} s")
        ctx.body_incomplete = False
        if size > limit:
            raise errors.RequestEntityTooLarge("the request is too large")
        raw = b"".join(chunks)
        if not raw.strip():
            if allow_empty:
                return None
            raise errors.BadRequest("the body of the request was empty")
        if codec is None:
            codec = request_codec(request.headers.get("Content-Type"), domain=self.domain,
                                  cbor=self.gate("CBORServingAndStorage"))
        if codec == "protobuf" and rt is not None and not protobuf.supports(rt.api_version, rt.kind):
            accepted = "application/json, application/yaml" + (
                ", application/cbor" if self.gate("CBORServingAndStorage") else "")
            raise errors.UnsupportedMediaType("the body of the request was in an unknown format - accepted media "
                                              f"types include: {accepted}")
        body = decode_body(codec, raw)
        record = current_record()
        if record is not None:
            record.log_request_object(body.data)
        return body

    async def serve(self, ctx: RequestContext) -> Response:
        """The route, once the filter chain (`api.filters`) let the request through."""
        if not ctx.info.is_resource:
            return await self.non_resource(ctx)
        return await self.resource(ctx)

    # ---- non-resource paths ---------------------------------------------------------------------

    async def non_resource(self, ctx: RequestContext) -> Response:
        request, info, user = ctx.request, ctx.info, ctx.user
        # Authorized on the path as sent (rules list both `/version` and `/version/`), served without the slash.
        self.registry.authorize(non_resource_attributes(user, info.verb, info.path))
        page = ui_answer(info.path) if info.verb == "get" else None
        if page is not None:
            return Response(page.body, status=page.status, headers=page.headers)
        path = info.path.rstrip("/") or "/"
        json_choice = Choice("json", "application/json")
        answer = await health_answer(path, {k: request.args.getlist(k) for k in request.args.keys()},
                                     self.state.health_checks)
        if answer is not None:
            return Response(answer[1], status=answer[0], headers={"Content-Type": "text/plain; charset=utf-8",
                                                                  "X-Content-Type-Options": "nosniff"})
        if path == "/metrics":
            return Response(self.metrics.exposition(), status=200, headers={"Content-Type": METRICS_CONTENT_TYPE})
        if path == "/version":
            return self.answers.respond(200, discovery.version_info(self.state.version), json_choice)
        if path in ("/api", "/apis"):
            choice = self.answers.choice(allowed_as=("", "APIGroupDiscoveryList"))
            if choice.as_kind == "APIGroupDiscoveryList":
                # As kube-apiserver's: tagged by the v2 document's hash (one tag for v2 and v2beta1), cacheable,
                # 304 when the client holds this document.
                core = path == "/api"
                doc = discovery.aggregated_discovery(self.scheme, core=core)
                cached = {"Etag": openapi.content_etag(dumps_json(doc)), "Vary": "Accept", "Cache-Control": "public"}
                if request.headers.get("If-None-Match") == cached["Etag"]:
                    return not_modified(cached)
                if choice.version != "v2":
                    doc = discovery.aggregated_discovery(self.scheme, core=core, version=choice.version)
                choice = Choice(choice.codec if choice.codec != "protobuf" else "json",
                                f"application/json;g=apidiscovery.k8s.io;v={choice.version};as=APIGroupDiscoveryList")
                response = self.answers.respond(200, doc, choice)
                response.headers["Content-Type"] = choice.media_type
                for name, value in cached.items():
                    response.headers[name] = value
                return response
            doc = discovery.api_versions(self.state.server_address) if path == "/api" else \
                discovery.api_group_list(self.scheme)
            return self.answers.respond(200, doc, Choice("json", "application/json"))
        parts = path.strip("/").split("/")
        if parts[0] == "api" and len(parts) == 2:
            doc = discovery.api_resource_list(self.scheme, parts[1])
            if doc is not None:
                return self.answers.respond(200, doc, json_choice)
        if parts[0] == "apis" and len(parts) in (2, 3):
            doc = discovery.api_group(self.scheme, parts[1]) if len(parts) == 2 else \
                discovery.api_resource_list(self.scheme, f"{parts[1]}/{parts[2]}")
            if doc is not None:
                return self.answers.respond(200, doc, json_choice)
        if path == "/openapi/v2":
            accept = request.headers.get("Accept") or "application/json"
            for r in parse_accept(accept):
                if r.type in openapi.V2_PROTOBUF_ACCEPT:
                    return self.answers.openapi_answer(openapi.openapi_v2_protobuf(self.scheme),
                                                openapi.V2_PROTOBUF_CONTENT_TYPE)
                if r.type in ("application/json", "application/*", "*/*"):
                    return self.answers.openapi_answer(openapi.openapi_v2_json(self.scheme), "application/json")
            raise errors.NotAcceptable("only the following media types are accepted: application/json, "
                                       + openapi.V2_PROTOBUF_ACCEPT[0])
        if path == "/openapi/v3" or path.startswith("/openapi/v3/"):
            accept = request.headers.get("Accept") or "application/json"
            if not any(r.type in ("application/json", "application/*", "*/*") for r in parse_accept(accept)):
                raise errors.NotAcceptable("only the following media types are accepted: application/json")
            if path == "/openapi/v3":
                return self.answers.openapi_answer(dumps_json(openapi.openapi_v3_index(self.scheme)), "application/json")
            gv = path[len("/openapi/v3/"):]
            gv = gv[len("api/"):] if gv.startswith("api/") else gv[len("apis/"):] if gv.startswith("apis/") else None
            doc_bytes = openapi.openapi_v3_document_bytes(self.scheme, gv) if gv else None
            if doc_bytes is not None:
                asked = request.args.get("hash")
                digest = openapi.openapi_v3_hash(doc_bytes)
                if asked and asked != digest:  # a stale pinned URL: send the client to the current one
                    return Response(b"", status=301, headers={
                        "Location": f"/openapi/v3/{openapi.openapi_v3_path(gv)}?hash={digest}"})
                return self.answers.openapi_answer(doc_bytes, "application/json", immutable=bool(asked))
        raise errors.NotFound("the server could not find the requested resource")

    # ---- resources -----------------------------------------------------------------------------

    def _resource_type(self, request: MiniplaneRequest, info: RequestInfo) -> ResourceType:
        rt = self.scheme.by_resource(info.group, info.version, info.resource)
        # An escaped slash (`%2F`) belongs to no resource path (no name, namespace or resource holds one):
        # not a separator to resolve into another route (`roles/%2F` is not the collection).
        encoded_slash = b"%2f" in (request.scope.get("raw_path") or b"").lower()
        if rt is None or encoded_slash or (
                info.subresource and rt.info.subresource_verbs(info.subresource) is None):
            raise errors.NotFound("the server could not find the requested resource")
        if info.namespace and not rt.namespaced:
            raise errors.NotFound("the server could not find the requested resource")
        return rt

    async def resource(self, ctx: RequestContext) -> Response:
        request, info, user = ctx.request, ctx.info, ctx.user
        try:
            rt = self._resource_type(request, info)
        except errors.NotFound:
            # Authorization comes before routing (as Kubernetes' filter chain): only a caller
            # allowed to ask learns that a resource does not exist.
            self.registry.authorize(resource_attributes(
                user, info.verb, info.resource, api_group=info.group, api_version=info.version,
                namespace=info.namespace, name=info.name, subresource=info.subresource))
            raise
        namespace = info.namespace if rt.namespaced else ""
        name, verb, sub = info.name, info.verb, info.subresource
        # Kubernetes' routes: a namespaced kind's path across all namespaces serves only list and
        # watch of the collection (no item path: 404); a collection path takes no PUT or PATCH, an
        # item path no POST. Verbs a kind does not offer are the registry's to refuse (405).
        if rt.namespaced and not namespace and (name or verb not in ("list", "watch")):
            if name:
                raise errors.NotFound("the server could not find the requested resource")
            raise errors.MethodNotAllowed("the server does not allow this method on the requested resource")
        if (verb in ("update", "patch") and not name) or (verb == "create" and name and not sub):
            raise errors.MethodNotAllowed("the server does not allow this method on the requested resource")
        args = request.args
        ua = request.headers.get("User-Agent", "")
        if verb == "get":
            choice = self.answers.choice()
            obj = await self.registry.get(user, rt, namespace, name, resource_version=args.get("resourceVersion"),
                                          subresource=sub)
            return self.answers.object_response(200, obj, choice, rt, compressible=True)
        if verb == "list":
            choice = self.answers.choice()
            listed = await self.registry.list(user, rt, namespace, list_options(args))
            return self.answers.list_response(listed, choice, rt)
        if verb == "watch":
            choice = self.answers.choice(stream=True)
            opts = list_options(args)
            # A watch without timeoutSeconds ends after a random [min, 2 min) of --min-request-timeout.
            opts = replace(opts, timeout_seconds=self.limits.watch_timeout(opts.timeout_seconds))
            if name:  # a watch on an item path is a watch of the collection pinned to that name
                pinned = f"metadata.name={name}"
                opts = replace(opts, field_selector=f"{opts.field_selector},{pinned}" if opts.field_selector else pinned)
            stream = await self.registry.open_watch(user, rt, namespace, opts)
            return self.answers.watch_response(stream, choice, rt,
                                        track=lambda chunks: track_watch(ctx, self.limits, self.metrics, chunks))
        if verb == "create" and sub:
            # A subresource that is another kind (a ServiceAccount's token): its answer, 201, as a review's.
            choice = self.answers.choice(allowed_as=("", "PartialObjectMetadata"))
            result = await self.registry.create(user, rt, namespace, await self._body(ctx),
                                                write_options(args, ua, method=request.method), name=name,
                                                subresource=sub)
            doc = result.obj.obj
            if choice.as_kind == "PartialObjectMetadata":
                doc = partial_object_metadata(doc, choice.meta_api_version)
            return self.answers.respond(201, doc, choice, warnings=result.warnings)
        if verb == "create" and rt.virtual:
            # No Table (reviews have no table convertor in Kubernetes); the metadata form as for any object.
            choice = self.answers.choice(allowed_as=("", "PartialObjectMetadata", "PartialObjectMetadataList"))
            result = await self.registry.create(user, rt, namespace, await self._body(ctx, rt=rt),
                                                write_options(args, ua, method=request.method))
            if choice.as_kind == "PartialObjectMetadataList":
                raise errors.NotAcceptable("you requested PartialObjectMetadataList, but the requested object is not "
                                           "a list")
            doc = result.obj.obj
            if choice.as_kind == "PartialObjectMetadata":
                doc = partial_object_metadata(doc, choice.meta_api_version)
            return self.answers.respond(201, doc, choice, warnings=result.warnings)
        if verb == "create":
            # Writes answer in any negotiated form, Table included, as Kubernetes' transformResponseObject.
            choice = self.answers.choice()
            result = await self.registry.create(user, rt, namespace, await self._body(ctx, rt=rt),
                                                write_options(args, ua, method=request.method))
            return self.answers.object_response(201, result.obj, choice, rt, warnings=result.warnings)
        if verb == "update":
            choice = self.answers.choice()
            result = await self.registry.update(user, rt, namespace, name, await self._body(ctx, rt=rt),
                                                write_options(args, ua, method=request.method), subresource=sub)
            return self.answers.object_response(201 if result.created else 200, result.obj, choice, rt,
                                         warnings=result.warnings)
        if verb == "patch":
            choice = self.answers.choice()
            content_type = request.headers.get("Content-Type") or ""
            kind = patch_type(content_type, cbor=self.gate("CBORServingAndStorage"),
                              strategic=rt.strategy.supports_strategic_merge)
            body = await self._body(ctx, codec=_APPLY_CODECS.get(content_type.split(";")[0].strip().lower(), "json"))
            result = await self.registry.patch(user, rt, namespace, name, kind, body,
                                               write_options(args, ua, method=request.method), subresource=sub)
            return self.answers.object_response(201 if result.created else 200, result.obj, choice, rt,
                                         warnings=result.warnings)
        if verb == "delete":
            choice = self.answers.choice()
            body = await self._body(ctx, allow_empty=True)
            deleted = await self.registry.delete(user, rt, namespace, name, delete_options(args, body))
            return self.answers.delete_response(deleted, choice, rt)
        if verb == "deletecollection":
            choice = self.answers.choice()
            body = await self._body(ctx, allow_empty=True)
            status = await self.registry.delete_collection(user, rt, namespace, list_options(args),
                                                           delete_options(args, body))
            return self.answers.respond(200, status, choice)
        raise errors.MethodNotAllowed("the server does not allow this method on the requested resource")


async def _read_body(request: MiniplaneRequest, limit: int, chunks: list[bytes]) -> int:
    """Read `request`'s body to its end into `chunks`, up to `limit` bytes (the rest dropped); its size."""
    size = 0
    async for chunk in request.body:
        size += len(chunk)
        if size <= limit:
            chunks.append(chunk)
    return size
