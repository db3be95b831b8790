"""Watch fan-out benchmark (issue 41): 1,000 watchers of one collection while it takes 200 writes/s, on the
code before and on this checkout, measured in the same run.

One run of a side: a fresh SQLite data directory, `python -m api.cli serve --data-dir D --port 0
--controllers false --store sqlite --workers N` started from the side's tree (before: a git worktree of
`--before REV`, default 18093f9; now: this checkout's working tree), both run by this venv's python and
compiled first (`compileall`: this machine sets PYTHONDONTWRITEBYTECODE). Its connection and per-user watch
bounds are raised to fit the watchers (their defaults, 1,000 each, would refuse some of 1,000 watchers and
the writer). `--watchers` HTTPS watches (HTTP/1.1, the admin token and CA of D) of the ClusterRoles with
`labelSelector=fan=<tag>` from one version are spread over `--clients` child processes (this file with
`--child`): a Python client cannot parse 200,000 events/s in one process, so each child reads raw TLS
streams and, without decoding JSON, counts event lines (`"type":"ADDED"`) and finds the object names with
one regex over each received piece, stamping each with time.monotonic() (one clock for every process on
Linux). Once every watcher has seen a warm-up ClusterRole, this process writes open-loop: write i (a
ClusterRole `<tag>-<i>`) is sent at t0 + i/rate by one of `--writers` tasks, for `--seconds`; its send and
201 are stamped. Then every watcher gets at most 30 s to see every write.

Prints per run, then a table of the median [min-max] over `--runs` runs of each side (alternated: before,
now, before, now, ...) and now/before of the medians: writes answered (201) of those scheduled and
writes/s achieved (answered / (last answer - t0)); events delivered / expected (watchers x answered
writes: a write still unanswered when its time ran out expects nothing); the latency after the write's
answer (received - 201, 0 when the event came first) p50, p99 and max, and after its send p50 and p99, in
ms; the drain (last event after last answer); the writes' lag behind their
schedule (p99); the CPU seconds of the server (and its workers), of the watch clients and of the writer
from the first write until every event was seen (or the wait ended); failed writes and watches. Then issue
41's target on this checkout: the rate kept (every write answered, at >= 95% of `--rate`), every event
delivered and p99 after the answer <= 100 ms, met or missed. Writes `bench/results-fanout.json`. Asserts
nothing: a missed target is reported.

Bounds: loopback only; at most 2,000 watchers; a server gets 60 s to serve, the watchers 120 s to be
ready, the writes their seconds + 60 s, the delivery 30 s more; every process and the worktree are removed
at the end, also on failure.

Run: `python bench/bench_fanout.py [--watchers 1000] [--rate 200] [--seconds 10] [--runs 3] [--before REV]
[--workers N] [--quick]` (`--quick`: 100 watchers, 50 writes/s, 3 s, 1 run).
"""

from __future__ import annotations

import argparse
import array
import itertools
import json
import math
import os
import re
import ssl
import statistics
import subprocess
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

from children import ServerChild, tree_cpu_seconds  # noqa: E402
from worktree import before_tree  # noqa: E402
from runtime.client.kubeconfig import load_kubeconfig  # noqa: E402

__all__ = ["main"]

GROUP = "rbac.authorization.svc.io"
ROLES = f"/apis/{GROUP}/v1/clusterroles"
SIDES = ("before", "now")
MAX_WATCHERS = 2_000
START_S, READY_S, WRITE_EXTRA_S, DRAIN_S = 60.0, 120.0, 60.0, 30.0
CONNECTS_AT_ONCE = 25  # per child: the server's listen backlog is finite
TOKEN_ENV = "MINIPLANE_FANOUT_TOKEN"  # the token goes to the children by environment, not argv
P99_TARGET_MS = 100.0
RATE_KEPT = 0.95  # the rate counts as kept when every write was answered at >= 95% of it
ADDED, ANY_TYPE = b'"type":"ADDED"', b'"type":"'
#: (key, label, format) of the table's rows.
FIGURES = (("answered_frac", "writes answered / scheduled", "{:.3f}"), ("writes_per_s", "writes/s achieved", "{:.1f}"),
           ("delivered_frac", "delivered / expected", "{:.4f}"),
           ("ack_p50_ms", "after answer p50 ms", "{:.1f}"), ("ack_p99_ms", "after answer p99 ms", "{:.1f}"),
           ("ack_max_ms", "after answer max ms", "{:.1f}"), ("sent_p50_ms", "after send p50 ms", "{:.1f}"),
           ("sent_p99_ms", "after send p99 ms", "{:.1f}"), ("drain_s", "drain after last answer s", "{:.3f}"),
           ("lag_p99_ms", "send lag p99 ms", "{:.1f}"), ("server_cpu_s", "server CPU s", "{:.1f}"),
           ("clients_cpu_s", "watch clients CPU s", "{:.1f}"), ("writer_cpu_s", "writer CPU s", "{:.1f}"),
           ("write_errors", "failed writes", "{:.0f}"), ("watch_failures", "failed/ended watches", "{:.0f}"))


# ---- the watch clients (child processes) ----------------------------------------------------------------

class Watch:
    """One watch connection's tally: the first receive time of each write (NaN: not seen)."""

    def __init__(self, writes: int) -> None:
        self.recv = array.array("d", [math.nan]) * writes
        self.seen = self.added = self.other = self.dups = 0
        self.tail = b""
        self.warm = self.done = False
        self.error = ""


async def child(args: argparse.Namespace) -> None:
    """Hold `args.count` watches; print `ready`, wait for `finish DEADLINE` on stdin, write the tallies."""
    ctx = ssl.create_default_context(cafile=args.ca)
    request = (f"GET {args.path} HTTP/1.1\r\nHost: {args.host}:{args.port}\r\nAccept: application/json\r\n"
               f"Authorization: Bearer {os.environ[TOKEN_ENV]}\r\n\r\n").encode()
    names = re.compile(rb'"name":"' + args.tag.encode() + rb'-(\d+|warm)"')
    watches = [Watch(args.writes) for _ in range(args.count)]
    limiter = trio.Semaphore(CONNECTS_AT_ONCE)
    settled, complete = trio.Event(), trio.Event()
    state = {"settled": 0, "complete": 0}

    def note(key: str, event: trio.Event) -> None:
        state[key] += 1
        if state[key] == len(watches):
            event.set()

    def feed(w: Watch, data: bytes, now: float) -> None:
        # Events are whole lines; chunk-size lines sit between them and match neither pattern.
        buf = w.tail + data
        cut = buf.rfind(b"\n") + 1
        body, w.tail = buf[:cut], buf[cut:]
        added = body.count(ADDED)
        w.added += added
        w.other += body.count(ANY_TYPE) - added
        for match in names.finditer(body):
            key = match.group(1)
            if key == b"warm":
                if not w.warm:
                    w.warm = True
                    note("settled", settled)
                continue
            i = int(key)
            if w.recv[i] == w.recv[i]:  # not NaN: seen before
                w.dups += 1
                continue
            w.recv[i] = now
            w.seen += 1
            if w.seen == args.writes and not w.done:
                w.done = True
                note("complete", complete)

    def fail(w: Watch, why: str) -> None:
        w.error = w.error or why
        if not w.warm:
            w.warm = True
            note("settled", settled)
        if not w.done:  # done waiting for it: its figures stay short
            w.done = True
            note("complete", complete)

    async def watch(w: Watch) -> None:
        try:
            async with limiter:
                stream = await trio.open_ssl_over_tcp_stream(args.host, args.port, ssl_context=ctx,
                                                             https_compatible=True)
                await stream.send_all(request)
                head = b""
                while b"\r\n\r\n" not in head:
                    data = await stream.receive_some(65536)
                    if not data:
                        raise EOFError("closed before the headers")
                    head += data
            head, _, rest = head.partition(b"\r\n\r\n")
            status = head.split(b" ", 2)[1].decode()
            if status != "200":
                fail(w, f"status {status}")
                return
            feed(w, rest, time.monotonic())
            async with stream:
                while data := await stream.receive_some(262144):
                    feed(w, data, time.monotonic())
            fail(w, "closed by the server")
        except (OSError, EOFError, ssl.SSLError, trio.BrokenResourceError) as exc:
            fail(w, type(exc).__name__)

    async with trio.open_nursery() as nursery:
        for w in watches:
            nursery.start_soon(watch, w)
        with trio.move_on_after(READY_S):
            await settled.wait()
        print("ready", sum(w.warm and not w.error for w in watches), flush=True)
        line = await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
        deadline = float(line.split()[1]) if line.startswith("finish") else time.monotonic()
        with trio.move_on_after(max(0.0, deadline - time.monotonic())):
            await complete.wait()
        with open(args.out, "wb") as out:
            for w in watches:
                w.recv.tofile(out)
        errors: dict[str, int] = {}
        for w in watches:
            if w.error:
                errors[w.error] = errors.get(w.error, 0) + 1
        print("done", json.dumps({"added": sum(w.added for w in watches), "other": sum(w.other for w in watches),
                                  "dups": sum(w.dups for w in watches), "errors": errors}), flush=True)
        nursery.cancel_scope.cancel()


# ---- the server, the writer and one run ----------------------------------------------------------------

def start_server(cwd: Path, data: Path, log: Path, args: argparse.Namespace) -> ServerChild:
    """`serve` of the tree at `cwd` on `data`, its connection and watch bounds raised to fit the run."""
    cmd = [sys.executable, "-m", "api.cli", "serve", "--data-dir", str(data), "--port", "0",
           "--controllers", "false", "--store", "sqlite", "--workers", str(args.workers),
           "--max-connections", str(args.watchers + args.writers + 100),
           "--max-watches-per-user", str(args.watchers + 10)]
    return ServerChild(cmd, "serving at ", log, cwd=cwd, timeout=START_S)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))] if ordered else math.nan


def role(tag: str, name: str) -> bytes:
    return json.dumps({"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole",
                       "metadata": {"name": f"{tag}-{name}", "labels": {"fan": tag}}, "rules": []}).encode()


async def read_line(proc: subprocess.Popen, word: str, seconds: float) -> str:
    """The child's next line, which must start with `word`, without it."""
    with trio.fail_after(seconds):
        line = await trio.to_thread.run_sync(proc.stdout.readline, abandon_on_cancel=True)
    if not line.startswith(word + " "):
        raise RuntimeError(f"watch client {proc.pid} said {line!r}, not {word}")
    return line[len(word) + 1:]


async def write_phase(client: httpx.AsyncClient, tag: str, n: int, rate: float, writers: int) -> dict[str, Any]:
    """Open-loop writes: write i sent at t0 + i/rate by whichever writer task takes it."""
    sent, acked = [math.nan] * n, [math.nan] * n
    failures: list[str] = []
    bodies = [role(tag, str(i)) for i in range(n)]
    counter = itertools.count()
    t0 = time.monotonic() + 0.05

    async def writer() -> None:
        while (i := next(counter)) < n:
            await trio.sleep(max(0.0, t0 + i / rate - time.monotonic()))
            sent[i] = time.monotonic()
            try:
                answer = await client.post(ROLES, content=bodies[i], headers={"Content-Type": "application/json"})
                if answer.status_code == 201:
                    acked[i] = time.monotonic()
                else:
                    failures.append(str(answer.status_code))
            except httpx.HTTPError as exc:
                failures.append(type(exc).__name__)

    with trio.move_on_after(n / rate + WRITE_EXTRA_S):
        async with trio.open_nursery() as nursery:
            for _ in range(writers):
                nursery.start_soon(writer)
    return {"t0": t0, "sent": sent, "acked": acked, "failures": failures}


async def one_run(cwd: Path, work: Path, name: str, args: argparse.Namespace) -> dict[str, Any]:
    """One side's run (see the module docs): its figures."""
    data = work / name
    data.mkdir()
    server = start_server(cwd, data, work / f"{name}.log", args)
    clients: list[subprocess.Popen] = []
    try:
        cfg = load_kubeconfig(data / "admin.kubeconfig")
        ca = work / f"{name}-ca.pem"
        ca.write_bytes(cfg.ca_pem)
        tag, n = f"f{os.urandom(3).hex()}", int(args.rate * args.seconds)
        verify = ssl.create_default_context(cafile=str(ca))
        async with httpx.AsyncClient(base_url=server.url, verify=verify, timeout=30,
                                     limits=httpx.Limits(max_connections=args.writers),
                                     headers={"Authorization": f"Bearer {cfg.token}"}) as client:
            listed = await client.get(ROLES, params={"limit": "1"})
            rv = listed.json()["metadata"]["resourceVersion"]
            # Written before the watches open: watching from rv, each sees it first, whenever it connects.
            (await client.post(ROLES, content=role(tag, "warm"),
                               headers={"Content-Type": "application/json"})).raise_for_status()
            path = f"{ROLES}?watch=1&resourceVersion={rv}&labelSelector=fan%3D{tag}"
            shares = [args.watchers // args.clients + (k < args.watchers % args.clients) for k in range(args.clients)]
            env = dict(os.environ, **{TOKEN_ENV: cfg.token})
            host, port = server.url.removeprefix("https://").rsplit(":", 1)
            for k, count in enumerate(shares):
                cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--host", host,
                       "--port", port, "--ca", str(ca), "--path", path, "--count", str(count),
                       "--writes", str(n), "--tag", tag, "--out", str(work / f"{name}-{k}.bin")]
                clients.append(subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                                env=env))
            began = time.monotonic()
            ready = [int(await read_line(c, "ready", READY_S + 10)) for c in clients]
            ready_s = time.monotonic() - began
            cpu0 = (tree_cpu_seconds(server.proc.pid), sum(tree_cpu_seconds(c.pid) for c in clients),
                    time.process_time())
            writes = await write_phase(client, tag, n, args.rate, args.writers)
        deadline = time.monotonic() + DRAIN_S
        for c in clients:
            c.stdin.write(f"finish {deadline}\n")
            c.stdin.flush()
        dones = [json.loads(await read_line(c, "done", DRAIN_S + 30)) for c in clients]
        cpu1 = (tree_cpu_seconds(server.proc.pid), sum(tree_cpu_seconds(c.pid) for c in clients),
                time.process_time())
    finally:
        for c in clients:
            if c.poll() is None:
                c.kill()
            c.wait()
        server.stop()
    return figures(work, name, args, n, writes, dones, ready, ready_s, [b - a for a, b in zip(cpu0, cpu1)])


def figures(work: Path, name: str, args: argparse.Namespace, n: int, writes: dict[str, Any],
            dones: list[dict[str, Any]], ready: list[int], ready_s: float, cpu: list[float]) -> dict[str, Any]:
    """The run's figures from the writes' stamps and the children's tallies."""
    sent, acked, t0 = writes["sent"], writes["acked"], writes["t0"]
    from_ack, from_sent, last = [], [], -math.inf
    for k in range(args.clients):
        recv = array.array("d")
        recv.frombytes((work / f"{name}-{k}.bin").read_bytes())
        for j, t in enumerate(recv):
            if t == t:  # not NaN: this watcher saw this write
                i = j % n
                last = max(last, t)
                from_sent.append(t - sent[i])
                if acked[i] == acked[i]:  # answered 201: its events are the ones expected
                    from_ack.append(max(0.0, t - acked[i]))
    ok_acks = [a for a in acked if a == a]
    errors: dict[str, int] = {}
    for done in dones:
        for why, count in done["errors"].items():
            errors[why] = errors.get(why, 0) + count
    expected = args.watchers * len(ok_acks)
    return {
        "writes": n, "answered": len(ok_acks), "answered_frac": len(ok_acks) / n,
        "writes_per_s": len(ok_acks) / (max(ok_acks) - t0) if ok_acks else 0.0,
        "delivered": len(from_ack), "expected": expected, "delivered_frac": len(from_ack) / max(1, expected),
        "all_delivered": expected > 0 and len(from_ack) == expected, "events_of_unanswered": len(from_sent) - len(from_ack),
        "ack_p50_ms": pct(from_ack, 50) * 1e3, "ack_p99_ms": pct(from_ack, 99) * 1e3,
        "ack_max_ms": max(from_ack, default=math.nan) * 1e3,
        "sent_p50_ms": pct(from_sent, 50) * 1e3, "sent_p99_ms": pct(from_sent, 99) * 1e3,
        "drain_s": max(0.0, last - max(ok_acks)) if ok_acks and from_sent else math.nan,
        "lag_p99_ms": pct([s - (t0 + i / args.rate) for i, s in enumerate(sent) if s == s], 99) * 1e3,
        "server_cpu_s": cpu[0], "clients_cpu_s": cpu[1], "writer_cpu_s": cpu[2],
        "write_errors": len(writes["failures"]), "write_failures": sorted(set(writes["failures"])),
        "watch_failures": sum(errors.values()), "watch_errors": errors, "watches_ready": sum(ready),
        "ready_s": ready_s, "events_added": sum(d["added"] for d in dones),
        "events_other": sum(d["other"] for d in dones), "duplicates": sum(d["dups"] for d in dones)}


# ---- the report ----------------------------------------------------------------------------------------

def _cell(runs: list[dict[str, Any]], key: str, fmt: str) -> str:
    values = [r[key] for r in runs]
    spread = f" [{fmt.format(min(values))}-{fmt.format(max(values))}]" if len(values) > 1 else ""
    return fmt.format(statistics.median(values)) + spread


def _ratio(runs: dict[str, list[dict[str, Any]]], key: str) -> str:
    now, before = (statistics.median(r[key] for r in runs[side]) for side in ("now", "before"))
    return f"{now / before:.2f}" if before and not math.isnan(before) and not math.isnan(now) else "-"


def report(results: dict[str, Any]) -> list[str]:
    runs = results["sides"]
    cfg = results["config"]
    lines = ["", f"{cfg['watchers']:,} watchers, {cfg['rate']:g} writes/s for {cfg['seconds']:g} s, "
                 f"--workers {cfg['workers']}, {cfg['clients']} client processes, median [min-max] of "
                 f"{cfg['runs']} run(s) per side, before = {results['before']}",
             f"  {'figure':<26} {'before':>24} {'now':>24} {'now/before':>11}"]
    for key, label, fmt in FIGURES:
        lines.append(f"  {label:<26} {_cell(runs['before'], key, fmt):>24} {_cell(runs['now'], key, fmt):>24} "
                     f"{_ratio(runs, key):>11}")
    for side in SIDES:
        every = all(r["all_delivered"] for r in runs[side])
        lines.append(f"  {'every event delivered':<26} {side}: {'yes' if every else 'no'}, "
                     f"{sum(r['delivered'] for r in runs[side]):,} of {sum(r['expected'] for r in runs[side]):,} "
                     "events of answered writes")
    now, rate = runs["now"], cfg["rate"]
    every, p99 = all(r["all_delivered"] for r in now), statistics.median(r["ack_p99_ms"] for r in now)
    kept = all(r["answered"] == r["writes"] and r["writes_per_s"] >= RATE_KEPT * rate for r in now)
    met = every and kept and p99 <= P99_TARGET_MS
    results["target"] = {"rate_kept": kept, "every_event_delivered": every, "ack_p99_ms": p99, "met": met}
    lines += ["", f"target (issue 41): at {rate:g} writes/s every event delivered and p99 after ack <= "
                  f"{P99_TARGET_MS:g} ms: {'met' if met else 'missed'} (now: rate {'kept' if kept else 'NOT kept'}, "
                  f"{'every' if every else 'not every'} event of an answered write delivered, "
                  f"p99 after ack {p99:.1f} ms)"]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--watchers", type=int, default=1000, help=f"watch connections (at most {MAX_WATCHERS})")
    parser.add_argument("--rate", type=float, default=200.0, help="writes per second")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds of writes")
    parser.add_argument("--runs", type=int, default=3, help="runs per side, alternated")
    parser.add_argument("--before", default="18093f9", help="the revision of the code before")
    parser.add_argument("--workers", default="1", help="serve's --workers")
    parser.add_argument("--clients", type=int, default=4, help="watch client processes")
    parser.add_argument("--writers", type=int, default=8, help="concurrent writer tasks")
    parser.add_argument("--quick", action="store_true", help="100 watchers, 50 writes/s, 3 s, 1 run")
    for flag in ("--host", "--ca", "--path", "--tag", "--out"):  # the --child mode's
        parser.add_argument(flag, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--writes", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        trio.run(child, args)
        return 0
    if args.quick:
        args.watchers, args.rate, args.seconds, args.runs = 100, 50.0, 3.0, 1
    args.watchers = max(1, min(args.watchers, MAX_WATCHERS))
    args.clients = max(1, min(args.clients, args.watchers))
    load = os.getloadavg()
    print(f"miniplane watch fan-out benchmark: {args.watchers} watchers, {args.rate:g} writes/s, {args.seconds:g} s, "
          f"{args.runs} run(s) per side, before = {args.before}, cpus {os.cpu_count()}, "
          f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}", flush=True)
    config = {k: getattr(args, k) for k in ("watchers", "rate", "seconds", "runs", "workers", "clients", "writers")}
    results: dict[str, Any] = {"before": args.before, "config": config, "load_before": load[0],
                               "sides": {side: [] for side in SIDES}}
    with tempfile.TemporaryDirectory(prefix="miniplane-fanout-") as tmp:
        work = Path(tmp)
        with before_tree(args.before, work / "before") as before:
            for turn in range(args.runs):
                for side, cwd in (("before", before), ("now", ROOT)):
                    run = trio.run(one_run, cwd, work, f"{side}-{turn}", args)
                    results["sides"][side].append(run)
                    print(f"  {side:<6} run {turn + 1}: {run['answered']}/{run['writes']} writes answered, "
                          f"{run['writes_per_s']:.1f} writes/s, delivered "
                          f"{run['delivered']:,}/{run['expected']:,}, after answer p50 {run['ack_p50_ms']:.1f} "
                          f"p99 {run['ack_p99_ms']:.1f} max {run['ack_max_ms']:.1f} ms, server CPU "
                          f"{run['server_cpu_s']:.1f} s, {run['watches_ready']} watches ready in "
                          f"{run['ready_s']:.1f} s, failed writes {run['write_errors']} {run['write_failures']}, "
                          f"watch failures {run['watch_errors']}", flush=True)
    results["load_after"] = os.getloadavg()[0]
    for line in report(results):
        print(line)
    (BENCH / "results-fanout.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwrote {BENCH / 'results-fanout.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
