"""The fast path: a GET of one object the watch cache holds, answered in front of Quart (issue 41).

Why: such a GET needs the request's head, its user, an RBAC decision (cached) and the object's bytes
(encoded once per resourceVersion and media type). Through Quart it also built a request and an app
context, two tasks and their channel, werkzeug's headers, routing and response, and blinker's signals:
more than half of the Python calls of the request (`bench/profile_get.py`).

Contract: `CachedGets(app, state)` is an ASGI app standing in front of `app` (the Quart app of
`api.app`). It answers a GET itself only when every step of the full path would succeed as it does here,
and the answer is the same bytes (status, headers in order, body): a GET (no query string, no body)
of a named object with no subresource, of a kind the server serves in its scope and converts in place,
by a user the authenticator accepts, with no `Impersonate-*` header, on a connection within
`--max-connections`, with auditing off, allowed by the authorizer, within its in-flight limit, in a
media type served as itself (JSON, YAML, Protobuf, CBOR: not a Table or a partial metadata), of an
object the cache holds once it is fresh; gzipped when asked (from the object's cache of its encodings),
unless pretty-printed. Any other request, or any step that would
answer otherwise (401, 403, 404, 406, 429, a lagging cache, an error of the store), goes to `app`
untouched, before anything is answered or counted here: the full path then serves it from its start.
What the full path does on the way for this request is done here too: the in-flight slot and the
request's deadline held over the read (not over the write, as the full path's filters hold them over the
handler), the request counted (`apiserver_request_total` and its duration), the answer's `Audit-Id`. A
failure of any kind before the answer starts (an encoder's bug) is left to the full path too, which
answers it as its Status.
"""

from __future__ import annotations

from typing import Any

import trio

from api.authn import peer_certificate_der
from api.audit import new_audit_id
from api.codecs import encode_stored, gzip_stored
from api.directroutes import routed_as_is
from api.metrics import request_labels
from api.negotiation import negotiate, wants_pretty
from api.requestinfo import request_info
from api.responses import gzip_asked
from api.serving.listener import over_connection_limit
from runtime.machinery import errors
from runtime.machinery.serializer import protobuf

__all__ = ["CachedGets"]

_NO_QUERY: dict[str, str] = {}

#: The answer's fixed headers, as the full path writes them (`Responder.respond`, then Quart's length).
_CACHE_CONTROL = (b"cache-control", b"no-cache, private")
_GZIPPED = [(b"content-encoding", b"gzip"), (b"vary", b"Accept-Encoding")]


class _Headers(dict):
    """A request's headers by lower-case name, every value in order: what the authenticator reads
    (`getlist`)."""

    def getlist(self, name: str) -> list[str]:
        return self.get(name.lower(), [])

    def first(self, name: str) -> str | None:
        values = self.get(name)
        return values[0] if values else None


class CachedGets:
    """The ASGI app of the server: cached GETs here, the rest by `app` (see the module doc)."""

    def __init__(self, app: Any, state: Any) -> None:
        self.app = app
        self.state = state
        self.registry = state.registry
        self.scheme = state.registry.scheme
        self.domain = self.scheme.domain

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "GET" and not scope.get("query_string"):
            if await self._answered(scope, send):
                return
        await self.app(scope, receive, send)

    async def _answered(self, scope: dict[str, Any], send: Any) -> bool:
        """Whether this path answered the request (see the module doc); False: nothing was done."""
        began = trio.current_time()
        if not routed_as_is(scope):
            return False  # escapes and empty segments: the full path's routing rules
        info = request_info("GET", scope["path"], _NO_QUERY)
        if not info.resource_request or not info.name or info.subresource:
            return False
        rt = self.scheme.by_resource(info.api_group, info.api_version, info.resource)
        if rt is None or rt.namespaced != bool(info.namespace):
            return False
        headers = _Headers()
        for name, value in scope["headers"]:
            headers.setdefault(name.decode("latin-1"), []).append(value.decode("latin-1"))
        if (self.state.auditor.enabled or over_connection_limit() or "content-length" in headers
                or "transfer-encoding" in headers or any(n.startswith("impersonate-") for n in headers)):
            return False
        choice = self._choice(headers, rt)
        if choice is None:
            return False
        try:
            user = self.state.authenticator.authenticate(headers, peer_certificate_der(scope))
            slot = self.state.limits.in_flight("get", user)
            slot.__enter__()
        except errors.StatusError:
            return False
        answer: list[tuple[bytes, bytes]] | None = None
        # Held as the full path holds them: the slot and the deadline over the read, not over the write.
        try:
            with trio.move_on_after(self.state.limits.timeout(None)):
                obj = await self.registry.get_cached(user, rt, info.namespace, info.name)
                if obj is not None:
                    answer, body = self._answer(obj, choice, headers)
        except Exception:  # a refusal or a failure: the full path answers it in its words (its Status)
            return False
        finally:
            slot.__exit__(None, None, None)
        if answer is None:
            return False
        labels = request_labels("get", "GET", is_resource=True, group=info.api_group, version=info.api_version,
                                resource=info.resource, subresource="", namespace=info.namespace, name=info.name,
                                path="", apply=False)
        self.state.metrics.observe(labels, "", 200, trio.current_time() - began)
        answer += [(b"content-length", b"%d" % len(body)),
                   (b"audit-id", new_audit_id(headers.first("audit-id")).encode("latin-1"))]
        await send({"type": "http.response.start", "status": 200, "headers": answer})
        await send({"type": "http.response.body", "body": body, "more_body": False})
        return True

    def _answer(self, obj: Any, choice: Any, headers: _Headers) -> tuple[list[tuple[bytes, bytes]] | None, bytes]:
        """The answer's headers (but its length and Audit-Id) and body; None when the full path answers."""
        pretty = choice.codec == "json" and wants_pretty(None, headers.first("user-agent") or "")
        body = encode_stored(choice.codec, obj, pretty=pretty)
        answer = [(b"content-type", choice.media_type.encode("latin-1")), _CACHE_CONTROL]
        if len(body) >= self.state.min_compress_bytes and self._gzip(headers):
            if pretty:
                return None, b""  # compressed per request: the full path's
            body = gzip_stored(choice.codec, obj)
            answer += _GZIPPED
        return answer, body

    def _choice(self, headers: _Headers, rt: Any) -> Any:
        """The negotiated media type when it is the object as itself; None when the full path answers."""
        try:
            choice = negotiate(headers.first("accept"), domain=self.domain,
                               cbor=self.registry.gate("CBORServingAndStorage"))
        except errors.StatusError:
            return None
        if choice.as_kind or (choice.codec == "protobuf" and not protobuf.supports(rt.api_version, rt.kind)):
            return None
        return choice

    def _gzip(self, headers: _Headers) -> bool:
        return self.registry.gate("APIResponseCompression") and gzip_asked(headers.first("accept-encoding") or "")
