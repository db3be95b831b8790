"""The assembly: the one place that wires store, registry, controllers and the HTTP app together.

`open_control_plane(options)` opens the store (the only place that does),
starts the registry (watch cache), bootstraps the policy, starts the store's
compactor and the built-in controllers, and yields a `ControlPlane` whose
`app` is the ASGI application. `api.serving.server.serve` puts it behind Hypercorn
and TLS; tests drive `app` in process. Leaving the context stops everything
and closes the store (open watches end, SQLite checkpoints its WAL).

The data directory holds what outlives a process: the SQLite file, the admin
token, the PKI, the key service account tokens are signed with (`sa.key`);
every secret file is written 0600. The key continue tokens are signed with lives in the store
(`CONTINUE_KEY`, made by the first server to start), so that every server
sharing a store (etcd) honours the others' tokens.

On a store several servers share (etcd, `--store etcd://...`) the compactor
is kube-apiserver's, taking turns through etcd (`run_shared_compactor`),
and the built-in controllers run under leader election on a Lease
(`default/miniplane-controller-manager`), as kube-controller-manager's: one
server runs them, another takes over when its lease expires.

With `--workers N` (`api.serving.workers`) each of N processes runs this assembly
with a `WorkerSpec`: its SQLite store shares the file with the others
(`runtime.server.storage.sqlite.peers`), and only worker 0, the primary, runs the
bootstrap, the compactor and the built-in controllers, so they run once.
On a store several servers share, the service account signing key lives in
the store too (`SERVICE_ACCOUNT_KEY`), unless `--service-account-signing-key-file`
names one: every server verifies the tokens any of them signed.
"""

from __future__ import annotations

import logging
import os
import secrets
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import AsyncIterator, Callable, Sequence

import trio
from quart_trio import QuartTrio

from api import certs
from api.app import ServerState, create_app
from api.audit import Auditor, current_record, default_policy, load_policy
from api.auditlog import open_audit_log
from api.authn import Authenticator, TokenFile
from api.health import BASE_CHECKS, HealthCheck, etcd_checks
from api.limits import LimitOptions, RequestLimits
from api.serveoptions import SQLITE_FILE, ServeOptions, WorkerSpec, is_shared_store
from api.metrics import APIServerMetrics, CountingAuthorizer, InstrumentedStore, ScrapeGauges, ScrapeSources
from controllers import FIELD_MANAGER as CONTROLLERS_FIELD_MANAGER, SHARED_VIEW, builtin_manager
from controllers.tokens import TokenSigning
from runtime.server.admission import AdmissionMetrics
from runtime.server.bootstrap import SYSTEM_USER, bootstrap
from runtime.client.local import LocalClient
from runtime.controller.leaderelection import LeaderElectionConfig, default_identity
from runtime.controller.manager import Manager
from runtime.server.kinds.services import ServiceRanges
from runtime.server.rbac import RBACAuthorizer, RBACIndex
from runtime.server.rbac.user import UserInfo
from runtime.server.registry import AdmissionPlugin, Registry, watch_cache_for
from runtime.machinery.scheme import Scheme
from runtime.server.storage import EtcdStore, KeyExists, SqliteStore, Store, open_store
from runtime.server.storage.compaction import run_compactor, run_shared_compactor
from runtime.server.storage.encryption import EncryptingStore, load_config, run_reload
from runtime.server.storage.sqlite.peers import PeerGroup, SqlitePeers
from runtime.server.tokenauth import SignedTokenAuthenticator
from runtime.server.tokens import TokenSigner, generate_key
from runtime.server.watchcache import WatchCache
from runtime.webhook import Webhook, load_webhooks

__all__ = ["ServeOptions", "WorkerSpec", "ControlPlane", "open_control_plane", "prepare_data_dir", "peer_group",
           "SQLITE_FILE", "ADMIN_USER", "CONTINUE_KEY", "SERVICE_ACCOUNT_KEY", "CONTROLLERS_LEASE", "is_shared_store"]

log = logging.getLogger("miniplane")

#: Who the admin token authenticates.
ADMIN_USER = UserInfo("admin", uid="admin", groups=("system:masters",))

#: The store key of the continue-token signing key (no kind's key: the watch cache passes it by).
CONTINUE_KEY = "/continue_key"
#: Where a store several servers share keeps the service account signing key (PEM).
SERVICE_ACCOUNT_KEY = "/serviceaccount_signing_key"

#: Namespace and name of the Lease the servers' built-in controllers elect their leader on.
CONTROLLERS_LEASE = ("default", CONTROLLERS_FIELD_MANAGER)


@dataclass
class ControlPlane:
    """A running control plane: its registry, the ASGI app serving it, the admin token, and the
    manager of its built-in controllers (None with `--controllers false`)."""

    options: ServeOptions
    store: Store
    registry: Registry
    state: ServerState
    app: QuartTrio
    admin_token: str
    controllers: Manager | None = None

    @property
    def data_dir(self) -> Path:
        return Path(self.options.data_dir)


def _limit_options(options: ServeOptions) -> LimitOptions:
    return LimitOptions(options.max_requests_inflight, options.max_mutating_requests_inflight, options.request_timeout,
                        options.min_request_timeout, options.max_connections, options.max_watches_per_user)


def _wall_clock() -> Callable[[], float]:
    """Wall time that advances with trio's clock: token ages survive restarts, and tests can mock it."""
    wall, monotonic = time.time(), trio.current_time()
    return lambda: wall + (trio.current_time() - monotonic)


def _secret_file(path: Path, make: Callable[[], bytes]) -> bytes:
    """The contents of `path`, made once (readable by the owner only; a wider mode found is narrowed)."""
    if path.exists():
        if path.stat().st_mode & 0o077:
            os.chmod(path, 0o600)
        return path.read_bytes()
    data = make()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return data


def _store_path(options: ServeOptions, data_dir: Path) -> str | None:
    return str(data_dir / SQLITE_FILE) if options.store == "sqlite" else None


def _store_options(options: ServeOptions) -> dict[str, str]:
    """The `--etcd-*` options given, as `open_store` takes them (they override the URL's)."""
    if not is_shared_store(options.store):
        return {}
    given = {"prefix": options.etcd_prefix, "cafile": options.etcd_cafile, "certfile": options.etcd_certfile,
             "keyfile": options.etcd_keyfile}
    return {name: value for name, value in given.items() if value}


async def _store_secret(store: Store, key: str, make: Callable[[], bytes] = lambda: secrets.token_hex(32).encode()
                        ) -> bytes:
    """The secret kept at `key` in the store, made (by default 32 random bytes, hex) by the first server to ask."""
    entry = await store.get(key)
    if entry is None:
        made = make()
        try:
            entry = await store.create(key, lambda revision: made)
        except KeyExists:  # another server made it first
            entry = await store.get(key)
    assert entry is not None, "a secret once stored is never deleted"
    return entry.value


def _leader_election(options: ServeOptions) -> LeaderElectionConfig | None:
    """The built-in controllers' election (None: they run here unconditionally)."""
    elect = options.leader_elect if options.leader_elect is not None else is_shared_store(options.store)
    if not elect:
        return None
    return LeaderElectionConfig(*CONTROLLERS_LEASE, identity=options.leader_elect_identity or default_identity(),
                                lease_duration=options.leader_elect_lease_duration,
                                renew_deadline=options.leader_elect_renew_deadline,
                                retry_period=options.leader_elect_retry_period)


def prepare_data_dir(options: ServeOptions) -> str:
    """Make the data directory, the admin token and the service account signing key if missing; returns the token.

    The parent of several workers calls it before starting them, so that
    they find the token made rather than race to make it.
    """
    data_dir = Path(options.data_dir)
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    if data_dir.stat().st_mode & 0o077:  # the store holds secrets too (the continue key): the owner's only
        os.chmod(data_dir, 0o700)
    if not options.service_account_signing_key_file and not is_shared_store(options.store):
        _secret_file(data_dir / "sa.key", generate_key)
    return _secret_file(data_dir / "admin.token",
                        lambda: (secrets.token_urlsafe(32) + "\n").encode()).decode().strip()


def peer_group(options: ServeOptions) -> PeerGroup | None:
    """The links `options.workers` processes share one SQLite store through (None for another store)."""
    return PeerGroup(options.workers) if options.store == "sqlite" else None


async def _open_store(options: ServeOptions, data_dir: Path) -> Store:
    links = options.worker.peers if options.worker is not None else None
    if links is not None and options.store == "sqlite":
        return await open_store(options.store, _store_path(options, data_dir), peers=SqlitePeers(links))
    return await open_store(options.store, _store_path(options, data_dir), **_store_options(options))


def _encrypted(options: ServeOptions, store: Store) -> Store:
    """`store` sealing values as `--encryption-provider-config` says (`store` itself without it).

    Raises ConfigError (a ValueError) for a file that does not read or a configuration Kubernetes refuses.
    """
    if not options.encryption_provider_config:
        return store
    return EncryptingStore(store, load_config(options.encryption_provider_config, options.api_domain))


def _auditor(options: ServeOptions, metrics: APIServerMetrics) -> Auditor:
    """The auditor `--audit-log-path` and `--audit-policy-file` ask for (off without a log; without a
    policy file, the default policy: `api.audit.default_policy`).

    Raises ValueError for a policy Kubernetes would refuse, OSError for files that cannot be read or written.
    """
    if not options.audit_log_path:
        return Auditor()
    policy = (load_policy(Path(options.audit_policy_file).read_text()) if options.audit_policy_file
              else default_policy(options.api_domain))
    log_file = open_audit_log(options.audit_log_path, max_size_mb=options.audit_log_maxsize,
                              max_backups=options.audit_log_maxbackup, max_age_days=options.audit_log_maxage)
    return Auditor(policy, log_file, on_event=metrics.audit_event, on_level=metrics.audit_level,
                   on_error=metrics.audit_error)


def _health_checks(store: Store) -> tuple[HealthCheck, ...]:
    """The health checks of a server on `store`: on etcd, kube-apiserver's etcd checks too."""
    return (*BASE_CHECKS, *etcd_checks(store.current_revision)) if isinstance(store, EtcdStore) else BASE_CHECKS


def _record_decision(decision) -> None:
    """Tell the request's audit record the authorizer's decision (the first after impersonation)."""
    record = current_record()
    if record is not None:
        record.decided(decision.allowed, decision.reason)


def _scrape_sources(scheme: Scheme, watch_cache: WatchCache, limits: RequestLimits,
                    db_path: str | None, store: Store) -> ScrapeSources:
    """What `/metrics` reads when scraped: in-flight counts, each kind's objects and watchers, the db size,
    the SQLite store's group commits."""
    def kinds():
        seen = set()
        for rt in scheme.stored_types():
            if rt.storage_prefix in seen:
                continue
            seen.add(rt.storage_prefix)
            cache = watch_cache.kinds.get(rt.storage_prefix)
            resource = f"{rt.plural}.{rt.group}" if rt.group else rt.plural
            yield (resource, rt.group, rt.version, rt.kind, len(cache.objects) if cache else 0,
                   cache.watchers if cache else 0)

    def db_size():
        if db_path is None:
            return None
        return db_path, sum(os.stat(p).st_size for p in (db_path, db_path + "-wal") if os.path.exists(p))

    def commits():
        if not isinstance(store, SqliteStore):
            return None
        counts = store.statistics()
        return counts.commits, counts.writes

    return ScrapeSources(inflight=lambda: (limits.read_only, limits.mutating), kinds=kinds, db_size=db_size,
                         connections=lambda: limits.connections, commits=commits)


def _resource_of(scheme: Scheme) -> Callable[[str], str]:
    """The resource a store key belongs to (`clusterroles.rbac.authorization.svc.io`), for store metrics."""
    prefixes: dict[str, str] = {}

    def resource(key: str) -> str:
        end = key.find("/", key.find("/", 1) + 1)
        prefix = key[:end + 1] if end > 0 else key
        found = prefixes.get(prefix)
        if found is None:
            rt = next((t for t in scheme.stored_types() if t.storage_prefix == prefix), None)
            found = (f"{rt.plural}.{rt.group}" if rt.group else rt.plural) if rt is not None else "other"
            if rt is not None:
                prefixes[prefix] = found
        return found
    return resource


def _root_ca(options: ServeOptions, data_dir: Path) -> bytes:
    """The CA the admin kubeconfig trusts the server by, which token Secrets carry as `ca.crt` (as
    kube-controller-manager's `--root-ca-file`); none for a serving certificate of the user's."""
    return b"" if options.tls_cert_file else certs.ensure_pki(data_dir).ca_cert_pem


@asynccontextmanager
async def open_control_plane(options: ServeOptions, *,
                             admission: Sequence[AdmissionPlugin | Webhook] = ()) -> AsyncIterator[ControlPlane]:
    """Open the store, start registry (admitting with `admission`, none by default, and the webhooks of
    `options.admission_modules`: `runtime.webhook.load_webhooks`), bootstrap, compactor and controllers;
    yield the plane.

    Raises ValueError for an unknown store, OSError for a data directory or
    token file that cannot be read or written.
    """
    data_dir = Path(options.data_dir)
    token = prepare_data_dir(options)
    primary = options.worker is None or options.worker.primary
    election = _leader_election(options)
    metrics = APIServerMetrics()
    auditor = _auditor(options, metrics)
    store = await _open_store(options, data_dir)
    try:
        clock = _wall_clock()
        if options.service_account_signing_key_file:
            signing_key = Path(options.service_account_signing_key_file).read_bytes()
        elif is_shared_store(options.store):
            signing_key = await _store_secret(store, SERVICE_ACCOUNT_KEY, generate_key)
        else:
            signing_key = _secret_file(data_dir / "sa.key", generate_key)
        signer = TokenSigner(signing_key, issuer=options.service_account_issuer,
                             audiences=options.api_audiences or None, clock=clock,
                             max_expiration_seconds=options.service_account_max_token_expiration)
        scheme = Scheme(options.api_domain)
        limits = RequestLimits(_limit_options(options))
        # Every part is built before the registry that holds it: the watch cache first, which the
        # signed-token authentication reads, then the authenticator TokenReview asks.
        served = _encrypted(options, InstrumentedStore(store, metrics.store_latency, _resource_of(scheme)))
        # With the built-in controllers here, each object is parsed once at start: its check keeps what
        # their informers cache of it.
        cache = watch_cache_for(served, scheme, history_seconds=options.watch_history,
                                decode_view=SHARED_VIEW if options.controllers and primary else None)
        metrics.registry.register(ScrapeGauges(_scrape_sources(scheme, cache, limits, _store_path(options, data_dir),
                                                              store)))
        rbac = RBACIndex()
        tokens = TokenFile.load(options.token_auth_file) if options.token_auth_file else TokenFile({})
        tokens.add(token, ADMIN_USER)
        client_ca = Path(options.client_ca_file).read_bytes() if options.client_ca_file else None
        authenticator = Authenticator(tokens, client_ca_pem=client_ca, anonymous=options.anonymous_auth,
                                      signed_tokens=SignedTokenAuthenticator(signer, scheme, cache),
                                      api_audiences=signer.audiences)
        admission = (*admission, *(w for m in options.admission_modules for w in load_webhooks(m)))
        registry = Registry(served, scheme, CountingAuthorizer(RBACAuthorizer(rbac), metrics, _record_decision),
                            rbac=rbac, cache=cache, authenticator=authenticator, admission=admission, tokens=signer,
                            feature_gates=options.feature_gates, continue_ttl=options.continue_ttl,
                            continue_secret=await _store_secret(store, CONTINUE_KEY), token_clock=clock,
                            service_ranges=ServiceRanges.parse(options.service_cluster_ip_range,
                                                               options.service_node_port_range),
                            admission_metrics=AdmissionMetrics(metrics.registry))
        async with trio.open_nursery() as nursery:
            if isinstance(store, SqliteStore):
                await nursery.start(store.follow_peers)  # other workers' writes (returns at once without)
            if isinstance(served, EncryptingStore) and options.encryption_provider_config_automatic_reload:
                nursery.start_soon(run_reload, served, options.encryption_provider_config)
            await nursery.start(registry.run)
            if primary:
                await bootstrap(registry)
                if isinstance(store, EtcdStore):
                    if options.etcd_compaction_interval > 0:
                        nursery.start_soon(run_shared_compactor, store, options.etcd_compaction_interval)
                else:
                    nursery.start_soon(run_compactor, store, options.compaction_interval, options.watch_history)
            manager = None
            if options.controllers and primary:
                client = LocalClient(registry, SYSTEM_USER, field_manager=CONTROLLERS_FIELD_MANAGER,
                                     user_agent=CONTROLLERS_FIELD_MANAGER)
                manager = builtin_manager(client, leader_election=election, metrics=metrics.controllers,
                                          tokens=TokenSigning(signer, _root_ca(options, data_dir)))
                await nursery.start(manager.run)
            state = ServerState(registry, authenticator, max_body_bytes=options.max_body_bytes,
                                min_compress_bytes=options.min_compress_bytes, metrics=metrics, limits=limits,
                                auditor=auditor, health_checks=_health_checks(store))
            yield ControlPlane(options, store, registry, state, create_app(state), token, manager)
            nursery.cancel_scope.cancel()
    finally:
        # Open watches and pending writes end cleanly, and SQLite closes its files (WAL checkpointed).
        with trio.CancelScope(shield=True):
            await store.aclose()
        auditor.close()
