"""`miniplane serve`: open the store, start the registry and controllers, serve HTTPS.

At first start the data directory gets a CA, a serving certificate, an admin
token (a user in `system:masters`) and `admin.kubeconfig`; the bootstrap RBAC
policy and the `default` namespace are created, and the policy is reconciled
at every start (missing rules added, nothing a user added removed).
"""

from __future__ import annotations

import logging
import os
import secrets
import ssl
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.trio import serve as hypercorn_serve

from api import certs
from api.app import ServerState, create_app
from api.authn import Authenticator, TokenFile, capture_peer_certificates
from runtime.kubeconfig import write_kubeconfig
from runtime import errors
from runtime.featuregates import DEFAULT_GATES
from runtime.rbac import load_bootstrap_policy, reconcile_binding, reconcile_role
from runtime.rbac.user import UserInfo
from runtime.registry import Body, Registry, WriteOptions
from runtime.scheme import DEFAULT_DOMAIN, Scheme
from runtime.storage import open_store

__all__ = ["ServeOptions", "serve", "SYSTEM_USER", "bootstrap"]

log = logging.getLogger("miniplane")

#: The identity of the server's own in-process writes (bootstrap, built-in controllers).
SYSTEM_USER = UserInfo("system:apiserver", groups=("system:masters", "system:authenticated"))


@dataclass
class ServeOptions:
    data_dir: str = "./miniplane-data"
    bind: str = "127.0.0.1"
    port: int = 6443
    api_domain: str = DEFAULT_DOMAIN
    store: str = "sqlite"
    feature_gates: dict[str, bool] = field(default_factory=lambda: dict(DEFAULT_GATES))
    token_auth_file: str | None = None
    tls_cert_file: str | None = None
    tls_private_key_file: str | None = None
    client_ca_file: str | None = None
    anonymous_auth: bool = True
    watch_history: float = 300.0
    continue_ttl: float = 300.0
    compaction_interval: float = 60.0
    min_compress_bytes: int = 0
    max_body_bytes: int = 3 * 1024 * 1024
    controllers: bool = True
    kubeconfig_path: str | None = None  # default DATA_DIR/admin.kubeconfig


class _TLSConfig(HypercornConfig):
    """Hypercorn's config, with the TLS context recording peer certificates for client-cert auth."""

    def create_ssl_context(self) -> ssl.SSLContext | None:
        ctx = super().create_ssl_context()
        return capture_peer_certificates(ctx) if ctx is not None else None


async def _write(registry: Registry, kind: str, obj: dict[str, Any]) -> None:
    rt = registry.scheme.by_kind(kind)
    meta = obj["metadata"]
    cache = registry.kind_cache(rt)
    existing = cache.get(rt.storage_key(meta.get("namespace"), meta["name"]))
    reconcile = reconcile_binding if kind.endswith("Binding") else reconcile_role
    if kind == "Namespace":
        if existing is None:
            await registry.create(SYSTEM_USER, rt, "", Body(obj), WriteOptions(field_manager="miniplane-bootstrap"))
        return
    wanted = reconcile(existing.obj if existing else None, obj)
    if wanted is None:
        return
    opts = WriteOptions(field_manager="miniplane-bootstrap")
    try:
        if existing is None:
            await registry.create(SYSTEM_USER, rt, meta.get("namespace", ""), Body(wanted), opts)
        elif kind.endswith("Binding") and wanted.get("roleRef") != existing.obj.get("roleRef"):
            # roleRef is immutable: delete and re-create, as Kubernetes' reconciler does.
            await registry.delete(SYSTEM_USER, rt, meta.get("namespace", ""), meta["name"])
            await registry.create(SYSTEM_USER, rt, meta.get("namespace", ""), Body(wanted), opts)
        else:
            wanted = dict(wanted)
            wanted["metadata"] = dict(wanted["metadata"], resourceVersion=existing.obj["metadata"]["resourceVersion"])
            await registry.update(SYSTEM_USER, rt, meta.get("namespace", ""), meta["name"], Body(wanted), opts)
    except errors.Conflict:
        log.warning("bootstrap: %s %s changed meanwhile; left as is", kind, meta["name"])


async def bootstrap(registry: Registry) -> None:
    """Create or reconcile the bootstrap policy and the `default` namespace."""
    await registry.cache.wait_fresh()
    for obj in load_bootstrap_policy(registry.scheme.domain):
        await _write(registry, obj["kind"], obj)
    await _write(registry, "Namespace", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})


def _wall_clock() -> Callable[[], float]:
    """Wall time that advances with trio's clock: token ages survive restarts, and tests can mock it."""
    wall, monotonic = time.time(), trio.current_time()
    return lambda: wall + (trio.current_time() - monotonic)


def _continue_secret(data_dir: Path) -> bytes:
    """The key continue tokens are signed with, made once per data directory."""
    path = data_dir / "continue.key"
    if path.exists():
        return path.read_bytes()
    secret = secrets.token_bytes(32)
    path.write_bytes(secret)
    os.chmod(path, 0o600)
    return secret


def _admin_token(data_dir: Path) -> str:
    path = data_dir / "admin.token"
    if path.exists():
        return path.read_text().strip()
    token = secrets.token_urlsafe(32)
    path.write_text(token + "\n")
    os.chmod(path, 0o600)
    return token


async def _compaction_loop(registry: Registry, interval: float, retention: float) -> None:
    """Every `interval` s, compact the store's log at the newest revision that is at least
    `retention` s old, so that history younger than the window always stays.

    A mark (t, R) records that at time t every write up to R had happened:
    once t is `retention` old, events up to R are too. A failed compaction is
    logged and retried at the next tick; it never stops the server.
    """
    store = registry.store
    marks: deque[tuple[float, int]] = deque([(trio.current_time(), await store.current_revision())])
    while True:
        await trio.sleep(interval)
        now = trio.current_time()
        marks.append((now, await store.current_revision()))
        target = None
        while marks and marks[0][0] <= now - retention:
            target = marks.popleft()[1]
        if target is None or target <= await store.compacted_revision():
            continue
        try:
            await store.compact(target)
        except Exception:
            log.exception("compaction at revision %d failed", target)


async def serve(options: ServeOptions, *, task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
    """Run the server until cancelled; started() with the server URL once it accepts requests."""
    data_dir = Path(options.data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    scheme = Scheme(options.api_domain)
    store = await open_store(options.store, str(data_dir / "state.db") if options.store == "sqlite" else None)
    try:
        registry = Registry(store, scheme, feature_gates=options.feature_gates, history_seconds=options.watch_history,
                            continue_ttl=options.continue_ttl, continue_secret=_continue_secret(data_dir),
                            token_clock=_wall_clock())
        pki = certs.ensure_pki(data_dir)
        cert_file = options.tls_cert_file or str(pki.serving_cert_path)
        key_file = options.tls_private_key_file or str(pki.serving_key_path)
        ca_pem = pki.ca_cert_pem if not options.tls_cert_file else None
        token = _admin_token(data_dir)
        tokens = TokenFile.load(options.token_auth_file) if options.token_auth_file else TokenFile({})
        tokens.add(token, UserInfo("admin", uid="admin", groups=("system:masters",)))
        client_ca = Path(options.client_ca_file).read_bytes() if options.client_ca_file else None
        authenticator = Authenticator(tokens, client_ca_pem=client_ca, anonymous=options.anonymous_auth)

        config = _TLSConfig()
        host = options.bind if ":" not in options.bind else f"[{options.bind}]"
        config.bind = [f"{host}:{options.port}"]
        config.certfile, config.keyfile = cert_file, key_file
        if client_ca is not None:
            config.ca_certs = options.client_ca_file
            config.verify_mode = ssl.CERT_OPTIONAL
        config.accesslog = None
        config.errorlog = logging.getLogger("hypercorn.error")
        config.keep_alive_timeout = 75
        config.graceful_timeout = 2

        async with trio.open_nursery() as nursery:
            await nursery.start(registry.run)
            await bootstrap(registry)
            nursery.start_soon(_compaction_loop, registry, options.compaction_interval, options.watch_history)
            if options.controllers:
                from controllers import run_builtin_controllers
                await nursery.start(run_builtin_controllers, registry, SYSTEM_USER)
            state = ServerState(registry, authenticator, max_body_bytes=options.max_body_bytes,
                                min_compress_bytes=options.min_compress_bytes, feature_gates=options.feature_gates)
            binds = await nursery.start(hypercorn_serve, create_app(state), config)
            url = binds[0] if binds else f"https://{host}:{options.port}"
            url = url.replace("0.0.0.0", "127.0.0.1")
            state.server_address = url.split("://", 1)[1]
            kubeconfig = options.kubeconfig_path or str(data_dir / "admin.kubeconfig")
            write_kubeconfig(kubeconfig, url, ca_pem, token=token)
            log.info("miniplane serving at %s; admin kubeconfig: %s", url, kubeconfig)
            print(f"miniplane serving at {url}\n  export KUBECONFIG={os.path.abspath(kubeconfig)}\n"
                  f"  kubectl get clusterroles", flush=True)
            task_status.started(url)
    finally:
        # Open watches and pending writes end cleanly, and SQLite closes its files (WAL checkpointed).
        with trio.CancelScope(shield=True):
            await store.aclose()
