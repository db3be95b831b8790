"""The test env's HTTPS face: a registry of the test's own, served on a loopback port in the test's process.

`runtime.controller.testing.open_test_env(https=True)` loads this module by
name (runtime imports nothing of api: docs/design.md's layering) and calls,
in order:

- `credentials(directory, admin, signer, scheme, cache)`: a fresh CA and
  serving certificate under `directory` (`api.certs.ensure_pki`: ECDSA
  P-256), an admin bearer token, and the `Authenticator` the registry is
  built with, as `api.assembly` builds the server's: the admin token, the
  service account tokens `signer` issues (checked against the watch
  cache), client certificates of the env's CA, anonymous requests as
  `system:anonymous`. Returns `TestCredentials`.
- `serve(registry, creds)` (through `nursery.start`): the app `miniplane
  serve` runs (`api.app.create_app` over a `ServerState`) behind the same
  HTTPS listener (`api.serving.listener.serve_counted`: Hypercorn, this
  server's HTTP/1.1, HTTP/2 by ALPN) on 127.0.0.1, port 0; writes the admin
  kubeconfig (`creds.kubeconfig`) and is started() with the URL. Every
  request goes through the registry, so authorization (RBAC), admission and
  validation are the server's own.

Caveats:
    No audit log, metrics beyond the defaults, request limits beyond the
    defaults, or encryption at rest: the options of `miniplane serve` that a
    test env has no use for. Stopping is cancellation: open connections (a
    client's watch) are cut, not drained.
"""

from __future__ import annotations

import logging
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio
from hypercorn.config import Config as HypercornConfig

from api import certs
from api.app import ServerState, create_app
from api.authn import Authenticator, TokenFile, capture_peer_certificates
from api.serving.listener import serve_counted
from runtime.client.kubeconfig import write_kubeconfig
from runtime.machinery.scheme import Scheme
from runtime.server.rbac.user import UserInfo
from runtime.server.registry import Registry
from runtime.server.tokenauth import SignedTokenAuthenticator
from runtime.server.tokens import TokenSigner

__all__ = ["TestCredentials", "credentials", "serve", "LOOPBACK"]

#: Where the env listens: this host only, never a port another host could reach.
LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class TestCredentials:
    """What a client needs to reach the env, and what the server checks it by."""

    __test__ = False  # not a pytest test class

    directory: Path
    pki: certs.Pki
    token: str
    authenticator: Authenticator

    @property
    def kubeconfig(self) -> Path:
        return self.directory / "admin.kubeconfig"

    @property
    def ca_pem(self) -> bytes:
        return self.pki.ca_cert_pem


def credentials(directory: Path, admin: UserInfo, signer: TokenSigner, scheme: Scheme,
                cache: Any) -> TestCredentials:
    """A fresh CA, serving certificate and admin token under `directory`, and the authenticator of all three
    (`cache`: the registry's watch cache, which signed tokens are checked against)."""
    pki = certs.ensure_pki(directory, hosts=(LOOPBACK,))
    token = certs.new_admin_token()
    authenticator = Authenticator(TokenFile({token: admin}), client_ca_pem=pki.ca_cert_pem,
                                  signed_tokens=SignedTokenAuthenticator(signer, scheme, cache),
                                  api_audiences=signer.audiences)
    return TestCredentials(directory, pki, token, authenticator)


class _TLSConfig(HypercornConfig):
    """Hypercorn's config, with the TLS context recording peer certificates for client-certificate auth."""

    def create_ssl_context(self) -> ssl.SSLContext | None:
        ctx = super().create_ssl_context()
        return capture_peer_certificates(ctx) if ctx is not None else None


def _config(creds: TestCredentials) -> _TLSConfig:
    config = _TLSConfig()
    config.bind = [f"{LOOPBACK}:0"]
    config.certfile, config.keyfile = str(creds.pki.serving_cert_path), str(creds.pki.serving_key_path)
    config.ca_certs = str(creds.pki.ca_cert_path)
    config.verify_mode = ssl.CERT_OPTIONAL  # token users connect without a certificate
    config.accesslog = None
    config.errorlog = logging.getLogger("hypercorn.error")
    config.keep_alive_timeout = 75
    config.graceful_timeout = 0  # a test's end cuts its clients' connections
    return config


async def serve(registry: Registry, creds: TestCredentials, *,
                task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
    """Serve `registry` over HTTPS on a loopback port until cancelled; started() with the URL once it listens
    and the kubeconfig is written."""
    state = ServerState(registry, creds.authenticator)
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(serve_counted, create_app(state), _config(creds), state.limits)
        url = binds[0]
        state.server_address = url.split("://", 1)[1]
        write_kubeconfig(creds.kubeconfig, url, creds.ca_pem, token=creds.token)
        task_status.started(url)
