"""Start benchmark: what `miniplane` costs before it does anything, and how soon a controller reconciles.

Prints, each the median of `--runs` runs (5):
- CPU seconds (user + system, of the child) of `miniplane controllers --help`, `miniplane --help`,
  `miniplane serve --help`, with the ratio to `python -c pass` (the interpreter's own start) and to
  kopf's `kopf --help`, both measured in the same run (issue 40's targets: controllers --help under
  0.5 s of CPU; kopf, 1.2 s);
- the time from starting `miniplane controllers --kubeconfig K --module M` to the first reconcile of a
  tiny module M (a controller of Namespaces: the server's own namespaces reconcile once the informer
  lists), against a `miniplane serve` this script starts on a memory store, with the built-in controllers
  (the default) and with `--builtin false`; and the CPU seconds the controllers' process had used by
  then (target: the first reconcile within 1 s of the start).

The module stamps its first reconcile (wall time and `time.process_time()`) in a file; wall times of the
two processes compare on one machine. Bounded: every child gets 30 s. Run: `python bench/bench_start.py
[--runs N]`. Asserts nothing; figures depend on the machine (2 shared cores here).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from children import ServerChild  # noqa: E402  (bench/ is the script's folder)

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
MINIPLANE = [str(BIN / "miniplane")] if (BIN / "miniplane").exists() else [sys.executable, "-m", "api.cli"]
TIMEOUT = 30.0

#: The tiny controller module: its first reconcile writes "WALL CPU" to $BENCH_START_STAMP, once.
MODULE = textwrap.dedent('''
    import os
    import time

    _stamped = []


    def setup(manager):
        async def reconcile(key):
            if not _stamped:
                _stamped.append(key)
                with open(os.environ["BENCH_START_STAMP"], "w") as f:
                    f.write(f"{time.time()} {time.process_time()}")
            return None

        manager.controller("bench-start").for_(manager.scheme.by_kind("Namespace")).complete(reconcile)
''')


def child_cpu(cmd: list[str]) -> float:
    """CPU seconds (user + system) `cmd` used, run to its end with its output discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=TIMEOUT, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def median_cpu(cmd: list[str], runs: int) -> float:
    return statistics.median(child_cpu(cmd) for _ in range(runs))


def first_reconcile(kubeconfig: Path, module: Path, stamp: Path, builtin: bool, log: Path) -> tuple[float, float]:
    """(seconds from the controllers' start to their first reconcile, CPU seconds they had used by then)."""
    stamp.unlink(missing_ok=True)
    env = {**os.environ, "BENCH_START_STAMP": str(stamp)}
    cmd = [*MINIPLANE, "controllers", "--kubeconfig", str(kubeconfig), "--module", str(module),
           "--builtin", "true" if builtin else "false"]
    with open(log, "a") as out:
        started = time.time()
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=out, stdin=subprocess.DEVNULL)
        try:
            while not (stamp.exists() and stamp.read_text().strip()):
                if proc.poll() is not None or time.time() - started > TIMEOUT:
                    raise RuntimeError(f"no reconcile from {' '.join(cmd)}: see {log}")
                time.sleep(0.005)
        finally:
            proc.terminate()
            proc.wait(TIMEOUT)
    wall, cpu = (float(x) for x in stamp.read_text().split())
    return wall - started, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    python = median_cpu([sys.executable, "-c", "pass"], runs)
    kopf_bin = shutil.which("kopf", path=str(BIN)) or shutil.which("kopf")
    kopf = median_cpu([kopf_bin, "--help"], runs) if kopf_bin else None
    print(f"CPU seconds before anything runs (median of {runs}):")
    print(f"  python -c pass                      {python:6.3f} s")
    print(f"  kopf --help                         " + (f"{kopf:6.3f} s" if kopf else "   (kopf not installed)"))
    for args in (["controllers", "--help"], ["--help"], ["serve", "--help"]):
        cpu = median_cpu([*MINIPLANE, *args], runs)
        vs_kopf = f", {cpu / kopf:4.2f}x kopf's" if kopf else ""
        print(f"  miniplane {' '.join(args):<25} {cpu:6.3f} s  ({cpu / python:4.1f}x python's start{vs_kopf})")

    with tempfile.TemporaryDirectory(prefix="bench-start-") as tmp:
        tmp_path = Path(tmp)
        module, stamp = tmp_path / "bench_start_module.py", tmp_path / "stamp"
        module.write_text(MODULE)
        server = ServerChild([*MINIPLANE, "serve", "--data-dir", str(tmp_path / "data"), "--port", "0",
                              "--store", "memory"], "serving at ", tmp_path / "serve.log")
        try:
            print(f"\nFirst reconcile of a one-controller module after `miniplane controllers` starts "
                  f"(median of {runs}; against a server on {server.url}):")
            for builtin in (True, False):
                times = [first_reconcile(tmp_path / "data" / "admin.kubeconfig", module, stamp, builtin,
                                         tmp_path / "controllers.log") for _ in range(runs)]
                wall = statistics.median(t for t, _ in times)
                cpu = statistics.median(c for _, c in times)
                label = "with the built-in controllers" if builtin else "--builtin false"
                print(f"  {label:<34} {wall:6.3f} s  (worst {max(t for t, _ in times):.3f} s; "
                      f"{cpu:.3f} s of CPU by then)")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
