"""`miniplane rbac diff -f MANIFEST`: what applying a manifest would grant and revoke, per subject.

Every object of the manifests (`-f` files, `-` for stdin; YAML or JSON,
several documents, `List`s expanded) goes through a server-side dry run
(`kubectl apply --server-side --dry-run=server`: authorized as you,
validated, escalation-checked, nothing stored), in the namespace it names or
`-n`/the context's. The objects the dry runs answer are sent in one
`RBACDiff`, which compares the policy before and after (as the aggregation
controller would leave it, so aggregation counts) and returns, per subject,
the permissions granted and revoked. `--delete` diffs deleting them instead
(a dry-run delete of each).

Prints one row per permission (`*` for cluster-wide); objects that are not
RBAC policy are named on stderr. Exit code as `kubectl diff`: 0 no change,
1 changes, more on error.

Internal to `api.insightcli`: imported by its modules only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

import yaml

from runtime.machinery import errors

from api.insightcli.connect import Connection
from api.insightcli.output import print_object, ref_text, table

__all__ = ["add_arguments", "run", "read_manifests"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-f", "--filename", action="append", required=True, help="a manifest (- for stdin)")
    p.add_argument("-n", "--namespace", help="the namespace of objects that name none (default: the context's)")
    p.add_argument("--delete", action="store_true", help="diff deleting the objects instead of applying them")


def read_manifests(names: list[str], stdin: TextIO | None = None) -> list[dict[str, Any]]:
    """The objects of the manifests, `List`s expanded; raises ValueError for what is not an object."""
    objects: list[dict[str, Any]] = []
    for name in names:
        text = (stdin or sys.stdin).read() if name == "-" else Path(name).read_text(encoding="utf-8")
        for doc in yaml.safe_load_all(text):
            if doc is None:
                continue
            if not isinstance(doc, dict):
                raise ValueError(f"{name}: a document is not an object")
            if isinstance(doc.get("items"), list) and str(doc.get("kind", "")).endswith("List"):
                objects.extend(doc["items"])
            else:
                objects.append(doc)
    return objects


async def _dry_run(conn: Connection, obj: dict[str, Any], namespace: str, delete: bool) -> dict[str, Any]:
    resource = await conn.by_kind(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))
    if resource is None:
        raise errors.NotFound(f"the server doesn't have a resource type for {obj.get('apiVersion')}, "
                              f"Kind={obj.get('kind')}")
    obj = {**obj, "metadata": dict(obj.get("metadata") or {})}
    if resource.namespaced:
        obj["metadata"].setdefault("namespace", namespace)
    if not delete:
        return await conn.dry_run_apply(resource, obj)
    answer = await conn.dry_run_delete(resource, obj)
    return answer if answer.get("kind") == obj.get("kind") else obj


async def run(conn: Connection, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    namespace = args.namespace or conn.namespace
    objects = [await _dry_run(conn, obj, namespace, args.delete) for obj in read_manifests(args.filename)]
    answer = await conn.insight("RBACDiff", "rbacdiffs", {"objects": objects, "delete": args.delete})
    status = answer.get("status") or {}
    for ref in status.get("ignored") or ():
        err.write(f"ignored (not RBAC policy): {ref_text(ref)}\n")
    changes = status.get("subjects") or []
    if args.output != "table":
        print_object(answer, args.output, out)
        return 1 if changes else 0
    rows = []
    for change in changes:
        subject = ref_text(change["subject"])
        for word, key in (("granted", "granted"), ("revoked", "revoked")):
            for p in change.get(key) or ():
                if p.get("nonResourceURL"):
                    target = p["nonResourceURL"]
                else:
                    target = f"{p['resource']}.{p['apiGroup']}" if p.get("apiGroup") else p.get("resource", "")
                rows.append([subject, word, p.get("namespace") or "*", p.get("verb", ""), target,
                             p.get("resourceName", "")])
    if not rows:
        err.write("no permission changes\n")
        return 0
    out.write(table(["SUBJECT", "CHANGE", "NAMESPACE", "VERB", "RESOURCE", "NAME"], rows))
    return 1
