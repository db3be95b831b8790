"""Several API servers on one etcd: how fast an RBAC change made through one decides on the other, and how
long the built-in controllers take to move to another server when their leader is killed -9.

Run: `python bench/bench_etcd_servers.py [--rounds N] [--lease SECONDS]`. Starts its own etcd (Debian's
etcd-server, see `make etcd`) and `miniplane serve --store etcd://...` processes on free loopback ports.

- RBAC propagation: bind a user to a role through server A (the 201 answered), then ask server B as that
  user (impersonated by the admin) until it is allowed; the time from A's answer to B's first "allowed".
  Baseline, measured in the same run: the same through A alone (the write's own server).
- Leader takeover: the controllers' Lease held by A; kill -9 A; the time until B holds the Lease, against
  the lease duration (B watches the Lease and tries when the lease it saw renewed last expires, so the
  bound is the lease duration after the leader's last renewal; polling alone, client-go's rule, took up to
  lease duration + retry period x 2.2 x 2).

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402
import trio  # noqa: E402

from tests.support.etcd import EtcdServer  # noqa: E402
from tests.support.serverproc import admin_client, spawn_server  # noqa: E402

RBAC = "/apis/rbac.authorization.svc.io/v1"
LEASE = "/apis/coordination.svc.io/v1/namespaces/default/leases/miniplane-controller-manager"


async def allowed(c: httpx.AsyncClient, user: str) -> bool:
    r = await c.get(f"{RBAC}/clusterroles", params={"limit": "1"}, headers={"Impersonate-User": user})
    return r.status_code == 200


async def propagation(writer: httpx.AsyncClient, reader: httpx.AsyncClient, user: str) -> float:
    """Seconds from the binding's 201 through `writer` to `user`'s first allowed request through `reader`."""
    assert not await allowed(reader, user)
    r = await writer.post(f"{RBAC}/clusterrolebindings", json={
        "metadata": {"name": user}, "subjects": [{"kind": "User", "name": user}],
        "roleRef": {"apiGroup": "rbac.authorization.svc.io", "kind": "ClusterRole", "name": "view-roles"}})
    assert r.status_code == 201, r.text
    acked = time.perf_counter()
    while not await allowed(reader, user):
        pass
    return time.perf_counter() - acked


async def holder(c: httpx.AsyncClient) -> str:
    r = await c.get(LEASE)
    return r.json()["spec"].get("holderIdentity", "") if r.status_code == 200 else ""


def summary(samples: list[float]) -> str:
    ordered = sorted(samples)
    return (f"p50 {statistics.median(ordered) * 1000:.1f} ms, p99 {ordered[int(len(ordered) * 0.99) - 1] * 1000:.1f} ms"
            f", max {ordered[-1] * 1000:.1f} ms")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50, help="RBAC changes measured")
    parser.add_argument("--lease", type=float, default=15.0, help="--leader-elect-lease-duration (s)")
    args = parser.parse_args()
    renew, retry = args.lease * 2 / 3, args.lease * 2 / 15  # kube's 15/10/2 ratios
    with tempfile.TemporaryDirectory() as tmp:
        etcd = EtcdServer(Path(tmp) / "etcd")
        etcd.start()
        procs: list[trio.Process] = []
        try:
            await etcd.wait_healthy()
            store = ["--store", f"etcd://{etcd.endpoint}", "--leader-elect-lease-duration", str(args.lease),
                     "--leader-elect-renew-deadline", str(renew), "--leader-elect-retry-period", str(retry)]
            a, url_a = await spawn_server(Path(tmp) / "a", *store, "--leader-elect-identity", "a")
            procs.append(a)
            async with admin_client(Path(tmp) / "a", url_a) as ca:
                while await holder(ca) != "a":
                    await trio.sleep(0.1)
            b, url_b = await spawn_server(Path(tmp) / "b", *store, "--leader-elect-identity", "b")
            procs.append(b)
            async with admin_client(Path(tmp) / "a", url_a) as ca, admin_client(Path(tmp) / "b", url_b) as cb:
                r = await ca.post(f"{RBAC}/clusterroles", json={"metadata": {"name": "view-roles"}, "rules": [
                    {"apiGroups": ["rbac.authorization.svc.io"], "resources": ["clusterroles"], "verbs": ["list"]}]})
                assert r.status_code == 201, r.text
                same = [await propagation(ca, ca, f"same-{i}") for i in range(args.rounds)]
                across = [await propagation(ca, cb, f"across-{i}") for i in range(args.rounds)]
                print(f"RBAC change through A, decided through A (baseline): {summary(same)}")
                print(f"RBAC change through A, decided through B:            {summary(across)} "
                      f"(p50 {statistics.median(across) / statistics.median(same):.1f}x the baseline)")
                a.send_signal(signal.SIGKILL)
                killed = time.perf_counter()
                await a.wait()
                while await holder(cb) != "b":
                    await trio.sleep(0.05)
                took = time.perf_counter() - killed
                print(f"leader takeover after kill -9: {took:.1f} s with a {args.lease:g} s lease "
                      f"({took / args.lease:.2f}x the lease duration; bound {args.lease:g} s after the last "
                      f"renewal, which came at most a retry period ({retry:g} s) before the kill)")
        finally:
            for proc in procs:
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()
            etcd.stop()


if __name__ == "__main__":
    trio.run(main)
