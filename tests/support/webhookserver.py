"""A real HTTPS webhook server for tests: a trio handler served on 127.0.0.1, every request recorded.

Contract: `server = await start_webhook_server(nursery, handler, hosts=())` serves
HTTP/1.1 over TLS on a free port of 127.0.0.1 until `nursery` is cancelled and
returns a `WebhookServer`: its `url` (`https://127.0.0.1:PORT`), `ca_bundle`
(the base64 PEM of the CA that signed its certificate, as a webhook's
`clientConfig.caBundle` takes it), `client_config(path)` (a `clientConfig`
with `url` and `caBundle`), and `requests`, every `WebhookRequest` it got,
in order (recorded before the handler runs, so a handler that hangs or
resets is recorded too).

`handler(request)` is awaited per request and returns a `WebhookReply`, or
any other value, sent as a 200 JSON answer; it may sleep (a webhook past its
timeout), raise `ResetConnection` (the connection is reset, RST, with no
answer), or return `WebhookReply(body=b"garbage")`. `server.handler` may be
swapped while it serves. The certificate names localhost, 127.0.0.1, ::1
and `hosts` (e.g. `svc.ns.svc`, the name kube-apiserver verifies for a
`clientConfig.service`); `other_ca_bundle()` is a CA that signed none of it
(a webhook configured with the wrong CA). Connections are kept alive as a
client asks.

The PKI is `api.certs.ensure_pki`'s, made once per set of hosts in a
temporary directory of the test process. Tests that use it must run on
trio's real clock (no `autojump_clock`): the server answers over real
sockets.
"""

from __future__ import annotations

import base64
import functools
import json
import socket
import ssl
import struct
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Sequence

import h11
import trio

from api.certs import Pki, ensure_pki

__all__ = ["WebhookRequest", "WebhookReply", "WebhookServer", "ResetConnection", "start_webhook_server",
           "other_ca_bundle"]

_PKI: dict[tuple[str, ...], Pki] = {}
_MAX_BODY = 8 * 1024 * 1024


class ResetConnection(Exception):
    """Raised by a handler: the server resets the connection (TCP RST) instead of answering."""


@dataclass(frozen=True)
class WebhookRequest:
    """One request as received: method, path (with its query), lower-case headers, raw body."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        """The body decoded as JSON (raises ValueError if it is not)."""
        return json.loads(self.body)


@dataclass(frozen=True)
class WebhookReply:
    """An answer: status, body, headers (JSON by default)."""

    body: bytes = b""
    status: int = 200
    headers: tuple[tuple[str, str], ...] = (("content-type", "application/json"),)

    @classmethod
    def of_json(cls, value: Any, status: int = 200) -> "WebhookReply":
        return cls(json.dumps(value).encode(), status)


Handler = Callable[[WebhookRequest], Awaitable[Any]]


@dataclass
class WebhookServer:
    """A serving webhook server (see the module doc)."""

    url: str
    ca_pem: bytes
    handler: Handler
    requests: list[WebhookRequest] = field(default_factory=list)

    @property
    def ca_bundle(self) -> str:
        return base64.b64encode(self.ca_pem).decode()

    def client_config(self, path: str = "/") -> dict[str, Any]:
        """A webhook `clientConfig` that reaches this server at `path` and trusts its CA."""
        return {"url": self.url + path, "caBundle": self.ca_bundle}


def _pki(hosts: Sequence[str]) -> Pki:
    key = tuple(sorted(hosts))
    if key not in _PKI:
        _PKI[key] = ensure_pki(Path(tempfile.mkdtemp(prefix="webhook-pki-")), key)
    return _PKI[key]


def other_ca_bundle() -> str:
    """The caBundle of a CA that signed no webhook server's certificate."""
    return base64.b64encode(_pki(("wrong-ca.invalid",)).ca_cert_pem).decode()


async def start_webhook_server(nursery: trio.Nursery, handler: Handler, *,
                               hosts: Sequence[str] = ()) -> WebhookServer:
    """Serve `handler` over HTTPS on 127.0.0.1 in `nursery`; returns once it listens (see the module doc)."""
    pki = _pki(hosts)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(pki.serving_cert_path, pki.serving_key_path)
    server = WebhookServer("", pki.ca_cert_pem, handler)
    listeners = await nursery.start(functools.partial(trio.serve_ssl_over_tcp, lambda s: _serve(server, s), 0,
                                                      context, host="127.0.0.1"))
    port = listeners[0].transport_listener.socket.getsockname()[1]
    server.url = f"https://127.0.0.1:{port}"
    return server


async def _serve(server: WebhookServer, stream: trio.SSLStream) -> None:
    conn = h11.Connection(h11.SERVER)
    try:
        while True:
            request = await _read_request(conn, stream)
            if request is None:
                return
            server.requests.append(request)
            try:
                answer = await server.handler(request)
            except ResetConnection:
                _reset(stream)
                return
            reply = answer if isinstance(answer, WebhookReply) else WebhookReply.of_json(answer)
            headers = [*reply.headers, ("content-length", str(len(reply.body)))]
            await stream.send_all(conn.send(h11.Response(status_code=reply.status, headers=headers))
                                  + conn.send(h11.Data(data=reply.body)) + conn.send(h11.EndOfMessage()))
            if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                return
            conn.start_next_cycle()
    except (trio.BrokenResourceError, trio.ClosedResourceError, h11.ProtocolError, ssl.SSLError, OSError):
        return  # the client went away or spoke no HTTP: nothing to answer
    finally:
        with trio.move_on_after(1) as scope:
            scope.shield = True
            try:
                await stream.aclose()
            except (trio.BrokenResourceError, trio.ClosedResourceError, ssl.SSLError, OSError):
                pass


async def _read_request(conn: h11.Connection, stream: trio.SSLStream) -> WebhookRequest | None:
    head: h11.Request | None = None
    body = bytearray()
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            data = await stream.receive_some(65536)
            conn.receive_data(data)
            if not data and head is None:
                return None
            continue
        if isinstance(event, h11.ConnectionClosed):
            return None
        if isinstance(event, h11.Request):
            head = event
        elif isinstance(event, h11.Data):
            body += event.data
            if len(body) > _MAX_BODY:
                return None
        elif isinstance(event, h11.EndOfMessage) and head is not None:
            headers = {k.decode().lower(): v.decode() for k, v in head.headers}
            return WebhookRequest(head.method.decode(), head.target.decode(), headers, bytes(body))


def _reset(stream: trio.SSLStream) -> None:
    """Close with SO_LINGER 0: the kernel sends RST (a webhook that resets the connection)."""
    sock = stream.transport_stream.socket  # type: ignore[attr-defined]
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()
