"""Scale benchmark: what each verb costs at 0, 10,000 and 100,000 stored objects, against the framework's floor.

For each size the store is filled in process (namespaces, a pool of Roles
and the aggregating ClusterRoles through the registry; the bulk straight
into the SQLite store: 90% Roles across 100 namespaces, 10% ClusterRoles,
1% of those labelled into the aggregating ones), then `miniplane serve`
starts on that data directory with its built-in controllers. Measured, with
load from separate processes over loopback HTTPS (`wrk`, one thread, 16
connections, bounded in time and count; watch clients in `scale_watch.py`):

- start-up: spawn to serving (the server serves once its caches are filled
  and its controllers synced);
- the floor: a bare Hypercorn + quart-trio route (`bare_route.py`), GET and
  POST, with the same certificate, measured in the same run at each size;
  the bare POST and CREATE run in turn, three slices each (a third of the
  time per figure), so that the CREATE target compares two rates taken in
  the same minute;
- GET of a Role; LIST of all Roles in pages of 500 (following continue
  tokens); CREATE of a ClusterRole; UPDATE (PUT), merge PATCH and apply PATCH
  of a Role; DELETE of the ClusterRoles CREATE made; SubjectAccessReviews:
  requests/s, p50 and p99, and each rate's ratio to the floor (GET for reads,
  POST for writes and reviews);
- watch delivery with 100 watchers while a writer offers 500 creates/s:
  the rate achieved, delivery p50/p99 from the write's answer and from its
  sending, and the fraction of events delivered;
- the server's RSS (now and peak) after all that.

Prints a table per size and the targets (each rate at the largest size at
least 80% of its rate at 0, LIST excepted; RSS under 1 GiB and start-up under
15 s at 100,000; CREATE at least half the bare POST), writes
`bench/results.json` and plots (`scale_plots.py`, if matplotlib is there).
Asserts nothing: a missed target is reported, never hidden.

Run: `python bench/bench_scale.py [--quick] [--seconds S] [--sizes 0,10000]`
(`--quick`: sizes 0 and 10,000, 3 s per figure). Needs `wrk` (`make bench-tools`).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import ssl
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

import scale_wrk as wrk  # noqa: E402
from children import ServerChild  # noqa: E402
from runtime.machinery.storedobject import dumps_json  # noqa: E402
from runtime.server.registry import Registry  # noqa: E402
from runtime.machinery.options import Body, WriteOptions  # noqa: E402
from runtime.machinery.scheme import Scheme  # noqa: E402
from runtime.server.storage.sqlite.store import SqliteStore  # noqa: E402
from runtime.controller.testing import ADMIN  # noqa: E402

SIZES = (0, 10_000, 100_000)
QUICK_SIZES = (0, 10_000)
NAMESPACES = 100
POOL = 100
AGGREGATORS = 10
GROUP = "rbac.authorization.svc.io"
RBAC = f"/apis/{GROUP}/v1"
RULES = [{"apiGroups": [""], "resources": ["pods", "services"], "verbs": ["get", "list", "watch"]}]
READS = ("GET", "LIST")
#: CREATE and the bare POST it is held against run in turn, this many slices each (`scale_wrk.alternated`).
PAIRS = 3
WATCHERS, WATCH_RATE = 100, 500
RSS_TARGET_MIB, STARTUP_TARGET_S, KEEP_TARGET, CREATE_TARGET = 1024, 15.0, 0.8, 0.5


# ---- filling the store -----------------------------------------------------------------------------

def role_body(name: str, namespace: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1", "kind": "Role",
            "metadata": {"name": name, "namespace": namespace, "labels": labels or {"app": "bench"}}, "rules": RULES}


def cluster_role_body(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole",
            "metadata": {"name": name, "labels": labels or {"app": "bench"}}, "rules": RULES}


def _bulk_encoder(template: dict[str, Any], name: str, namespace: str, labels: dict[str, str]):
    def encode(revision: int) -> bytes:
        meta = dict(template["metadata"], name=name, uid=str(uuid.uuid4()), resourceVersion=str(revision),
                    labels=labels)
        if namespace:
            meta["namespace"] = namespace
        return dumps_json(dict(template, metadata=meta))
    return encode


async def fill(data_dir: Path, size: int) -> None:
    """The store of `data_dir` with the fixed objects and `size` bulk objects (see the module docs)."""
    store = await SqliteStore.open(data_dir / "state.db", synchronous="NORMAL")
    try:
        registry = Registry(store, Scheme())
        scheme, opts = registry.scheme, WriteOptions(field_manager="bench-fill")
        kinds = {k: scheme.by_kind(k) for k in ("Namespace", "Role", "ClusterRole", "RoleBinding")}

        async def make(kind: str, namespace: str, obj: dict[str, Any]) -> dict[str, Any]:
            return (await registry.create(ADMIN, kinds[kind], namespace, Body(obj), opts)).obj.obj

        async with trio.open_nursery() as nursery:
            await nursery.start(registry.run)
            for i in range(NAMESPACES):
                await make("Namespace", "", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"ns-{i}"}})
            for i in range(POOL):
                await make("Role", f"ns-{i % NAMESPACES}", role_body(f"pool-{i}", f"ns-{i % NAMESPACES}"))
            for a in range(AGGREGATORS):
                aggregator = cluster_role_body(f"bench-aggregate-{a}")
                aggregator["aggregationRule"] = {"clusterRoleSelectors": [
                    {"matchLabels": {"bench.io/aggregate-to": str(a)}}]}
                await make("ClusterRole", "", aggregator)
            await make("RoleBinding", "ns-1", {
                "apiVersion": f"{GROUP}/v1", "kind": "RoleBinding", "metadata": {"name": "alice", "namespace": "ns-1"},
                "roleRef": {"apiGroup": GROUP, "kind": "Role", "name": "pool-1"},
                "subjects": [{"kind": "User", "name": "alice", "apiGroup": GROUP}]})
            role_template = await make("Role", "ns-0", role_body("template", "ns-0"))
            cluster_template = await make("ClusterRole", "", cluster_role_body("template"))
            nursery.cancel_scope.cancel()
        cluster = size // 10
        bulk = []
        for i in range(size - cluster):
            ns = f"ns-{i % NAMESPACES}"
            bulk.append((kinds["Role"].storage_key(ns, f"role-{i:06d}"),
                         _bulk_encoder(role_template, f"role-{i:06d}", ns, {"app": "bulk"})))
        for i in range(cluster):
            labels = {"app": "bulk"}
            if i % 100 == 0:
                labels["bench.io/aggregate-to"] = str(i // 100 % AGGREGATORS)
            bulk.append((kinds["ClusterRole"].storage_key(None, f"bulk-{i:06d}"),
                         _bulk_encoder(cluster_template, f"bulk-{i:06d}", "", labels)))

        async def write(first: int) -> None:
            for key, encode in bulk[first::50]:
                await store.create(key, encode)

        async with trio.open_nursery() as nursery:
            for first in range(50):
                nursery.start_soon(write, first)
    finally:
        await store.aclose()


# ---- the processes ---------------------------------------------------------------------------------

def watch_phase(server: ServerChild, token: str, ca: Path, seconds: float, work: Path) -> dict[str, Any]:
    """100 watchers, a writer offering 500 creates/s for `seconds`: achieved rate and delivery latency."""
    tag = uuid.uuid4().hex[:8]
    script = str(BENCH / "scale_watch.py")
    watchers = subprocess.Popen([sys.executable, script, "watch", server.url, token, str(ca), "--watchers",
                                 str(WATCHERS), "--selector", f"watchbench={tag}", "--out", str(work / "watched.json")],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert watchers.stdout is not None and watchers.stdin is not None
    if watchers.stdout.readline().strip() != "ready":
        raise RuntimeError("the watchers did not start")
    subprocess.run([sys.executable, script, "write", server.url, token, str(ca), "--rate", str(WATCH_RATE),
                    "--seconds", str(seconds), "--label", tag, "--out", str(work / "written.json")],
                   check=True, timeout=600)
    written = json.loads((work / "written.json").read_text())
    expected = WATCHERS * sum(1 for t in written["acked"] if t is not None)
    deadline = time.monotonic() + 30  # a bounded wait for events still on their way
    while time.monotonic() < deadline and select.select([watchers.stdout], [], [], 1.0)[0]:
        line = watchers.stdout.readline()
        if not line or int(line.split()[1]) >= expected:
            break
    watchers.stdin.close()
    watchers.wait(60)
    watched = json.loads((work / "watched.json").read_text())
    from_ack, from_sent = [], []
    for events in watched:
        for index, at in events:
            if written["acked"][index] is not None:
                from_ack.append(max(0.0, at - written["acked"][index]) * 1000)
                from_sent.append((at - written["sent"][index]) * 1000)
    writes = sum(1 for t in written["acked"] if t is not None)
    return {"writes": writes, "offered_per_s": WATCH_RATE, "achieved_per_s": writes / written["elapsed"],
            "failed": written["failed"], "delivered": len(from_ack) / expected if expected else 0.0,
            "p50_ms_from_ack": _pct(from_ack, 50), "p99_ms_from_ack": _pct(from_ack, 99),
            "p99_ms_from_sent": _pct(from_sent, 99)}


def _pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


# ---- one size ----------------------------------------------------------------------------------------

def measure(size: int, seconds: float, work: Path) -> dict[str, Any]:
    """Fill, serve and measure one store size (see the module docs)."""
    data = work / f"size-{size}"
    data.mkdir(parents=True)
    began = time.monotonic()
    trio.run(fill, data, size)
    filled = time.monotonic() - began
    load_before = os.getloadavg()[0]
    server = ServerChild([sys.executable, "-m", "api.cli", "serve", "--data-dir", str(data), "--port", "0"],
                     "serving at ", work / f"server-{size}.log")
    try:
        pki = data / "pki"
        bare = ServerChild([sys.executable, str(BENCH / "bare_route.py"), "--cert", str(pki / "serving.crt"),
                        "--key", str(pki / "serving.key")], "bare route at ", work / f"bare-{size}.log")
        try:
            result = _measure_verbs(size, seconds, work, server, bare, (data / "admin.token").read_text().strip(),
                                    pki / "ca.crt")
        finally:
            bare.stop()
        result["rss_mib"], result["rss_peak_mib"] = server.rss_mib()
    finally:
        server.stop()
    result.update(size=size, fill_s=filled, startup_s=server.startup, load_before=load_before,
                  load_after=os.getloadavg()[0])
    return result


def created_names(server: ServerChild, token: str, ca: Path, tag: str) -> list[str]:
    """The ClusterRoles the CREATE slices made, as the server lists them.

    Not counted from wrk's figures: wrk calls a script's `request()` once per thread before sending (the first
    name is never created), and requests in flight at its stop may or may not have been.
    """
    answer = httpx.get(f"{server.url}{RBAC}/clusterroles", params={"labelSelector": f"bench-created={tag}"},
                       headers={"Authorization": f"Bearer {token}"}, timeout=60,
                       verify=ssl.create_default_context(cafile=str(ca)))
    answer.raise_for_status()
    return [item["metadata"]["name"] for item in answer.json()["items"]]


def _measure_verbs(size: int, seconds: float, work: Path, server: ServerChild, bare: ServerChild, token: str,
                   ca: Path) -> dict[str, Any]:
    auth = {"Authorization": f"Bearer {token}"}
    scripts = work / f"lua-{size}"
    scripts.mkdir()
    tag = f"c{size}"

    def run(name: str, url: str, script: Path, duration: float = seconds, headers: dict[str, str] = auth):
        figures = wrk.run_wrk(url, script, duration, headers=headers)
        print(f"  {size:>7,} {name:<12} {figures.rps:8.0f} req/s  p50 {figures.p50_ms:7.2f} ms  "
              f"p99 {figures.p99_ms:7.2f} ms  non-2xx {figures.non_2xx}", flush=True)
        for answer in figures.failures:
            print(f"           non-2xx answer: {answer}", flush=True)
        return figures.as_dict()

    pool = [(f"{RBAC}/namespaces/ns-{i % NAMESPACES}/roles/pool-{i}", f"pool-{i}", f"ns-{i % NAMESPACES}")
            for i in range(POOL)]
    urls = [u for u, _, _ in pool]
    create_body = cluster_role_body("@NAME@", {"bench-created": tag})
    run("warm-up", server.url + "/healthz", wrk.get_script(scripts / "warm.lua", ["/healthz"]), 1)
    run("warm-up", bare.url + "/x", wrk.get_script(scripts / "warm-bare.lua", ["/x"]), 1, {})
    floor = {"GET": run("bare GET", bare.url + "/x", wrk.get_script(scripts / "bare-get.lua", ["/x"]), headers={})}
    verbs = {
        "GET": run("GET", server.url, wrk.get_script(scripts / "get.lua", urls)),
        "LIST": run("LIST", server.url, wrk.list_script(scripts / "list.lua", f"{RBAC}/roles", 500)),
    }
    # CREATE has a target against the bare POST: the two run in turn, so that both see the same moments of
    # a machine whose speed drifts by a quarter within minutes.
    bare_post = wrk.create_script(scripts / "bare-post.lua", "/x", create_body, "floor")
    floor_slices, create_slices = [], []
    for i in range(PAIRS):
        floor_slices.append(run(f"bare POST {i + 1}", bare.url + "/x", bare_post, seconds / PAIRS, {}))
        create_slices.append(run(f"CREATE {i + 1}", server.url, wrk.create_script(
            scripts / f"create-{i}.lua", f"{RBAC}/clusterroles", create_body, f"{tag}-{i}"), seconds / PAIRS))
    floor["POST"] = wrk.alternated(floor_slices)
    verbs["CREATE"] = wrk.alternated(create_slices)
    verbs.update({
        "UPDATE": run("UPDATE", server.url, wrk.update_script(
            scripts / "update.lua", pool, role_body("@NAME@", "@NS@", {"app": "bench", "bench-u": "@V@"}))),
        "PATCH merge": run("PATCH merge", server.url, wrk.merge_patch_script(scripts / "merge.lua", pool, "bench-m")),
        "PATCH apply": run("PATCH apply", server.url, wrk.apply_patch_script(
            scripts / "apply.lua", pool, role_body("@NAME@", "@NS@", {"bench-a": "@V@"}), "bench-apply")),
    })
    names = work / f"created-{size}.txt"
    names.write_text("".join(f"{name}\n" for name in created_names(server, token, ca, tag)))
    verbs["DELETE"] = run("DELETE", server.url,
                          wrk.delete_script(scripts / "delete.lua", names, f"{RBAC}/clusterroles"), seconds / 2)
    review = {"apiVersion": "authorization.svc.io/v1", "kind": "SubjectAccessReview",
              "spec": {"user": "alice", "resourceAttributes": {"namespace": "ns-1", "verb": "get", "group": GROUP,
                                                               "resource": "roles", "name": "pool-1"}}}
    verbs["SAR"] = run("SAR", server.url, wrk.post_script(
        scripts / "sar.lua", "/apis/authorization.svc.io/v1/subjectaccessreviews", review))
    for verb, figures in verbs.items():
        figures["ratio"] = figures["rps"] / floor["GET" if verb in READS else "POST"]["rps"]
    watch = watch_phase(server, token, ca, seconds if seconds < 5 else 5, work)
    print(f"  {size:>7,} WATCH        {watch['achieved_per_s']:8.0f} writes/s of {WATCH_RATE} offered, "
          f"{WATCHERS} watchers: delivery p50 {watch['p50_ms_from_ack']:.1f} ms, p99 {watch['p99_ms_from_ack']:.1f} ms "
          f"(from sending: p99 {watch['p99_ms_from_sent']:.1f} ms), delivered {watch['delivered']:.1%}", flush=True)
    return {"floor": floor, "verbs": verbs, "watch": watch}


# ---- the report ----------------------------------------------------------------------------------------

def report(results: dict[str, Any]) -> list[str]:
    """The table and the targets, as printed lines."""
    runs = results["runs"]
    lines = ["", f"{'size':>8} {'figure':<12} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'ratio':>6}  (ratio: to the "
                 "bare route's GET for GET/LIST, POST otherwise)"]
    for run in runs:
        for name, f in [("bare GET", run["floor"]["GET"]), ("bare POST", run["floor"]["POST"])] + \
                list(run["verbs"].items()):
            ratio = f"{f['ratio']:6.2f}" if "ratio" in f else "     -"
            lines.append(f"{run['size']:>8,} {name:<12} {f['rps']:8.0f} {f['p50_ms']:8.2f} {f['p99_ms']:8.2f} {ratio}")
        w = run["watch"]
        lines.append(f"{run['size']:>8,} {'WATCH':<12} {w['achieved_per_s']:8.0f} {w['p50_ms_from_ack']:8.1f} "
                     f"{w['p99_ms_from_ack']:8.1f}      -  ({WATCHERS} watchers, {WATCH_RATE}/s offered, "
                     f"{w['delivered']:.1%} delivered)")
        lines.append(f"{run['size']:>8,} start-up {run['startup_s']:.2f} s, RSS {run['rss_mib']:.0f} MiB "
                     f"(peak {run['rss_peak_mib']:.0f}), fill {run['fill_s']:.1f} s, load average "
                     f"{run['load_before']:.1f} -> {run['load_after']:.1f}")
    first, last = runs[0], runs[-1]
    lines.append("")
    lines.append(f"targets ({first['size']:,} -> {last['size']:,} objects):")
    for verb in last["verbs"]:
        if verb == "LIST":
            continue
        kept = last["verbs"][verb]["rps"] / first["verbs"][verb]["rps"]
        # The machine's own drift over the run, beside it: the bare route's rate (GET for reads, POST else).
        floor = "GET" if verb in READS else "POST"
        bare_kept = last["floor"][floor]["rps"] / first["floor"][floor]["rps"]
        lines.append(f"  {verb:<12} keeps {kept:6.1%} of its rate   {'ok' if kept >= KEEP_TARGET else 'MISSED'}"
                     f" (target {KEEP_TARGET:.0%}; the bare {floor} kept {bare_kept:.0%})")
    for run in runs:
        ratio = run["verbs"]["CREATE"]["ratio"]
        pairs = zip(run["verbs"]["CREATE"].get("slices", []), run["floor"]["POST"].get("slices", []))
        turns = ", ".join(f"{c:.0f}/{b:.0f}" for c, b in pairs)
        lines.append(f"  CREATE / bare POST at {run['size']:,}: {ratio:.2f}   "
                     f"{'ok' if ratio >= CREATE_TARGET else 'MISSED'} (target {CREATE_TARGET})"
                     + (f"; in turns, req/s: {turns}" if turns else ""))
    if last["size"] >= 100_000:
        lines.append(f"  RSS at {last['size']:,}: {last['rss_mib']:.0f} MiB   "
                     f"{'ok' if last['rss_mib'] < RSS_TARGET_MIB else 'MISSED'} (target < {RSS_TARGET_MIB} MiB)")
        lines.append(f"  start-up at {last['size']:,}: {last['startup_s']:.1f} s   "
                     f"{'ok' if last['startup_s'] < STARTUP_TARGET_S else 'MISSED'} (target < {STARTUP_TARGET_S:.0f} s)")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes 0 and 10,000, 3 s per figure")
    parser.add_argument("--seconds", type=float, help="seconds per figure (default 8, quick 3)")
    parser.add_argument("--sizes", help="comma-separated store sizes (default 0,10000,100000)")
    parser.add_argument("--out", default=str(BENCH / "results.json"))
    args = parser.parse_args(argv)
    if wrk.wrk_path() is None:
        print("bench_scale: wrk not found; run `make bench-tools` (Debian's wrk package)", file=sys.stderr)
        return 2
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else list(QUICK_SIZES if args.quick else SIZES)
    seconds = args.seconds or (3.0 if args.quick else 8.0)
    print(f"miniplane scale benchmark: sizes {sizes}, {seconds:g} s per figure, cpus {os.cpu_count()}, "
          f"wrk 1 thread 16 connections, sqlite store, built-in controllers on", flush=True)
    results: dict[str, Any] = {"sizes": sizes, "seconds": seconds, "quick": args.quick, "cpus": os.cpu_count(),
                               "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "runs": []}
    with tempfile.TemporaryDirectory(prefix="miniplane-scale-") as tmp:
        for size in sizes:
            results["runs"].append(measure(size, seconds, Path(tmp)))
    for line in report(results):
        print(line)
    out = Path(args.out)
    out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"\nresults: {out}")
    try:
        from scale_plots import plot  # noqa: PLC0415 - matplotlib is optional
        for path in plot(results, out.parent / "plots"):
            print(f"plot: {path}")
    except ImportError as exc:
        print(f"plots skipped ({exc}); `pip install -e '.[bench]'` or `make bench` installs matplotlib")
    return 0


if __name__ == "__main__":
    sys.exit(main())
