"""The `miniplane` command: `serve` (the API server) and `controllers` (controllers out of process)."""

from __future__ import annotations

import argparse
import logging
import signal
import sys

import trio

from api.assembly import ServeOptions
from api.server import serve
from controllers.cli import add_leader_election_arguments, leader_election_config, run_out_of_process
from runtime.featuregates import parse_feature_gates

__all__ = ["main", "parser"]


def _bool(text: str) -> bool:
    if text.lower() in ("1", "true", "yes"):
        return True
    if text.lower() in ("0", "false", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="miniplane", description="A mini Kubernetes-style control plane.")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="run the API server (HTTPS) on the embedded store")
    s.add_argument("--data-dir", default="./miniplane-data", help="state, certificates and admin.kubeconfig")
    s.add_argument("--bind", default="127.0.0.1", help="address to listen on")
    s.add_argument("--port", type=int, default=6443, help="port (0 picks a free one)")
    s.add_argument("--api-domain", default="svc.io", help="domain of the API group names (k8s.io for kubectl's typed commands)")
    s.add_argument("--store", choices=("sqlite", "memory"), default="sqlite")
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
    s.add_argument("--kubeconfig-out", help="where to write the admin kubeconfig (default DATA_DIR/admin.kubeconfig)")
    s.add_argument("-v", "--verbose", action="store_true")
    c = sub.add_parser("controllers", help="run built-in and/or user controllers against a server over HTTP")
    c.add_argument("--kubeconfig", required=True)
    c.add_argument("--module", action="append", default=[], help="python module with controllers to run")
    c.add_argument("--builtin", type=_bool, default=True)
    add_leader_election_arguments(c)
    return p


async def _serve_until_signalled(options) -> None:
    """Serve until SIGINT or SIGTERM, then stop cleanly (open requests get Hypercorn's grace period)."""
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve, options)
            async for signum in signals:
                logging.getLogger("miniplane").info("received %s; shutting down", signal.Signals(signum).name)
                nursery.cancel_scope.cancel()
                break


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if getattr(args, "verbose", False) else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.command == "serve":
        try:
            gates = parse_feature_gates(args.feature_gates)
        except ValueError as exc:
            print(f"miniplane: {exc}", file=sys.stderr)
            return 2
        if bool(args.tls_cert_file) != bool(args.tls_private_key_file):
            print("miniplane: --tls-cert-file and --tls-private-key-file go together", file=sys.stderr)
            return 2
        options = ServeOptions(
            data_dir=args.data_dir, bind=args.bind, port=args.port, api_domain=args.api_domain, store=args.store,
            feature_gates=gates, token_auth_file=args.token_auth_file, tls_cert_file=args.tls_cert_file,
            tls_private_key_file=args.tls_private_key_file, client_ca_file=args.client_ca_file,
            anonymous_auth=args.anonymous_auth, watch_history=args.watch_history, continue_ttl=args.continue_ttl,
            min_compress_bytes=args.min_compress_bytes, max_body_bytes=args.max_body_bytes,
            controllers=args.controllers, kubeconfig_path=args.kubeconfig_out)
        trio.run(_serve_until_signalled, options)
        return 0
    if args.command == "controllers":
        try:
            election = leader_election_config(args)
        except ValueError as exc:
            print(f"miniplane: {exc}", file=sys.stderr)
            return 2
        return run_out_of_process(args.kubeconfig, args.module, builtin=args.builtin, leader_election=election)
    return 2


if __name__ == "__main__":
    sys.exit(main())
