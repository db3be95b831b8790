"""Footprint benchmark (issue 41): the server's RSS per stored object and its start-up to serving, at each
store size, beside the code before, measured in the same run.

For each size one SQLite data directory is filled once (`bench_scale.fill`: 100 namespaces, a pool of 100
Roles, 10 aggregating ClusterRoles, a RoleBinding, two templates, then `size` bulk objects, 90% Roles across
the namespaces, 10% ClusterRoles; the fill time is printed). Then `python -m api.cli serve --data-dir D
--port 0` of the code before (`--before REV`, a git worktree of that revision, default `HEAD~1`, run by this
venv's python) and of this checkout (its working tree, uncommitted edits included) start on it in turns
(before, now, ... `--runs` times each, never two at once, so the machine's drift hits both alike). Both trees'
sources are compiled first (`compileall`), as a start after an install or an earlier run finds them: this
machine sets PYTHONDONTWRITEBYTECODE, so a start would otherwise compile every module (about a second).
For each start:
- start-up: spawn to the "serving at " line, and the CPU seconds the server used to get there;
- RSS right after start, once its CPU is idle (it grows < 0.05 s over 0.5 s; at most 20 s of waiting);
- RSS (now and peak) after one full paged LIST of all Roles across namespaces (500 per page following
  `metadata.continue`) and 200 GETs of Roles spread over the listed ones (admin token and CA of D);
- the stored objects: the live keys of D's store (its `latest` table) after the server stopped: the fill's
  213 fixed objects, the `size` bulk ones and whatever the server itself creates at start.

Prints a table per size (median and min-max over the runs, and the ratio now / before of the medians):
start-up s, CPU s to serving, RSS MiB after start and after the reads (and its peak), KiB per stored object
(RSS / stored objects) and, when size 0 was measured, the marginal KiB per object ((RSS(size) - RSS(0)) /
size); then issue 41's targets at the largest size (RSS after the reads per stored object <= 4 KiB, median
start-up <= 5 s) as ok / MISSED. Writes `bench/results-footprint.json`. Asserts nothing: a missed target is
reported. Every server gets 60 s to start.

Run: `python bench/bench_footprint.py [--sizes 0,10000,100000] [--runs 3] [--before REV]`.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import ssl
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

import httpx  # noqa: E402
import trio  # noqa: E402

from bench_scale import RBAC, fill  # noqa: E402
from children import ServerChild  # noqa: E402
from worktree import before_tree  # noqa: E402

__all__ = ["main"]

SIZES = (0, 10_000, 100_000)
RUNS = 3
LIST_LIMIT, GETS = 500, 200
START_TIMEOUT_S, IDLE_BOUND_S, IDLE_STEP_S, IDLE_CPU_S = 60.0, 20.0, 0.5, 0.05
KIB_TARGET, STARTUP_TARGET_S = 4.0, 5.0
SIDES = ("before", "now")
#: (key, label, format) of the table's rows.
FIGURES = (("startup_s", "start-up s", "{:.2f}"), ("cpu_s", "CPU s to serving", "{:.2f}"),
           ("rss_start_mib", "RSS MiB after start", "{:.1f}"), ("rss_read_mib", "RSS MiB after reads", "{:.1f}"),
           ("rss_peak_mib", "peak RSS MiB", "{:.1f}"), ("kib_start", "KiB/object after start", "{:.2f}"),
           ("kib_read", "KiB/object after reads", "{:.2f}"))


def _start(data: Path, cwd: Path, log: Path) -> ServerChild:
    """`serve` of the checkout at `cwd` on `data`, killed if it does not serve within START_TIMEOUT_S."""
    cmd = [sys.executable, "-m", "api.cli", "serve", "--data-dir", str(data), "--port", "0"]
    return ServerChild(cmd, "serving at ", log, cwd=cwd, timeout=START_TIMEOUT_S)


def _idle(server: ServerChild) -> None:
    """Wait until the server's CPU grows < IDLE_CPU_S over IDLE_STEP_S (at most IDLE_BOUND_S)."""
    deadline, last = time.monotonic() + IDLE_BOUND_S, server.cpu_seconds()
    while time.monotonic() < deadline:
        time.sleep(IDLE_STEP_S)
        now = server.cpu_seconds()
        if now - last < IDLE_CPU_S:
            return
        last = now


def _reads(server: ServerChild, data: Path) -> int:
    """One paged LIST of every Role, then GETS GETs of Roles spread over the listed ones: the Roles listed."""
    token = (data / "admin.token").read_text().strip()
    verify = ssl.create_default_context(cafile=str(data / "pki" / "ca.crt"))
    with httpx.Client(base_url=server.url, verify=verify, timeout=60,
                      headers={"Authorization": f"Bearer {token}"}) as client:
        listed: list[tuple[str, str]] = []
        params: dict[str, Any] = {"limit": LIST_LIMIT}
        while True:
            answer = client.get(f"{RBAC}/roles", params=params)
            answer.raise_for_status()
            page = answer.json()
            listed += [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in page["items"]]
            if not page["metadata"].get("continue"):
                break
            params["continue"] = page["metadata"]["continue"]
        for i in range(GETS):
            namespace, name = listed[i * len(listed) // GETS]
            client.get(f"{RBAC}/namespaces/{namespace}/roles/{name}").raise_for_status()
    return len(listed)


def _stored(data: Path) -> int:
    """The live keys of the store in `data` (read-only; no server runs on it then)."""
    conn = sqlite3.connect(f"file:{data / 'state.db'}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT count(*) FROM latest").fetchone()[0]
    finally:
        conn.close()


def measure(data: Path, cwd: Path, log: Path) -> dict[str, Any]:
    """One start of the server of `cwd` on `data`: its figures (see the module docs)."""
    server = _start(data, cwd, log)
    try:
        run: dict[str, Any] = {"startup_s": server.startup, "cpu_s": server.cpu_seconds()}
        _idle(server)
        run["rss_start_mib"] = server.rss_mib()[0]
        run["roles_listed"] = _reads(server, data)
        run["rss_read_mib"], run["rss_peak_mib"] = server.rss_mib()
    finally:
        server.stop()
    run["stored"] = _stored(data)
    run["kib_start"] = run["rss_start_mib"] * 1024 / run["stored"]
    run["kib_read"] = run["rss_read_mib"] * 1024 / run["stored"]
    return run


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def _cell(runs: list[dict[str, Any]], key: str, fmt: str) -> str:
    values = [r[key] for r in runs]
    spread = f" [{fmt.format(min(values))}-{fmt.format(max(values))}]" if len(values) > 1 else ""
    return fmt.format(statistics.median(values)) + spread


def _ratio(now: float, before: float) -> str:
    return f"{now / before:.2f}" if before else "-"


def report(results: dict[str, Any]) -> list[str]:
    """The table per size and the targets at the largest size."""
    sizes = results["sizes"]
    base = sizes.get("0")
    lines: list[str] = []
    for size, entry in sizes.items():
        runs = entry["runs"]
        stored = [r["stored"] for side in SIDES for r in runs[side]]
        lines += ["", f"size {int(size):,}: {min(stored):,}-{max(stored):,} stored objects, fill {entry['fill_s']:.1f} s",
                  f"  {'figure':<26} {'before':>22} {'now':>22} {'now/before':>11}"]
        for key, label, fmt in FIGURES:
            lines.append(f"  {label:<26} {_cell(runs['before'], key, fmt):>22} {_cell(runs['now'], key, fmt):>22} "
                         f"{_ratio(_median(runs['now'], key), _median(runs['before'], key)):>11}")
        if base is not None and int(size) > 0:
            for key, label in (("rss_start_mib", "after start"), ("rss_read_mib", "after reads")):
                marginal = {side: (_median(runs[side], key) - _median(base["runs"][side], key)) * 1024 / int(size)
                            for side in SIDES}
                entry.setdefault("marginal_kib", {})[key] = marginal
                lines.append(f"  {'marginal KiB/obj ' + label:<26} {marginal['before']:>22.2f} "
                             f"{marginal['now']:>22.2f} {_ratio(marginal['now'], marginal['before']):>11}")
    largest = max(sizes, key=int)
    runs = sizes[largest]["runs"]
    kib, startup = _median(runs["now"], "kib_read"), _median(runs["now"], "startup_s")
    before_kib, before_startup = _median(runs["before"], "kib_read"), _median(runs["before"], "startup_s")
    results["targets"] = {"size": int(largest), "kib_per_object": kib, "kib_ok": kib <= KIB_TARGET,
                          "startup_s": startup, "startup_ok": startup <= STARTUP_TARGET_S}
    lines += ["", f"targets at {int(largest):,} objects (issue 41):",
              f"  RSS per stored object {kib:.2f} KiB (before {before_kib:.2f}, {_ratio(kib, before_kib)}x)   "
              f"{'ok' if kib <= KIB_TARGET else 'MISSED'} (target <= {KIB_TARGET:g} KiB)",
              f"  start-up to serving {startup:.2f} s (before {before_startup:.2f}, {_ratio(startup, before_startup)}x)"
              f"   {'ok' if startup <= STARTUP_TARGET_S else 'MISSED'} (target <= {STARTUP_TARGET_S:g} s)"]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="store sizes, comma-separated")
    parser.add_argument("--runs", type=int, default=RUNS, help="starts per side and size (default 3)")
    parser.add_argument("--before", default="HEAD~1", help="the revision of the code before (default HEAD~1)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    load = os.getloadavg()
    print(f"miniplane footprint benchmark: sizes {sizes}, {args.runs} run(s) per side, before = {args.before}, "
          f"cpus {os.cpu_count()}, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}", flush=True)
    results: dict[str, Any] = {"before": args.before, "runs": args.runs, "load_before": load[0], "sizes": {}}
    with tempfile.TemporaryDirectory(prefix="miniplane-footprint-") as tmp:
        work = Path(tmp)
        with before_tree(args.before, work / "before") as before:
            for size in sizes:
                data = work / f"size-{size}"
                data.mkdir()
                began = time.monotonic()
                trio.run(fill, data, size)
                filled = time.monotonic() - began
                print(f"size {size:,}: filled in {filled:.1f} s", flush=True)
                runs: dict[str, list[dict[str, Any]]] = {side: [] for side in SIDES}
                for turn in range(args.runs):
                    for side, cwd in (("before", before), ("now", ROOT)):
                        run = measure(data, cwd, work / f"{side}-{size}-{turn}.log")
                        runs[side].append(run)
                        print(f"  {side:<6} run {turn + 1}: start-up {run['startup_s']:.2f} s, CPU {run['cpu_s']:.2f} s, "
                              f"RSS {run['rss_start_mib']:.1f} -> {run['rss_read_mib']:.1f} MiB "
                              f"(peak {run['rss_peak_mib']:.1f}), {run['stored']:,} stored, "
                              f"{run['kib_read']:.2f} KiB/object", flush=True)
                results["sizes"][str(size)] = {"fill_s": filled, "runs": runs}
    results["load_after"] = os.getloadavg()[0]
    for line in report(results):
        print(line)
    (BENCH / "results-footprint.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwrote {BENCH / 'results-footprint.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
