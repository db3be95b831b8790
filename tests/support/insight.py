"""The RBAC insight kinds and commands, as a test asks them of its server.

Contract: `ask(srv, kind, spec, token=..., code=201)` creates the insight
kind (`insight.<domain>/v1`) with `spec` and returns the answered object
(asserting `code`; the Status for an error code). `cli(srv, *argv)` runs a
`miniplane` insight command (who-can, access-matrix, rbac ...) against the
server with its admin kubeconfig (or `kubeconfig=`), in process through the
server's transport when it has one, and returns a `CliResult` (exit code,
stdout, stderr). `sar(srv, user, groups, attrs)` is a SubjectAccessReview's
verdict.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from api import insightcli
from api.cli import parser
from tests.support.server import Server

__all__ = ["PLURALS", "ask", "cli", "CliResult", "sar"]

PLURALS = {"AccessExplanation": "accessexplanations", "WhoCan": "whocans", "AccessMatrix": "accessmatrices",
           "RBACLint": "rbaclints", "AggregationGraph": "aggregationgraphs", "RBACDiff": "rbacdiffs"}


async def ask(srv: Server, kind: str, spec: dict[str, Any] | None = None, *, token: str | None = "admin",
              code: int = 201) -> dict[str, Any]:
    """Create the insight kind `kind` with `spec`; return the answer (after asserting its code)."""
    group_version = f"insight.{srv.domain}/v1"
    body = {"apiVersion": group_version, "kind": kind, "spec": spec or {}}
    async with srv.client(token=token) as c:
        r = await c.post(f"/apis/{group_version}/{PLURALS[kind]}", json=body)
    assert r.status_code == code, r.text
    return r.json()


async def sar(srv: Server, user: str, groups: list[str], attrs: dict[str, Any]) -> bool:
    """Whether a SubjectAccessReview of `user` in `groups` for `attrs` (resource or non-resource) is allowed."""
    spec: dict[str, Any] = {"user": user, "groups": groups}
    spec["nonResourceAttributes" if "path" in attrs else "resourceAttributes"] = attrs
    body = {"apiVersion": f"authorization.{srv.domain}/v1", "kind": "SubjectAccessReview", "spec": spec}
    async with srv.client() as c:
        r = await c.post(f"{srv.authz}/subjectaccessreviews", json=body)
    assert r.status_code == 201, r.text
    return r.json()["status"]["allowed"]


@dataclass
class CliResult:
    code: int
    out: str
    err: str


async def cli(srv: Server, *argv: str, kubeconfig: Path | None = None) -> CliResult:
    """Run `miniplane ARGV --kubeconfig ...` in process against `srv`."""
    args = parser().parse_args([*argv, "--kubeconfig", str(kubeconfig or srv.kubeconfig)])
    out, err = io.StringIO(), io.StringIO()
    code = await insightcli.run(args, out, err, transport=srv.transport)
    return CliResult(code, out.getvalue(), err.getvalue())
