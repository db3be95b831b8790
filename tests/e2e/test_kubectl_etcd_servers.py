"""Two API servers on one etcd, with the real kubectl against both: what is written through one is read
and watched through the other, and RBAC written through one decides on the other."""

from __future__ import annotations

import subprocess
from functools import partial

import trio

from tests.support.etcd import fresh_prefix
from tests.support.kubectl import KUBECTL, Kubectl, read_until
from tests.support.server import start_server


async def test_kubectl_writes_through_one_server_and_watches_through_the_other(nursery, tmp_path, etcd_endpoint):
    prefix = fresh_prefix()
    a, b = [await start_server(nursery, tmp_path / name, api_domain="k8s.io", store=f"etcd://{etcd_endpoint}",
                               etcd_prefix=prefix) for name in ("a", "b")]
    kubectl_a, kubectl_b = Kubectl(a, str(tmp_path / "cache-a")), Kubectl(b, str(tmp_path / "cache-b"))
    await kubectl_a("create", "namespace", "team")
    assert "team" in (await kubectl_b("get", "namespaces", "-o", "name")).out
    cmd = [KUBECTL, "--kubeconfig", str(b.kubeconfig), "--cache-dir", str(tmp_path / "cache-b"),
           "get", "roles", "-n", "team", "--watch", "-v=6"]
    proc = await nursery.start(partial(trio.run_process, cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       check=False))
    out: list[str] = []
    log: list[str] = []
    try:
        with trio.fail_after(60):  # a guard against a hang, not a timing assertion
            await read_until(proc.stderr, "watch=true", log)  # B's watch is open
            await kubectl_a("create", "role", "reader", "-n", "team", "--verb=get,list", "--resource=roles")
            await read_until(proc.stdout, "reader", out)  # written through A, watched through B
    finally:
        proc.kill()
    await kubectl_a("create", "rolebinding", "alice-reads", "-n", "team", "--role=reader", "--user=alice")
    await kubectl_b("get", "rolebinding", "alice-reads", "-n", "team")  # a consistent read: B caught up
    assert (await kubectl_b("auth", "can-i", "list", "roles", "-n", "team", "--as", "alice")).out.strip() == "yes"
    await kubectl_b("delete", "rolebinding", "alice-reads", "-n", "team")
    await kubectl_a("get", "rolebindings", "-n", "team")  # A caught up
    result = await kubectl_a("auth", "can-i", "list", "roles", "-n", "team", "--as", "alice", check=False)
    assert result.out.strip() == "no"
