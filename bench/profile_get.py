"""What runs in Python for one GET of a cached object: call counts per request and the functions called most.

An in-process control plane (memory store, no controllers) served through the server's own HTTP/1.1 layer
(`api.serving.http1` and its `api.serving.app_exchange` per request, no socket and no TLS: `tests.support.wire`), holding
the ClusterRole `target` and the Role `team/target`. Each GET is sent a few times first (caches warm),
then counted once per scheduling seed of `SEEDS` (`sys.setprofile`: Python calls, a coroutine's resumption
counting as one, and builtin calls; the fewest and the median: trio's scheduler orders a batch of runnable
tasks at random, seeded here, which moves a count by up to a fifth) and once under cProfile (the functions
called most). Counts only:
no clock is read, so a busy machine gives the same figures.

Run: `python bench/profile_get.py [--top N] [--json]`; prints, per GET, its calls and its top functions.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.cached_gets import CLUSTER_ROLE, PROTOBUF, ROLE, get_request, start_cached_gets  # noqa: E402
from tests.support.callcount import count_calls, profile_calls, top_functions  # noqa: E402
from tests.support.wire import open_wire, parse_answer  # noqa: E402

__all__ = ["GETS", "measure", "main"]

#: (name, path, token, Accept) of the GETs measured.
GETS = [
    ("GET clusterrole (alice, RBAC)", CLUSTER_ROLE, "alice-token", "application/json"),
    ("GET role (alice, RBAC)", ROLE, "alice-token", "application/json"),
    ("GET clusterrole protobuf (alice)", CLUSTER_ROLE, "alice-token", PROTOBUF),
    ("GET clusterrole (admin, system:masters)", CLUSTER_ROLE, "root-token", "application/json"),
]
WARM = 5
SEEDS = range(20)


async def measure(top: int) -> list[dict]:
    """Each of `GETS`: {name, status, calls (the fewest), median_calls, builtin_calls (the fewest),
    top: [(calls, function)]}."""
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        async with trio.open_nursery() as nursery:
            srv = await start_cached_gets(nursery, Path(tmp))
            async with open_wire(srv.plane.app) as wire:
                for name, path, token, accept in GETS:
                    raw = get_request(path, token, accept)
                    for _ in range(WARM):
                        await wire.exchange(raw)
                    counts = [await count_calls(lambda: wire.exchange(raw), seed=seed) for seed in SEEDS]
                    stats = await profile_calls(lambda: wire.exchange(raw))
                    calls = sorted(c.calls for c in counts)
                    results.append({"name": name, "status": parse_answer(counts[0].result)[0], "calls": calls[0],
                                    "median_calls": calls[len(calls) // 2],
                                    "builtin_calls": min(c.builtin_calls for c in counts),
                                    "top": top_functions(stats, top)})
            nursery.cancel_scope.cancel()
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--top", type=int, default=25, help="functions listed per GET")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    results = trio.run(measure, args.top)
    if args.json:
        print(json.dumps(results, indent=1))
        return
    for result in results:
        print(f"{result['name']}: {result['status']}, {result['calls']} Python calls per request "
              f"(median {result['median_calls']}), {result['builtin_calls']} builtin calls")
        for calls, function in result["top"]:
            print(f"  {calls:5d}  {function}")
        print()


if __name__ == "__main__":
    main()
