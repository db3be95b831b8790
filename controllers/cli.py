"""Running controllers out of process, over HTTP: the built-in ones and your own.

    python -m controllers.cli --kubeconfig admin.kubeconfig my_team.controllers ./extra.py

Convention for a controller module: it exposes a module-level

    def setup(manager: runtime.manager.Manager) -> None

which builds its controllers on the manager (`manager.controller(...).for_(...).complete(reconcile)`,
reading caches from `manager.informers` and writing with `manager.client`) and may add other
long-running parts with `manager.add(name, runnable)`. The same `setup` then runs in-process
(in a test, see `runtime.testing`) or out of process (here). A module is named by its import
name (found from the current directory too, as `python -m` does) or by the path of a `.py` file.

`--metrics-bind-address HOST:PORT` serves the manager's metrics (client-go's work-queue and
controller-runtime's reconcile families, `runtime.metrics`) at `http://HOST:PORT/metrics` in
Prometheus' text format, as controller-runtime's metrics server (plain HTTP, no authentication; `:PORT`
listens on every interface, `0`, the default, serves none).

Several copies may run against one server with leader election (`--leader-elect`): only the
holder of the Lease `--leader-elect-namespace`/`--leader-elect-name` runs controllers; the
others keep their caches warm and take over when it stops (see `runtime.leaderelection`).

`run_out_of_process(kubeconfig, modules, builtin=True)` loads the kubeconfig (its CA, token or
client certificate), imports the modules, opens an `HTTPClient` (the API domain is asked from
the server), runs one `Manager` with the built-in controllers (unless `builtin=False`) and every
module's, and returns an exit code: 0 after SIGINT/SIGTERM (graceful stop), 2 for a bad
kubeconfig or module, 1 when the manager fails.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import logging
import os
import signal
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Sequence

import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.trio import serve as hypercorn_serve
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from runtime.client_http import open_http_client
from runtime.customkinds import CustomKindsFollower
from controllers.builtin import setup as builtin_setup
from runtime.kubeconfig import KubeConfig, KubeConfigError, load_kubeconfig
from runtime.leaderelection import LeaderElectionConfig, default_identity
from runtime.manager import Manager

__all__ = [
    "load_controller_module", "run_controllers", "run_out_of_process", "main", "FIELD_MANAGER",
    "add_leader_election_arguments", "leader_election_config", "serve_metrics", "metrics_app",
    "add_metrics_arguments",
]

log = logging.getLogger("miniplane.controllers")

FIELD_MANAGER = "miniplane-controllers"


def load_controller_module(spec: str) -> ModuleType:
    """Import a controller module by import name or `.py` path; check it has a callable `setup`.

    Raises ImportError (or what the module raises) when it cannot be imported,
    TypeError when it has no `setup(manager)`.
    """
    if spec.endswith(".py") or os.sep in spec:
        path = Path(spec).resolve()
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        if module_spec is None or module_spec.loader is None:
            raise ImportError(f"cannot load {spec}")
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
    else:
        if os.getcwd() not in sys.path and "" not in sys.path:
            sys.path.insert(0, os.getcwd())  # a console script does not put it there; `python -m` does
        module = importlib.import_module(spec)
    if not callable(getattr(module, "setup", None)):
        raise TypeError(f"controller module {spec} has no setup(manager) function")
    return module


def metrics_app(registry: CollectorRegistry) -> Any:
    """An ASGI app answering `GET /metrics` with `registry`'s exposition (404 elsewhere)."""
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
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
    host, _, port = bind_address.rpartition(":")
    config = HypercornConfig()
    config.bind = [f"{host or '0.0.0.0'}:{port}"]
    config.accesslog = None
    config.errorlog = logging.getLogger("hypercorn.error")
    config.graceful_timeout = 1

    async def serving(task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
        await hypercorn_serve(metrics_app(registry), config, task_status=task_status)
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(serving)
        url = f"{binds[0]}/metrics"
        log.info("serving metrics at %s", url)
        task_status.started(url)


async def run_controllers(config: KubeConfig, modules: Sequence[ModuleType], *, builtin: bool = True,
                          domain: str | None = None, protobuf: bool = False,
                          leader_election: LeaderElectionConfig | None = None,
                          metrics_bind_address: str = "0",
                          task_status: trio.TaskStatus[Manager] = trio.TASK_STATUS_IGNORED) -> None:
    """Run the built-in controllers (if `builtin`) and each module's over HTTP until cancelled.

    started() with the manager once its informers synced (with
    `leader_election`, before it leads), and its metrics served when
    `metrics_bind_address` is not "0". Raises the client's errors when the
    server cannot be reached at start.
    """
    async with open_http_client(config, domain=domain, protobuf=protobuf, field_manager=FIELD_MANAGER,
                                user_agent=FIELD_MANAGER) as client:
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
            await nursery.start(manager.run)
            task_status.started(manager)


def run_out_of_process(kubeconfig: str, modules: Sequence[str], builtin: bool = True, *,
                       context: str | None = None, domain: str | None = None, protobuf: bool = False,
                       leader_election: LeaderElectionConfig | None = None, metrics_bind_address: str = "0") -> int:
    """Run controllers against the server of `kubeconfig` until SIGINT/SIGTERM; return the exit code."""
    try:
        config = load_kubeconfig(kubeconfig, context)
    except (OSError, KubeConfigError) as exc:
        print(f"error: cannot read kubeconfig {kubeconfig}: {exc}", file=sys.stderr)
        return 2
    loaded: list[ModuleType] = []
    for spec in modules:
        try:
            loaded.append(load_controller_module(spec))
        except Exception as exc:
            print(f"error: controller module {spec}: {exc}", file=sys.stderr)
            return 2
    if not builtin and not loaded:
        print("error: nothing to run (no modules and --no-builtin)", file=sys.stderr)
        return 2

    async def main() -> None:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:
                await nursery.start(lambda task_status: run_controllers(
                    config, loaded, builtin=builtin, domain=domain, protobuf=protobuf,
                    leader_election=leader_election, metrics_bind_address=metrics_bind_address,
                    task_status=task_status))
                log.info("controllers running against %s", config.server)
                async for signum in signals:
                    log.info("received signal %d; stopping", signum)
                    nursery.cancel_scope.cancel()
                    break

    try:
        trio.run(main)
    except Exception as exc:
        log.error("controller manager failed", exc_info=exc)
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


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
    except ValueError as exc:
        parser.error(str(exc))
    return run_out_of_process(args.kubeconfig, args.modules, builtin=not args.no_builtin, context=args.context,
                              domain=args.api_domain, protobuf=args.protobuf, leader_election=election,
                              metrics_bind_address=args.metrics_bind_address)


def add_metrics_arguments(parser: argparse.ArgumentParser) -> None:
    """Add `--metrics-bind-address` (controller-runtime's name) to `parser`."""
    parser.add_argument("--metrics-bind-address", default="0",
                        help="serve /metrics (plain HTTP) at HOST:PORT; :PORT listens everywhere; 0 serves none")


def add_leader_election_arguments(parser: argparse.ArgumentParser) -> None:
    """Add `--leader-elect` and its options (kube-controller-manager's names, seconds) to `parser`."""
    parser.add_argument("--leader-elect", action="store_true",
                        help="run controllers only while holding the lease (several copies may run)")
    parser.add_argument("--leader-elect-namespace", default="default", help="namespace of the Lease")
    parser.add_argument("--leader-elect-name", default=FIELD_MANAGER, help="name of the Lease")
    parser.add_argument("--leader-elect-identity", default="", help="this candidate's identity (default: host_uuid)")
    parser.add_argument("--leader-elect-lease-duration", type=float, default=15.0)
    parser.add_argument("--leader-elect-renew-deadline", type=float, default=10.0)
    parser.add_argument("--leader-elect-retry-period", type=float, default=2.0)


def leader_election_config(args: Any) -> LeaderElectionConfig | None:
    """The `LeaderElectionConfig` the parsed `--leader-elect*` arguments ask for (None without `--leader-elect`).

    Raises ValueError for inconsistent timing.
    """
    if not args.leader_elect:
        return None
    return LeaderElectionConfig(args.leader_elect_namespace, args.leader_elect_name,
                                identity=args.leader_elect_identity or default_identity(),
                                lease_duration=args.leader_elect_lease_duration,
                                renew_deadline=args.leader_elect_renew_deadline,
                                retry_period=args.leader_elect_retry_period)


if __name__ == "__main__":
    sys.exit(main())
