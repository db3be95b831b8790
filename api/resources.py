"""The resource routes: Kubernetes' REST paths as a table of verb handlers (kube's `endpoints/handlers/`).

`ResourceRoutes.serve(ctx)` resolves the request's resource (404 when the
server serves none there, after asking the authorizer, as Kubernetes'
filter chain authorizes before routing), applies Kubernetes' scope rule
(a namespaced kind's path across all namespaces serves only list and watch
of the collection: an item path is 404, another verb 405), then calls the
handler `ROUTES` names for (verb, name present, subresource present); a
route missing from the table is 405 (a collection path takes no PUT or
PATCH, an item path no POST). Verbs a kind does not offer are the
registry's to refuse (405).

Each handler goes straight down, as kube's `create.go`, `get.go`, ...:
negotiate the answer (`api.negotiation`), read the query (`api.params`)
and the body (`api.codecs`), call the registry, answer (`api.responses`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Awaitable, Callable

import trio
from quart import Response

from api.codecs import decode_body
from api.filters import RequestContext, track_watch
from api.negotiation import request_codec
from api.params import delete_options, list_options, write_options
from api.request_class import MiniplaneRequest
from api.responses import Responder
from api.tables import partial_object_metadata
from runtime.machinery import errors
from runtime.machinery.serializer import protobuf
from runtime.server.rbac import resource_attributes
from runtime.machinery.options import Body, WriteOptions, patch_type
from runtime.machinery.scheme import ResourceType

__all__ = ["ResourceRoutes", "ROUTES", "ResourceHandler"]

#: The body codec of the apply patch types that are not JSON.
_APPLY_CODECS = {"application/apply-patch+yaml": "yaml", "application/apply-patch+cbor": "cbor"}

_NOT_FOUND = "the server could not find the requested resource"
_NOT_ALLOWED = "the server does not allow this method on the requested resource"


class ResourceRoutes:
    """The resource paths of the server in `state` (see the module doc); `answers` writes the answers."""

    def __init__(self, state: Any, answers: Responder) -> None:
        self.state = state
        self.answers = answers
        self.scheme = state.registry.scheme
        self.registry = state.registry
        self.domain = self.scheme.domain
        self.gate = state.registry.gate
        self.limits = state.limits
        self.metrics = state.metrics

    def serve(self, ctx: RequestContext) -> Awaitable[Response]:
        """The answer of a resource request (to await), by `ROUTES`; raises what routing refuses (404, 405)."""
        info = ctx.info
        try:
            rt = self._resource_type(ctx)
        except errors.NotFound:
            # Authorization comes before routing (as Kubernetes' filter chain): only a caller
            # allowed to ask learns that a resource does not exist.
            self.registry.authorize(resource_attributes(
                ctx.user, info.verb, info.resource, api_group=info.api_group, api_version=info.api_version,
                namespace=info.namespace, name=info.name, subresource=info.subresource))
            raise
        namespace = info.namespace if rt.namespaced else ""
        if rt.namespaced and not namespace and (info.name or info.verb not in ("list", "watch")):
            if info.name:
                raise errors.NotFound(_NOT_FOUND)
            raise errors.MethodNotAllowed(_NOT_ALLOWED)
        handler = ROUTES.get((info.verb, bool(info.name), bool(info.subresource)))
        if handler is None:
            raise errors.MethodNotAllowed(_NOT_ALLOWED)
        return handler(self, ctx, rt, namespace)

    def _resource_type(self, ctx: RequestContext) -> ResourceType:
        info = ctx.info
        rt = self.scheme.by_resource(info.api_group, info.api_version, info.resource)
        # An escaped slash (`%2F`) belongs to no resource path (no name, namespace or resource holds one):
        # not a separator to resolve into another route (`roles/%2F` is not the collection).
        encoded_slash = b"%2f" in (ctx.request.scope.get("raw_path") or b"").lower()
        if rt is None or encoded_slash or (
                info.subresource and rt.info.subresource_verbs(info.subresource) is None):
            raise errors.NotFound(_NOT_FOUND)
        if info.namespace and not rt.namespaced:
            raise errors.NotFound(_NOT_FOUND)
        return rt

    async def body(self, ctx: RequestContext, *, allow_empty: bool = False, codec: str | None = None,
                   rt: ResourceType | None = None) -> Body | None:
        """The request body, decoded by its Content-Type (`codec` overrides it).

        A Protobuf body for a kind without a Protobuf form (custom kinds) is
        415, as Kubernetes answers; the body is read first either way.
        """
        request = ctx.request
        state = self.state
        limit = state.max_body_bytes
        chunks: list[bytes] = []
        ctx.body_read = True
        # Until the last byte: an answer (a timeout above all) closes the connection, the body's rest may still come.
        ctx.body_incomplete = True
        # Read to the end even past the limit (discarding), so the client gets its 413; but not forever. When the
        # request's own deadline comes first (the defaults), it bounds the read and no second deadline is set.
        body_deadline = trio.current_time() + state.body_timeout
        reading: trio.CancelScope | None = None
        if body_deadline < trio.current_effective_deadline():
            with trio.move_on_at(body_deadline) as reading:
                size = await _read_body(request, limit, chunks)
        else:
            size = await _read_body(request, limit, chunks)
        if reading is not None and reading.cancelled_caught:
            raise errors.Timeout(f"Timeout: the request body did not arrive within {state.body_timeout:g} s")
        ctx.body_incomplete = False
        if size > limit:
            raise errors.RequestEntityTooLarge("the request is too large")
        raw = b"".join(chunks)
        if not raw.strip():
            if allow_empty:
                return None
            raise errors.BadRequest("the body of the request was empty")
        if codec is None:
            codec = request_codec(ctx.content_type, domain=self.domain, cbor=self.gate("CBORServingAndStorage"))
        if codec == "protobuf" and rt is not None and not protobuf.supports(rt.api_version, rt.kind):
            accepted = "application/json, application/yaml" + (
                ", application/cbor" if self.gate("CBORServingAndStorage") else "")
            raise errors.UnsupportedMediaType("the body of the request was in an unknown format - accepted media "
                                              f"types include: {accepted}")
        body = decode_body(codec, raw)
        if ctx.record is not None:
            ctx.record.log_request_object(body.data)
        return body


async def _read_body(request: MiniplaneRequest, limit: int, chunks: list[bytes]) -> int:
    """Read `request`'s body to its end into `chunks`, up to `limit` bytes (the rest dropped); its size."""
    size = 0
    async for chunk in request.body:
        size += len(chunk)
        if size <= limit:
            chunks.append(chunk)
    return size


# ---- the verb handlers: (routes, the request, its resource, its namespace) -> the answer -------------

async def get(r: ResourceRoutes, ctx: RequestContext, rt: ResourceType, namespace: str) -> Response:
    choice = r.answers.choice()
    info = ctx.info
    obj = await r.registry.get(ctx.user, rt, namespace, info.name,
                               resource_version=ctx.request.args.get("resourceVersion"), subresource=info.subresource)
    return r.answers.object_response(200, obj, choice, rt, compressible=True)


async def list_(r: ResourceRoutes, ctx: RequestContext, rt: ResourceType, namespace: str) -> Response:
    choice = r.answers.choice()
    listed = await r.registry.list(ctx.user, rt, namespace, list_options(ctx.request.args))
    return r.answers.list_response(listed, choice, rt)


async def watch(r: ResourceRoutes, ctx: RequestContext, rt: ResourceType, namespace: str) -> Response:
    choice = r.answers.choice(stream=True)
    opts = list_options(ctx.request.args)
    # A watch without timeoutSeconds ends after a random [min, 2 min) of --min-request-timeout.
    opts = replace(opts, timeout_seconds=r.limits.watch_timeout(opts.timeout_seconds))
    name = ctx.info.name
    if name:  # a watch on an item path is a watch of the collection pinned to that name
        pinned = f"metadata.name={name}"
        opts = replace(opts, field_selector=f"{opts.field_selector},{pinned}" if opts.field_selector else pinned)
    stream = await r.registry.open_watch(ctx.user, rt, namespace, opts)
    return r.answers.watch_response(stream, choice, rt,
                                    track=lambda chunks: track_watch(ctx, r.limits, r.metrics, chunks))


def _write_options(ctx: RequestContext) -> WriteOptions:
    """The request's write options (dryRun, fieldManager, fieldValidation; its User-Agent names a default manager)."""
    request = ctx.request
    return write_options(request.args, request.headers.get("User-Agent", ""), method=request.method)


async def create(r: ResourceRoutes, ctx: RequestContext, rt: ResourceType, namespace: str) -> Response:
    if rt.virtual:
        return await review(r, ctx, rt, namespace)
    # Writes answer in any negotiated form, Table included, as Kubernetes' transformResponseObject.
    choice = r.answers.choice()
    result = await r.registry.create(ctx.user, rt, namespace, await r.body(ctx, rt=rt),
                                     _write_options(ctx))
    return r.answers.object_response(201, result.obj, choice, rt, warnings=result.warnings)


async def review(r: ResourceRoutes, ctx: RequestContext, rt: ResourceType, namespace: str) -> Response:
    """A create of a virtual kind (a review): its evaluation, 201."""
    # No Table (reviews have no table convertor in Kubernetes); the metadata form as for any object.
    choice = r.answers.choice(allowed_as=("", "PartialObjectMetadata", "PartialObjectMetadataList"))
    result = await r.registry.create(ctx.user, rt, namespace, await r.body(ctx, rt=rt),
                                     _write_options(ctx))
    if choice.as_kind == "PartialObjectMetadataList":
        raise errors.NotAcceptable("you requested PartialObjectMetadataList, but the requested object is not a list")
    doc = result.obj.obj
    if choice.as_kind == "PartialObjectMetadata":
        doc = partial_object_metadata(doc, choice.meta_api_version)
    return r.answers.respond(201, doc, choice, warnings=result.warnings)


async def create_subresource(r: ResourceRoutes, ctx: RequestContext, rt: ResourceType, namespace: str) -> Response:
    """A POST to a subresource that is another kind (a ServiceAccount's token): its answer, 201, as a review's."""
    choice = r.answers.choice(allowed_as=("", "PartialObjectMetadata"))
    info = ctx.info
    result = await r.registry.create(ctx.user, rt, namespace, await r.body(ctx),
                                     _write_options(ctx), name=info.name,
                                     subresource=info.subresource)
    doc = result.obj.obj
    if choice.as_kind == "PartialObjectMetadata":
        doc = partial_object_metadata(doc, choice.meta_api_version)
    return r.answers.respond(201, doc, choice, warnings=result.warnings)


async def update(r: ResourceRoutes, ctx: RequestContext, rt: ResourceType, namespace: str) -> Response:
    choice = r.answers.choice()
    info = ctx.info
    result = await r.registry.update(ctx.user, rt, namespace, info.name, await r.body(ctx, rt=rt),
                                     _write_options(ctx), subresource=info.subresource)
    return r.answers.object_response(201 if result.created else 200, result.obj, choice, rt,
                                     warnings=result.warnings)


async def patch(r: ResourceRoutes, ctx: RequestContext, rt: ResourceType, namespace: str) -> Response:
    choice = r.answers.choice()
    info = ctx.info
    kind = patch_type(ctx.content_type, cbor=r.gate("CBORServingAndStorage"),
                      strategic=rt.strategy.supports_strategic_merge)
    body = await r.body(ctx, codec=_APPLY_CODECS.get(ctx.content_type, "json"))
    result = await r.registry.patch(ctx.user, rt, namespace, info.name, kind, body,
                                    _write_options(ctx), subresource=info.subresource)
    return r.answers.object_response(201 if result.created else 200, result.obj, choice, rt,
                                     warnings=result.warnings)


async def delete(r: ResourceRoutes, ctx: RequestContext, rt: ResourceType, namespace: str) -> Response:
    choice = r.answers.choice()
    body = await r.body(ctx, allow_empty=True)
    deleted = await r.registry.delete(ctx.user, rt, namespace, ctx.info.name, delete_options(ctx.request.args, body))
    return r.answers.delete_response(deleted, choice, rt)


async def delete_collection(r: ResourceRoutes, ctx: RequestContext, rt: ResourceType, namespace: str) -> Response:
    choice = r.answers.choice()
    body = await r.body(ctx, allow_empty=True)
    args = ctx.request.args
    status = await r.registry.delete_collection(ctx.user, rt, namespace, list_options(args), delete_options(args, body))
    return r.answers.respond(200, status, choice)


#: A verb handler: (the routes, the request, its resource, its namespace) -> the answer.
ResourceHandler = Callable[[ResourceRoutes, RequestContext, ResourceType, str], Awaitable[Response]]

#: (verb, a name in the path, a subresource in the path) -> its handler; a key missing is 405. A subresource
#: path always has a name. `watch` and `delete` of a subresource path serve the object's (as they always have).
ROUTES: dict[tuple[str, bool, bool], ResourceHandler] = {
    ("get", True, False): get,
    ("get", True, True): get,
    ("list", False, False): list_,
    ("watch", False, False): watch,
    ("watch", True, False): watch,
    ("watch", True, True): watch,
    ("create", False, False): create,
    ("create", True, True): create_subresource,
    ("update", True, False): update,
    ("update", True, True): update,
    ("patch", True, False): patch,
    ("patch", True, True): patch,
    ("delete", True, False): delete,
    ("delete", True, True): delete,
    ("deletecollection", False, False): delete_collection,
}
