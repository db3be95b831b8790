"""Pod scale benchmark (issue 38, point 5): 0, 10,000 and 100,000 Pods of a realistic size in the watch cache
and in an informer, the memory per 1,000 Pods, and a paged list of them.

For each size the SQLite store is filled in process: one Pod of about 4 KiB as JSON before the server's defaults and managed fields (two containers with
env, probes, resources, volume mounts; labels, annotations, an owner reference, a node and a status with
conditions and container statuses; `tests/support/workloads.realistic_pod`) is created through the registry
(Kubernetes' defaults applied, managed fields recorded), then copied under `size` names across 20
namespaces straight into the store, each Pod owned by its namespace's ReplicaSet. Then, measured:

- `miniplane serve` on that data directory (built-in controllers on: the garbage collector and the quota
  controller inform on Pods too): start-up to serving, its RSS, and RSS per 1,000 Pods (above the size-0
  server's, in the same run);
- a paged LIST of every Pod over HTTPS, 500 a page, following `continue`: pages, Pods and seconds;
- an informer on Pods in another process (`bench/pods_informer.py`, the runtime's HTTP client, as an
  operator would run it): seconds to sync, its RSS, and RSS per 1,000 Pods above its own at size 0.

Prints a table, the JSON size of one stored Pod, and writes `bench/results-pods.json`. Asserts nothing.

Run: `python bench/bench_pods.py [--sizes 0,10000,100000]`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

import httpx  # noqa: E402
import trio  # noqa: E402

from children import ServerChild  # noqa: E402
from runtime.controller.testing import ADMIN  # noqa: E402
from runtime.machinery.options import Body, WriteOptions  # noqa: E402
from runtime.machinery.scheme import Scheme  # noqa: E402
from runtime.machinery.storedobject import dumps_json  # noqa: E402
from runtime.server.registry import Registry  # noqa: E402
from runtime.server.storage.sqlite.store import SqliteStore  # noqa: E402
from tests.support.workloads import realistic_pod, sample  # noqa: E402

SIZES = (0, 10_000, 100_000)
NAMESPACES = 20
PAGE = 500


def owned(pod: dict[str, Any], uid: str) -> dict[str, Any]:
    """`pod` owned by its namespace's ReplicaSet (`uid`)."""
    pod["metadata"]["ownerReferences"][0]["uid"] = uid
    return pod


def pod_status(index: int) -> dict[str, Any]:
    """What a kubelet would have written: the Pod running, both containers ready."""
    at = "2026-12-01T10:00:00Z"
    conditions = [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": at}
                  for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")]
    statuses = [{"name": name, "ready": True, "restartCount": 0, "started": True, "image": image,
                 "imageID": f"{image.split(':')[0]}@sha256:{'ab' * 32}", "containerID": f"containerd://{'cd' * 32}",
                 "state": {"running": {"startedAt": at}}, "lastState": {}}
                for name, image in (("app", "registry.example.com/shop/backend:1.42.7"),
                                    ("proxy", "registry.example.com/mesh/proxy:2.3.1"))]
    return {"phase": "Running", "conditions": conditions, "hostIP": f"10.0.{index % 50}.1",
            "podIP": f"10.244.{index % 250}.{index % 200 + 2}", "podIPs": [{"ip": f"10.244.{index % 250}.2"}],
            "startTime": at, "containerStatuses": statuses, "qosClass": "Burstable"}


async def fill(data_dir: Path, size: int) -> int:
    """The store of `data_dir` with `size` Pods (see the module doc); returns one stored Pod's JSON size."""
    store = await SqliteStore.open(data_dir / "state.db", synchronous="NORMAL")
    try:
        registry = Registry(store, Scheme("k8s.io"))
        scheme, opts = registry.scheme, WriteOptions(field_manager="bench-fill")
        namespaces, pods, replicasets = (scheme.by_kind(k) for k in ("Namespace", "Pod", "ReplicaSet"))
        async with trio.open_nursery() as nursery:
            await nursery.start(registry.run)
            for i in range(NAMESPACES):
                await registry.create(ADMIN, namespaces, "", Body({"apiVersion": "v1", "kind": "Namespace",
                                                                   "metadata": {"name": f"ns-{i}"}}), opts)
            # Each namespace's Pods are owned by a ReplicaSet of its own, as a Deployment's are (an owner that
            # does not exist would have the garbage collector delete them all).
            owners = {}
            for i in range(NAMESPACES):
                rs = await registry.create(ADMIN, replicasets, f"ns-{i}", Body(sample(
                    "apps/v1", "ReplicaSet", "shop-7d9f8c6b5", f"ns-{i}")), opts)
                owners[f"ns-{i}"] = rs.obj.obj["metadata"]["uid"]
            made = await registry.create(ADMIN, pods, "ns-0", Body(owned(realistic_pod("template", "ns-0"),
                                                                          owners["ns-0"])), opts)
            nursery.cancel_scope.cancel()
        template = dict(made.obj.obj, status=pod_status(0))
        one = len(dumps_json(template))

        def encoder(name: str, namespace: str, index: int):
            def encode(revision: int) -> bytes:
                pod = realistic_pod(name, namespace, index)
                meta = dict(template["metadata"], name=name, namespace=namespace, uid=str(uuid.uuid4()),
                            resourceVersion=str(revision), labels=pod["metadata"]["labels"],
                            ownerReferences=owned(pod, owners[namespace])["metadata"]["ownerReferences"])
                spec = dict(template["spec"], nodeName=pod["spec"]["nodeName"])
                return dumps_json(dict(template, metadata=meta, spec=spec, status=pod_status(index)))
            return encode

        bulk = [(pods.storage_key(f"ns-{i % NAMESPACES}", f"pod-{i:06d}"),
                 encoder(f"pod-{i:06d}", f"ns-{i % NAMESPACES}", i)) for i in range(size)]

        async def write(first: int) -> None:
            for key, encode in bulk[first::50]:
                await store.create(key, encode)

        async with trio.open_nursery() as nursery:
            for first in range(50):
                nursery.start_soon(write, first)
        return one
    finally:
        await store.aclose()


def paged_list(url: str, token: str, ca: Path) -> tuple[int, int, float]:
    """(pages, pods, seconds) of a LIST of every Pod in pages of PAGE."""
    began, pages, pods, token_ = time.monotonic(), 0, 0, None
    with httpx.Client(verify=str(ca), headers={"Authorization": f"Bearer {token}"}, timeout=120) as client:
        while True:
            params: dict[str, Any] = {"limit": PAGE}
            if token_:
                params["continue"] = token_
            page = client.get(f"{url}/api/v1/pods", params=params).raise_for_status().json()
            pages, pods = pages + 1, pods + len(page["items"])
            token_ = page["metadata"].get("continue")
            if not token_:
                return pages, pods, time.monotonic() - began


def informer(data: Path) -> dict[str, float]:
    """An informer on Pods in its own process (`pods_informer.py`): sync seconds, RSS MiB, Pods cached."""
    out = subprocess.run([sys.executable, str(BENCH / "pods_informer.py"), str(data / "admin.kubeconfig")],
                         cwd=ROOT, capture_output=True, text=True, timeout=1800, check=True)
    return json.loads(out.stdout)


def measure(size: int, work: Path) -> dict[str, Any]:
    data = work / f"size-{size}"
    data.mkdir(parents=True)
    began = time.monotonic()
    one = trio.run(fill, data, size)
    filled = time.monotonic() - began
    server = ServerChild([sys.executable, "-m", "api.cli", "serve", "--api-domain", "k8s.io", "--data-dir",
                          str(data), "--port", "0"], "serving at ", work / f"server-{size}.log")
    try:
        token, ca = (data / "admin.token").read_text().strip(), data / "pki" / "ca.crt"
        pages, listed, list_s = paged_list(server.url, token, ca)
        cached = informer(data)
        rss, peak = server.rss_mib()
    finally:
        server.stop()
    return {"size": size, "pod_json_bytes": one, "fill_s": filled, "startup_s": server.startup, "rss_mib": rss,
            "rss_peak_mib": peak, "pages": pages, "listed": listed, "list_s": list_s,
            "informer_sync_s": cached["sync_s"], "informer_rss_mib": cached["rss_mib"],
            "informer_pods": cached["pods"]}


def per_thousand(results: list[dict[str, Any]], key: str) -> dict[int, float]:
    base = next((r for r in results if r["size"] == 0), None)
    return {r["size"]: (r[key] - base[key]) / r["size"] * 1000 * 1024 for r in results if base and r["size"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-pods-") as tmp:
        for size in sizes:
            results.append(measure(size, Path(tmp)))
            r = results[-1]
            print(f"{r['size']:>7} pods: start {r['startup_s']:.1f} s, server RSS {r['rss_mib']:.0f} MiB; list "
                  f"{r['listed']} in {r['pages']} pages, {r['list_s']:.1f} s; informer sync {r['informer_sync_s']:.1f}"
                  f" s, RSS {r['informer_rss_mib']:.0f} MiB ({r['informer_pods']} cached)", flush=True)
    print(f"one stored Pod as JSON: {results[0]['pod_json_bytes']} bytes")
    for size, kib in per_thousand(results, "rss_mib").items():
        informer_kib = per_thousand(results, "informer_rss_mib")[size]
        print(f"at {size:>7}: server RSS per 1,000 Pods {kib / 1024:.1f} MiB, informer {informer_kib / 1024:.1f} MiB")
    (BENCH / "results-pods.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
