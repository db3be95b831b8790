"""SubjectAccessReview benchmark: decisions per second in-process and through HTTPS.

Run: `python bench/bench_sar.py [--quick]`. Prints figures; asserts nothing.

Policy: the bootstrap policy, 50 ClusterRoles, RoleBindings spread over 100
namespaces (one user each) and ClusterRoleBindings (one user and one group
each), so every asked-about subject has a constant number of bindings that
apply, whatever the total: the figures then show what the total costs.

- in-process: the RBAC index is filled directly (`RBACIndex.upsert`); timed
  are the bare authorizer (`RBACAuthorizer.authorize`) and the whole in-process
  SubjectAccessReview (`Registry.review`: decode, validate, authorize), each at
  100 RoleBindings + 10 ClusterRoleBindings and at 10,000 + 1,000. The ratio of
  the two rates must stay under 2 (the index is by subject).
- HTTPS: 10,000 RoleBindings and 1,000 ClusterRoleBindings are written through
  the registry into a sqlite store, which `miniplane serve` then opens and
  serves; SubjectAccessReviews are POSTed by concurrent keep-alive clients.
"""

from __future__ import annotations

import argparse
import ssl
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402
import trio  # noqa: E402

from runtime.client.kubeconfig import load_kubeconfig  # noqa: E402
from api.assembly import ServeOptions
from api.serving.server import serve
from runtime.server.bootstrap import SYSTEM_USER, bootstrap  # noqa: E402
from runtime.server.rbac import RBACAuthorizer, RBACIndex, load_bootstrap_policy, resource_attributes  # noqa: E402
from runtime.server.rbac.user import UserInfo  # noqa: E402
from runtime.server.registry import Registry  # noqa: E402
from runtime.machinery.options import Body, WriteOptions  # noqa: E402
from runtime.machinery.scheme import Scheme  # noqa: E402
from runtime.server.storage import open_store  # noqa: E402
from runtime.server.storage import MemoryStore  # noqa: E402
from registry_writes import write_all as write_objects  # noqa: E402  (bench/ is the script's folder)

NAMESPACES = 100
ROLES = 50
DOMAIN = "svc.io"
RBAC = f"rbac.authorization.{DOMAIN}"


# ---- the policy -------------------------------------------------------------------------------------

def cluster_roles() -> Iterator[dict[str, Any]]:
    for r in range(ROLES):
        yield {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole", "metadata": {"name": f"bench-role-{r}"},
               "rules": [{"apiGroups": [RBAC], "resources": ["roles", "rolebindings"], "verbs": ["get", "list"]},
                         {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"],
                          "resourceNames": [f"ns-{r}"]}]}


def role_bindings(n: int) -> Iterator[dict[str, Any]]:
    for i in range(n):
        ns = f"ns-{i % NAMESPACES}"
        yield {"apiVersion": f"{RBAC}/v1", "kind": "RoleBinding", "metadata": {"name": f"rb-{i}", "namespace": ns},
               "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": f"bench-role-{i % ROLES}"},
               "subjects": [{"apiGroup": RBAC, "kind": "User", "name": f"user-{i}"}]}


def cluster_role_bindings(n: int) -> Iterator[dict[str, Any]]:
    for j in range(n):
        yield {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRoleBinding", "metadata": {"name": f"crb-{j}"},
               "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": f"bench-role-{j % ROLES}"},
               "subjects": [{"apiGroup": RBAC, "kind": "User", "name": f"cuser-{j}"},
                            {"apiGroup": RBAC, "kind": "Group", "name": f"group-{j}"}]}


def questions(n_rb: int, n_crb: int) -> list[tuple[UserInfo, dict[str, str]]]:
    """A fixed mix: allowed by a RoleBinding, by a ClusterRoleBinding, via a group, and not allowed."""
    auth = ("system:authenticated",)
    out = []
    for k in range(100):
        i, j = (k * 37) % min(n_rb, 100), (k * 13) % min(n_crb, 10)
        ns = f"ns-{i % NAMESPACES}"
        out.append((UserInfo(f"user-{i}", groups=auth), dict(verb="list", resource="roles", namespace=ns)))
        out.append((UserInfo(f"user-{i}", groups=auth), dict(verb="delete", resource="roles", namespace=ns)))
        out.append((UserInfo(f"cuser-{j}", groups=auth), dict(verb="get", resource="rolebindings", namespace=ns)))
        out.append((UserInfo("someone", groups=(f"group-{j}", *auth)), dict(verb="list", resource="roles")))
        out.append((UserInfo("stranger", groups=auth), dict(verb="get", resource="roles", namespace=ns)))
    return out


def fill_index(index: RBACIndex, n_rb: int, n_crb: int) -> None:
    for obj in (*load_bootstrap_policy(DOMAIN), *cluster_roles(), *role_bindings(n_rb),
                *cluster_role_bindings(n_crb)):
        index.upsert(obj)


def sar_body(user: UserInfo, attrs: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": f"authorization.{DOMAIN}/v1", "kind": "SubjectAccessReview",
            "spec": {"user": user.name, "groups": list(user.groups),
                     "resourceAttributes": {"group": RBAC, **attrs}}}


# ---- in-process -------------------------------------------------------------------------------------

def rate(fn: Callable[[], None], seconds: float) -> float:
    """Calls of `fn` per second, over about `seconds` (after a warm-up call)."""
    fn()
    count, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        fn()
        count += 1
    return count / elapsed


def authorizer_rate(n_rb: int, n_crb: int, seconds: float) -> float:
    index = RBACIndex()
    fill_index(index, n_rb, n_crb)
    authorizer = RBACAuthorizer(index)
    asked = [resource_attributes(u, api_group=RBAC, **a) for u, a in questions(n_rb, n_crb)]

    def batch() -> None:
        for attrs in asked:
            authorizer.authorize(attrs)
    return rate(batch, seconds) * len(asked)


async def review_rate(n_rb: int, n_crb: int, seconds: float) -> float:
    async with trio.open_nursery() as nursery:
        registry = Registry(MemoryStore(), Scheme(DOMAIN))
        await nursery.start(registry.run)
        fill_index(registry.rbac, n_rb, n_crb)  # straight into the index, as the brief asks
        rt = registry.scheme.by_kind("SubjectAccessReview")
        bodies = [sar_body(u, a) for u, a in questions(n_rb, n_crb)]
        opts = WriteOptions()
        count, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            for body in bodies:
                await registry.create(SYSTEM_USER, rt, "", Body(body), opts)
            count += len(bodies)
        nursery.cancel_scope.cancel()
    return count / elapsed


# ---- HTTPS ------------------------------------------------------------------------------------------

async def populate_sqlite(data_dir: Path, n_rb: int, n_crb: int, tasks: int = 50) -> None:
    """Write the policy through the registry into data_dir/state.db (what `serve` opens)."""
    store = await open_store("sqlite", str(data_dir / "state.db"))
    registry = Registry(store, Scheme(DOMAIN))
    async with trio.open_nursery() as nursery:
        await nursery.start(registry.run)
        await bootstrap(registry)

        async def write_all(objs: list[dict[str, Any]]) -> None:
            await write_objects(registry, SYSTEM_USER, objs, tasks)

        await write_all([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"ns-{i}"}}
                         for i in range(NAMESPACES)])
        await write_all(list(cluster_roles()))
        await write_all([*role_bindings(n_rb), *cluster_role_bindings(n_crb)])
        nursery.cancel_scope.cancel()
    await store.aclose()


async def http_rate(data_dir: Path, n_rb: int, n_crb: int, requests: int, clients: int) -> tuple[float, int]:
    async with trio.open_nursery() as nursery:
        options = ServeOptions(data_dir=str(data_dir), port=0, store="sqlite", api_domain=DOMAIN, controllers=False)
        url = await nursery.start(serve, options)
        cfg = load_kubeconfig(data_dir / "admin.kubeconfig")
        ctx = ssl.create_default_context(cadata=cfg.ca_pem.decode())
        bodies = [sar_body(u, a) for u, a in questions(n_rb, n_crb)]
        path = f"/apis/authorization.{DOMAIN}/v1/subjectaccessreviews"
        allowed = [0]

        async def client(c: int, count: int) -> None:
            async with httpx.AsyncClient(base_url=url, verify=ctx, timeout=60,
                                         headers={"Authorization": f"Bearer {cfg.token}"}) as http:
                for k in range(c, count, clients):
                    r = await http.post(path, json=bodies[k % len(bodies)])
                    r.raise_for_status()
                    allowed[0] += r.json()["status"]["allowed"]

        await client(0, 10 * clients)  # warm up (TLS, caches)
        allowed[0] = 0
        start = time.perf_counter()
        async with trio.open_nursery() as inner:
            for c in range(clients):
                inner.start_soon(client, c, requests)
        elapsed = time.perf_counter() - start
        nursery.cancel_scope.cancel()
    return requests / elapsed, allowed[0]


# ---- main -------------------------------------------------------------------------------------------

async def main(quick: bool) -> None:
    seconds = 0.5 if quick else 2.0
    big, small = (10_000, 1_000), (100, 10)
    print("SubjectAccessReview decisions per second")
    print(f"policy: bootstrap + {ROLES} ClusterRoles; RoleBindings over {NAMESPACES} namespaces; "
          f"asked: {len(questions(*small))} questions (allowed by RoleBinding, by ClusterRoleBinding, "
          "by group; not allowed)\n")

    print("in-process, RBAC index filled directly (RBACIndex.upsert)")
    auth_small = authorizer_rate(*small, seconds)
    auth_big = authorizer_rate(*big, seconds)
    rev_small = await review_rate(*small, seconds)
    rev_big = await review_rate(*big, seconds)
    print(f"  authorizer          {small[0]:>6,} RB + {small[1]:>5,} CRB: {auth_small:12,.0f} decisions/s")
    print(f"  authorizer          {big[0]:>6,} RB + {big[1]:>5,} CRB: {auth_big:12,.0f} decisions/s")
    print(f"  Registry.review     {small[0]:>6,} RB + {small[1]:>5,} CRB: {rev_small:12,.0f} SARs/s")
    print(f"  Registry.review     {big[0]:>6,} RB + {big[1]:>5,} CRB: {rev_big:12,.0f} SARs/s")
    print(f"  slow-down from {small[0]:,} to {big[0]:,} bindings: authorizer {auth_small / auth_big:.2f}x, "
          f"Registry.review {rev_small / rev_big:.2f}x (must stay under 2x)\n")

    requests, clients = (500, 4) if quick else (3_000, 8)
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp)
        start = time.perf_counter()
        await populate_sqlite(data_dir, *big)
        print(f"HTTPS, sqlite store filled through the registry ({big[0]:,} RB + {big[1]:,} CRB "
              f"in {time.perf_counter() - start:.1f} s), {clients} keep-alive clients, admin token")
        per_second, allowed = await http_rate(data_dir, *big, requests, clients)
        print(f"  POST subjectaccessreviews {big[0]:>6,} RB + {big[1]:>5,} CRB: {per_second:8,.0f} SARs/s "
              f"({requests:,} requests, {allowed:,} allowed)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter timings, fewer HTTP requests")
    args = parser.parse_args()
    trio.run(main, args.quick)
