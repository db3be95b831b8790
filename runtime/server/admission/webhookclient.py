"""How kube-apiserver calls a webhook: a JSON POST over HTTPS to a `clientConfig`, bounded by a timeout.

Admission webhooks and CRD conversion webhooks name their server the same
way (`clientConfig`: a `url`, or a `service` with namespace, name, port and
path) and trust it the same way (`caBundle`, else the system's roots).
`WebhookClient.post_json(config, payload, timeout=s)` sends one request and
answers the decoded JSON of a 2xx answer; anything else raises
`WebhookCallError` whose `message` is Go's words for the failed call, as
kube's errors quote it: `Post "https://host:port/path?timeout=10s": context
deadline exceeded`, `... connect: connection refused`, `... tls: failed to
verify certificate: x509: certificate signed by unknown authority`. Callers
prefix it as their kind of webhook does (`failed calling webhook "x":
failed to call webhook: ...`, `conversion webhook for ... failed: ...`).

A `service` reference is resolved as kube-apiserver with endpoint routing:
the Service's port (`port`, default 443) maps to its target through the
Service's Endpoints (else its EndpointSlices), to one ready address; an
`ExternalName` Service answers its external name and the port itself (as
kube's resolver). The TLS server name stays `<name>.<namespace>.svc`, so a
certificate for the Service's DNS name verifies wherever it is served
(Endpoints may not hold loopback addresses, by kube's validation: a test
serving on 127.0.0.1 names it with an ExternalName Service, `localhost`).
The request carries kube's `?timeout=<n>s` query parameter. Clients (their
connection pools) are kept per CA bundle.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import ssl
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit, urlunsplit

import anyio

from runtime.models import catalog
from runtime.server.admission.context import namespace_objects, resource_type

if TYPE_CHECKING:
    import httpx

__all__ = ["WebhookCallError", "WebhookClient", "ServiceResolver", "CacheServiceResolver", "service_host"]

_DEFAULT_PORT = 443


def _httpx() -> Any:
    # late import: httpx (and its command line's rich and pygments) is a tenth of the server's start-up,
    # and only a server calling a webhook needs it.
    import httpx

    return httpx


class WebhookCallError(Exception):
    """A webhook call that did not answer 2xx JSON; `message` in Go's words (see the module doc)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status  # the HTTP status of an answer that came, else None


class ServiceResolver(Protocol):
    def resolve(self, namespace: str, name: str, port: int) -> tuple[str, int]:
        """The address (host, port) serving `port` of Service `namespace/name`; raises WebhookCallError."""
        ...


def service_host(namespace: str, name: str) -> str:
    """The DNS name a Service's serving certificate is for (what kube-apiserver verifies)."""
    return f"{name}.{namespace}.svc"


class CacheServiceResolver:
    """Resolves Services through the watch cache (`context.kind_cache`) of Services, Endpoints and
    EndpointSlices, as kube-apiserver's endpoint service resolver reads its informers."""

    def __init__(self, context: Any) -> None:
        self.context = context

    def _cached(self, info: Any, namespace: str, name: str) -> dict[str, Any] | None:
        rt = resource_type(self.context.scheme, info)
        if rt is None:
            return None
        stored = self.context.kind_cache(rt).get(rt.storage_key(namespace, name))
        return None if stored is None else stored.obj

    def _slices(self, namespace: str, name: str) -> list[dict[str, Any]]:
        rt = resource_type(self.context.scheme, catalog.ENDPOINT_SLICE)
        if rt is None:
            return []
        return [s.obj for s in namespace_objects(self.context, rt, namespace)
                if ((s.obj.get("metadata") or {}).get("labels") or {}).get("kubernetes.io/service-name") == name]

    def resolve(self, namespace: str, name: str, port: int) -> tuple[str, int]:
        service = self._cached(catalog.SERVICE, namespace, name)
        if service is None:
            raise WebhookCallError(f'service "{name}" not found')
        spec = service.get("spec") or {}
        if spec.get("type") == "ExternalName":
            return spec.get("externalName") or "", port
        ports = spec.get("ports") or []
        service_port = next((p for p in ports if p.get("port") == port), None)
        if service_port is None:
            raise WebhookCallError(f'no service port {port} found for service "{name}"')
        port_name = service_port.get("name") or ""
        candidates: list[tuple[str, int]] = []
        endpoints = self._cached(catalog.ENDPOINTS, namespace, name)
        for subset in (endpoints or {}).get("subsets") or []:
            target = next((p.get("port") for p in subset.get("ports") or [] if (p.get("name") or "") == port_name),
                          None)
            if target is not None:
                candidates += [(a["ip"], target) for a in subset.get("addresses") or [] if a.get("ip")]
        if not candidates:
            for endpoint_slice in self._slices(namespace, name):
                target = next((p.get("port") for p in endpoint_slice.get("ports") or []
                               if (p.get("name") or "") == port_name), None)
                if target is None:
                    continue
                for endpoint in endpoint_slice.get("endpoints") or []:
                    if (endpoint.get("conditions") or {}).get("ready", True) is not False:
                        candidates += [(address, target) for address in endpoint.get("addresses") or []]
        if not candidates:
            raise WebhookCallError(f'no endpoints available for service "{name}"')
        return random.choice(candidates)  # kube spreads calls over the ready addresses


def _tls_context(ca_bundle: str | None) -> ssl.SSLContext:
    """Trust `ca_bundle` (the base64 of PEM certificates, as a stored `caBundle`), else the system's roots.
    A bundle that does not decode trusts nothing (every call then fails verification, as Go's would)."""
    if not ca_bundle:
        return ssl.create_default_context()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # hostname checked, only the bundle's CAs trusted
    try:
        context.load_verify_locations(cadata=base64.b64decode(ca_bundle).decode())
    except (ValueError, ssl.SSLError):
        pass
    return context


def _causes(exc: BaseException) -> list[BaseException]:
    """`exc` and every exception behind it (causes, contexts, a group's members)."""
    seen: list[BaseException] = []
    todo = [exc]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.append(current)
        todo += [e for e in (current.__cause__, current.__context__) if e is not None]
        todo += list(getattr(current, "exceptions", ()))
    return seen


def _go_reason(exc: BaseException, address: str) -> str:
    """Go's words for a failed connection or exchange with `address` (what kube's error messages show)."""
    causes = _causes(exc)
    for cause in causes:
        if isinstance(cause, ssl.SSLCertVerificationError):
            if "mismatch" in str(cause).lower():
                return "tls: failed to verify certificate: x509: certificate is not valid for the requested name"
            return "tls: failed to verify certificate: x509: certificate signed by unknown authority"
    if any(isinstance(c, ConnectionRefusedError) for c in causes):
        return f"dial tcp {address}: connect: connection refused"
    if any(isinstance(c, ConnectionResetError) for c in causes):
        return f"read tcp {address}: read: connection reset by peer"
    httpx = _httpx()
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, ssl.SSLError)):
        return "EOF"
    return str(exc) or type(exc).__name__


class WebhookClient:
    """POSTs JSON to webhooks (see the module doc); one per server, its connection pools kept per CA bundle."""

    def __init__(self, services: ServiceResolver) -> None:
        self.services = services
        self._clients: dict[str, httpx.AsyncClient] = {}

    def url_of(self, client_config: dict[str, Any]) -> str:
        """The URL the config names, as kube's errors show it (a service as `https://name.ns.svc:port/path`)."""
        if client_config.get("url"):
            return client_config["url"]
        service = client_config.get("service") or {}
        host = service_host(service.get("namespace", ""), service.get("name", ""))
        return f"https://{host}:{service.get('port') or _DEFAULT_PORT}{service.get('path') or ''}"

    def _client(self, ca_bundle: str | None) -> httpx.AsyncClient:
        key = hashlib.sha256((ca_bundle or "").encode()).hexdigest()
        client = self._clients.get(key)
        if client is None:
            httpx = _httpx()
            client = httpx.AsyncClient(verify=_tls_context(ca_bundle), trust_env=False,
                                       limits=httpx.Limits(max_keepalive_connections=16))
            self._clients[key] = client
        return client

    async def post_json(self, client_config: dict[str, Any], payload: Any, *, timeout: float) -> Any:
        """POST `payload` as JSON; the decoded 2xx answer, else WebhookCallError (a timeout included)."""
        shown = _with_timeout(self.url_of(client_config), timeout)
        target, extensions = shown, {}
        # kube-apiserver's webhook rest.Config (util/webhook/authentication.go setGlobalDefaults) names it so
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "User-Agent": "kube-apiserver-admission"}
        service = client_config.get("service")
        if not client_config.get("url") and service:
            port = service.get("port") or _DEFAULT_PORT
            ip, target_port = self.services.resolve(service.get("namespace", ""), service.get("name", ""), port)
            host = service_host(service.get("namespace", ""), service.get("name", ""))
            parts = urlsplit(shown)
            netloc = f"[{ip}]:{target_port}" if ":" in ip else f"{ip}:{target_port}"
            target = urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))
            extensions = {"sni_hostname": host}
            headers["Host"] = f"{host}:{port}"
        body = json.dumps(payload).encode()
        client = self._client(client_config.get("caBundle"))
        httpx = _httpx()
        answer = None
        with anyio.move_on_after(timeout):
            try:
                answer = await client.post(target, content=body, headers=headers, extensions=extensions,
                                           timeout=httpx.Timeout(timeout + 1))
            except (httpx.HTTPError, ssl.SSLError, OSError) as exc:
                raise WebhookCallError(f'Post "{shown}": {_go_reason(exc, urlsplit(target).netloc)}') from None
        if answer is None:
            raise WebhookCallError(f'Post "{shown}": context deadline exceeded')
        if not 200 <= answer.status_code < 300:
            text = answer.text.strip()
            detail = f'an error on the server ("{text[:200]}") has prevented the request from succeeding' if text \
                else f"the server responded with the status code {answer.status_code} but did not return more " \
                     "information"
            raise WebhookCallError(detail, status=answer.status_code)
        try:
            return json.loads(answer.content)
        except ValueError as exc:
            raise WebhookCallError(f"couldn't get version/kind; json parse error: {exc}",
                                   status=answer.status_code) from None

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()


def _with_timeout(url: str, timeout: float) -> str:
    """kube's `?timeout=<n>s` on every webhook request."""
    seconds = f"{int(timeout)}s" if float(timeout).is_integer() else f"{timeout}s"
    return f"{url}{'&' if '?' in url else '?'}timeout={seconds}"
