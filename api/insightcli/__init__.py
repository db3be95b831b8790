"""The RBAC insight commands of `miniplane`: who-can, access-matrix, rbac diff, rbac lint.

Contract: `add_commands(subparsers)` registers the commands on `miniplane`'s
parser (`api/cli.py` calls it and nothing else); `is_insight(args)` tells
whether parsed arguments are one of them; `main(args)` runs one and returns
its exit code; `run(args, out, err, transport=None)` is the same, awaitable,
writing to the given streams (tests pass an in-process transport).

Each command is kubeconfig-based as kubectl (`--kubeconfig`, `--context`,
`$KUBECONFIG`, the context's namespace), asks the server's `insight.<domain>/v1`
kinds (nothing is computed client-side: the server answers from the
authorizer's own index, as the caller), and prints a kubectl-like table or
`-o json|yaml`. Errors print as kubectl's (`Error from server (Forbidden): ...`)
and exit 1:

- `miniplane who-can VERB RESOURCE [NAME] [-n NS | -A]` (`api.insightcli.whocan`);
- `miniplane access-matrix [--as USER] [--as-group G] [-n NS] [--verbs ...]` (`matrix`);
- `miniplane rbac diff -f MANIFEST [--delete]` (`diff`; exit 1 when permissions change);
- `miniplane rbac lint [--min-severity S]` (`lint`).
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

import httpx
import trio

from runtime.machinery import errors
from runtime.client.kubeconfig import KubeConfigError

from api.insightcli import diff, lint, matrix, whocan
from api.insightcli.connect import Connection
from api.insightcli.output import OUTPUT_FORMATS

__all__ = ["add_commands", "is_insight", "main", "run"]


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kubeconfig", help="the kubeconfig (default $KUBECONFIG, else ~/.kube/config)")
    p.add_argument("--context", help="the kubeconfig context (default: the current one)")
    p.add_argument("-o", "--output", choices=OUTPUT_FORMATS, default="table", help="table (default), json or yaml")


#: The commands: (path under `miniplane`, help, module with `add_arguments` and `run`).
_COMMANDS = (
    (("who-can",), "every subject allowed a request, and the bindings and rules granting it", whocan),
    (("access-matrix",), "allowed / denied per resource and verb, as rakkess prints it", matrix),
    (("rbac", "diff"), "permissions a manifest would grant and revoke (server-side dry run)", diff),
    (("rbac", "lint"), "dangling references, rules that never match, risky grants, stuck namespaces", lint),
)


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register who-can, access-matrix and rbac (diff, lint) on `miniplane`'s subparsers."""
    under: dict[str, argparse._SubParsersAction] = {}
    for path, text, module in _COMMANDS:
        if len(path) > 1 and path[0] not in under:  # `rbac`, where its first command is listed
            group = sub.add_parser(path[0], help="policy-wide RBAC insight: diff, lint")
            under[path[0]] = group.add_subparsers(dest="rbac_command", required=True)
        p = (under[path[0]] if len(path) > 1 else sub).add_parser(path[-1], help=text)
        module.add_arguments(p)
        _common(p)
        p.set_defaults(insight=module.run)


def is_insight(args: argparse.Namespace) -> bool:
    """Whether `args` (parsed by `miniplane`'s parser) name an insight command."""
    return getattr(args, "insight", None) is not None


async def run(args: argparse.Namespace, out: TextIO, err: TextIO,
              transport: httpx.AsyncBaseTransport | None = None) -> int:
    """Run the command `args` name; return its exit code (1 for an error, printed on `err`)."""
    try:
        conn = Connection.open(args.kubeconfig, args.context, transport)
    except (KubeConfigError, OSError) as exc:
        err.write(f"error: {exc}\n")
        return 1
    try:
        return await args.insight(conn, args, out, err)
    except errors.StatusError as exc:
        err.write(f"Error from server ({exc.reason}): {exc.message}\n")
        return 1
    except (OSError, ValueError) as exc:
        err.write(f"error: {exc}\n")
        return 1
    except httpx.TransportError as exc:
        err.write(f"error: cannot reach the server: {exc}\n")
        return 1
    finally:
        await conn.aclose()


def main(args: argparse.Namespace) -> int:
    """Run the command on stdout and stderr; return its exit code."""
    return trio.run(run, args, sys.stdout, sys.stderr)
