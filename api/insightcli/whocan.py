"""`miniplane who-can VERB RESOURCE [NAME] [-n NS]`: every subject allowed a request, and by what.

RESOURCE is what kubectl takes (`roles`, `rolebindings.rbac.authorization.k8s.io`,
`deploy.apps`, `pods/log`; `--subresource` too), resolved through discovery;
a name the server does not serve (`pods` on miniplane) is asked as written.
A RESOURCE starting with `/` is a non-resource URL (`who-can get /healthz`).
The namespace is `-n`, else the kubeconfig context's, else `default`;
`-A` asks cluster-wide (only ClusterRoleBindings count). The server answers
for a real request: a cluster-scoped resource is asked with no namespace.
A resource the server does not serve has no known scope: it is asked
cluster-wide unless `-n` names a namespace (`who-can impersonate users`).

Prints one row per grant: the subject (kind, name, a ServiceAccount's
namespace), the binding, the role and the rule; `system:masters` is
listed as privileged. `-o json|yaml` prints the answered WhoCan.

Internal to `api.insightcli`: imported by its modules only.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from api.insightcli.connect import Connection
from api.insightcli.output import ref_text, rule_text, table, table_status

__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("verb", help="the verb (get, list, create, impersonate, ...; for a URL: get, post, ...)")
    p.add_argument("resource", help="resource[.group][/subresource], or a non-resource URL starting with /")
    p.add_argument("name", nargs="?", default="", help="the object's name")
    p.add_argument("-n", "--namespace", help="the namespace (default: the context's)")
    p.add_argument("-A", "--all-namespaces", action="store_true", help="cluster-wide: ClusterRoleBindings only")
    p.add_argument("--subresource", default="", help="the subresource (also RESOURCE/SUB)")


async def run(conn: Connection, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.resource.startswith("/"):
        spec = {"nonResourceAttributes": {"verb": args.verb.lower(), "path": args.resource}}
        asked = f"{args.verb} {args.resource}"
    else:
        resolved = await conn.resolve(args.resource, args.subresource)
        namespace = "" if args.all_namespaces else (args.namespace or conn.namespace)
        if resolved.served is None and not args.namespace:
            namespace = ""  # an unserved resource's scope is unknown: cluster-wide unless -n says otherwise
        elif resolved.served is not None and not resolved.served.namespaced:
            namespace = ""
        spec = {"resourceAttributes": {"verb": args.verb, "group": resolved.group,
                                       "resource": resolved.resource, "subresource": resolved.subresource,
                                       "namespace": namespace, "name": args.name}}
        asked = f"{args.verb} {resolved.qualified}" + (f" {args.name!r}" if args.name else "")
    status = table_status(await conn.insight("WhoCan", "whocans", spec), args.output, out)
    if status is None:
        return 0
    rows = []
    for access in status.get("subjects") or ():
        subject = access["subject"]
        head = [subject.get("kind", ""), subject.get("name", ""), subject.get("namespace", "")]
        if access.get("privileged") and not access.get("grants"):
            rows.append([*head, "-", "-", "(privileged: allowed everything)"])
        for grant in access.get("grants") or ():
            rows.append([*head, ref_text(grant.get("binding")), ref_text(grant.get("role")),
                         f"[{grant.get('ruleIndex', 0)}] {rule_text(grant.get('rule'))}"])
    where = f" in namespace {status['namespace']!r}" if status.get("namespace") else " cluster-wide"
    err.write(f"Subjects who can {asked}{'' if args.resource.startswith('/') else where}:\n")
    out.write(table(["KIND", "SUBJECT", "NAMESPACE", "BINDING", "ROLE", "RULE"], rows))
    return 0
