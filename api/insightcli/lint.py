"""`miniplane rbac lint`: what is wrong or risky in the policy, highest severity first.

Prints the server's `RBACLint` findings (dangling roleRefs, subjects in
namespaces that do not exist, rules that never match, risky grants ranked as
KubiScan does, aggregated rules traced to their origin), then, for each
namespace being deleted, what keeps it: every object left and the
finalizers it holds. `--min-severity` leaves out lower findings (Info are
left out unless asked for: `--min-severity Info`). Exit code 0.

Internal to `api.insightcli`: imported by its modules only.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from api.insightcli.connect import Connection
from api.insightcli.output import ref_text, table, table_status

__all__ = ["add_arguments", "run", "SEVERITIES"]

SEVERITIES = ("Critical", "High", "Medium", "Low", "Info")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--min-severity", choices=SEVERITIES, default="Low",
                   help="leave out findings below this severity (default Low)")


async def run(conn: Connection, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    spec = {"minSeverity": args.min_severity}
    status = table_status(await conn.insight("RBACLint", "rbaclints", spec), args.output, out)
    if status is None:
        return 0
    rows = [[f["severity"], f["kind"], ref_text(f.get("object")), f.get("path", ""), f["message"]]
            for f in status.get("findings") or ()]
    out.write(table(["SEVERITY", "KIND", "OBJECT", "PATH", "MESSAGE"], rows))
    for t in status.get("terminatingNamespaces") or ():
        finalizers = ", ".join([*t.get("finalizers", ()), *t.get("metadataFinalizers", ())]) or "none"
        out.write(f"\nNamespace {t['name']} is terminating since {t.get('deletionTimestamp', '')} "
                  f"(its finalizers: {finalizers}); what remains:\n")
        blockers = [[b["kind"], b["name"], ", ".join(b.get("finalizers") or ()) or "-"]
                    for b in t.get("blockers") or ()]
        out.write(table(["KIND", "NAME", "FINALIZERS"], blockers) if blockers else "nothing\n")
        if t.get("unchecked"):
            out.write(f"not checked (you may not list them there): {', '.join(t['unchecked'])}\n")
    return 0
