"""`WebhookServer`: `Webhook` descriptors served over HTTPS as AdmissionReview endpoints, registered.

`WebhookServer(webhooks, host="127.0.0.1", port=0, client=None,
configuration_name="")` serves each webhook at its `served_path` (POST,
`application/json`, AdmissionReview v1 or v1beta1, answered by
`runtime.webhook.review.review`) through Hypercorn on trio. Without
`tls=`, it makes a CA of its own and a certificate for `host`, localhost,
127.0.0.1, ::1 and `extra_hosts`. `await nursery.start(server.run)` listens,
then, given a `client`, writes the Validating/MutatingWebhookConfiguration
called `configuration_name` (default `<first webhook's name>`) with
each webhook's `clientConfig` (`url` at this server, `caBundle` its CA), as
kopf's and controller-runtime's webhook servers are set up; `started()`
hands back the server's base URL. It serves until cancelled; the
configurations stay (the next start replaces them).

A request that is not a review is refused as controller-runtime's webhook
handler refuses it, but with HTTP 400 and its words as text: an empty body,
a content type other than application/json, a body that is not an
AdmissionReview of a known version, one without a request. Another method
than POST is 405, an unknown path 404.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any, Awaitable, Callable, Sequence

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from runtime.client.interface import Client
from runtime.webhook.certs import ServingTLS, self_signed, write_files
from runtime.webhook.configuration import register
from runtime.webhook.review import MalformedReview, decode_review, review
from runtime.webhook.types import Webhook

__all__ = ["WebhookServer"]

_MAX_BODY = 3 * 1024 * 1024  # kube-apiserver's request limit: no review is larger

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class WebhookServer:
    """Serves `webhooks` over HTTPS (see the module doc)."""

    def __init__(self, webhooks: Sequence[Webhook], *, host: str = "127.0.0.1", port: int = 0,
                 client: Client | None = None, configuration_name: str = "", tls: ServingTLS | None = None,
                 extra_hosts: Sequence[str] = ()) -> None:
        if not webhooks:
            raise ValueError("a WebhookServer serves at least one webhook")
        self.routes = {w.served_path: w for w in webhooks}
        if len(self.routes) != len(webhooks):
            raise ValueError("two webhooks are served at the same path")
        self.webhooks = tuple(webhooks)
        self.host, self.port = host, port
        self.client = client
        self.configuration_name = configuration_name or webhooks[0].name
        self.tls = tls or self_signed([host, "localhost", "127.0.0.1", "::1", *extra_hosts])
        #: The base URL once serving (`https://host:port`).
        self.url = ""

    def client_config(self, webhook: Webhook) -> dict[str, Any]:
        """The `clientConfig` that reaches `webhook` here and trusts this server's CA."""
        return {"url": self.url + webhook.served_path, "caBundle": self.tls.ca_bundle}

    async def run(self, *, task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
        """Serve until cancelled; `started(url)` once listening and registered (see the module doc)."""
        with tempfile.TemporaryDirectory(prefix="miniplane-webhook-") as folder:
            cert, key = write_files(self.tls, Path(folder))
            config = Config()
            config.bind = [f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"]
            config.certfile, config.keyfile = str(cert), str(key)
            config.errorlog = None
            async with trio.open_nursery() as nursery:
                binds = await nursery.start(serve, self._app, config)
                port = binds[0].rpartition(":")[2]
                host = f"[{self.host}]" if ":" in self.host else self.host
                self.url = f"https://{host}:{port}"
                if self.client is not None:
                    await register(self.client, self.webhooks, name=self.configuration_name,
                                   client_config=self.client_config)
                task_status.started(self.url)

    async def _app(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        status, body, content_type = await self._answer(scope, receive)
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    async def _answer(self, scope: dict[str, Any], receive: Receive) -> tuple[int, bytes, bytes]:
        webhook = self.routes.get(scope["path"])
        if webhook is None:
            return 404, b"404 page not found\n", b"text/plain; charset=utf-8"
        if scope["method"] != "POST":
            return 405, b"only POST is served\n", b"text/plain; charset=utf-8"
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            body = await _read_body(receive)
            if not body:
                raise MalformedReview("request body is empty")
            content_type = headers.get("content-type", "")
            if content_type != "application/json":
                raise MalformedReview(f"contentType={content_type}, expected application/json")
            decoded = decode_review(body)
        except MalformedReview as exc:
            return 400, f"{exc}\n".encode(), b"text/plain; charset=utf-8"
        answer = await review(webhook, decoded)
        return 200, json.dumps(answer, separators=(",", ":")).encode(), b"application/json"


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b""
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > _MAX_BODY:
            raise MalformedReview("request body too large")
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)
