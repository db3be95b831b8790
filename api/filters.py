"""The filter chain every request goes through before its route, composed as kube-apiserver's handler chain.

A `Handler` is an async function of the request's `RequestContext` returning
its answer; each filter is a function of the next handler returning a
handler, as kube-apiserver's `WithAuthentication(handler, ...)`
(`endpoints/filters/`). `build_handler_chain` composes them in one place, in
kube's order (its `DefaultBuildHandlerChain`), outermost first:

1. `with_request_info` (the app's one view): the request's info (`api.requestinfo`) and its
   metric labels, in a new `RequestContext`;
2. `with_accounting`: after the answer, the rest of an unread request body is
   drained so that the connection can carry the next request (`Connection:
   close` past `--max-body-bytes`), the answer names its audit ID, the request
   is counted (`api.metrics`) and its last audit event written. A watch is
   counted and audited when its stream ends (`track_watch`);
3. `with_status_answers` (kube's WithPanicRecovery): a `StatusError` becomes its
   Status, any other exception a logged 500 (audited as Panic);
4. `with_connection_limit`: a connection past `--max-connections` is answered
   429 (`api.serving.listener`);
5. `with_authentication` (`api.authn`): 401 for a bad credential, audited
   (kube's WithFailedAuthenticationAudit);
6. `with_audit` (`api.audit`): the policy's level for the authenticated user,
   the RequestReceived event;
7. `with_impersonation`: the `Impersonate-*` headers, each authorized (403);
8. `with_limits` (`api.limits`): 429 past `--max-requests-inflight` /
   `--max-mutating-requests-inflight`, and the request timeout (504,
   `--request-timeout` or the client's `?timeout=`); watches count apart
   (long-running), holding one of their user's `--max-watches-per-user` slots;
9. the route (`api.app`), which authorizes in the registry (403), then
   validates and stores.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, AsyncIterator, Awaitable, Callable

import trio
from quart import Response

from api.audit import AuditRecord, Auditor, RequestFacts, new_audit_id, request_uri, source_ips
from api.authn import impersonate, peer_certificate_der
from api.health import CHECKS, HEALTH_ENDPOINTS
from api.limits import MUTATING, READ_ONLY, RequestLimits, is_read_only
from api.metrics import APIServerMetrics, request_labels
from api.negotiation import content_media_type
from api.request_class import MiniplaneRequest, current_request
from api.requestinfo import request_info
from api.responses import Responder
from api.serving.listener import over_connection_limit
from runtime.machinery import errors
from runtime.server.rbac import RequestInfo
from runtime.server.rbac.user import UserInfo
from runtime.machinery.scheme import Scheme

__all__ = ["RequestContext", "Handler", "TrackedBody", "TIMED_OUT", "build_handler_chain", "track_watch",
           "with_request_info", "with_accounting", "with_status_answers", "with_connection_limit",
           "with_authentication", "with_audit", "with_impersonation", "with_limits"]

log = logging.getLogger(__name__)

#: kube-apiserver's words for a request past its deadline (`NewTimeoutError(..., 0)` adds "Timeout: ").
TIMED_OUT = "Timeout: request did not complete within requested timeout - context deadline exceeded"

#: The methods whose request may carry a body (whose Content-Type is parsed).
_WITH_BODY = frozenset(["POST", "PUT", "PATCH", "DELETE"])

#: A header name `Impersonate-*` among newline-joined raw header names.
_IMPERSONATION = re.compile(rb"(?:^|\n)impersonate-", re.IGNORECASE)

_FIXED_PATHS = frozenset(["/", "/api", "/apis", "/version", "/metrics", "/openapi/v2", "/openapi/v3", "/api/v1",
                          "/openapi/v3/api/v1"]
                         + [f"/{e}" for e in HEALTH_ENDPOINTS]
                         + [f"/{e}/{c}" for e in HEALTH_ENDPOINTS for c in CHECKS])


@dataclass(slots=True)
class RequestContext:
    """One request as the filters and the route see it (kube's request context): set by the filter that
    learns each part, read by those inside it.

    `content_type`: the media type of its body (`content_media_type`, parsed once; "" for a method
    without a body); `labels`: (verb, group, version, resource, subresource, scope, dry_run) of its metrics;
    `body_read`/`body_incomplete`: the route read the body / stopped before its end;
    `tracked`: a watch's answer body, counted when it ends.
    """

    request: MiniplaneRequest
    info: RequestInfo
    content_type: str
    labels: tuple[str, ...]
    began: float
    requester: UserInfo | None = None
    user: UserInfo | None = None
    record: AuditRecord | None = None
    panicked: bool = False
    body_read: bool = False
    body_incomplete: bool = False
    tracked: "TrackedBody | None" = None


#: The route and every filter: the request's context in, its answer (to await) out. A filter with nothing
#: to do after the next handler is a plain function returning that handler's awaitable: one call per
#: request rather than a coroutine resumed at every await of the request (the body read, the store).
Handler = Callable[[RequestContext], Awaitable[Response]]


def build_handler_chain(route: Handler, state: Any, answers: Responder) -> Callable[[str], Awaitable[Response]]:
    """The app's view: `route` behind every filter, in kube-apiserver's order (see the module doc)."""
    handler = with_limits(route, state.limits, state.metrics)
    handler = with_impersonation(handler, state.registry.decide, state.registry.scheme.domain)
    handler = with_audit(handler, state.auditor)
    handler = with_authentication(handler, state.authenticator, state.auditor)
    handler = with_connection_limit(handler, state.limits)
    handler = with_status_answers(handler, answers)
    handler = with_accounting(handler, state.metrics, state.max_body_bytes, state.body_timeout)
    return with_request_info(handler, state.registry.scheme)


def with_request_info(handler: Handler, scheme: Scheme) -> Callable[[str], Awaitable[Response]]:
    """The view of every path: the request's info and metric labels in a new context, then `handler`."""
    async def view(path: str) -> Response:
        request = current_request()
        info = request_info(request.method, "/" + path, request.args)
        media = content_media_type(request.headers.get("Content-Type")) if request.method in _WITH_BODY else ""
        return await handler(RequestContext(request, info, media, _metric_labels(scheme, request, info, media),
                                            trio.current_time()))
    return view


def with_accounting(handler: Handler, metrics: APIServerMetrics, max_body_bytes: int, body_timeout: float) -> Handler:
    """`handler`'s answer, then the body drained (up to `max_body_bytes`, within `body_timeout`), the audit ID
    named, the request counted and audited."""
    def finished(ctx: RequestContext, code: int, panicked: bool) -> None:
        metrics.observe(ctx.labels[:6], ctx.labels[6], code, trio.current_time() - ctx.began)
        if ctx.record is not None:
            ctx.record.complete(code, panicked=panicked)

    async def accounted(ctx: RequestContext) -> Response:
        response = await handler(ctx)
        await _finish_body(ctx, response, max_body_bytes, body_timeout)
        if over_connection_limit():
            _close_connection(ctx, response)
        # Every answer names its audit ID, audited or not (kube-apiserver's WithAuditInit echoes a sent one).
        record = ctx.record
        response.headers["Audit-Id"] = record.facts.audit_id if record is not None else \
            new_audit_id(ctx.request.headers.get("Audit-ID"))
        tracked = ctx.tracked
        if tracked is not None and response.status_code == 200:
            if record is not None:
                record.started(200)
            tracked.on_close(lambda: finished(ctx, 200, False))
        else:
            finished(ctx, response.status_code, ctx.panicked)
        return response
    return accounted


def with_status_answers(handler: Handler, answers: Responder) -> Handler:
    """`handler`'s answer; a raised `StatusError` answered as its Status, any other exception as a 500."""
    async def answered(ctx: RequestContext) -> Response:
        try:
            return await handler(ctx)
        except errors.StatusError as exc:
            return answers.status(exc)
        except Exception as exc:  # the answer is still a Status
            log.exception("internal error serving %s %s", ctx.request.method, ctx.request.path)
            ctx.panicked = True
            return answers.status(errors.InternalError(f"an error on the server ({exc}) has prevented the "
                                                       "request from succeeding"))
    return answered


def with_connection_limit(handler: Handler, limits: RequestLimits) -> Handler:
    """429 for a request on a connection opened past `--max-connections`; else `handler`."""
    def admitted(ctx: RequestContext) -> Awaitable[Response]:
        if over_connection_limit():
            raise limits.refuse_connection()
        return handler(ctx)
    return admitted


def with_authentication(handler: Handler, authenticator: Any, auditor: Auditor) -> Handler:
    """Who sent the request (`ctx.requester`), then `handler`; a failure (401) is audited with no user."""
    def authenticated(ctx: RequestContext) -> Awaitable[Response]:
        request = ctx.request
        try:
            ctx.requester = authenticator.authenticate(request.headers, peer_certificate_der(request.scope))
        except BaseException:
            if auditor.enabled:
                ctx.record = auditor.begin(ctx.info, None, lambda: _audit_facts(request))
            raise
        return handler(ctx)
    return authenticated


def with_audit(handler: Handler, auditor: Auditor) -> Handler:
    """The request's audit record (`ctx.record`) at its policy level for the requester, then `handler`."""
    if not auditor.enabled:  # fixed for the server's life: no filter at all
        return handler

    def audited(ctx: RequestContext) -> Awaitable[Response]:
        request = ctx.request
        ctx.record = auditor.begin(ctx.info, ctx.requester, lambda: _audit_facts(request))
        return handler(ctx)
    return audited


def with_impersonation(handler: Handler, decide: Callable[..., Any], domain: str) -> Handler:
    """Who the request acts as (`ctx.user`: the requester, or whom its `Impersonate-*` headers name, each
    authorized: 403), then `handler`."""
    def impersonating(ctx: RequestContext) -> Awaitable[Response]:
        request, requester = ctx.request, ctx.requester
        # The raw names in one pass in C (header names hold no newline): this runs for every request.
        if _IMPERSONATION.search(b"\n".join(map(itemgetter(0), request.scope.get("headers") or ()))):
            ctx.user = impersonate(requester, request.headers, decide, domain=domain)
        else:
            ctx.user = requester
        if ctx.record is not None:
            ctx.record.acting_as(ctx.user, requester)
        return handler(ctx)
    return impersonating


def with_limits(handler: Handler, limits: RequestLimits, metrics: APIServerMetrics) -> Handler:
    """`handler` within an in-flight slot and the request's deadline; a watch (long-running) without."""
    async def limited(ctx: RequestContext) -> Response:
        info = ctx.info
        if info.verb == "watch" and info.resource_request:
            return await handler(ctx)  # long-running: no in-flight slot, no timeout
        admitted = False
        deadline: trio.CancelScope | None = None
        try:
            with limits.in_flight(info.verb, ctx.user):
                admitted = True
                with trio.move_on_after(limits.timeout(ctx.request.args.get("timeout"))) as deadline:
                    return await handler(ctx)
                raise errors.Timeout(TIMED_OUT)
        except errors.TooManyRequests:
            if not admitted:
                metrics.terminated(ctx.labels[:6], 429, READ_ONLY if is_read_only(info.verb) else MUTATING)
            raise
        except errors.Timeout:
            if deadline is not None and deadline.cancelled_caught:
                metrics.terminated(ctx.labels[:6], 504)
            raise
    return limited


# ---- watches ---------------------------------------------------------------------------------


class TrackedBody:
    """An answer's streamed body that calls its close callbacks once: at its end, when closed, or when
    dropped before it started (a client gone before the answer)."""

    def __init__(self, chunks: AsyncIterator[bytes]) -> None:
        self._chunks = chunks
        self._callbacks: list[Callable[[], None]] = []
        self._closed = False

    def on_close(self, callback: Callable[[], None]) -> None:
        self._callbacks.append(callback)

    def __aiter__(self) -> "TrackedBody":
        return self

    async def __anext__(self) -> bytes:
        try:
            return await self._chunks.__anext__()
        except StopAsyncIteration:
            self._close()
            raise

    async def aclose(self) -> None:
        try:
            await self._chunks.aclose()  # type: ignore[attr-defined]
        finally:
            self._close()

    def __del__(self) -> None:
        self._close()

    def _close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for callback in self._callbacks:
            callback()


def track_watch(ctx: RequestContext, limits: RequestLimits, metrics: APIServerMetrics,
                chunks: AsyncIterator[bytes]) -> TrackedBody:
    """The body of a watch answer, holding one of the user's watch slots and the long-running gauge
    until it ends (`ctx.tracked`: counted and audited then). Raises TooManyRequests when the user has
    `max_watches_per_user` open."""
    slot = limits.watch(ctx.user)
    slot.__enter__()
    gauge = metrics.longrunning(ctx.labels[:6])
    gauge.inc()
    tracked = TrackedBody(chunks)

    def release() -> None:
        gauge.dec()
        slot.__exit__(None, None, None)
    tracked.on_close(release)
    ctx.tracked = tracked
    return tracked


# ---- labels and facts ------------------------------------------------------------------------


def _metric_labels(scheme: Scheme, request: MiniplaneRequest, info: RequestInfo, media: str) -> tuple[str, ...]:
    """(verb, group, version, resource, subresource, scope, dry_run) of the request's metrics.

    Resources and paths the server does not serve are `other`: a client cannot grow the label sets.
    """
    if info.resource_request:
        known = scheme.by_resource(info.api_group, info.api_version, info.resource) is not None
        group, version, resource = (info.api_group, info.api_version, info.resource) if known else ("", "", "other")
        subresource = info.subresource if known else ""
    else:
        group = version = resource = ""
        subresource = _path_label(scheme, info.path)
    apply = info.verb == "patch" and media.startswith("application/apply-patch")
    labels = request_labels(info.verb, request.method, is_resource=info.resource_request, group=group,
                            version=version, resource=resource, subresource=subresource,
                            namespace=info.namespace, name=info.name, path=subresource, apply=apply)
    dry_run = ",".join(sorted(set(request.args.getlist("dryRun")))) if "dryRun" in request.args else ""
    return (*labels, dry_run)


def _path_label(scheme: Scheme, path: str) -> str:
    path = path.rstrip("/") or "/"
    if path in _FIXED_PATHS:
        return path
    parts = path.strip("/").split("/")
    if parts[:2] == ["openapi", "v3"]:
        parts = parts[2:]
    if parts and parts[0] == "apis" and len(parts) in (2, 3) and \
            any(rt.group == parts[1] and (len(parts) == 2 or rt.version == parts[2]) for rt in scheme.types):
        return path
    return "other"


def _audit_facts(request: MiniplaneRequest) -> RequestFacts:
    client = request.scope.get("client")
    return RequestFacts(request_uri(request.scope.get("raw_path") or request.path.encode(),
                                    request.scope.get("query_string", b"")),
                        source_ips(request.headers, client[0] if client else None),
                        request.headers.get("User-Agent", ""), new_audit_id(request.headers.get("Audit-ID")))


# ---- the body --------------------------------------------------------------------------------


def _has_body(headers: Any) -> bool:
    length = headers.get("Content-Length")
    if length is not None:
        return length.strip() not in ("", "0")
    return "Transfer-Encoding" in headers


async def _finish_body(ctx: RequestContext, response: Response, limit: int, timeout: float) -> None:
    """Read what is left of the request body, so that the connection can carry the next request.

    An answer given before the body was read (401, 403, 404, 405, 413, 415, a 400 on the query...)
    would otherwise leave the body's rest on the connection, and Hypercorn would close it without
    saying so. Up to `limit` bytes are read and dropped (within `timeout`); past that, or when it
    stops arriving, the answer says `Connection: close` (HTTP/1.x; HTTP/2 resets the stream).
    """
    if ctx.body_incomplete:
        _close_connection(ctx, response)
        return
    request = ctx.request
    if ctx.body_read or not _has_body(request.headers):
        return
    ctx.body_read = True
    size = 0
    drained = False
    with trio.move_on_after(timeout):
        async for chunk in request.body:
            size += len(chunk)
            if size > limit:
                break
        else:
            drained = True
    if not drained:
        _close_connection(ctx, response)


def _close_connection(ctx: RequestContext, response: Response) -> None:
    if ctx.request.scope.get("http_version", "1.1") in ("1.0", "1.1"):
        response.headers["Connection"] = "close"
