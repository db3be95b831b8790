"""Scale-out benchmark: GET and CREATE with 1 and 2 SQLite workers and 1 and 2 servers on one etcd, in one run.

Measured in one run, with load from `wrk` (one thread, 16 connections over
loopback HTTPS, as `bench_scale.py`, or `--connections N`; `make bench-tools`
installs it):

- the floor: the bare Hypercorn + quart-trio route (`bare_route.py`), GET
  and POST, with a certificate made as the servers' are; CREATE on etcd runs
  in turns with the bare POST (three slices each), and its target compares
  the two (this machine's speed drifts by a quarter within minutes);
- the same bare route served through miniplane's listener (`bare_route.py
  --listener miniplane`: HTTP/1.1 by `api.serving.http1`, where Hypercorn's is h11,
  as the servers speak it), GET and POST, and its POST in the same turns: not
  a target's floor, but what shows how much of a ratio is the HTTP layer's;
- the raw stores: direct SQLite commits/s (Python's sqlite3, one insert per
  transaction, WAL, synchronous=FULL, as the store commits) and direct etcd
  puts/s (wrk posting to etcd's JSON gateway, as many connections);
- `miniplane serve --workers 1` and `--workers 2` on SQLite, serving side by
  side, their GETs in turns (three slices each: the GET target compares
  them); one and two
  `miniplane serve --store etcd://...` on one etcd (two wrk of half the
  connections each, one per server, their rates summed): GET of a ClusterRole
  (a pool of 100), CREATE of ClusterRoles; each rate's ratio to the bare
  route (GET to GET, CREATE to POST) and CREATE's to its raw store;
- the wake-up latency between two SQLite workers: a child process commits
  one write every 10 ms, this process's store (its peer) delivers each on
  its watch; p50/p99/max from the writer's acknowledgement to the
  watcher's event (CLOCK_MONOTONIC is one clock for both processes).

Servers run with their defaults (built-in controllers on; on etcd under
leader election, so one of two servers runs them). Prints the table, each
figure's CPU time per request (the serving processes' and etcd's, read from
/proc over its wrk runs: what a request costs, which drifts less than the
rates with this machine's speed), and the targets (GET with 2 workers at
least 1.5x 1 worker; CREATE on etcd at least half the bare POST); asserts
nothing: a missed target is reported.

Run: `python bench/bench_scaleout.py [--seconds S] [--quick] [--connections N]`
(default 8 s per figure; quick 3 s; 16 connections).
"""

from __future__ import annotations

import argparse
import base64
import os
import sqlite3
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

import httpx  # noqa: E402
import trio  # noqa: E402

import scale_wrk as wrk  # noqa: E402
from api.certs import ensure_pki  # noqa: E402
from children import ServerChild, tree_cpu_seconds  # noqa: E402
from runtime.client.kubeconfig import load_kubeconfig, ssl_context  # noqa: E402
from runtime.server.storage.sqlite.store import SqliteStore  # noqa: E402
from runtime.server.storage.sqlite.peers import PeerGroup, SqlitePeers  # noqa: E402
from tests.support.etcd import EtcdServer  # noqa: E402

GROUP = "rbac.authorization.svc.io"
CLUSTERROLES = f"/apis/{GROUP}/v1/clusterroles"
POOL = 100
#: wrk's connections unless `--connections` says otherwise (as `bench_scale.py`).
CONNECTIONS = 16
GET_TARGET, CREATE_TARGET = 1.5, 0.5
#: CREATE on etcd and the bare POST it is held against run in turn, this many slices each (as `bench_scale.py`).
PAIRS = 3
VALUE = b'{"apiVersion":"rbac.authorization.svc.io/v1","kind":"ClusterRole",' + b"x" * 400 + b"}"
WAKE_WRITES, WAKE_EVERY = 300, 0.01
#: The figures of the bare route served through miniplane's listener are named with this prefix.
SAME = "same-layer"
#: How the run's lines name each floor.
FLOOR_LABELS = {"bare": "bare route", SAME: "bare, miniplane HTTP"}
#: Every server of the run accepts this token (a --token-auth-file), so one wrk header reaches them all.
TOKEN = "scaleout-bench-token"


def role(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole", "metadata": {"name": name, "labels": labels or {}},
            "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list"]}]}


# ---- processes -----------------------------------------------------------------------------------

def serve(data_dir: Path, log: Path, *args: str) -> ServerChild:
    tokens = data_dir.parent / "tokens.csv"
    tokens.write_text(f'{TOKEN},bench,bench-uid,"system:masters"\n')
    return ServerChild([sys.executable, "-m", "api.cli", "serve", "--data-dir", str(data_dir), "--port", "0",
                  "--token-auth-file", str(tokens), *args], "serving at ", log)


def server_ca(data_dir: Path) -> ssl.SSLContext:
    return ssl_context(load_kubeconfig(data_dir / "admin.kubeconfig"))


async def fill_pool(url: str, ctx: ssl.SSLContext, prefix: str, count: int = POOL) -> None:
    """ClusterRoles `{prefix}-0` .. `{prefix}-{count - 1}` created on the server at `url` (8 at a time)."""
    async with httpx.AsyncClient(base_url=url, verify=ctx, headers={"Authorization": f"Bearer {TOKEN}"},
                                 timeout=60) as client:
        async def make(first: int) -> None:
            for i in range(first, count, 8):
                r = await client.post(CLUSTERROLES, json=role(f"{prefix}-{i}"))
                if r.status_code not in (201, 409):
                    raise RuntimeError(f"pool create failed: {r.status_code} {r.text}")

        async with trio.open_nursery() as nursery:
            for first in range(8):
                nursery.start_soon(make, first)


# ---- wrk --------------------------------------------------------------------------------------

def _wrk_parallel(targets: list[tuple[str, Path]], seconds: float, headers: dict[str, str],
                  connections: int) -> wrk.WrkResult:
    """Run one wrk per (url, script) at once, `connections` split between them; their rates summed."""
    each = connections // len(targets)
    cmds = []
    for url, script in targets:
        cmd = [wrk.wrk_path() or "wrk", "-t1", f"-c{each}", f"-d{max(1, round(seconds))}s", "--latency",
               "--timeout=10s", "-s", str(script)]
        for name, value in headers.items():
            cmd += ["-H", f"{name}: {value}"]
        cmds.append(cmd + [url])
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for cmd in cmds]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=seconds + 60)
        if proc.returncode != 0 or "Requests/sec" not in out:
            raise RuntimeError(f"wrk failed ({proc.returncode}): {out}{err}")
        results.append(wrk.parse_wrk(out))
    return wrk.WrkResult(sum(r.rps for r in results), max(r.p50_ms for r in results),
                         max(r.p99_ms for r in results), sum(r.requests for r in results),
                         sum(r.non_2xx for r in results), sum(r.socket_errors for r in results))


class Load:
    """wrk against one server, or several sharing the load: GET of the pool, CREATE of ClusterRoles.

    Each run also adds up the CPU time the servers (and etcd, when given) used meanwhile, in `cpu`.
    """

    def __init__(self, name: str, servers: list[ServerChild], scripts: Path, pool: str,
                 cpu: "CpuBook", connections: int, etcd: EtcdServer | None = None) -> None:
        self.name, self.servers, self.scripts, self.etcd, self.cpu = name, servers, scripts, etcd, cpu
        self.connections = connections
        self.urls = [s.url for s in servers]
        self.tag = name.replace(" ", "-").replace("=", "")
        self.auth = {"Authorization": f"Bearer {TOKEN}"}
        self._get = wrk.get_script(scripts / f"{self.tag}-get.lua", [f"{CLUSTERROLES}/{pool}-{i}" for i in range(POOL)])
        for url in self.urls:
            wrk.run_wrk(url + "/healthz", wrk.get_script(scripts / f"{self.tag}-warm.lua", ["/healthz"]), 1,
                        headers=self.auth)

    def get(self, seconds: float, label: str = "GET") -> wrk.WrkResult:
        return self._show("GET", label, lambda: _wrk_parallel([(url, self._get) for url in self.urls], seconds,
                                                              self.auth, self.connections))

    def create(self, seconds: float, turn: int = 0, label: str = "CREATE") -> wrk.WrkResult:
        return self._show("CREATE", label, lambda: _wrk_parallel(
            [(url, wrk.create_script(self.scripts / f"{self.tag}-create-{turn}-{i}.lua", CLUSTERROLES,
                                     role("@NAME@", {"bench": self.tag}), f"{self.tag}-{turn}-{i}"))
             for i, url in enumerate(self.urls)], seconds, self.auth, self.connections))

    def _show(self, verb: str, label: str, run: Callable[[], wrk.WrkResult]) -> wrk.WrkResult:
        result = self.cpu.measure(f"{self.name} {verb}", run, [s.cpu_seconds for s in self.servers],
                                  self.etcd.pid if self.etcd else None)
        print(f"  {self.name:<22} {label:<8} {result.rps:8.0f} req/s  p50 {result.p50_ms:7.2f} ms  "
              f"p99 {result.p99_ms:7.2f} ms  non-2xx {result.non_2xx}", flush=True)
        return result


class CpuBook:
    """CPU time per request of each figure: the serving processes' (and etcd's) CPU over its wrk runs,
    from /proc, divided by the requests wrk counted. It says what a request costs where the rates say how
    many the machine served: this machine's speed drifts, and the cost drifts with it, less than the rates."""

    def __init__(self) -> None:
        self.totals: dict[str, list[float]] = {}  # figure -> [server CPU s, etcd CPU s, requests]

    def measure(self, figure: str, run: Callable[[], wrk.WrkResult], servers: list[Callable[[], float]],
                etcd_pid: int | None = None) -> wrk.WrkResult:
        before = [cpu() for cpu in servers]
        etcd_before = tree_cpu_seconds(etcd_pid) if etcd_pid else 0.0
        result = run()
        used = sum(cpu() - start for cpu, start in zip(servers, before))
        etcd_used = tree_cpu_seconds(etcd_pid) - etcd_before if etcd_pid else 0.0
        book = self.totals.setdefault(figure, [0.0, 0.0, 0])
        book[0] += used
        book[1] += etcd_used
        book[2] += result.requests
        return result

    def per_request_ms(self, figure: str) -> tuple[float, float]:
        """(servers', etcd's) CPU milliseconds per request of `figure`."""
        server, etcd, requests = self.totals[figure]
        return (1000 * server / requests, 1000 * etcd / requests) if requests else (0.0, 0.0)


# ---- raw stores --------------------------------------------------------------------------------

def raw_sqlite_commits(path: Path, seconds: float) -> float:
    """Commits/s of one sqlite3 connection, one insert per transaction (WAL, synchronous=FULL)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE kv(rev INTEGER PRIMARY KEY, key TEXT NOT NULL, value BLOB)")
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO kv(key, value) VALUES (?, ?)", (f"/raw/{n}", VALUE))
        conn.execute("COMMIT")
        n += 1
    elapsed = time.perf_counter() - start
    conn.close()
    return n / elapsed


def raw_etcd_puts(endpoint: str, seconds: float, scripts: Path, connections: int) -> wrk.WrkResult:
    """Puts/s to etcd's JSON gateway, wrk with `connections` (one key, a 470-byte value)."""
    body = {"key": base64.b64encode(b"/raw-put").decode(), "value": base64.b64encode(VALUE).decode()}
    script = wrk.post_script(scripts / "etcd-put.lua", "/v3/kv/put", body)
    return wrk.run_wrk(f"http://{endpoint}/v3/kv/put", script, seconds, connections=connections)


# ---- wake-up latency ----------------------------------------------------------------------------

_WAKE_WRITER = """
import sys, time
sys.path.insert(0, sys.argv[1])
import trio
from runtime.server.storage.sqlite.store import SqliteStore
from runtime.server.storage.sqlite.peers import PeerLinks, SqlitePeers

async def main(path, index, revisions, wake, peers, writes, every):
    links = PeerLinks(int(index), int(revisions), int(wake), tuple(int(p) for p in peers.split(",")))
    store = await SqliteStore.open(path, peers=SqlitePeers(links))
    for i in range(int(writes)):
        entry = await store.create(f"/wake/{i}", lambda rev: b"x")
        print(entry.mod_revision, time.monotonic(), flush=True)
        await trio.sleep(float(every))
    await store.aclose()

trio.run(main, *sys.argv[2:])
"""


async def wake_latency(path: Path) -> list[float]:
    """Milliseconds from a peer's acknowledged write to its event on this process's watch."""
    group = PeerGroup(2)
    store = await SqliteStore.open(path, peers=SqlitePeers(group.links(0)))
    links = group.links(1)
    arrived: dict[int, float] = {}
    all_arrived = trio.Event()
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(store.follow_peers)

            async def watch() -> None:
                async for event in store.watch("/wake/", after_revision=await store.current_revision()):
                    arrived[event.revision] = time.monotonic()
                    if len(arrived) == WAKE_WRITES:
                        all_arrived.set()
                        return

            nursery.start_soon(watch)
            result = await trio.run_process(
                [sys.executable, "-c", _WAKE_WRITER, str(ROOT), str(path), str(links.index), str(links.revisions_fd),
                 str(links.wake_fd), ",".join(map(str, links.peer_fds)), str(WAKE_WRITES), str(WAKE_EVERY)],
                pass_fds=(links.revisions_fd, links.wake_fd, *links.peer_fds), capture_stdout=True)
            acked = {int(rev): float(t) for rev, t in (line.split() for line in result.stdout.decode().splitlines())}
            with trio.fail_after(30):
                await all_arrived.wait()
            nursery.cancel_scope.cancel()
    finally:
        await store.aclose()
        group.close()
    return sorted((arrived[rev] - t) * 1000 for rev, t in acked.items())


def _pct(values: list[float], p: float) -> float:
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


# ---- the run ----------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, help="seconds per figure (default 8, quick 3)")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--connections", type=int, default=CONNECTIONS,
                        help=f"wrk's connections for every figure (default {CONNECTIONS}; even, split between two servers)")
    args = parser.parse_args(argv)
    if wrk.wrk_path() is None:
        print("bench_scaleout: wrk not found; run `make bench-tools` (Debian's wrk package)", file=sys.stderr)
        return 2
    seconds = args.seconds or (3.0 if args.quick else 8.0)
    connections = args.connections
    if connections < 2 or connections % 2:
        parser.error("--connections must be an even number of at least 2")
    load = os.getloadavg()
    print(f"miniplane scale-out benchmark: {seconds:g} s per figure, cpus {os.cpu_count()}, wrk 1 thread "
          f"{connections} connections, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}", flush=True)
    figures: dict[str, dict[str, float]] = {}
    cpu = CpuBook()
    with tempfile.TemporaryDirectory(prefix="miniplane-scaleout-") as tmp:
        work = Path(tmp)
        scripts = work / "lua"
        scripts.mkdir()

        wake = trio.run(wake_latency, work / "wake.db")
        print(f"  wake-up between 2 SQLite workers: p50 {_pct(wake, 50):.2f} ms  p99 {_pct(wake, 99):.2f} ms  "
              f"max {wake[-1]:.2f} ms  ({len(wake)} writes, one every {WAKE_EVERY * 1000:.0f} ms)", flush=True)

        raw_sqlite = raw_sqlite_commits(work / "raw.db", seconds)
        print(f"  raw SQLite               commits {raw_sqlite:8.0f} /s  (sqlite3, one insert per commit, "
              f"synchronous=FULL)", flush=True)

        # The floors, with a certificate as the servers' (ECDSA, from the same code), alive for the whole run.
        pki = ensure_pki(work / "floor")
        floors = {prefix: ServerChild([sys.executable, str(BENCH / "bare_route.py"), "--cert",
                                       str(pki.serving_cert_path), "--key", str(pki.serving_key_path),
                                       "--listener", listener], "bare route at ", work / f"bare-{listener}.log")
                  for prefix, listener in (("bare", "hypercorn"), (SAME, "miniplane"))}
        try:
            bare_post = wrk.create_script(scripts / "bare-post.lua", "/x", role("@NAME@"), "floor")
            for prefix, floor in floors.items():
                wrk.run_wrk(floor.url + "/x", wrk.get_script(scripts / "bare-warm.lua", ["/x"]), 1)
                for verb, script in (("GET", wrk.get_script(scripts / "bare-get.lua", ["/x"])), ("POST", bare_post)):
                    result = cpu.measure(f"{prefix} {verb}", lambda: wrk.run_wrk(
                        floor.url + "/x", script, seconds, connections=connections), [floor.cpu_seconds])
                    figures[f"{prefix} {verb}"] = result.as_dict()
                    print(f"  {FLOOR_LABELS[prefix]:<22} {verb:<6} {result.rps:8.0f} req/s  p50 "
                          f"{result.p50_ms:7.2f} ms  p99 {result.p99_ms:7.2f} ms", flush=True)

            def floor_post(duration: float, beside: str, prefix: str, turn: int) -> wrk.WrkResult:
                floor = floors[prefix]
                result = cpu.measure(f"{prefix} POST beside {beside}", lambda: wrk.run_wrk(
                    floor.url + "/x", bare_post, duration, connections=connections), [floor.cpu_seconds])
                print(f"  {FLOOR_LABELS[prefix]:<22} {f'POST {turn + 1}':<8} {result.rps:8.0f} req/s", flush=True)
                return result

            # --workers 1 and 2 serve side by side (a data directory each), and their GETs run in turns too.
            servers: list[ServerChild] = []
            try:
                loads = {}
                for workers in (1, 2):
                    data = work / f"sqlite-w{workers}"
                    servers.append(serve(data, work / f"sqlite-w{workers}.log", "--workers", str(workers)))
                    trio.run(fill_pool, servers[-1].url, server_ca(data), "pool")
                    loads[workers] = Load(f"sqlite --workers={workers}", [servers[-1]], scripts, "pool", cpu, connections)
                gets: dict[int, list[wrk.WrkResult]] = {1: [], 2: []}
                for turn in range(PAIRS):
                    for workers, load in loads.items():
                        gets[workers].append(load.get(seconds / PAIRS, f"GET {turn + 1}"))
                for workers, load in loads.items():
                    turns = [r.as_dict() for r in gets[workers]]
                    figures[f"sqlite --workers={workers} GET"] = wrk.alternated(turns)
                    figures[f"sqlite --workers={workers} CREATE"] = load.create(seconds).as_dict()
            finally:
                for server in servers:
                    server.stop()

            etcd = EtcdServer(work / "etcd")
            etcd.start()
            try:
                trio.run(etcd.wait_healthy)
                puts = raw_etcd_puts(etcd.endpoint, seconds, scripts, connections)
                print(f"  raw etcd                 puts    {puts.rps:8.0f} /s  (wrk on the JSON gateway, "
                      f"{connections} connections)", flush=True)
                store = f"etcd://{etcd.endpoint}"
                for count in (1, 2):
                    servers = []
                    try:
                        for i in range(count):
                            data = work / f"etcd-{count}-{i}"
                            servers.append(serve(data, work / f"etcd-{count}-{i}.log", "--store", store,
                                                 "--etcd-prefix", f"/registry-{count}"))
                        trio.run(fill_pool, servers[0].url, server_ca(work / f"etcd-{count}-0"), "pool")
                        name = f"etcd {count} server{'s' if count > 1 else ''}"
                        load = Load(name, servers, scripts, "pool", cpu, connections, etcd)
                        figures[f"{name} GET"] = load.get(seconds).as_dict()
                        posts: dict[str, list[wrk.WrkResult]] = {prefix: [] for prefix in floors}
                        creates = []
                        for turn in range(PAIRS):  # bare POST, CREATE, same-layer POST
                            posts["bare"].append(floor_post(seconds / PAIRS, name, "bare", turn))
                            creates.append(load.create(seconds / PAIRS, turn, f"CREATE {turn + 1}"))
                            posts[SAME].append(floor_post(seconds / PAIRS, name, SAME, turn))
                        figures[f"{name} CREATE"] = wrk.alternated([r.as_dict() for r in creates])
                        for prefix, results in posts.items():
                            figures[f"{prefix} POST beside {name}"] = wrk.alternated([r.as_dict() for r in results])
                    finally:
                        for s in servers:
                            s.stop()
            finally:
                etcd.stop()
        finally:
            for floor in floors.values():
                floor.stop()
        for line in report(figures, raw_sqlite, puts.rps, wake, cpu):
            print(line)
    return 0


def report(figures: dict[str, dict[str, float]], raw_sqlite: float, raw_etcd: float, wake: list[float],
           cpu: CpuBook) -> list[str]:
    """The table and the targets."""
    bare_get, bare_post = figures["bare GET"]["rps"], figures["bare POST"]["rps"]
    lines = ["", f"{'figure':<30} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'/ bare':>7} {'/ raw':>7}"]
    lines.append(f"{'bare route GET':<30} {bare_get:8.0f} {figures['bare GET']['p50_ms']:8.2f} "
                 f"{figures['bare GET']['p99_ms']:8.2f} {'':>7} {'':>7}")
    lines.append(f"{'bare route POST':<30} {bare_post:8.0f} {figures['bare POST']['p50_ms']:8.2f} "
                 f"{figures['bare POST']['p99_ms']:8.2f} {'':>7} {'':>7}")
    for verb in ("GET", "POST"):
        f = figures[f"{SAME} {verb}"]
        lines.append(f"{FLOOR_LABELS[SAME] + ' ' + verb:<30} {f['rps']:8.0f} {f['p50_ms']:8.2f} {f['p99_ms']:8.2f}")
    lines.append(f"{'raw SQLite commits':<30} {raw_sqlite:8.0f}")
    lines.append(f"{'raw etcd puts':<30} {raw_etcd:8.0f}")
    for name, f in figures.items():
        if name.startswith(("bare", SAME)):
            continue
        server, verb = name.rsplit(" ", 1)
        beside = figures.get(f"bare POST beside {server}") if verb == "CREATE" else None
        to_bare = f["rps"] / (bare_get if verb == "GET" else beside["rps"] if beside else bare_post)
        raw = raw_etcd if name.startswith("etcd") else raw_sqlite
        to_raw = f"{f['rps'] / raw:7.2f}" if verb == "CREATE" else ""
        lines.append(f"{name:<30} {f['rps']:8.0f} {f['p50_ms']:8.2f} {f['p99_ms']:8.2f} {to_bare:7.2f} {to_raw:>7}")
        if "slices" in f and not beside:
            lines.append(f"{'  its turns, req/s':<30} " + ", ".join(f"{r:.0f}" for r in f["slices"]))
        if beside:
            turns = ", ".join(f"{c:.0f}/{b:.0f}" for c, b in zip(f["slices"], beside["slices"]))
            lines.append(f"{'  bare POST in turn with it':<30} {beside['rps']:8.0f} {beside['p50_ms']:8.2f} "
                         f"{beside['p99_ms']:8.2f}   (turns, req/s: {turns})")
    lines.append(f"wake-up latency between SQLite workers: p50 {_pct(wake, 50):.2f} ms, p99 {_pct(wake, 99):.2f} ms, "
                 f"max {wake[-1]:.2f} ms")
    lines.append("")
    lines.append("CPU per request, ms (the serving processes' user + system time over the figure's wrk runs, /proc):")
    for figure in cpu.totals:
        server_ms, etcd_ms = cpu.per_request_ms(figure)
        line = f"  {figure:<34} {server_ms:6.2f}" + (f"   etcd {etcd_ms:5.2f}" if etcd_ms else "")
        floor = f"bare POST beside {figure.removesuffix(' CREATE')}"
        if figure.endswith(" CREATE") and floor in cpu.totals:
            floor_ms = cpu.per_request_ms(floor)[0]
            same_ms = cpu.per_request_ms(f"{SAME} POST beside {figure.removesuffix(' CREATE')}")[0]
            line += (f"   (bare POST in turn with it {floor_ms:.2f}: {floor_ms / server_ms:.2f} of the cost; "
                     f"on miniplane's HTTP {same_ms:.2f}: {same_ms / server_ms:.2f})")
        lines.append(line)
    lines.append("")
    lines.append("targets:")
    w1, w2 = figures["sqlite --workers=1 GET"]["rps"], figures["sqlite --workers=2 GET"]["rps"]
    lines.append(f"  GET --workers 2 / --workers 1: {w2 / w1:.2f}   {'ok' if w2 / w1 >= GET_TARGET else 'MISSED'} "
                 f"(target {GET_TARGET})")
    for server in ("etcd 1 server", "etcd 2 servers"):
        ratio = figures[f"{server} CREATE"]["rps"] / figures[f"bare POST beside {server}"]["rps"]
        lines.append(f"  {server} CREATE / bare POST (in turns): {ratio:.2f}   "
                     f"{'ok' if ratio >= CREATE_TARGET else 'MISSED'} (target {CREATE_TARGET})")
    lines.append("not targets: the same against the bare route on miniplane's HTTP/1.1 (in the same turns):")
    for server in ("etcd 1 server", "etcd 2 servers"):
        ratio = figures[f"{server} CREATE"]["rps"] / figures[f"{SAME} POST beside {server}"]["rps"]
        lines.append(f"  {server} CREATE / bare POST on miniplane's HTTP/1.1: {ratio:.2f}")
    load = os.getloadavg()
    lines.append(f"load average at the end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    return lines


if __name__ == "__main__":
    sys.exit(main())
