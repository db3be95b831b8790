"""The filter chain every request goes through before its route, as kube-apiserver's handler chain.

`Filters.handle(path)` is the app's one entry:

1. a connection past `--max-connections` is answered 429 (`api.serving.listener`);
2. authentication (`api.authn`): 401 for a bad credential;
3. audit (`api.audit`): the policy's level for the authenticated user, the
   RequestReceived event;
4. impersonation: the `Impersonate-*` headers, each authorized (403);
5. in-flight limits (`api.limits`): 429 past `--max-requests-inflight` /
   `--max-mutating-requests-inflight` (watches count apart, long-running), and
   the request timeout (504, `--request-timeout` or the client's `?timeout=`);
6. the route (`_serve`, `api.app`), which authorizes in the registry (403),
   then validates and stores.

Whatever the answer, the rest of an unread request body is drained so that
the connection can carry the next request (`Connection: close` past
`--max-body-bytes`); then the request is counted (`api.metrics`) and its last
audit event written. A watch is counted and audited when its stream ends; it
holds one of its user's `--max-watches-per-user` slots meanwhile.
"""

from __future__ import annotations

import logging
import re
from operator import itemgetter
from typing import Any, AsyncIterator, Callable

import trio
from quart import Response, g

from api.audit import AuditRecord, RequestFacts, new_audit_id, request_uri, source_ips
from api.authn import impersonate, peer_certificate_der
from api.health import CHECKS, HEALTH_ENDPOINTS
from api.limits import MUTATING, READ_ONLY, is_read_only
from api.serving.listener import over_connection_limit
from api.metrics import request_labels
from api.request_class import current_request
from api.requestinfo import RequestInfo, request_info
from api.responses import Responder
from runtime import errors
from runtime.rbac.user import UserInfo

__all__ = ["Filters", "TrackedBody", "TIMED_OUT"]

log = logging.getLogger(__name__)

#: kube-apiserver's words for a request past its deadline (`NewTimeoutError(..., 0)` adds "Timeout: ").
TIMED_OUT = "Timeout: request did not complete within requested timeout - context deadline exceeded"

#: A header name `Impersonate-*` among newline-joined raw header names.
_IMPERSONATION = re.compile(rb"(?:^|\n)impersonate-", re.IGNORECASE)

_FIXED_PATHS = frozenset(["/", "/api", "/apis", "/version", "/metrics", "/openapi/v2", "/openapi/v3", "/api/v1",
                          "/openapi/v3/api/v1"]
                         + [f"/{e}" for e in HEALTH_ENDPOINTS]
                         + [f"/{e}/{c}" for e in HEALTH_ENDPOINTS for c in CHECKS])


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


def _has_body(headers: Any) -> bool:
    length = headers.get("Content-Length")
    if length is not None:
        return length.strip() not in ("", "0")
    return "Transfer-Encoding" in headers


class Filters(Responder):
    """The filter chain (see the module docs); a subclass routes (`_serve`)."""

    def __init__(self, state: Any) -> None:
        super().__init__(state)
        self.metrics = state.metrics
        self.limits = state.limits
        self.audit = state.auditor

    async def _serve(self, info: RequestInfo, user: UserInfo) -> Response:
        raise NotImplementedError

    async def handle(self, path: str) -> Response:
        began = trio.current_time()
        request = current_request()
        info = request_info(request.method, "/" + path, request.args)
        labels = self._metric_labels(info)
        record: AuditRecord | None = None
        panicked = False
        try:
            if over_connection_limit():
                raise self.limits.refuse_connection()
            requester: UserInfo | None = None
            try:
                requester = self.state.authenticator.authenticate(request.headers,
                                                                  peer_certificate_der(request.scope))
            finally:
                if self.audit.enabled:
                    record = self.audit.begin(info, requester, self._audit_facts)
            user = self._impersonate(requester)
            if record is not None:
                record.acting_as(user, requester)
            if info.verb == "watch" and info.is_resource:
                response = await self._serve(info, user)  # long-running: no in-flight slot, no timeout
            else:
                response = await self._limited(info, user, labels)
        except errors.StatusError as exc:
            response = self._status(exc)
        except Exception as exc:  # the answer is still a Status
            log.exception("internal error serving %s %s", request.method, request.path)
            panicked = True
            response = self._status(errors.InternalError(f"an error on the server ({exc}) has prevented the "
                                                         "request from succeeding"))
        await self._finish_body(response)
        if over_connection_limit():
            self._close_connection(response)
        # Every answer names its audit ID, audited or not (kube-apiserver's WithAuditInit echoes a sent one).
        response.headers["Audit-Id"] = record.facts.audit_id if record is not None else \
            new_audit_id(request.headers.get("Audit-ID"))
        tracked: TrackedBody | None = g.get("tracked")
        if tracked is not None and response.status_code == 200:
            if record is not None:
                record.started(200)
            tracked.on_close(lambda: self._finished(labels, 200, began, record, False))
        else:
            self._finished(labels, response.status_code, began, record, panicked)
        return response

    async def _limited(self, info: RequestInfo, user: UserInfo, labels: tuple[str, ...]) -> Response:
        """The route within an in-flight slot and the request's deadline."""
        admitted = False
        timeout = current_request().args.get("timeout")
        deadline: trio.CancelScope | None = None
        try:
            with self.limits.in_flight(info.verb, user):
                admitted = True
                with trio.move_on_after(self.limits.timeout(timeout)) as deadline:
                    return await self._serve(info, user)
                raise errors.Timeout(TIMED_OUT)
        except errors.TooManyRequests:
            if not admitted:
                self.metrics.terminated(labels[:6], 429, READ_ONLY if is_read_only(info.verb) else MUTATING)
            raise
        except errors.Timeout:
            if deadline is not None and deadline.cancelled_caught:
                self.metrics.terminated(labels[:6], 504)
            raise

    def _impersonate(self, requester: UserInfo) -> UserInfo:
        # The raw names in one pass in C (header names hold no newline): this runs for every request.
        request = current_request()
        if _IMPERSONATION.search(b"\n".join(map(itemgetter(0), request.scope.get("headers") or ()))):
            return impersonate(requester, request.headers, self.state.registry.decide, domain=self.domain)
        return requester

    def _finished(self, labels: tuple[str, ...], code: int, began: float, record: AuditRecord | None,
                  panicked: bool) -> None:
        """Count the request and write its last audit event."""
        self.metrics.observe(labels[:6], labels[6], code, trio.current_time() - began)
        if record is not None:
            record.complete(code, panicked=panicked)

    def _audit_facts(self) -> RequestFacts:
        request = current_request()
        client = request.scope.get("client")
        return RequestFacts(request_uri(request.scope.get("raw_path") or request.path.encode(),
                                        request.scope.get("query_string", b"")),
                            source_ips(request.headers, client[0] if client else None),
                            request.headers.get("User-Agent", ""), new_audit_id(request.headers.get("Audit-ID")))

    # ---- watches ---------------------------------------------------------------------------------

    def track_watch(self, user: UserInfo, labels_of: RequestInfo, chunks: AsyncIterator[bytes]) -> TrackedBody:
        """The body of a watch answer, holding one of `user`'s watch slots and the long-running gauge
        until it ends. Raises TooManyRequests when `user` has `max_watches_per_user` open."""
        slot = self.limits.watch(user)
        slot.__enter__()
        gauge = self.metrics.longrunning(self._metric_labels(labels_of)[:6])
        gauge.inc()
        tracked = TrackedBody(chunks)

        def release() -> None:
            gauge.dec()
            slot.__exit__(None, None, None)
        tracked.on_close(release)
        g.tracked = tracked
        return tracked

    # ---- labels ----------------------------------------------------------------------------------

    def _metric_labels(self, info: RequestInfo) -> tuple[str, ...]:
        """(verb, group, version, resource, subresource, scope, dry_run) of the request's metrics.

        Resources and paths the server does not serve are `other`: a client cannot grow the label sets.
        """
        if info.is_resource:
            known = self.scheme.by_resource(info.group, info.version, info.resource) is not None
            group, version, resource = (info.group, info.version, info.resource) if known else ("", "", "other")
            subresource = info.subresource if known else ""
        else:
            group = version = resource = ""
            subresource = self._path_label(info.path)
        request = current_request()
        apply = info.verb == "patch" and (request.headers.get("Content-Type") or "").startswith(
            "application/apply-patch")
        labels = request_labels(info.verb, request.method, is_resource=info.is_resource, group=group,
                                version=version, resource=resource, subresource=subresource,
                                namespace=info.namespace, name=info.name, path=subresource, apply=apply)
        dry_run = ",".join(sorted(set(request.args.getlist("dryRun")))) if "dryRun" in request.args else ""
        return (*labels, dry_run)

    def _path_label(self, path: str) -> str:
        path = path.rstrip("/") or "/"
        if path in _FIXED_PATHS:
            return path
        parts = path.strip("/").split("/")
        if parts[:2] == ["openapi", "v3"]:
            parts = parts[2:]
        if parts and parts[0] == "apis" and len(parts) in (2, 3) and \
                any(rt.group == parts[1] and (len(parts) == 2 or rt.version == parts[2]) for rt in self.scheme.types):
            return path
        return "other"

    # ---- the body --------------------------------------------------------------------------------

    async def _finish_body(self, response: Response) -> None:
        """Read what is left of the request body, so that the connection can carry the next request.

        An answer given before the body was read (401, 403, 404, 405, 413, 415, a 400 on the query...)
        would otherwise leave the body's rest on the connection, and Hypercorn would close it without
        saying so. Up to `max_body_bytes` are read and dropped (within the body timeout); past that, or
        when it stops arriving, the answer says `Connection: close` (HTTP/1.x; HTTP/2 resets the stream).
        """
        if g.get("body_incomplete"):
            self._close_connection(response)
            return
        request = current_request()
        if g.get("body_read") or not _has_body(request.headers):
            return
        g.body_read = True
        limit = self.state.max_body_bytes
        size = 0
        drained = False
        with trio.move_on_after(self.state.body_timeout):
            async for chunk in request.body:
                size += len(chunk)
                if size > limit:
                    break
            else:
                drained = True
        if not drained:
            self._close_connection(response)

    @staticmethod
    def _close_connection(response: Response) -> None:
        if current_request().scope.get("http_version", "1.1") in ("1.0", "1.1"):
            response.headers["Connection"] = "close"
