"""The `miniplane` command: `serve` (the API server), `controllers` (controllers out of process),
`snapshot` (save, restore and check a SQLite store's snapshot) and the RBAC insight commands
(`who-can`, `access-matrix`, `rbac diff|lint`: `api.insightcli`).

Errors: `main` is the one boundary of every subcommand. An error the user can cause (a port in
use, a file that does not read, a bad value, an etcd or server that does not answer, a controller
module that does not import) is one line on stderr, `miniplane: error: CAUSE`, the cause being
the leaf of trio's exception groups (`leaf_cause`, `describe_error`); `--debug` (anywhere on the
line) or `MINIPLANE_DEBUG=1` prints its traceback first. Exit codes: 2 for a command line that
cannot be used (argparse's usage errors, and values found bad before anything runs: a file
option that does not read, a module that does not import), 1 for a failure while running, 130
for Ctrl-C before the command handles signals.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import signal
import ssl
import sys
import traceback
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Callable, Iterator

import trio

from api import collector, insightcli
from api.assembly import SQLITE_FILE, ServeOptions, is_shared_store
from api.server import serve
from api.workers import resolve_workers, run_workers
from api.audit import PolicyError, load_policy
from controllers.cli import (add_leader_election_arguments, add_metrics_arguments, leader_election_config,
                             load_out_of_process, run_out_of_process)
from runtime.client import ClientError
from runtime.errors import StatusError
from runtime.featuregates import parse_feature_gates
from runtime.kubeconfig import KubeConfig
from runtime.leaderelection import LeaderElectionConfig
from runtime.storage import StoreError
from runtime.storage.sqlite_snapshot import SnapshotError, SnapshotInfo, restore_snapshot, save_snapshot, snapshot_status
from runtime.tokens import DEFAULT_ISSUER

__all__ = ["main", "parser", "serve_options", "leaf_cause", "describe_error", "DEBUG_ENV"]

#: Set to anything but "" or "0", it makes every command print an error's traceback, as `--debug` does.
DEBUG_ENV = "MINIPLANE_DEBUG"

#: `serve`'s options naming a file it reads: each is read once before anything starts.
_READ_FILES = ("token_auth_file", "tls_cert_file", "tls_private_key_file", "client_ca_file", "etcd_cafile",
               "etcd_certfile", "etcd_keyfile", "service_account_signing_key_file")


def _bool(text: str) -> bool:
    if text.lower() in ("1", "true", "yes"):
        return True
    if text.lower() in ("0", "false", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def _store(text: str) -> str:
    if text in ("sqlite", "memory") or is_shared_store(text):
        return text
    raise argparse.ArgumentTypeError(f"expected sqlite, memory or etcd://HOST:PORT[,HOST:PORT...], got {text!r}")


_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(h|ms|m|s)")
_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def _duration(text: str) -> float:
    """Seconds of a Go duration (`5m`, `1h30m`, `90s`, `0`), as kube-apiserver's flags take them, or a number."""
    try:
        return float(text)
    except ValueError:
        pass
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise argparse.ArgumentTypeError(f"expected a duration such as 5m, 90s or 1h30m, got {text!r}")
    return sum(float(n) * _UNITS[u] for n, u in parts)


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be between 0 and 65535, got {value}")
    return value


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="miniplane", description="A mini Kubernetes-style control plane.")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="run the API server (HTTPS) on the embedded store")
    s.add_argument("--data-dir", default="./miniplane-data", help="state, certificates and admin.kubeconfig")
    s.add_argument("--bind", default="127.0.0.1", help="address to listen on")
    s.add_argument("--port", type=_port, default=6443, help="port (0 picks a free one)")
    s.add_argument("--api-domain", default="svc.io", help="domain of the API group names (k8s.io for kubectl's typed commands)")
    s.add_argument("--store", type=_store, default="sqlite",
                   help="sqlite, memory, or etcd://HOST:PORT[,HOST:PORT...] (several servers may share an etcd)")
    s.add_argument("--etcd-prefix", help="key prefix in etcd (default /registry)")
    s.add_argument("--etcd-cafile", help="CA of etcd's serving certificate (TLS)")
    s.add_argument("--etcd-certfile", help="client certificate presented to etcd (TLS)")
    s.add_argument("--etcd-keyfile", help="its private key")
    s.add_argument("--etcd-compaction-interval", type=_duration, default=300.0,
                   help="compact etcd's history this often, shared by all servers (Go duration; 0: never)")
    s.add_argument("--feature-gates", default="", help="A=true,B=false")
    s.add_argument("--token-auth-file", help="CSV: token,user,uid,\"group1,group2\"")
    s.add_argument("--tls-cert-file")
    s.add_argument("--tls-private-key-file")
    s.add_argument("--client-ca-file", help="CA of client certificates (CN user, O groups)")
    s.add_argument("--anonymous-auth", type=_bool, default=True)
    s.add_argument("--watch-history", type=float, default=300.0, help="seconds of watch history kept")
    s.add_argument("--continue-ttl", type=float, default=300.0, help="seconds a continue token lives")
    s.add_argument("--min-compress-bytes", type=int, default=0)
    s.add_argument("--max-body-bytes", type=int, default=3 * 1024 * 1024)
    s.add_argument("--controllers", type=_bool, default=True, help="run the built-in controllers in-process")
    s.add_argument("--leader-elect", type=_bool, default=None,
                   help="run the built-in controllers only while holding their Lease (default: true on etcd)")
    s.add_argument("--leader-elect-identity", default="", help="this server's identity in the election (default: host_uuid)")
    s.add_argument("--leader-elect-lease-duration", type=_duration, default=15.0)
    s.add_argument("--leader-elect-renew-deadline", type=_duration, default=10.0)
    s.add_argument("--leader-elect-retry-period", type=_duration, default=2.0)
    s.add_argument("--kubeconfig-out", help="where to write the admin kubeconfig (default DATA_DIR/admin.kubeconfig)")
    s.add_argument("--workers", default="1",
                   help="processes serving the port over one store (auto: one per core; memory store: 1)")
    s.add_argument("--max-requests-inflight", type=_count, default=400,
                   help="read-only requests served at once; past it 429 (0: no limit)")
    s.add_argument("--max-mutating-requests-inflight", type=_count, default=200,
                   help="mutating requests served at once; past it 429 (0: no limit)")
    s.add_argument("--request-timeout", type=_duration, default=60.0,
                   help="seconds (or a duration, 1m0s) a non-watch request may take; past it 504")
    s.add_argument("--min-request-timeout", type=_duration, default=1800.0,
                   help="a watch without timeoutSeconds ends after a random time between this and twice this")
    s.add_argument("--max-connections", type=_count, default=1000,
                   help="open connections; past it requests are answered 429 and the connection closed (0: none)")
    s.add_argument("--max-watches-per-user", type=_count, default=1000,
                   help="open watches of one user; past it 429 (0: no limit)")
    s.add_argument("--audit-log-path", help="write audit events here, one JSON line each (- for stdout)")
    s.add_argument("--audit-policy-file", help="audit.k8s.io/v1 Policy deciding what is audited, at which level")
    s.add_argument("--audit-log-maxsize", type=_count, default=0, help="megabytes before the log rotates (0: 100)")
    s.add_argument("--audit-log-maxbackup", type=_count, default=0, help="rotated files kept (0: all)")
    s.add_argument("--audit-log-maxage", type=_count, default=0, help="days rotated files are kept (0: no limit)")
    s.add_argument("--service-account-issuer", default=DEFAULT_ISSUER, help="iss of the service account tokens")
    s.add_argument("--api-audiences", default="", help="audiences a token must name (default: the issuer), A,B")
    s.add_argument("--service-account-signing-key-file", help="ECDSA P-256 key, PEM (default DATA_DIR/sa.key)")
    s.add_argument("--service-account-max-token-expiration", type=int, default=0,
                   help="longest token lifetime in seconds (0: none)")
    s.add_argument("-v", "--verbose", action="store_true")
    c = sub.add_parser("controllers", help="run built-in and/or user controllers against a server over HTTP")
    c.add_argument("--kubeconfig", required=True)
    c.add_argument("--module", action="append", default=[], metavar="NAME",
                   help="module with a setup(manager) function to run (repeatable): a dotted name (examples.teams) "
                        "is imported with the current directory on sys.path; a path ending in .py is loaded "
                        "from that file")
    c.add_argument("--builtin", type=_bool, default=True)
    add_leader_election_arguments(c)
    add_metrics_arguments(c)
    insightcli.add_commands(sub)
    snap = sub.add_parser("snapshot", help="save, restore or check a snapshot of the SQLite store "
                                           "(etcd: etcdctl snapshot save/restore)")
    actions = snap.add_subparsers(dest="action", required=True)
    for action, text in (("save", "copy the store of DATA_DIR into FILE; servers may be running"),
                         ("restore", "make FILE the store of DATA_DIR, which must have none"),
                         ("status", "check FILE and say what it holds")):
        a = actions.add_parser(action, help=text)
        a.add_argument("file", metavar="FILE")
        if action != "status":
            a.add_argument("--data-dir", default="./miniplane-data", help="the data directory of `miniplane serve`")
    _add_debug(p, top=True)
    return p


def _add_debug(p: argparse.ArgumentParser, *, top: bool) -> None:
    """`--debug` on `p` and every parser below it, so that it may stand anywhere on the command line."""
    # Below the top the default is left out, so that a subcommand's parser does not reset what the top one read.
    p.add_argument("--debug", action="store_true", default=False if top else argparse.SUPPRESS,
                   help=f"print an error's traceback too (or set {DEBUG_ENV}=1)")
    for action in p._actions:  # argparse has no public walk of its subparsers
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _add_debug(child, top=False)


def _snapshot(args: argparse.Namespace) -> int:
    """`miniplane snapshot save|restore|status`: 0, or 1 with the reason."""
    try:
        if args.action == "save":
            info = save_snapshot(f"{args.data_dir}/{SQLITE_FILE}", args.file)
            done = f"Snapshot saved at {info.path}"
        elif args.action == "restore":
            info = restore_snapshot(args.file, f"{args.data_dir}/{SQLITE_FILE}")
            done = f"Snapshot {info.path} restored into {args.data_dir}"
        else:
            info = snapshot_status(args.file)
            done = f"Snapshot {info.path} is sound"
    except SnapshotError as exc:
        hint = "" if args.action != "save" or Path(args.data_dir, SQLITE_FILE).exists() else \
            " (no SQLite store there; an etcd store is saved with `etcdctl snapshot save`)"
        print(f"miniplane: error: {exc}{hint}", file=sys.stderr)
        return 1
    print(f"{done}: {_described(info)}")
    return 0


def _described(info: SnapshotInfo) -> str:
    return (f"revision {info.revision}, {info.keys} keys, history kept after revision {info.compacted}, "
            f"{info.size} bytes")


async def _serve_until_signalled(options: ServeOptions) -> None:
    """Serve until SIGINT or SIGTERM, then stop cleanly (open requests get Hypercorn's grace period).

    A worker of `--workers N` also stops when its parent is gone (`serve` returns).
    """
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            async def run() -> None:
                async with trio.open_nursery() as serving:
                    with _runtime_quiet_at_start():
                        await serving.start(serve, options)
                    collector.settle_after_startup()
                nursery.cancel_scope.cancel()

            nursery.start_soon(run)
            async for signum in signals:
                logging.getLogger("miniplane").info("received %s; shutting down", signal.Signals(signum).name)
                nursery.cancel_scope.cancel()
                break


@contextmanager
def _runtime_quiet_at_start() -> Iterator[None]:
    """The runtime's INFO lines held back for the block (unless -v): a start that fails (a port in use) stops
    the controllers it started, and saying so would bury the one line that says why it failed."""
    runtime_log = logging.getLogger("runtime")
    if runtime_log.getEffectiveLevel() < logging.INFO:
        yield
        return
    level = runtime_log.level
    runtime_log.setLevel(logging.WARNING)
    try:
        yield
    finally:
        runtime_log.setLevel(level)


def serve_options(args: argparse.Namespace) -> ServeOptions:
    """The `ServeOptions` of parsed `serve` arguments. Raises ValueError for a bad value or combination."""
    gates = parse_feature_gates(args.feature_gates)
    if bool(args.tls_cert_file) != bool(args.tls_private_key_file):
        raise ValueError("--tls-cert-file and --tls-private-key-file go together")
    etcd_flags = [f for f in ("etcd_prefix", "etcd_cafile", "etcd_certfile", "etcd_keyfile") if getattr(args, f)]
    if etcd_flags and not is_shared_store(args.store):
        raise ValueError(f"--{etcd_flags[0].replace('_', '-')} needs --store etcd://HOST:PORT")
    try:
        LeaderElectionConfig("default", "check", lease_duration=args.leader_elect_lease_duration,
                             renew_deadline=args.leader_elect_renew_deadline,
                             retry_period=args.leader_elect_retry_period)
    except ValueError as exc:
        raise ValueError(f"--leader-elect-*: {exc}") from None
    if args.audit_policy_file:
        try:
            with open(args.audit_policy_file, encoding="utf-8") as f:
                load_policy(f.read())
        except OSError as exc:
            raise ValueError(f"--audit-policy-file {args.audit_policy_file}: {_reason(exc)}") from None
        except PolicyError as exc:
            raise ValueError(f"--audit-policy-file {args.audit_policy_file}: {exc}") from None
    if bool(args.audit_log_path) != bool(args.audit_policy_file):
        logging.getLogger("miniplane").warning(
            "auditing needs both --audit-log-path and --audit-policy-file: no events will be recorded")
    workers = resolve_workers(args.workers)
    if workers > 1 and args.store == "memory":
        raise ValueError("--workers: a memory store cannot be shared by processes; use sqlite")
    return ServeOptions(
        data_dir=args.data_dir, bind=args.bind, port=args.port, api_domain=args.api_domain, store=args.store,
        feature_gates=gates, token_auth_file=args.token_auth_file, tls_cert_file=args.tls_cert_file,
        tls_private_key_file=args.tls_private_key_file, client_ca_file=args.client_ca_file,
        anonymous_auth=args.anonymous_auth, watch_history=args.watch_history, continue_ttl=args.continue_ttl,
        min_compress_bytes=args.min_compress_bytes, max_body_bytes=args.max_body_bytes,
        controllers=args.controllers, kubeconfig_path=args.kubeconfig_out,
        etcd_prefix=args.etcd_prefix, etcd_cafile=args.etcd_cafile, etcd_certfile=args.etcd_certfile,
        etcd_keyfile=args.etcd_keyfile, etcd_compaction_interval=args.etcd_compaction_interval,
        leader_elect=args.leader_elect, leader_elect_identity=args.leader_elect_identity,
        leader_elect_lease_duration=args.leader_elect_lease_duration,
        leader_elect_renew_deadline=args.leader_elect_renew_deadline,
        leader_elect_retry_period=args.leader_elect_retry_period, workers=workers,
        max_requests_inflight=args.max_requests_inflight,
        max_mutating_requests_inflight=args.max_mutating_requests_inflight, request_timeout=args.request_timeout,
        min_request_timeout=args.min_request_timeout, max_connections=args.max_connections,
        max_watches_per_user=args.max_watches_per_user, audit_log_path=args.audit_log_path,
        audit_policy_file=args.audit_policy_file, audit_log_maxsize=args.audit_log_maxsize,
        audit_log_maxbackup=args.audit_log_maxbackup, audit_log_maxage=args.audit_log_maxage,
        service_account_issuer=args.service_account_issuer,
        api_audiences=tuple(a for a in args.api_audiences.split(",") if a),
        service_account_signing_key_file=args.service_account_signing_key_file,
        service_account_max_token_expiration=args.service_account_max_token_expiration)


def _check_files_read(args: argparse.Namespace) -> None:
    """Raise ValueError naming the first of `serve`'s file options (`_READ_FILES`) that does not read."""
    for dest in _READ_FILES:
        if getattr(args, dest):
            try:
                with open(getattr(args, dest), "rb"):
                    pass
            except OSError as exc:
                raise ValueError(f"--{dest.replace('_', '-')} {getattr(args, dest)}: {_reason(exc)}") from None


def _run_server(options: ServeOptions) -> int:
    """Serve until signalled, then 0; raises what stopped the start (a port in use, a store that does not open).

    Also one worker of `--workers N`, in the process `api.workers` forked.
    """
    collector.pause_for_startup()  # until it serves: see api.collector
    trio.run(_serve_until_signalled, options)
    return 0


def _run_worker(options: ServeOptions, debug: bool) -> int:
    """A forked worker of `--workers N`: `_run_server`, its error said by the worker itself."""
    return _reporting(partial(_run_server, options), debug)


def _run_controllers(config: KubeConfig, modules: list[ModuleType], args: argparse.Namespace,
                     election: LeaderElectionConfig | None) -> int:
    """Controllers until signalled, then 0; raises what stopped them (a server that does not answer)."""
    run_out_of_process(config, modules, builtin=args.builtin, leader_election=election,
                       metrics_bind_address=args.metrics_bind_address)
    return 0


def leaf_cause(exc: BaseException) -> BaseException:
    """What `exc` is about: itself, or, inside (nested) exception groups as trio's nurseries raise them, the first
    leaf that is an `Exception` (else the first leaf: a KeyboardInterrupt)."""
    leaves = list(_leaves(exc))
    return next((leaf for leaf in leaves if isinstance(leaf, Exception)), leaves[0])


def _leaves(exc: BaseException) -> Iterator[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _leaves(inner)
    else:
        yield exc


def describe_error(exc: BaseException) -> str:
    """`exc` in one line: an OSError by its reason (after its file: `x.csv: no such file or directory`), the
    errors that say themselves (ValueError, StoreError, the client's) by their message, others by type and message."""
    if isinstance(exc, OSError) and exc.strerror and not isinstance(exc, ssl.SSLError):
        text = f"{exc.filename}: {_reason(exc)}" if exc.filename else _reason(exc)
    elif isinstance(exc, (ValueError, StoreError, ClientError, StatusError)) and str(exc):
        text = str(exc)
    else:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return " ".join(text.split())


def _reason(exc: OSError) -> str:
    """An OSError's reason as Go says it: `no such file or directory`."""
    reason = exc.strerror or str(exc)
    return reason[:1].lower() + reason[1:]


def _report(exc: BaseException, *, debug: bool, code: int) -> int:
    """Say `exc` in one line on stderr (after its traceback if `debug`); return `code` (130 for Ctrl-C)."""
    cause = leaf_cause(exc)
    if isinstance(cause, KeyboardInterrupt):
        return 130
    if debug:
        traceback.print_exception(exc)
    print(f"miniplane: error: {describe_error(cause)}", file=sys.stderr, flush=True)
    return code


def _reporting(run: Callable[[], int], debug: bool) -> int:
    """`run()`'s exit code; 1 when it raises, said by `_report`."""
    try:
        return run()
    except SystemExit:
        raise
    except BaseException as exc:
        return _report(exc, debug=debug, code=1)


def _prepared(args: argparse.Namespace, debug: bool) -> Callable[[], int]:
    """The run of the command `args` name, once what it needs is checked and loaded.

    Raises for a value that cannot be used (ValueError: a bad option or combination, a file that does not read,
    a module that does not import).
    """
    if args.command == "serve":
        options = serve_options(args)
        _check_files_read(args)
        if options.workers > 1:
            return partial(run_workers, options, partial(_run_worker, debug=debug))
        return partial(_run_server, options)
    if args.command == "controllers":
        election = leader_election_config(args)
        config, modules = load_out_of_process(args.kubeconfig, args.module, builtin=args.builtin)
        return partial(_run_controllers, config, modules, args, election)
    if args.command == "snapshot":
        return partial(_snapshot, args)
    raise ValueError(f"unknown command {args.command}")


def main(argv: list[str] | None = None) -> int:
    """Run `miniplane ARGV`; return its exit code. Every error is one line on stderr (see the module docs)."""
    args = parser().parse_args(argv)
    debug = args.debug or os.environ.get(DEBUG_ENV, "") not in ("", "0")
    if insightcli.is_insight(args):
        return _reporting(partial(insightcli.main, args), debug)
    logging.basicConfig(level=logging.DEBUG if getattr(args, "verbose", False) else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if not getattr(args, "verbose", False):
        logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per etcd call otherwise
    try:
        run = _prepared(args, debug)
    except Exception as exc:
        return _report(exc, debug=debug, code=2)
    return _reporting(run, debug)


if __name__ == "__main__":
    sys.exit(main())
