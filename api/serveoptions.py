"""The options of `miniplane serve`: `ServeOptions`, `WorkerSpec`, and the facts the command line reads
before anything runs (`SQLITE_FILE`, `is_shared_store`).

Apart from the assembly (`api.assembly`, which re-exports every name here) so that parsing a command
line, `miniplane --help` included, loads no server: this module imports only the standard library and
the feature gates' table. The two defaults that other modules own are written out here, and a test
(tests/unit/test_serve_options.py) checks they are still theirs: `DEFAULT_DOMAIN`
(`runtime.machinery.scheme`) and `DEFAULT_ISSUER` (`runtime.server.tokens`, which loads JWT and
cryptography).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from runtime.server.featuregates import DEFAULT_GATES

__all__ = ["ServeOptions", "WorkerSpec", "SQLITE_FILE", "DEFAULT_DOMAIN", "DEFAULT_ISSUER", "is_shared_store"]

#: The SQLite store's file in the data directory.
SQLITE_FILE = "state.db"
#: `runtime.machinery.scheme.DEFAULT_DOMAIN`, the default of `--api-domain`.
DEFAULT_DOMAIN = "svc.io"
#: `runtime.server.tokens.DEFAULT_ISSUER`, the default of `--service-account-issuer`.
DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"


def is_shared_store(store: str) -> bool:
    """Whether `--store` names a store several servers may share (etcd)."""
    return store.startswith(("etcd://", "etcds://"))


@dataclass(frozen=True)
class WorkerSpec:
    """What the parent of `miniplane serve --workers N` hands one worker process: descriptors it inherits.

    `listen_fd`: the listening socket every worker accepts on; `ready_fd`:
    the worker writes a line there once it serves; `lifeline_fd`: reads
    end-of-file when the parent is gone; `peers`: the SQLite peer links
    (None for another store); `start_fd` (-1: none): the worker readies
    itself, then waits for it to read end-of-file before it serves (the
    parent's word that the primary has bootstrapped the store). Worker 0 is
    the primary (see `api.assembly`).
    """

    index: int
    listen_fd: int
    ready_fd: int
    lifeline_fd: int
    peers: Any = None  # a `runtime.server.storage.sqlite.peers.PeerLinks`: only the assembly opens stores
    start_fd: int = -1

    @property
    def primary(self) -> bool:
        return self.index == 0


@dataclass
class ServeOptions:
    """Every option of `miniplane serve` (see the README's options table)."""

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
    etcd_prefix: str | None = None  # None: the URL's `prefix`, else /registry
    etcd_cafile: str | None = None
    etcd_certfile: str | None = None
    etcd_keyfile: str | None = None
    etcd_compaction_interval: float = 300.0  # 0: never
    leader_elect: bool | None = None  # None: on when the store is shared
    leader_elect_identity: str = ""  # "": host_uuid
    leader_elect_lease_duration: float = 15.0
    leader_elect_renew_deadline: float = 10.0
    leader_elect_retry_period: float = 2.0
    min_compress_bytes: int = 0
    max_body_bytes: int = 3 * 1024 * 1024
    controllers: bool = True
    kubeconfig_path: str | None = None  # default DATA_DIR/admin.kubeconfig
    workers: int = 1  # processes serving the port (`api.serving.workers` when more than one)
    worker: WorkerSpec | None = None  # set in a worker process of `--workers N`
    max_requests_inflight: int = 400
    max_mutating_requests_inflight: int = 200
    request_timeout: float = 60.0
    min_request_timeout: float = 1800.0
    max_connections: int = 1000
    max_watches_per_user: int = 1000
    audit_log_path: str | None = None
    audit_policy_file: str | None = None
    audit_log_maxsize: int = 0
    audit_log_maxbackup: int = 0
    audit_log_maxage: int = 0
    service_account_issuer: str = DEFAULT_ISSUER
    api_audiences: tuple[str, ...] = ()  # default: the issuer
    service_account_signing_key_file: str | None = None  # default DATA_DIR/sa.key (made once)
    service_account_max_token_expiration: int = 0  # seconds; 0: no maximum
    encryption_provider_config: str | None = None  # EncryptionConfiguration file; None: values stored as they are
    encryption_provider_config_automatic_reload: bool = False
    service_cluster_ip_range: str = "10.96.0.0/12"  # `runtime.server.kinds.services.DEFAULT_CLUSTER_IP_RANGE`
    service_node_port_range: str = "30000-32767"  # `runtime.server.kinds.services.DEFAULT_NODE_PORT_RANGE`
    admission_modules: tuple[str, ...] = ()  # Python modules whose WEBHOOKS run in process (`runtime.webhook`)
