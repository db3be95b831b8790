"""GET of one object over HTTPS (issue 41's read targets): miniplane against the bare route and against the
code before, over HTTP/1.1 and HTTP/2, in one run.

Measured in one run (SQLite, a pool of 100 ClusterRoles GET round-robin, 16 connections over loopback,
each figure's rate and the serving processes' CPU time per request from /proc):
- the floors: the bare Hypercorn + quart-trio route (`bare_route.py`; the targets' baseline) and the
  same route on miniplane's HTTP/1.1 listener;
- `miniplane serve` of this checkout with `--workers 1`, `2` and `4` (4: oversubscribed on two cores,
  to show it does not collapse), and `--workers 1` of the code before (`--before REV`, a git worktree
  of that revision, compiled with this checkout first, default `HEAD~1`), GET by wrk (HTTP/1.1, as Go's
  clients without gzip); the floors,
  the one-worker servers and `--workers 2` in turns (three slices each: this machine's speed drifts by a
  quarter within minutes, and a ratio of figures taken minutes apart drifts with it);
- HTTP/2 against HTTP/1.1 on the same `--workers 1` server, by h2load (`-m 1`: one request at a time per
  connection, as wrk), each warmed by a run of its own first (a process's first HTTP/2 connections decode
  the header blocks later ones reuse), in turns, their order swapped each turn;
- LIST of every ClusterRole (`LISTED` more are made), `LIST_LIMIT` per page following continue tokens, by
  `--workers 1` of this checkout and of the code before, in turns: the same work in the previous code.

Prints the table, each figure's ratio to the bare GET and its CPU time per request (with the bare GET's
CPU per request over it: what a request costs, steadier than the rates), and the targets (`--workers 2` >= 3.6x the bare
GET, one worker >= 1.8x, HTTP/2 >= 0.9 of HTTP/1.1); asserts nothing: a missed target is reported.

Run: `python bench/bench_get.py [--seconds S] [--before REV] [--connections N]` (default 6 s per figure;
`make bench-tools` installs wrk and h2load).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

import trio  # noqa: E402

import scale_wrk as wrk  # noqa: E402
from api.certs import ensure_pki  # noqa: E402
from bench_scaleout import CLUSTERROLES, POOL, TOKEN, fill_pool, server_ca  # noqa: E402
from children import ServerChild  # noqa: E402
from worktree import before_tree  # noqa: E402

__all__ = ["main"]

CONNECTIONS = 16
TURNS = 3
#: issue 41's targets, as ratios to the bare GET (the workers') and to HTTP/1.1 (HTTP/2's).
TARGETS = {"--workers 2": 3.6, "--workers 1": 1.8}
#: The LIST figure: pages of this many items, over the pool and this many more ClusterRoles.
LIST_LIMIT, LISTED = 500, 900
H2_TARGET = 0.9


class Book:
    """Each figure's slices (rate, requests, CPU seconds of its server)."""

    def __init__(self) -> None:
        self.slices: dict[str, list[tuple[float, int, float]]] = {}

    def measure(self, name: str, server: ServerChild, run: Callable[[], tuple[float, int]]) -> float:
        before = server.cpu_seconds()
        rps, requests = run()
        self.slices.setdefault(name, []).append((rps, requests, server.cpu_seconds() - before))
        print(f"  {name:<34} {rps:8.0f} req/s", flush=True)
        return rps

    def rate(self, name: str) -> float:
        slices = self.slices[name]
        seconds = sum(n / r for r, n, _ in slices if r)
        return sum(n for _, n, _ in slices) / seconds if seconds else 0.0

    def cpu_ms(self, name: str) -> float:
        slices = self.slices[name]
        return 1000 * sum(c for *_, c in slices) / max(1, sum(n for _, n, _ in slices))


def _wrk(url: str, script: Path, seconds: float, connections: int, auth: bool = True) -> tuple[float, int]:
    result = wrk.run_wrk(url, script, seconds, connections=connections,
                         headers={"Authorization": f"Bearer {TOKEN}"} if auth else None)
    if result.non_2xx or result.socket_errors:
        raise RuntimeError(f"GET failed: {result.failures or result.socket_errors}")
    return result.rps, result.requests


def _h2load(url: str, seconds: float, connections: int, *, h1: bool) -> tuple[float, int]:
    """h2load GETs of the pool (round-robin) for `seconds`: (requests/s, requests done)."""
    cmd = ["h2load", f"-c{connections}", "-m1", "-t1", f"-D{max(1, round(seconds))}",
           "-H", f"Authorization: Bearer {TOKEN}", *(["--h1"] if h1 else []),
           *[f"{url}{CLUSTERROLES}/pool-{i}" for i in range(POOL)]]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60).stdout
    done = re.search(r"requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded", out)
    rate = re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", out)
    protocol = re.search(r"Application protocol: (\S+)", out)
    if not (done and rate and protocol) or done.group(1) != done.group(2):
        raise RuntimeError(f"h2load failed: {out[-2000:]}")
    if protocol.group(1) != ("http/1.1" if h1 else "h2"):
        raise RuntimeError(f"h2load spoke {protocol.group(1)}")
    return float(rate.group(1)), int(done.group(2))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="seconds per figure (default 6)")
    parser.add_argument("--before", default="HEAD~1", help="the revision whose --workers 1 is the 'before'")
    parser.add_argument("--connections", type=int, default=CONNECTIONS)
    args = parser.parse_args(argv)
    if wrk.wrk_path() is None or shutil.which("h2load") is None:
        print("bench_get: wrk or h2load not found; run `make bench-tools`", file=sys.stderr)
        return 2
    seconds, connections, turn = args.seconds, args.connections, args.seconds / TURNS
    load = os.getloadavg()
    print(f"miniplane GET benchmark: {seconds:g} s per figure, cpus {os.cpu_count()}, {connections} connections, "
          f"before = {args.before}, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}", flush=True)
    book = Book()
    with tempfile.TemporaryDirectory(prefix="miniplane-get-") as tmp:
        work = Path(tmp)
        scripts = work / "lua"
        scripts.mkdir()
        get = wrk.get_script(scripts / "get.lua", [f"{CLUSTERROLES}/pool-{i}" for i in range(POOL)])
        bare_get = wrk.get_script(scripts / "bare.lua", ["/x"])
        pki = ensure_pki(work / "floor")
        children: list[ServerChild] = []
        with before_tree(args.before, work / "before") as before:
            try:
                floors: dict[str, ServerChild] = {}
                for name, listener in (("bare route", "hypercorn"), ("bare, miniplane HTTP/1.1", "miniplane")):
                    cmd = [sys.executable, str(BENCH / "bare_route.py"), "--cert", str(pki.serving_cert_path),
                           "--key", str(pki.serving_key_path), "--listener", listener]
                    floor = ServerChild(cmd, "bare route at ", work / f"{listener}.log")
                    children.append(floor)
                    floors[name] = floor
                    _wrk(floor.url + "/x", bare_get, 1, connections, auth=False)  # warm
                servers: dict[str, ServerChild] = {}
                for name, workers, cwd in (("before --workers 1", 1, before), ("--workers 1", 1, ROOT),
                                           ("--workers 2", 2, ROOT), ("--workers 4", 4, ROOT)):
                    data = work / _data_name(name)
                    server = _serve(data, workers, cwd)
                    children.append(server)
                    servers[name] = server
                    trio.run(fill_pool, server.url, server_ca(data), "pool")
                    _wrk(server.url, get, 1, connections)  # warm
                for _ in range(TURNS):
                    for name, floor in floors.items():
                        book.measure(f"{name} GET", floor, lambda: _wrk(floor.url + "/x", bare_get, turn, connections,
                                                                         auth=False))
                    for name in ("before --workers 1", "--workers 1", "--workers 2"):
                        book.measure(f"{name} GET", servers[name],
                                     lambda: _wrk(servers[name].url, get, turn, connections))
                book.measure("--workers 4 GET", servers["--workers 4"],
                             lambda: _wrk(servers["--workers 4"].url, get, seconds, connections))
                one = servers["--workers 1"]
                for h1 in (True, False):  # warm: each protocol's first connections decode what later ones reuse
                    _h2load(one.url, 1, connections, h1=h1)
                for turn_number in range(TURNS):
                    for h1 in (True, False) if turn_number % 2 == 0 else (False, True):  # neither always first
                        book.measure(f"--workers 1 GET {'HTTP/1.1' if h1 else 'HTTP/2'} (h2load)", one,
                                     lambda: _h2load(one.url, turn, connections, h1=h1))
                pages = wrk.list_script(scripts / "list.lua", CLUSTERROLES, LIST_LIMIT)
                listing = ("before --workers 1", "--workers 1")
                for name in listing:
                    trio.run(fill_pool, servers[name].url, server_ca(work / _data_name(name)), "listed", LISTED)
                    _wrk(servers[name].url, pages, 1, connections)  # warm
                for _ in range(TURNS):
                    for name in listing:
                        book.measure(f"{name} LIST {LIST_LIMIT}/page", servers[name],
                                     lambda: _wrk(servers[name].url, pages, turn, connections))
            finally:
                for child in children:
                    child.stop()
    for line in report(book):
        print(line)
    return 0


def _data_name(name: str) -> str:
    return name.replace(" ", "").replace("-", "")


def _serve(data: Path, workers: int, cwd: Path) -> ServerChild:
    """`miniplane serve --workers N` on SQLite in `data` (accepting `TOKEN`), of the checkout at `cwd`."""
    tokens = data.parent / "tokens.csv"
    tokens.write_text(f'{TOKEN},bench,bench-uid,"system:masters"\n')
    return ServerChild([sys.executable, "-m", "api.cli", "serve", "--data-dir", str(data), "--port", "0",
                        "--token-auth-file", str(tokens), "--workers", str(workers)], "serving at ",
                       data.parent / f"{data.name}.log", cwd=cwd)


def report(book: Book) -> list[str]:
    """The table (rates, ratios, CPU per request) and the targets."""
    bare = book.rate("bare route GET")
    bare_cpu = book.cpu_ms("bare route GET")
    lines = ["", f"{'figure':<40} {'req/s':>8} {'/ bare':>7} {'CPU ms/req':>11} {'bare CPU / CPU':>15}"]
    for name in book.slices:
        lines.append(f"{name:<40} {book.rate(name):8.0f} {book.rate(name) / bare:7.2f} {book.cpu_ms(name):11.3f} "
                     f"{bare_cpu / book.cpu_ms(name):15.2f}")
    lines.append("")
    for name, target in TARGETS.items():
        ratio = book.rate(f"{name} GET") / bare
        lines.append(f"target {name} GET >= {target}x the bare GET: {ratio:.2f}x "
                     f"{'met' if ratio >= target else 'missed'}")
    h1, h2 = book.rate("--workers 1 GET HTTP/1.1 (h2load)"), book.rate("--workers 1 GET HTTP/2 (h2load)")
    lines.append(f"target HTTP/2 GET >= {H2_TARGET} of HTTP/1.1: {h2 / h1:.2f} {'met' if h2 / h1 >= H2_TARGET else 'missed'}")
    lines.append(f"this checkout's --workers 1 GET / the code before's: "
                 f"{book.rate('--workers 1 GET') / book.rate('before --workers 1 GET'):.2f}x")
    listed = f"LIST {LIST_LIMIT}/page"
    lines.append(f"this checkout's --workers 1 {listed} / the code before's: "
                 f"{book.rate(f'--workers 1 {listed}') / book.rate(f'before --workers 1 {listed}'):.2f}x")
    return lines


if __name__ == "__main__":
    sys.exit(main())
