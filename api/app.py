"""The Quart-trio application: every path of the spec, HTTP only.

`create_app(state)` serves the GETs of cached objects by a fast path
(`api.cachedgets`) and every other request by one view, the filter chain (`api.filters`)
around the route: a resource path goes to `api.resources` (the verb
handlers, by a route table), any other path to the non-resource routes
here, a table of exact paths (version, discovery roots, metrics, OpenAPI)
after the UI and health endpoints, then the discovery documents of a group
or version and the OpenAPI v3 documents. The view is Quart's one URL rule; the API's paths reach it in
front of Quart (`api.directroutes`), with the request Quart would give it. Data is reached only through the
registry. Every non-2xx answer is a `Status` in the negotiated media type.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Sequence

from quart import Response
from quart_trio import QuartTrio

from api import discovery, openapi
from api.audit import Auditor
from api.cachedgets import CachedGets
from api.directroutes import DirectRoutes
from api.filters import RequestContext, build_handler_chain
from api.health import BASE_CHECKS, HealthCheck, health_answer
from api.limits import RequestLimits
from api.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE, APIServerMetrics
from api.negotiation import Choice, parse_accept
from api.request_class import MiniplaneRequest
from api.resources import ResourceRoutes
from api.responses import Responder, not_modified
from api.ui import ui_answer
from runtime.machinery import errors
from runtime.machinery.storedobject import dumps_json
from runtime.server.rbac import non_resource_attributes
from runtime.server.registry import Registry

__all__ = ["ServerState", "create_app", "PATHS"]

log = logging.getLogger(__name__)

_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
_JSON = Choice("json", "application/json")


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


def create_app(state: ServerState) -> CachedGets:
    """The ASGI app serving `state.registry`: the cached GETs' fast path (`api.cachedgets`) in front of the
    API's paths served without Quart's request machinery (`api.directroutes`), in front of Quart's."""
    app = QuartTrio(__name__)
    app.request_class = MiniplaneRequest
    app.config["MAX_CONTENT_LENGTH"] = None
    app.config["RESPONSE_TIMEOUT"] = None
    app.config["BODY_TIMEOUT"] = state.body_timeout
    answers = Responder(state)
    resources = ResourceRoutes(state, answers).serve
    paths = PathRoutes(state, answers).serve

    def route(ctx: RequestContext) -> Awaitable[Response]:  # a plain function: see `api.filters.Handler`
        return (resources if ctx.info.resource_request else paths)(ctx)
    view = build_handler_chain(route, state, answers)
    app.add_url_rule("/", "root", view, methods=_METHODS, defaults={"path": ""})
    app.add_url_rule("/<path:path>", "all", view, methods=_METHODS)
    return CachedGets(DirectRoutes(app, view), state)


class PathRoutes:
    """The non-resource paths (see the module doc); `answers` writes the answers."""

    def __init__(self, state: ServerState, answers: Responder) -> None:
        self.state = state
        self.answers = answers
        self.scheme = state.scheme
        self.registry = state.registry

    async def serve(self, ctx: RequestContext) -> Response:
        request, info = ctx.request, ctx.info
        # Authorized on the path as sent (rules list both `/version` and `/version/`), served without the slash.
        self.registry.authorize(non_resource_attributes(ctx.user, info.verb, info.path))
        page = ui_answer(info.path) if info.verb == "get" else None
        if page is not None:
            return Response(page.body, status=page.status, headers=page.headers)
        path = info.path.rstrip("/") or "/"
        answer = await health_answer(path, {k: request.args.getlist(k) for k in request.args.keys()},
                                     self.state.health_checks)
        if answer is not None:
            return Response(answer[1], status=answer[0], headers={"Content-Type": "text/plain; charset=utf-8",
                                                                  "X-Content-Type-Options": "nosniff"})
        exact = PATHS.get(path)
        if exact is not None:
            return exact(self, ctx, path)
        parts = path.strip("/").split("/")
        if parts[0] == "api" and len(parts) == 2:
            doc = discovery.api_resource_list(self.scheme, parts[1])
            if doc is not None:
                return self.answers.respond(200, doc, _JSON)
        if parts[0] == "apis" and len(parts) in (2, 3):
            doc = discovery.api_group(self.scheme, parts[1]) if len(parts) == 2 else \
                discovery.api_resource_list(self.scheme, f"{parts[1]}/{parts[2]}")
            if doc is not None:
                return self.answers.respond(200, doc, _JSON)
        if path.startswith("/openapi/v3/"):
            return self.openapi_v3_document(ctx, path)
        raise errors.NotFound("the server could not find the requested resource")

    def metrics(self, ctx: RequestContext, path: str) -> Response:
        return Response(self.state.metrics.exposition(), status=200, headers={"Content-Type": METRICS_CONTENT_TYPE})

    def version(self, ctx: RequestContext, path: str) -> Response:
        return self.answers.respond(200, discovery.version_info(self.state.version), _JSON)

    def discovery_root(self, ctx: RequestContext, path: str) -> Response:
        """`/api` or `/apis`: the aggregated discovery document when asked (v2 or v2beta1), else the plain one."""
        choice = self.answers.choice(allowed_as=("", "APIGroupDiscoveryList"))
        if choice.as_kind == "APIGroupDiscoveryList":
            # As kube-apiserver's: tagged by the v2 document's hash (one tag for v2 and v2beta1), cacheable,
            # 304 when the client holds this document.
            core = path == "/api"
            doc = discovery.aggregated_discovery(self.scheme, core=core)
            cached = {"Etag": openapi.content_etag(dumps_json(doc)), "Vary": "Accept", "Cache-Control": "public"}
            if ctx.request.headers.get("If-None-Match") == cached["Etag"]:
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
        return self.answers.respond(200, doc, _JSON)

    def openapi_v2(self, ctx: RequestContext, path: str) -> Response:
        accept = ctx.request.headers.get("Accept") or "application/json"
        for r in parse_accept(accept):
            if r.type in openapi.V2_PROTOBUF_ACCEPT:
                return self.answers.openapi_answer(openapi.openapi_v2_protobuf(self.scheme),
                                                   openapi.V2_PROTOBUF_CONTENT_TYPE)
            if r.type in ("application/json", "application/*", "*/*"):
                return self.answers.openapi_answer(openapi.openapi_v2_json(self.scheme), "application/json")
        raise errors.NotAcceptable("only the following media types are accepted: application/json, "
                                   + openapi.V2_PROTOBUF_ACCEPT[0])

    def openapi_v3_index(self, ctx: RequestContext, path: str) -> Response:
        _require_json(ctx)
        return self.answers.openapi_answer(dumps_json(openapi.openapi_v3_index(self.scheme)), "application/json")

    def openapi_v3_document(self, ctx: RequestContext, path: str) -> Response:
        """`/openapi/v3/api/v1`, `/openapi/v3/apis/GROUP/VERSION`: a group version's document, pinned by
        `?hash=` (cached a year; a stale hash is sent to the current one)."""
        _require_json(ctx)
        gv = path[len("/openapi/v3/"):]
        gv = gv[len("api/"):] if gv.startswith("api/") else gv[len("apis/"):] if gv.startswith("apis/") else None
        doc_bytes = openapi.openapi_v3_document_bytes(self.scheme, gv) if gv else None
        if doc_bytes is None:
            raise errors.NotFound("the server could not find the requested resource")
        asked = ctx.request.args.get("hash")
        digest = openapi.openapi_v3_hash(doc_bytes)
        if asked and asked != digest:  # a stale pinned URL: send the client to the current one
            return Response(b"", status=301, headers={
                "Location": f"/openapi/v3/{openapi.openapi_v3_path(gv)}?hash={digest}"})
        return self.answers.openapi_answer(doc_bytes, "application/json", immutable=bool(asked))


def _require_json(ctx: RequestContext) -> None:
    accept = ctx.request.headers.get("Accept") or "application/json"
    if not any(r.type in ("application/json", "application/*", "*/*") for r in parse_accept(accept)):
        raise errors.NotAcceptable("only the following media types are accepted: application/json")


#: The non-resource paths served as themselves (after the UI's and the health endpoints), without a
#: trailing slash -> their handler.
PATHS: dict[str, Callable[[PathRoutes, RequestContext, str], Response]] = {
    "/metrics": PathRoutes.metrics,
    "/version": PathRoutes.version,
    "/api": PathRoutes.discovery_root,
    "/apis": PathRoutes.discovery_root,
    "/openapi/v2": PathRoutes.openapi_v2,
    "/openapi/v3": PathRoutes.openapi_v3_index,
}
