"""Running controllers out of process, over HTTP: the built-in ones and your own.

    python -m controllers.cli --kubeconfig admin.kubeconfig my_team.controllers ./extra.py

Convention for a controller module: it exposes a module-level

    def setup(manager: runtime.controller.manager.Manager) -> None

which builds its controllers on the manager (`manager.controller(...).for_(...).complete(reconcile)`,
reading caches from `manager.informers` and writing with `manager.client`) and may add other
long-running parts with `manager.add(name, runnable)`. The same `setup` then runs in-process
(in a test, see `runtime.controller.testing`) or out of process (here).

How `--module NAME` is resolved (`load_controller_module`): a NAME ending in `.py`, or holding a
path separator, is a file, executed from that path as a module named after the file's stem (a
stem another module already has gets a private name instead), registered in `sys.modules`
before it runs, so that pydantic models with `from __future__ import annotations` resolve their
fields; any other NAME is a dotted import name (`examples.teams`), imported with the current
directory on `sys.path`, as `python -m` does.

`--metrics-bind-address HOST:PORT` serves the manager's metrics (client-go's work-queue and
controller-runtime's reconcile families, `runtime.controller.metrics`) at `http://HOST:PORT/metrics` in
Prometheus' text format, as controller-runtime's metrics server (plain HTTP, no authentication; `:PORT`
listens on every interface, `0`, the default, serves none).

Several copies may run against one server with leader election (`--leader-elect`): only the
holder of the Lease `--leader-elect-namespace`/`--leader-elect-name` runs controllers; the
others keep their caches warm and take over when it stops (see `runtime.controller.leaderelection`).

`load_out_of_process(kubeconfig, modules)` loads the kubeconfig (its CA, token or client
certificate) and imports the modules, raising ValueError in one line for one that cannot be used;
`run_out_of_process(config, modules, builtin=True)` then opens an `HTTPClient` (the API domain is
asked from the server) and runs one `Manager` with the built-in controllers (unless
`builtin=False`) and every module's until SIGINT or SIGTERM, which stop it in whatever state it
is, informers synced or not (`run_until_signalled`). `miniplane controllers` (`api.cli`) says
their errors in one line.

Importing this module loads the standard library and trio only, so that parsing a command line
(`--help`) is fast: the client, the manager, the built-in controllers and Hypercorn are imported by
the function that runs or serves them (tests/unit/test_fast_start.py counts it).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import logging
import os
import re
import signal
import sys
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, AsyncIterator, Awaitable, Callable, Sequence

import trio

if TYPE_CHECKING:
    import httpx
    from prometheus_client import CollectorRegistry

    from runtime.client.kubeconfig import KubeConfig
    from runtime.controller.leaderelection import LeaderElectionConfig
    from runtime.controller.manager import Manager

__all__ = [
    "load_controller_module", "load_out_of_process", "run_controllers", "run_until_signalled",
    "run_out_of_process", "main", "FIELD_MANAGER",
    "add_leader_election_arguments", "leader_election_config", "leader_election_timing", "go_duration",
    "serve_metrics", "metrics_app", "add_metrics_arguments", "LEADER_ELECTION_TIMING",
]

log = logging.getLogger("miniplane.controllers")

FIELD_MANAGER = "miniplane-controllers"


def load_controller_module(spec: str) -> ModuleType:
    """Import a controller module by import name or `.py` path (see the module docs); check it has a callable `setup`.

    Raises ImportError (or what the module raises) when it cannot be imported,
    TypeError when it has no `setup(manager)`. A file that fails to run is
    not left in `sys.modules`.
    """
    if spec.endswith(".py") or os.sep in spec:
        path = Path(spec).resolve()
        name = _file_module_name(path)
        module_spec = importlib.util.spec_from_file_location(name, path)
        if module_spec is None or module_spec.loader is None:
            raise ImportError(f"cannot load {spec}")
        module = importlib.util.module_from_spec(module_spec)
        # Registered before it runs, as importlib's recipe does: pydantic (and dataclasses) resolve postponed
        # annotations through sys.modules[cls.__module__].
        sys.modules[name] = module
        try:
            module_spec.loader.exec_module(module)
        except BaseException:
            if sys.modules.get(name) is module:
                del sys.modules[name]
            raise
    else:
        if os.getcwd() not in sys.path and "" not in sys.path:
            sys.path.insert(0, os.getcwd())  # a console script does not put it there; `python -m` does
        module = importlib.import_module(spec)
    if not callable(getattr(module, "setup", None)):
        raise TypeError("no setup(manager) function")
    return module


def _file_module_name(path: Path) -> str:
    """The file's stem, unless another module has it (`./controllers.py` is not the `controllers` package)."""
    taken = sys.modules.get(path.stem)
    if taken is None or getattr(taken, "__file__", None) == str(path):
        return path.stem
    return f"_miniplane_module_{path.stem}_{abs(hash(str(path))):x}"


def metrics_app(registry: CollectorRegistry) -> Any:
    """An ASGI app answering `GET /metrics` with `registry`'s exposition (404 elsewhere)."""
    # late import: Prometheus' exposition only when metrics are served (a fast start)
    from runtime.controller.plainhttp import answer_lifespan
    from prometheus_client import generate_latest
    from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            return await answer_lifespan(receive, send)
        found = scope["path"] == "/metrics" and scope["method"] in ("GET", "HEAD")
        body = generate_latest(registry) if found else b"404 page not found\n"
        await send({"type": "http.response.start", "status": 200 if found else 404,
                    "headers": [(b"content-type", CONTENT_TYPE_PLAIN_0_0_4.encode() if found
                                 else b"text/plain; charset=utf-8")]})
        await send({"type": "http.response.body", "body": body if scope["method"] != "HEAD" else b""})
    return app


async def serve_metrics(registry: CollectorRegistry, bind_address: str, *,
                        task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
    """Serve `registry` at `http://BIND/metrics` until cancelled; started() with the URL."""
    # late import: the runtime's controller package only when metrics are served (a fast --help)
    from runtime.controller.plainhttp import serve_plain_http

    async with trio.open_nursery() as nursery:
        base = await nursery.start(partial(serve_plain_http, metrics_app(registry), bind_address, what="metrics"))
        task_status.started(f"{base}/metrics")


async def run_controllers(config: KubeConfig, modules: Sequence[ModuleType], *, builtin: bool = True,
                          domain: str | None = None, protobuf: bool = False,
                          leader_election: LeaderElectionConfig | None = None,
                          metrics_bind_address: str = "0", health_probe_bind_address: str = "0",
                          transport: httpx.AsyncBaseTransport | None = None,
                          task_status: trio.TaskStatus[Manager] = trio.TASK_STATUS_IGNORED) -> None:
    """Run the built-in controllers (if `builtin`) and each module's over HTTP until cancelled.

    started() with the manager once its informers synced (with
    `leader_election`, before it leads), and its metrics served when
    `metrics_bind_address` is not "0", its `/healthz` and `/readyz` when `health_probe_bind_address` is not
    "0" (served before the informers sync: `/readyz` says what it waits for). Raises the client's errors when the
    server cannot be reached at start (`TransportError` naming the server).
    `transport`: the HTTP client's (a test's in-process server).
    """
    # late import: the client, the manager and the built-in controllers only when they run (a fast --help)
    from controllers.builtin import setup as builtin_setup
    from runtime.client.http import discover_domain, open_http_client
    from runtime.client.interface import TransportError
    from runtime.controller.customkinds import CustomKindsFollower
    from runtime.controller.manager import Manager
    from runtime.controller.probes import serve_probes

    if domain is None:
        try:
            domain = await discover_domain(config, transport=transport)
        except TransportError as exc:
            raise TransportError(f"cannot reach the server {config.server}: {exc}") from exc
    async with open_http_client(config, domain=domain, protobuf=protobuf, field_manager=FIELD_MANAGER,
                                user_agent=FIELD_MANAGER, transport=transport) as client:
        manager = Manager(client, name=FIELD_MANAGER, leader_election=leader_election)
        # The client's scheme serves the server's custom kinds too (namespace deletion and GC act on them).
        manager.add("custom-kinds", CustomKindsFollower(client), needs_leader=False)
        if builtin:
            builtin_setup(manager)
        for module in modules:
            module.setup(manager)
        async with trio.open_nursery() as nursery:
            if metrics_bind_address not in ("", "0"):
                await nursery.start(serve_metrics, manager.metrics.registry, metrics_bind_address)
            if health_probe_bind_address not in ("", "0"):
                await nursery.start(serve_probes, manager, health_probe_bind_address)
            await nursery.start(manager.run)
            log.info("controllers running against %s", config.server)
            task_status.started(manager)


async def run_until_signalled(async_fn: Callable[..., Awaitable[Any]], *,
                              task_status: trio.TaskStatus[Any] = trio.TASK_STATUS_IGNORED) -> None:
    """Run `async_fn(task_status=...)` until SIGINT or SIGTERM, then cancel it (its graceful stop) and return.

    A signal stops it in whatever state it is: still starting (informers that
    never sync, as those of a kind whose CRD is not applied) or started.
    started() with what `async_fn` started() with. Raises what `async_fn` raises.
    """
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            # Listening before starting: a signal received while `async_fn` starts must stop it too.
            nursery.start_soon(_cancel_on_signal, signals, nursery.cancel_scope)
            value = await nursery.start(async_fn)
            task_status.started(value)


async def _cancel_on_signal(signals: AsyncIterator[int], scope: trio.CancelScope) -> None:
    async for signum in signals:
        log.info("received %s; stopping", signal.Signals(signum).name)
        scope.cancel()
        return


def load_out_of_process(kubeconfig: str, modules: Sequence[str], builtin: bool = True, *,
                        context: str | None = None) -> tuple[KubeConfig, list[ModuleType]]:
    """The kubeconfig and controller modules a run needs.

    Raises ValueError saying in one line which one cannot be used (a
    kubeconfig that does not load, a module that does not import or has no
    `setup`), or that there is nothing to run (no modules and not `builtin`).
    """
    # late import: the kubeconfig's reader (YAML) only when a command runs (a fast --help)
    from runtime.client.kubeconfig import KubeConfigError, load_kubeconfig

    try:
        config = load_kubeconfig(kubeconfig, context)
    except (OSError, KubeConfigError) as exc:
        raise ValueError(f"cannot read kubeconfig {kubeconfig}: {_said(exc)}") from exc
    loaded: list[ModuleType] = []
    for spec in modules:
        try:
            loaded.append(load_controller_module(spec))
        except Exception as exc:
            raise ValueError(f"controller module {spec}: {_said(exc)}") from exc
    if not builtin and not loaded:
        raise ValueError("nothing to run: no modules and no built-in controllers")
    return config, loaded


def _said(exc: Exception) -> str:
    """`exc` in words, after the file it is about: a file error by its reason (no such file or directory), an import
    or setup error by its message, what else a module raised with its type."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror[:1].lower() + exc.strerror[1:]
    if isinstance(exc, (ImportError, TypeError, ValueError)):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"  # what a module raised at import: KeyError: 'x'


def run_out_of_process(config: KubeConfig, modules: Sequence[ModuleType], builtin: bool = True, *,
                       domain: str | None = None, protobuf: bool = False,
                       leader_election: LeaderElectionConfig | None = None, metrics_bind_address: str = "0",
                       health_probe_bind_address: str = "0") -> None:
    """Run controllers against the server of `config` until SIGINT/SIGTERM, then return (graceful stop).

    Raises what the run raises (inside trio's exception groups): the
    server cannot be reached, the manager fails.
    """
    trio.run(run_until_signalled, partial(run_controllers, config, modules, builtin=builtin, domain=domain,
                                          protobuf=protobuf, leader_election=leader_election,
                                          metrics_bind_address=metrics_bind_address,
                                          health_probe_bind_address=health_probe_bind_address))


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m controllers.cli [--kubeconfig F] [--context C] [--no-builtin] [--protobuf] [MODULE ...]`."""
    parser = argparse.ArgumentParser(prog="python -m controllers.cli",
                                     description="Run miniplane controllers out of process, over HTTP.")
    parser.add_argument("modules", nargs="*", help="controller modules (import names or .py paths) with setup(manager)")
    parser.add_argument("--kubeconfig", default=os.environ.get("KUBECONFIG") or str(Path.home() / ".kube/config"))
    parser.add_argument("--context", default=None)
    parser.add_argument("--api-domain", default=None, help="the server's API domain (default: ask the server)")
    parser.add_argument("--no-builtin", action="store_true", help="do not run the built-in controllers")
    parser.add_argument("--protobuf", action="store_true", help="talk Protobuf instead of JSON")
    add_leader_election_arguments(parser)
    add_metrics_arguments(parser)
    parser.add_argument("-v", "--verbose", action="store_true")
    args: Any = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        election = leader_election_config(args)
        config, loaded = load_out_of_process(args.kubeconfig, args.modules, builtin=not args.no_builtin,
                                             context=args.context)
    except ValueError as exc:
        parser.error(str(exc))
    run_out_of_process(config, loaded, builtin=not args.no_builtin, domain=args.api_domain, protobuf=args.protobuf,
                       leader_election=election, metrics_bind_address=args.metrics_bind_address,
                       health_probe_bind_address=args.health_probe_bind_address)
    return 0


def add_metrics_arguments(parser: argparse.ArgumentParser) -> None:
    """Add `--metrics-bind-address` and `--health-probe-bind-address` (controller-runtime's names) to `parser`."""
    parser.add_argument("--metrics-bind-address", default="0",
                        help="serve /metrics (plain HTTP) at HOST:PORT; :PORT listens everywhere; 0 serves none")
    parser.add_argument("--health-probe-bind-address", default="0",
                        help="serve /healthz and /readyz (plain HTTP; ready once the informers synced and, with "
                             "--leader-elect, a leader is known) at HOST:PORT; 0 serves none")


_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(h|ms|m|s)")
_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}

#: The `--leader-elect-*` timing flags and their defaults: LeaderElectionConfig's, written out so that parsing
#: loads no client (tests/unit/controller/test_cli.py checks they are still its).
LEADER_ELECTION_TIMING = {"lease_duration": 15.0, "renew_deadline": 10.0, "retry_period": 2.0}


def go_duration(text: str) -> float:
    """Seconds of a Go duration (`5m`, `1h30m`, `90s`, `0`), as kube's flags take them, or a number: an
    argparse type (raises ArgumentTypeError)."""
    try:
        return float(text)
    except ValueError:
        pass
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise argparse.ArgumentTypeError(f"expected a duration such as 5m, 90s or 1h30m, got {text!r}")
    return sum(float(n) * _UNITS[u] for n, u in parts)


def add_leader_election_arguments(parser: argparse.ArgumentParser, *, switch: bool = True) -> None:
    """Add the `--leader-elect*` flags (kube-controller-manager's names; durations as `go_duration`) to `parser`.

    With `switch` (the controllers' commands) `--leader-elect` turns the election on and the Lease may be
    named; without, the caller adds its own `--leader-elect` first (`miniplane serve`: true, false, or on
    with a shared store) and elects on its fixed Lease. The timing is checked by `leader_election_timing`.
    """
    if switch:
        parser.add_argument("--leader-elect", action="store_true",
                            help="run controllers only while holding the lease (several copies may run)")
        parser.add_argument("--leader-elect-namespace", default="default", help="namespace of the Lease")
        parser.add_argument("--leader-elect-name", default=FIELD_MANAGER, help="name of the Lease")
    parser.add_argument("--leader-elect-identity", default="", help="this candidate's identity (default: host_uuid)")
    for name, seconds in LEADER_ELECTION_TIMING.items():
        parser.add_argument(f"--leader-elect-{name.replace('_', '-')}", type=go_duration, default=seconds)


def leader_election_timing(args: Any) -> dict[str, float]:
    """The parsed `--leader-elect-*` timing, as `LeaderElectionConfig`'s keyword arguments.

    Raises ValueError for an inconsistent timing, as `LeaderElectionConfig` says it.
    """
    # late import: the election (and the client under it) only when a command runs (a fast --help)
    from runtime.controller.leaderelection import LeaderElectionConfig

    timing = {name: getattr(args, f"leader_elect_{name}") for name in LEADER_ELECTION_TIMING}
    LeaderElectionConfig("default", "check", **timing)
    return timing


def leader_election_config(args: Any) -> LeaderElectionConfig | None:
    """The `LeaderElectionConfig` the parsed `--leader-elect*` arguments ask for (None without `--leader-elect`).

    Raises ValueError for inconsistent timing.
    """
    if not args.leader_elect:
        return None
    # late import: the election (and the client under it) only when it is asked for (a fast --help)
    from runtime.controller.leaderelection import LeaderElectionConfig, default_identity

    return LeaderElectionConfig(args.leader_elect_namespace, args.leader_elect_name,
                                identity=args.leader_elect_identity or default_identity(),
                                **leader_election_timing(args))


if __name__ == "__main__":
    sys.exit(main())
