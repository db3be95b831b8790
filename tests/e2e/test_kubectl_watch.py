"""The real kubectl on watches, paging and selectors: `get --watch`, `--chunk-size`, `-l`."""

from __future__ import annotations

import subprocess
from functools import partial

import trio

from tests.support.kubectl import KUBECTL, read_until


async def test_get_clusterroles_watch_prints_a_change(kubectl, nursery):
    cmd = [KUBECTL, "--kubeconfig", str(kubectl.server.kubeconfig), "--cache-dir", kubectl.cache_dir,
           "get", "clusterroles", "--watch"]
    proc = await nursery.start(partial(trio.run_process, cmd, stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL, check=False))
    out: list[str] = []
    try:
        with trio.fail_after(60):  # a guard against a hang, not a timing assertion
            await read_until(proc.stdout, "cluster-admin", out)  # the initial list is printed
            await kubectl("create", "clusterrole", "watched-change", "--verb=get", "--resource=namespaces")
            await read_until(proc.stdout, "watched-change", out)
    finally:
        proc.kill()
    assert "NAME" in "".join(out)


async def test_get_roles_all_namespaces_in_chunks_of_two(kubectl):
    for ns in ("chunk-a", "chunk-b"):
        await kubectl("create", "namespace", ns)
        for i in range(3):
            await kubectl("create", "role", f"r{i}", "-n", ns, "--verb=get", "--resource=namespaces")
    result = await kubectl("get", "roles", "-A", "--chunk-size=2", "-v=6")
    rows = [line.split() for line in result.out.splitlines()[1:] if line.strip()]
    assert {(r[0], r[1]) for r in rows} >= {(ns, f"r{i}") for ns in ("chunk-a", "chunk-b") for i in range(3)}
    assert result.out.splitlines()[0].split()[:2] == ["NAMESPACE", "NAME"]
    requests = [line for line in result.err.splitlines() if "/roles?" in line]
    assert any("limit=2" in line and "continue=" in line for line in requests)  # it really paged


async def test_get_clusterroles_with_a_label_selector(kubectl):
    await kubectl("create", "clusterrole", "labelled", "--verb=get", "--resource=namespaces")
    await kubectl("create", "clusterrole", "unlabelled", "--verb=get", "--resource=namespaces")
    await kubectl("label", "clusterrole", "labelled", "a=b")
    out = (await kubectl("get", "clusterroles", "-l", "a=b")).out
    names = [line.split()[0] for line in out.splitlines()[1:] if line.strip()]
    assert names == ["labelled"]


async def test_get_clusterroles_with_a_label_selector_matching_nothing(kubectl):
    result = await kubectl("get", "clusterroles", "-l", "a=nothing-has-this")
    assert result.out == "" and "No resources found" in result.err
