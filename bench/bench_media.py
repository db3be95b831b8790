"""Media-type benchmark: encode throughput per media type, and the memory of listing 100,000 objects.

Run: `python bench/bench_media.py [--items N] [--quick]`. Prints figures; asserts nothing.

1. One-object encoding (what a get or a watch event costs), per media type:
   objects/s and MB/s of output, from the JSON-form dict (no cache).
2. A list of N ClusterRoles (default 100,000), encoded as the server answers
   a list: JSON and Protobuf streamed item by item (`encode_list_chunks`,
   regrouped into 64 KiB writes as the HTTP layer does; JSON from the
   objects' cached bytes, as the watch cache holds them), gzip on the fly,
   and the whole-document encoders (YAML, CBOR, pretty JSON) for contrast.
   For each: seconds, bytes written, and peak memory allocated while
   encoding (tracemalloc, in a separate pass: it slows Python down), beside
   the size of the answer. Streaming keeps the peak a small, constant
   fraction of the answer; whole documents hold all of it, and more.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Callable, Iterable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from api.codecs import coalesce, encode, encode_list_chunks, gzip_chunks  # noqa: E402
from runtime.machinery.storedobject import StoredObject  # noqa: E402

HEADER = {"kind": "ClusterRoleList", "apiVersion": "rbac.authorization.svc.io/v1",
          "metadata": {"resourceVersion": "100001"}}


def role(i: int) -> dict:
    return {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "ClusterRole",
            "metadata": {"name": f"role-{i:06d}", "uid": f"6b1e0c4e-0000-4000-8000-{i:012d}",
                         "resourceVersion": str(i + 1), "creationTimestamp": "2024-05-01T10:00:00Z",
                         "labels": {"app": "bench", "tier": f"t{i % 7}"}},
            "rules": [{"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["namespaces"]},
                      {"verbs": ["get"], "apiGroups": ["rbac.authorization.svc.io"],
                       "resources": ["roles", "rolebindings"], "resourceNames": [f"r{i % 13}"]}]}


def per_object(objects: list[dict], codecs: Iterable[str]) -> None:
    print(f"one object at a time ({len(objects)} ClusterRoles, uncached)")
    print(f"  {'codec':10} {'objects/s':>12} {'MB/s':>8} {'bytes/object':>13}")
    for codec in codecs:
        sample = objects if codec != "yaml" else objects[:max(1, len(objects) // 10)]
        start = time.perf_counter()
        size = sum(len(encode(codec, o)) for o in sample)
        elapsed = time.perf_counter() - start
        print(f"  {codec:10} {len(sample) / elapsed:12,.0f} {size / elapsed / 1e6:8.1f} {size / len(sample):13,.0f}")


def measure(run: Callable[[], int]) -> tuple[float, int, int]:
    """(seconds, bytes, peak bytes allocated): timed plainly, then again under tracemalloc."""
    gc.collect()
    start = time.perf_counter()
    size = run()
    elapsed = time.perf_counter() - start
    gc.collect()
    tracemalloc.start()
    try:
        run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return elapsed, size, peak


def drain(chunks: Iterable[bytes]) -> int:
    return sum(len(c) for c in chunks)


def lists(items: list[StoredObject]) -> None:
    n = len(items)
    yaml_items = items[: min(n, 10_000)]  # YAML is slow: a tenth of the list (at most 10,000)
    cases: list[tuple[str, Callable[[], int]]] = [
        ("json streamed", lambda: drain(coalesce(encode_list_chunks("json", HEADER, items)))),
        ("json streamed, gzip", lambda: drain(gzip_chunks(coalesce(encode_list_chunks("json", HEADER, items))))),
        ("protobuf streamed", lambda: drain(coalesce(encode_list_chunks("protobuf", HEADER, items)))),
        ("json whole (joined)", lambda: len(b"".join(encode_list_chunks("json", HEADER, items)))),
        ("json pretty (whole)", lambda: len(encode("json", dict(HEADER, items=[o.obj for o in items]),
                                                   pretty=True))),
        ("cbor (whole)", lambda: len(encode("cbor", dict(HEADER, items=[o.obj for o in items])))),
        (f"yaml (whole, {len(yaml_items):,})",
         lambda: len(encode("yaml", dict(HEADER, items=[o.obj for o in yaml_items])))),
    ]
    print(f"\nlisting {n:,} ClusterRoles")
    print("  (MB/s: bytes written per second; gzip: compressed bytes, so its peak exceeds its small answer)")
    print(f"  {'encoding':24} {'seconds':>8} {'MB/s':>7} {'answer MB':>10} {'peak MB':>8} {'peak/answer':>12}")
    for name, run in cases:
        elapsed, size, peak = measure(run)
        print(f"  {name:24} {elapsed:8.2f} {size / elapsed / 1e6:7.1f} {size / 1e6:10.1f} {peak / 1e6:8.2f} "
              f"{peak / size:12.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000, help="objects in the listed collection")
    parser.add_argument("--quick", action="store_true", help="10,000 items instead of --items")
    args = parser.parse_args()
    n = 10_000 if args.quick else args.items
    objects = [role(i) for i in range(n)]
    per_object(objects[: max(1, n // 10)], ("json", "protobuf", "cbor", "yaml"))
    items = [StoredObject(o["metadata"]["name"], o, i + 1) for i, o in enumerate(objects)]
    for o in items:
        o.json_bytes()  # the watch cache keeps each object's JSON
    lists(items)


if __name__ == "__main__":
    main()
