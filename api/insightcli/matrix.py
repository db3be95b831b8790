"""`miniplane access-matrix [--as USER | --as-group G] [-n NS]`: resources by verbs, as rakkess prints it.

Rows are what the server serves plus every resource the rules name; columns
the verbs of `--verbs` (default rakkess': list, create, update, delete).
Cells: ✔ allowed, ✖ denied, ✔* allowed only through a wildcard. Without
`-n` the matrix is cluster-wide (what ClusterRoleBindings allow; a request
across all namespaces), with it the namespace's namespaced resources.

Whose: the caller's own by default (anyone may ask). `--as USER` and
`--as-group G` (repeatable) ask about another subject, which needs
permission to create SubjectAccessReviews. As kubectl's impersonation,
`--as` adds the group `system:authenticated` (unless a group given is
`system:authenticated` or `system:unauthenticated`, or the user is
`system:anonymous`); `--as-group` alone is that group only.

Internal to `api.insightcli`: imported by its modules only.
"""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from api.insightcli.connect import Connection
from api.insightcli.output import LEGEND, MARKS, table, table_status

__all__ = ["add_arguments", "run", "subject_spec"]

RAKKESS_VERBS = "list,create,update,delete"
_AUTHENTICATED, _UNAUTHENTICATED, _ANONYMOUS = "system:authenticated", "system:unauthenticated", "system:anonymous"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-n", "--namespace", default="", help="a namespace (default: cluster-wide)")
    p.add_argument("--as", dest="as_user", default="", help="the user whose matrix to show")
    p.add_argument("--as-group", action="append", default=[], help="a group of that user (repeatable)")
    p.add_argument("--verbs", default=RAKKESS_VERBS, help=f"the columns (default {RAKKESS_VERBS})")


def subject_spec(user: str, groups: list[str]) -> dict[str, Any]:
    """The spec fields naming the subject of `--as` / `--as-group` (empty: the caller)."""
    if not user and not groups:
        return {}
    groups = list(groups)
    if user and user != _ANONYMOUS and not {_AUTHENTICATED, _UNAUTHENTICATED} & set(groups):
        groups.append(_AUTHENTICATED)
    spec: dict[str, Any] = {"groups": groups}
    if user:
        spec["user"] = user
    return spec


async def run(conn: Connection, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    verbs = [v.strip() for v in args.verbs.split(",") if v.strip()]
    spec = {**subject_spec(args.as_user, args.as_group), "namespace": args.namespace, "verbs": verbs}
    status = table_status(await conn.insight("AccessMatrix", "accessmatrices", spec), args.output, out)
    if status is None:
        return 0
    rows = []
    for row in status.get("rows") or ():
        name = f"{row['resource']}.{row['apiGroup']}" if row.get("apiGroup") else row["resource"]
        rows.append([name, *(MARKS[row["access"][v]] for v in status.get("verbs") or ())])
    out.write(table(["NAME", *(v.upper() for v in status.get("verbs") or ())], rows))
    err.write(LEGEND + "\n")
    return 0
