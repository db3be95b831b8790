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
import dataclasses
import logging
import os
import signal
import ssl
import sys
import traceback
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Callable, Iterator, Sequence

import trio

from api.serveoptions import SQLITE_FILE, ServeOptions, is_shared_store
from controllers.cli import (add_leader_election_arguments, add_metrics_arguments, go_duration,
                             leader_election_config, leader_election_timing, load_out_of_process, run_out_of_process)
from runtime.machinery.errors import StatusError
from runtime.server.featuregates import parse_feature_gates

if TYPE_CHECKING:
    from runtime.client.kubeconfig import KubeConfig
    from runtime.controller.leaderelection import LeaderElectionConfig
    from runtime.server.storage.sqlite.snapshot import SnapshotInfo

__all__ = ["main", "parser", "serve_options", "serve_flags", "ServeFlag", "leaf_cause", "describe_error", "DEBUG_ENV"]

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


_FIELD_DEFAULT = object()  # a `ServeFlag` whose default is its field's


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


@dataclass(frozen=True)
class ServeFlag:
    """One `miniplane serve` flag: the `ServeOptions` field it sets, and argparse's keywords for it.

    The flag is the field's name in kebab case (or `flag`), its default the field's (or `default`, for the
    flags read as text that `serve_options` converts: feature gates, workers, audiences).
    """

    field: str
    help: str | None = None
    type: Callable[[str], object] | None = None
    default: object = _FIELD_DEFAULT
    flag: str = ""

    @property
    def name(self) -> str:
        return self.flag or "--" + self.field.replace("_", "-")

    @property
    def dest(self) -> str:
        return self.name[2:].replace("-", "_")


def serve_flags() -> tuple[ServeFlag, ...]:
    """The flags of `miniplane serve`, in the order `--help` lists them; the four leader-election ones
    after `--leader-elect` are added by `add_leader_election_arguments`, shared with `miniplane controllers`."""
    return _SERVE_FLAGS


_SERVE_FLAGS = (
    ServeFlag("data_dir", "state, certificates and admin.kubeconfig"),
    ServeFlag("bind", "address to listen on"),
    ServeFlag("port", "port (0 picks a free one)", _port),
    ServeFlag("api_domain", "domain of the API group names (k8s.io for kubectl's typed commands)"),
    ServeFlag("store", "sqlite, memory, or etcd://HOST:PORT[,HOST:PORT...] (several servers may share an etcd)",
              _store),
    ServeFlag("etcd_prefix", "key prefix in etcd (default /registry)"),
    ServeFlag("etcd_cafile", "CA of etcd's serving certificate (TLS)"),
    ServeFlag("etcd_certfile", "client certificate presented to etcd (TLS)"),
    ServeFlag("etcd_keyfile", "its private key"),
    ServeFlag("etcd_compaction_interval",
              "compact etcd's history this often, shared by all servers (Go duration; 0: never)", go_duration),
    ServeFlag("feature_gates", "A=true,B=false", default=""),
    ServeFlag("token_auth_file", "CSV: token,user,uid,\"group1,group2\""),
    ServeFlag("tls_cert_file"),
    ServeFlag("tls_private_key_file"),
    ServeFlag("client_ca_file", "CA of client certificates (CN user, O groups)"),
    ServeFlag("anonymous_auth", type=_bool),
    ServeFlag("watch_history", "seconds of watch history kept", float),
    ServeFlag("continue_ttl", "seconds a continue token lives", float),
    ServeFlag("min_compress_bytes", type=int),
    ServeFlag("max_body_bytes", type=int),
    ServeFlag("controllers", "run the built-in controllers in-process", _bool),
    ServeFlag("leader_elect", "run the built-in controllers only while holding their Lease (default: true on etcd)",
              _bool),
    ServeFlag("leader_elect_identity"),
    ServeFlag("leader_elect_lease_duration"),
    ServeFlag("leader_elect_renew_deadline"),
    ServeFlag("leader_elect_retry_period"),
    ServeFlag("kubeconfig_path", "where to write the admin kubeconfig (default DATA_DIR/admin.kubeconfig)",
              flag="--kubeconfig-out"),
    ServeFlag("workers", "processes serving the port over one store (auto: one per core; memory store: 1)",
              default="1"),
    ServeFlag("max_requests_inflight", "read-only requests served at once; past it 429 (0: no limit)", _count),
    ServeFlag("max_mutating_requests_inflight", "mutating requests served at once; past it 429 (0: no limit)",
              _count),
    ServeFlag("request_timeout", "seconds (or a duration, 1m0s) a non-watch request may take; past it 504",
              go_duration),
    ServeFlag("min_request_timeout",
              "a watch without timeoutSeconds ends after a random time between this and twice this", go_duration),
    ServeFlag("max_connections",
              "open connections; past it requests are answered 429 and the connection closed (0: none)", _count),
    ServeFlag("max_watches_per_user", "open watches of one user; past it 429 (0: no limit)", _count),
    ServeFlag("audit_log_path", "write audit events here, one JSON line each (- for stdout)"),
    ServeFlag("audit_policy_file", "audit.k8s.io/v1 Policy deciding what is audited, at which level"),
    ServeFlag("audit_log_maxsize", "megabytes before the log rotates (0: 100)", _count),
    ServeFlag("audit_log_maxbackup", "rotated files kept (0: all)", _count),
    ServeFlag("audit_log_maxage", "days rotated files are kept (0: no limit)", _count),
    ServeFlag("service_account_issuer", "iss of the service account tokens"),
    ServeFlag("api_audiences", "audiences a token must name (default: the issuer), A,B", default=""),
    ServeFlag("service_account_signing_key_file", "ECDSA P-256 key, PEM (default DATA_DIR/sa.key)"),
    ServeFlag("service_account_max_token_expiration", "longest token lifetime in seconds (0: none)", int),
    ServeFlag("encryption_provider_config",
              "apiserver.config.k8s.io/v1 EncryptionConfiguration: the providers sealing resources at rest"),
    ServeFlag("encryption_provider_config_automatic_reload", "read the encryption config again when it changes",
              _bool),
    ServeFlag("service_cluster_ip_range", "CIDR Services' cluster IPs are allocated from"),
    ServeFlag("service_node_port_range", "ports Services' node ports are allocated from (A-B)"),
    ServeFlag("admission_modules", "Python modules whose WEBHOOKS (runtime.webhook) admit in process, A,B",
              default="", flag="--admission-module"),
)

#: The fields of `ServeOptions` the leader election's shared flags set (`add_leader_election_arguments`).
_LEADER_ELECTION_FIELDS = ("leader_elect_identity", "leader_elect_lease_duration", "leader_elect_renew_deadline",
                           "leader_elect_retry_period")


def _add_serve_flags(s: argparse.ArgumentParser) -> None:
    defaults = {f.name: f.default for f in dataclasses.fields(ServeOptions)}
    for flag in _SERVE_FLAGS:
        if flag.field == "leader_elect_identity":
            add_leader_election_arguments(s, switch=False)
        if flag.field in _LEADER_ELECTION_FIELDS:
            continue
        default = defaults[flag.field] if flag.default is _FIELD_DEFAULT else flag.default
        s.add_argument(flag.name, help=flag.help, default=default, **({"type": flag.type} if flag.type else {}))


#: The commands defined here; the others are the insight commands (`api.insightcli`).
_OWN_COMMANDS = ("serve", "controllers", "snapshot")


def _command_word(argv: Sequence[str] | None) -> str | None:
    """The command `argv` names: its first word that is no option (the top parser's options take no value)."""
    return next((a for a in (sys.argv[1:] if argv is None else argv) if not a.startswith("-")), None)


def parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """`miniplane`'s parser, for the command line `argv` (default: every command's).

    Given an `argv` naming one of this module's commands, the insight commands are left out: they would
    not parse it anyway, and their parsers load the insight client (`miniplane controllers --help` starts
    in a fifth of the time).
    """
    p = argparse.ArgumentParser(prog="miniplane", description="A mini Kubernetes-style control plane.")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="run the API server (HTTPS) on the embedded store")
    _add_serve_flags(s)
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
    if argv is None or _command_word(argv) not in _OWN_COMMANDS:
        # late import: the insight commands' parsers, only for a command line that may name one (a fast start)
        from api import insightcli
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
    # late import: the SQLite snapshot code, only for this command (a fast start)
    from runtime.server.storage.sqlite.snapshot import SnapshotError, restore_snapshot, save_snapshot, snapshot_status

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
    # late import: the server, only when serving (a fast start)
    from api.serving import gc_tuning
    from api.serving.server import serve

    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            async def run() -> None:
                async with trio.open_nursery() as serving:
                    with _runtime_quiet_at_start():
                        await serving.start(serve, options)
                    gc_tuning.settle_after_startup()
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
    # late import: what checks serve's values (audit policy, encryption config, workers), only for serve (a fast start)
    from api.audit import PolicyError, load_policy
    from api.serving.workers import resolve_workers
    from runtime.server.storage.encryption import ConfigError, load_config
    from runtime.server.kinds.services import ServiceRanges
    from runtime.webhook import WebhookModuleError, load_webhooks

    gates = parse_feature_gates(args.feature_gates)
    if bool(args.tls_cert_file) != bool(args.tls_private_key_file):
        raise ValueError("--tls-cert-file and --tls-private-key-file go together")
    etcd_flags = [f for f in ("etcd_prefix", "etcd_cafile", "etcd_certfile", "etcd_keyfile") if getattr(args, f)]
    if etcd_flags and not is_shared_store(args.store):
        raise ValueError(f"--{etcd_flags[0].replace('_', '-')} needs --store etcd://HOST:PORT")
    try:
        leader_election_timing(args)
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
    if args.encryption_provider_config_automatic_reload and not args.encryption_provider_config:
        raise ValueError("--encryption-provider-config-automatic-reload must be set with --encryption-provider-config")
    if args.encryption_provider_config:
        try:
            load_config(args.encryption_provider_config, args.api_domain)
        except ConfigError as exc:
            raise ValueError(f"--encryption-provider-config {args.encryption_provider_config}: {exc}") from None
    if args.audit_policy_file and not args.audit_log_path:
        logging.getLogger("miniplane").warning("--audit-policy-file needs --audit-log-path: no events will be recorded")
    ServiceRanges.parse(args.service_cluster_ip_range, args.service_node_port_range)  # ValueError in the flags' words
    workers = resolve_workers(args.workers)
    if workers > 1 and args.store == "memory":
        raise ValueError("--workers: a memory store cannot be shared by processes; use sqlite")
    modules = tuple(m for m in args.admission_module.split(",") if m)
    for module in modules:
        try:
            load_webhooks(module)  # imported once here: the assembly finds it loaded
        except WebhookModuleError as exc:
            raise ValueError(f"--admission-module {module}: {exc}") from None
    copied = {flag.field: getattr(args, flag.dest) for flag in _SERVE_FLAGS}
    return ServeOptions(**{**copied, "feature_gates": gates, "workers": workers, "admission_modules": modules,
                           "api_audiences": tuple(a for a in args.api_audiences.split(",") if a)})


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

    Also one worker of `--workers N`, in the process `api.serving.workers` forked.
    """
    # late import: the server, only when serving (a fast start)
    from api.serving import gc_tuning

    gc_tuning.pause_for_startup()  # until it serves: see api.serving.gc_tuning
    trio.run(_serve_until_signalled, options)
    return 0


def _run_worker(options: ServeOptions, debug: bool) -> int:
    """A forked worker of `--workers N`: `_run_server`, its error said by the worker itself."""
    return _reporting(partial(_run_server, options), debug)


def _run_controllers(config: KubeConfig, modules: list[ModuleType], args: argparse.Namespace,
                     election: LeaderElectionConfig | None) -> int:
    """Controllers until signalled, then 0; raises what stopped them (a server that does not answer)."""
    run_out_of_process(config, modules, builtin=args.builtin, leader_election=election,
                       metrics_bind_address=args.metrics_bind_address,
                       health_probe_bind_address=args.health_probe_bind_address)
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
    elif isinstance(exc, (ValueError, StatusError, *_loaded(_SELF_SAYING))) and str(exc):
        text = str(exc)
    else:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return " ".join(text.split())


#: The errors besides ValueError and StatusError that say themselves, by module: the store's and the client's.
_SELF_SAYING = (("runtime.server.storage", "StoreError"), ("runtime.client.interface", "ClientError"))


def _loaded(classes: Sequence[tuple[str, str]]) -> tuple[type, ...]:
    """Those of `classes` whose module is loaded: an error of a class never imported was never raised, and
    importing the store or the client to say an error would slow every command's start."""
    return tuple(getattr(sys.modules[module], name) for module, name in classes if module in sys.modules)


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
            # late import: the workers' supervisor, only when serving with several (a fast start)
            from api.serving.workers import run_workers
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
    argv = sys.argv[1:] if argv is None else argv
    args = parser(argv).parse_args(argv)
    debug = args.debug or os.environ.get(DEBUG_ENV, "") not in ("", "0")
    if args.command not in _OWN_COMMANDS:
        # late import: the insight client, only for an insight command (a fast start)
        from api import insightcli
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
