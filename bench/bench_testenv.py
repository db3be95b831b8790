"""Test env benchmark: how soon `open_test_env` serves, in process and over HTTPS, and what a test costs in a
session-scoped env.

Prints, each the median of `--runs` runs (20) after one warm-up run (a test suite imports once):
- start to serving in process: `open_test_env()` entered to yielded (bootstrap, the built-in controllers
  running and the aggregated ClusterRoles filled), and with `controllers=False` (issue 40's target:
  under 0.1 s);
- start to serving over HTTPS: `open_test_env(https=True)` entered to yielded (a fresh CA and serving
  certificate, the app listening, the kubeconfig written), then to its first answer over HTTPS (an
  `HTTPClient` list of namespaces) (target: under 0.3 s);
- per-test overhead in a session-scoped env (`threaded_test_env`, as the plugin's
  `miniplane_session_*` fixtures do per test): a trio run of its own, an `HTTPClient`, a fresh namespace
  and its deletion; beside a function-scoped env per test, in process and over HTTPS (the same
  namespace work included), with the ratios;
- once, in a fresh interpreter: the seconds importing the env (`runtime.controller.testing`) and the
  HTTPS server (`api.testserver`) take, which the first env of a process pays.

Ratios are to the targets (below 1: met) and to envtest's 5 s (its lower start, issue 40). Bounded: every
env start has 30 s (trio.fail_after), the import child 60 s. Run: `python bench/bench_testenv.py [--runs N]`.
Asserts nothing; figures depend on the machine (2 shared cores here).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Awaitable, Callable

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from runtime.controller.testing import (drop_namespace, fresh_namespace, open_test_env,  # noqa: E402
                                        threaded_test_env)

ROOT = Path(__file__).resolve().parents[1]
BOUND = 30.0
IN_PROCESS_TARGET, HTTPS_TARGET, ENVTEST = 0.1, 0.3, 5.0


def median_of(runs: int, once: Callable[[], Awaitable[float]]) -> float:
    """The median of `runs` figures of `once` (each in a trio run of its own), after one warm-up."""
    async def bounded() -> float:
        with trio.fail_after(BOUND):
            return await once()
    trio.run(bounded)
    return statistics.median(trio.run(bounded) for _ in range(runs))


async def to_serving(**options) -> float:
    start = time.perf_counter()
    async with open_test_env(**options):
        return time.perf_counter() - start


async def to_first_https_answer() -> float:
    start = time.perf_counter()
    async with open_test_env(https=True) as env:
        async with env.http_client() as http:
            await http.list(http.scheme.namespace_type)
        return time.perf_counter() - start


async def function_env_test(https: bool) -> float:
    """A test with a function-scoped env: the env, a fresh namespace in it, its deletion."""
    start = time.perf_counter()
    async with open_test_env(https=https) as env:
        client = env.client
        await drop_namespace(client, await fresh_namespace(client))
        return time.perf_counter() - start


def session_env_test(served) -> Callable[[], Awaitable[float]]:
    async def once() -> float:
        start = time.perf_counter()
        async with served.http_client() as http:
            await drop_namespace(http, await fresh_namespace(http))
        return time.perf_counter() - start
    return once


def import_seconds() -> float:
    script = ("import time; t = time.perf_counter(); import runtime.controller.testing, api.testserver; "
              "print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         check=True)
    return float(out.stdout.strip())


def line(label: str, seconds: float, target: float | None = None) -> None:
    ratios = f"  {seconds / target:5.2f}x target {target:.1f} s" if target else ""
    print(f"  {label:<58} {seconds * 1000:8.1f} ms{ratios}  ({ENVTEST / seconds:6.0f}x faster than envtest's 5 s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    print(f"test env, median of {runs} runs (after one warm-up):")
    print("start to serving, in process")
    line("open_test_env() (built-in controllers, roles aggregated)", median_of(runs, to_serving), IN_PROCESS_TARGET)
    line("open_test_env(controllers=False)", median_of(runs, lambda: to_serving(controllers=False)),
         IN_PROCESS_TARGET)
    print("start to serving, over HTTPS")
    https = median_of(runs, lambda: to_serving(https=True))
    line("open_test_env(https=True)", https, HTTPS_TARGET)
    line("  ... to its first answer over HTTPS (HTTPClient list)", median_of(runs, to_first_https_answer),
         HTTPS_TARGET)
    print("per test")
    local = median_of(runs, lambda: function_env_test(False))
    served_https = median_of(runs, lambda: function_env_test(True))
    with threaded_test_env() as served:
        session = median_of(runs, session_env_test(served))
    line("function-scoped env, in process (+ namespace, deleted)", local)
    line("function-scoped env, over HTTPS (+ namespace, deleted)", served_https)
    line("session-scoped env: trio run, HTTPClient, namespace, deleted", session)
    print(f"  session-scoped per test / function-scoped in process: {session / local:5.2f}; "
          f"/ function-scoped over HTTPS: {session / served_https:5.2f}")
    print(f"imports, once per process (fresh interpreter): {import_seconds():.2f} s "
          "(runtime.controller.testing + api.testserver)")


if __name__ == "__main__":
    main()
