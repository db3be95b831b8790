"""CREATE now and before, in one run: `miniplane serve --workers 1` (SQLite) against the code of another revision
and the bare Hypercorn + quart-trio POST (issue 41's create target: at least 1.0x the bare POST per worker).

Three servers serve side by side for the whole run: this checkout's, the `--before` revision's (a git
worktree, `bench/worktree.py`) and the bare route (`bare_route.py`, with a certificate made as the
servers' are). wrk (one thread, 16 connections, loopback HTTPS) creates ClusterRoles on each in turn,
`--turns` slices of `--seconds` each, so that the figures compared are taken in the same minutes. Prints
each slice, then per server the median creates/s, the CPU time the server used per create (from /proc over
its slices), the ratio to the bare POST and, for now, to before, and each SQLite server's mean group-commit
batch over the run (from its `/metrics`). `--variant NAME=ARGS` (repeatable) adds a
server of this checkout serving with more options (`--variant "no controllers=--controllers false"`,
`--variant "memory=--store memory"`), measured in the same turns, with its ratio to now: what a part of
the server costs a create. Asserts nothing: a missed target is reported.

Run: `python bench/bench_create.py [--before REV] [--seconds S] [--turns N] [--variant NAME=ARGS]...`
(defaults 697fa32, 3 s, 3).
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

import httpx  # noqa: E402
import trio  # noqa: E402

import bench_scaleout as scaleout  # noqa: E402
import scale_wrk as wrk  # noqa: E402
from api.certs import ensure_pki  # noqa: E402
from children import ServerChild  # noqa: E402
from worktree import before_tree  # noqa: E402

TARGET = 1.0
CONNECTIONS = 16


def _serve(tree: Path, data: Path, extra: list[str] | None = None) -> ServerChild:
    data.parent.mkdir(parents=True, exist_ok=True)
    tokens = data.parent / f"{data.name}-tokens.csv"
    tokens.write_text(f'{scaleout.TOKEN},bench,bench-uid,"system:masters"\n')
    return ServerChild([sys.executable, "-m", "api.cli", "serve", "--data-dir", str(data), "--port", "0",
                        "--token-auth-file", str(tokens), "--workers", "1", *(extra or [])], "serving at ",
                       data.with_suffix(".log"), cwd=tree)


def _writes_per_commit(url: str, data: Path) -> str:
    """The SQLite store's mean group-commit batch over the run, from its `/metrics` (a revision before the
    counters has none)."""
    answer = httpx.get(url + "/metrics", verify=scaleout.server_ca(data), timeout=30,
                       headers={"Authorization": f"Bearer {scaleout.TOKEN}"})
    values = {line.split()[0]: float(line.split()[1]) for line in answer.text.splitlines()
              if line.startswith("miniplane_storage_commit")}
    commits = values.get("miniplane_storage_commits_total")
    writes = values.get("miniplane_storage_committed_writes_total", 0.0)
    return f"{writes / commits:.1f} writes per commit" if commits else "no commit counters"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="697fa32", help="the revision measured as 'before'")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per slice")
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=ARGS",
                        help="also this checkout serving with ARGS (repeatable)")
    args = parser.parse_args(argv)
    variants = {}
    for spec in args.variant:
        name, sep, options = spec.partition("=")
        if not sep or not name or name in ("now", "bare POST") or name.startswith("before"):
            parser.error(f"--variant {spec!r}: give NAME=ARGS, NAME not now, before or bare POST")
        variants[name] = shlex.split(options)
    if wrk.wrk_path() is None:
        print("wrk not found: run `make bench-tools`", file=sys.stderr)
        return 1
    work = Path(tempfile.mkdtemp(prefix="bench-create-"))
    auth = {"Authorization": f"Bearer {scaleout.TOKEN}"}
    with before_tree(args.before, work / "before") as before:
        pki = ensure_pki(work / "floor")
        then = f"before ({args.before})"
        data = {"now": work / "now" / "data", then: work / "before-data" / "data"}
        servers = {"bare POST": ServerChild([sys.executable, str(BENCH / "bare_route.py"),
                                             "--cert", str(pki.serving_cert_path), "--key", str(pki.serving_key_path)],
                                            "bare route at ", work / "bare.log"),
                   "now": _serve(ROOT, data["now"]), then: _serve(before, data[then])}
        for i, (name, options) in enumerate(variants.items()):
            data[name] = work / f"variant-{i}" / "data"
            servers[name] = _serve(ROOT, data[name], options)
        try:
            for name, path in data.items():
                trio.run(scaleout.fill_pool, servers[name].url, scaleout.server_ca(path), "warm", 20)
            slices: dict[str, list[tuple[float, float]]] = {name: [] for name in servers}
            for turn in range(args.turns):
                for i, (name, server) in enumerate(servers.items()):
                    bare = name == "bare POST"
                    script = wrk.create_script(work / f"create-{turn}-{i}.lua", "/x" if bare else scaleout.CLUSTERROLES,
                                               scaleout.role("@NAME@"), f"s{turn}-{i}")
                    cpu = server.cpu_seconds()
                    result = wrk.run_wrk(server.url + ("/x" if bare else scaleout.CLUSTERROLES), script, args.seconds,
                                         connections=CONNECTIONS, headers=None if bare else auth)
                    ms = (server.cpu_seconds() - cpu) * 1000 / max(1.0, result.rps * args.seconds)
                    slices[name].append((result.rps, ms))
                    print(f"  turn {turn + 1} {name:<22} {result.rps:7.0f} creates/s  {ms:5.2f} ms CPU each",
                          flush=True)
            batches = {name: _writes_per_commit(servers[name].url, path) for name, path in data.items()}
        finally:
            for server in servers.values():
                server.stop()
    medians = {name: (statistics.median(r for r, _ in s), statistics.median(m for _, m in s))
               for name, s in slices.items()}
    floor = medians["bare POST"][0]
    now = medians["now"][0]
    print(f"\nmedians of {args.turns} turns of {args.seconds:g} s, 16 connections:")
    for name, (rps, ms) in medians.items():
        line = f"  {name:<22} {rps:7.0f} creates/s  {ms:5.2f} ms CPU each  {rps / floor:5.2f}x the bare POST"
        if name in batches:
            line += f"  [{batches[name]}]"
        if name.startswith("before"):
            line += f"  (now / before {now / rps:.2f})"
        elif name in variants:
            line += f"  ({name} / now {rps / now:.2f})"
        print(line)
    verdict = "met" if now / floor >= TARGET else "missed"
    print(f"target: CREATE --workers 1 / bare POST {now / floor:.2f}: {verdict} (target {TARGET})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
