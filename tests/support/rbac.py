"""Token users and RBAC grants for API tests, written through a `Server` as its admin.

Contract: `TOKENS` is a `--token-auth-file` (alice in devs and qa, bob,
the service account team/robot, root in system:masters), `token_file(dir)`
writes it and returns its path. `user`, `group` and `rule` build subjects
and PolicyRules; `grant` creates a role holding rules and binds a subject to
it, `bind` binds subjects to an existing role, `namespaces` creates
namespaces; each asserts its 201. `ok(response, code)` asserts the status
code (the body in the message) and returns the JSON body.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import httpx

from tests.support.server import Server

__all__ = ["TOKENS", "token_file", "user", "group", "rule", "ok", "namespaces", "grant", "bind"]

TOKENS = "\n".join([
    'alice-token,alice,alice-uid,"devs,qa"',
    "bob-token,bob,bob-uid",
    "robot-token,system:serviceaccount:team:robot,robot-uid",
    "root-token,root,root-uid,system:masters",
]) + "\n"

_names = itertools.count()


def token_file(folder: Path) -> str:
    """Write `TOKENS` to FOLDER/tokens.csv; returns its path (for `token_auth_file=`)."""
    path = folder / "tokens.csv"
    path.write_text(TOKENS)
    return str(path)


def user(name: str) -> dict:
    return {"kind": "User", "name": name}


def group(name: str) -> dict:
    return {"kind": "Group", "name": name}


def rule(verbs, resources=(), groups=("",), names=(), urls=()) -> dict:
    out: dict = {"verbs": list(verbs)}
    if urls:
        out["nonResourceURLs"] = list(urls)
    else:
        out["apiGroups"], out["resources"] = list(groups), list(resources)
    if names:
        out["resourceNames"] = list(names)
    return out


async def ok(response: httpx.Response, code: int = 200) -> dict:
    assert response.status_code == code, response.text
    return response.json()


async def namespaces(srv: Server, *names: str) -> None:
    async with srv.client() as admin:
        for name in names:
            await ok(await admin.post("/api/v1/namespaces", json={"metadata": {"name": name}}), 201)


async def grant(srv: Server, subject: dict, *rules: dict, namespace: str = "", role_kind: str = "ClusterRole",
                name: str = "") -> str:
    """Create a role with `rules` and bind `subject` to it (RoleBinding in `namespace`, else cluster-wide)."""
    name = name or f"grant-{next(_names)}"
    async with srv.client() as admin:
        if role_kind == "ClusterRole":
            await ok(await admin.post(f"{srv.rbac}/clusterroles",
                                      json={"metadata": {"name": name}, "rules": list(rules)}), 201)
        else:
            await ok(await admin.post(f"{srv.rbac}/namespaces/{namespace}/roles",
                                      json={"metadata": {"name": name}, "rules": list(rules)}), 201)
        await bind(srv, name, role_kind, name, [subject], namespace=namespace)
    return name


async def bind(srv: Server, name: str, role_kind: str, role_name: str, subjects: list[dict],
               namespace: str = "") -> None:
    body = {"metadata": {"name": name}, "subjects": subjects,
            "roleRef": {"apiGroup": f"rbac.authorization.{srv.domain}", "kind": role_kind, "name": role_name}}
    path = f"{srv.rbac}/namespaces/{namespace}/rolebindings" if namespace else f"{srv.rbac}/clusterrolebindings"
    async with srv.client() as admin:
        await ok(await admin.post(path, json=body), 201)
