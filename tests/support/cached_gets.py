"""GETs of objects the watch cache holds, as bytes on an in-process HTTP/1.1 connection: the fast path's cases.

Contract: `await start_cached_gets(nursery, tmp_path, **options)` starts an in-process control plane
(`tests.support.server.start_in_process`, the token users of `tests.support.rbac.TOKENS`) holding the
ClusterRole `target` and the Role `team/target`, with alice granted `get` on clusterroles and on roles in
`team` (a ClusterRole and a RoleBinding), and returns the `Server`. `get_request(path, token, accept)` is
one GET's bytes (HTTP/1.1, keep-alive). `CASES` names the GETs a fast path must answer as the slow one
does: (name, path, token, Accept) for JSON, protobuf, Table, a 404, a 403, and the admin's GET.
`encodes_counted(monkeypatch)` is the list of codecs a stored object is encoded with from then on (its
`StoredObject.encoded` cache missed), for the tests that a cached GET encodes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from runtime.machinery.storedobject import StoredObject

from tests.support.rbac import grant, ok, rule, token_file, user
from tests.support.server import Server, start_in_process

__all__ = ["CASES", "CLUSTER_ROLE", "ROLE", "TABLE", "PROTOBUF", "encodes_counted", "get_request", "start_cached_gets"]

CLUSTER_ROLE = "/apis/rbac.authorization.svc.io/v1/clusterroles/target"
ROLE = "/apis/rbac.authorization.svc.io/v1/namespaces/team/roles/target"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io," \
        "application/json"
PROTOBUF = "application/vnd.kubernetes.protobuf"

#: (name, path, bearer token, Accept): the GETs compared before and after the fast path is warm.
CASES = [
    ("cluster role as JSON", CLUSTER_ROLE, "alice-token", "application/json"),
    ("role as JSON", ROLE, "alice-token", "application/json"),
    ("cluster role as protobuf", CLUSTER_ROLE, "alice-token", PROTOBUF),
    ("role as a Table", ROLE, "alice-token", TABLE),
    ("a missing role: 404", ROLE + "-missing", "alice-token", "application/json"),
    ("a role bob may not get: 403", ROLE, "bob-token", "application/json"),
    ("cluster role as the admin", CLUSTER_ROLE, "root-token", "application/json"),
]


def get_request(path: str, token: str, accept: str = "application/json") -> bytes:
    """One GET of `path` as the bearer of `token`, its bytes."""
    return (f"GET {path} HTTP/1.1\r\nHost: miniplane\r\nAuthorization: Bearer {token}\r\n"
            f"Accept: {accept}\r\nUser-Agent: cached-gets/1.0\r\n\r\n").encode()


async def start_cached_gets(nursery: trio.Nursery, tmp_path: Path, **options: Any) -> Server:
    """The control plane of the cases (see the module doc)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    srv = await start_in_process(nursery, tmp_path, token_auth_file=token_file(tmp_path), **options)
    async with srv.client() as admin:
        await ok(await admin.post("/api/v1/namespaces", json={"metadata": {"name": "team"}}), 201)
        await ok(await admin.post(f"{srv.rbac}/clusterroles", json={
            "metadata": {"name": "target"}, "rules": [rule(["get"], ["pods"])]}), 201)
        await ok(await admin.post(f"{srv.rbac}/namespaces/team/roles", json={
            "metadata": {"name": "target"}, "rules": [rule(["list"], ["configmaps"])]}), 201)
    await grant(srv, user("alice"), rule(["get"], ["clusterroles"], groups=["rbac.authorization.svc.io"]))
    await grant(srv, user("alice"), rule(["get"], ["roles"], groups=["rbac.authorization.svc.io"]),
                namespace="team", role_kind="Role")
    return srv


def encodes_counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The codecs objects are encoded with while `monkeypatch` holds: one entry per cache miss."""
    encodes: list[str] = []
    cached = StoredObject.encoded

    def counting(self: StoredObject, codec: str, encode):  # type: ignore[no-untyped-def]
        def counted(obj):  # type: ignore[no-untyped-def]
            encodes.append(codec)
            return encode(obj)
        return cached(self, codec, counted)
    monkeypatch.setattr(StoredObject, "encoded", counting)
    return encodes
