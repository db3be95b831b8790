"""Built-in controllers benchmark: ClusterRole aggregation convergence, and namespace deletion time.

Prints:
- aggregation convergence with 1,000 source ClusterRoles and 50 aggregated
  ClusterRoles (source i is labelled for aggregated role i % 50 and carries
  its own rule, so each aggregated role gathers 20 rules); converged means
  every aggregated role holds exactly the rules `aggregate_rules` computes:
  * initial: all 1,050 roles exist when the built-in controllers start;
    timed from `Manager.run` to convergence;
  * live: the controllers run while the 1,000 sources are created (50
    concurrent writers); timed from the first write to convergence (the
    write time is printed too, as it bounds the figure);
  * relabel: one source moved from one aggregated role to another; the
    median and worst time until both show it, over 20 moves;
- namespace deletion: a namespace holding 10,000 objects (5,000 Roles and
  5,000 RoleBindings) is deleted; timed from the DELETE to the namespace
  being gone, in-process, on the memory store and on SQLite.

Everything runs in this process against a `Registry` with every built-in
controller (`controllers.builtin.builtin_manager`: namespace lifecycle,
aggregation, garbage collector). Run: `python bench/bench_controllers_builtin.py
[--quick]` (--quick: a tenth of the objects). Asserts nothing; figures depend
on the machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import trio  # noqa: E402

from controllers.aggregation import aggregate_rules, same_rules  # noqa: E402
from controllers.builtin import FIELD_MANAGER, builtin_manager  # noqa: E402
from runtime.client.local import LocalClient  # noqa: E402
from runtime.server.registry import Registry  # noqa: E402
from runtime.machinery.scheme import Scheme  # noqa: E402
from runtime.server.storage import open_store  # noqa: E402
from runtime.server.bootstrap import bootstrap as bootstrap_registry
from runtime.controller.testing import ADMIN, wait_for_object  # noqa: E402
from registry_writes import write_all as write_objects  # noqa: E402  (bench/ is the script's folder)

AGGREGATED = 50
SOURCES = 1_000
NAMESPACE_OBJECTS = 10_000
WRITERS = 50
LABEL = "bench.example.com/aggregate-to"


async def open_registry(nursery: trio.Nursery, store: str = "memory", path: str | None = None) -> Registry:
    registry = Registry(await open_store(store, path), Scheme(), history_seconds=600)
    await nursery.start(registry.run)
    await bootstrap_registry(registry)
    return registry


async def start_controllers(nursery: trio.Nursery, registry: Registry) -> None:
    await nursery.start(builtin_manager(LocalClient(registry, ADMIN, field_manager=FIELD_MANAGER)).run)


async def write_all(registry: Registry, objects: list[dict[str, Any]]) -> None:
    await write_objects(registry, ADMIN, objects, WRITERS)


# ---- aggregation ---------------------------------------------------------------------------------

def aggregated_role(scheme: Scheme, j: int) -> dict[str, Any]:
    return {"apiVersion": f"{scheme.rbac_group}/v1", "kind": "ClusterRole", "metadata": {"name": f"agg-{j:02d}"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {LABEL: f"agg-{j:02d}"}}]}}


def source_role(scheme: Scheme, i: int, aggregated: int) -> dict[str, Any]:
    return {"apiVersion": f"{scheme.rbac_group}/v1", "kind": "ClusterRole",
            "metadata": {"name": f"src-{i:04d}", "labels": {LABEL: f"agg-{i % aggregated:02d}"}},
            "rules": [{"apiGroups": ["bench.example.com"], "resources": [f"widgets{i}"], "verbs": ["get"]}]}


def expected_rules(roles: list[dict[str, Any]], names: list[str]) -> dict[str, list[dict[str, Any]]]:
    """What aggregation computes for the aggregated roles `names` from `roles` (pure)."""
    by_name = {r["metadata"]["name"]: r for r in roles}
    return {name: aggregate_rules(by_name[name], roles) for name in names}


def converged(client: LocalClient, expected: dict[str, list[dict[str, Any]]]) -> Callable[[], Awaitable[bool]]:
    """A check: every aggregated role in `expected` holds exactly its expected rules."""
    rt = client.scheme.by_kind("ClusterRole")

    async def check() -> bool:
        for name, rules in expected.items():
            if not same_rules((await client.get(rt, name)).get("rules") or [], rules):
                return False
        return True
    return check


async def wait_until(check: Callable[[], Awaitable[bool]], interval: float = 0.005) -> float:
    while not await check():
        await trio.sleep(interval)
    return time.perf_counter()


async def bench_aggregation_initial(sources: int, aggregated: int) -> None:
    async with trio.open_nursery() as nursery:
        registry = await open_registry(nursery)
        scheme = registry.scheme
        await write_all(registry, [aggregated_role(scheme, j) for j in range(aggregated)]
                        + [source_role(scheme, i, aggregated) for i in range(sources)])
        client = LocalClient(registry, ADMIN)
        names = [f"agg-{j:02d}" for j in range(aggregated)]
        expected = expected_rules((await client.list(scheme.by_kind("ClusterRole"))).items, names)
        began = time.perf_counter()
        await start_controllers(nursery, registry)
        done = await wait_until(converged(client, expected))
        print(f"  initial (all roles exist at start)     {done - began:7.2f} s")
        nursery.cancel_scope.cancel()


async def bench_aggregation_live(sources: int, aggregated: int) -> None:
    async with trio.open_nursery() as nursery:
        registry = await open_registry(nursery)
        scheme = registry.scheme
        await write_all(registry, [aggregated_role(scheme, j) for j in range(aggregated)])
        await start_controllers(nursery, registry)
        client = LocalClient(registry, ADMIN)
        rt = scheme.by_kind("ClusterRole")
        names = [f"agg-{j:02d}" for j in range(aggregated)]
        all_sources = [source_role(scheme, i, aggregated) for i in range(sources)]
        stored = (await client.list(rt)).items
        expected = expected_rules(stored + all_sources, names)
        began = time.perf_counter()
        await write_all(registry, all_sources)
        written = time.perf_counter()
        done = await wait_until(converged(client, expected))
        print(f"  live (sources created while running)   {done - began:7.2f} s  "
              f"(writes took {written - began:.2f} s)")

        times = []
        for move in range(20):
            name = f"src-{move:04d}"
            source, target = f"agg-{move % aggregated:02d}", f"agg-{(move + 1) % aggregated:02d}"
            roles = (await client.list(rt)).items
            moved = next(r for r in roles if r["metadata"]["name"] == name)
            moved["metadata"]["labels"] = {LABEL: target}
            expected = expected_rules(roles, [source, target])  # `moved` is in `roles`, relabelled
            start = time.perf_counter()
            await client.patch(rt, name, {"metadata": {"labels": {LABEL: target}}})
            times.append(await wait_until(converged(client, expected), 0.001) - start)
        print(f"  relabel one source (20 moves)          {statistics.median(times) * 1000:7.1f} ms median, "
              f"{max(times) * 1000:.1f} ms worst")
        nursery.cancel_scope.cancel()


# ---- namespace deletion --------------------------------------------------------------------------

def namespace_content(scheme: Scheme, namespace: str, n: int) -> list[dict[str, Any]]:
    rbac = f"{scheme.rbac_group}/v1"
    objects: list[dict[str, Any]] = []
    for i in range(n // 2):
        objects.append({"apiVersion": rbac, "kind": "Role", "metadata": {"name": f"r{i}", "namespace": namespace},
                        "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}]})
        objects.append({"apiVersion": rbac, "kind": "RoleBinding",
                        "metadata": {"name": f"b{i}", "namespace": namespace},
                        "roleRef": {"apiGroup": scheme.rbac_group, "kind": "ClusterRole", "name": "view"},
                        "subjects": [{"kind": "User", "name": f"u{i}"}]})
    return objects


async def bench_namespace_deletion(n: int, store: str, tmp: Path) -> None:
    path = str(tmp / f"{store}.db") if store == "sqlite" else None
    async with trio.open_nursery() as nursery:
        registry = await open_registry(nursery, store, path)
        scheme = registry.scheme
        namespaces = scheme.by_kind("Namespace")
        client = LocalClient(registry, ADMIN)
        await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "big"}})
        filled = time.perf_counter()
        await write_all(registry, namespace_content(scheme, "big", n))
        filled = time.perf_counter() - filled
        await start_controllers(nursery, registry)
        began = time.perf_counter()
        await client.delete(namespaces, "big")
        await wait_for_object(client, namespaces, "big", lambda o: o is None)
        took = time.perf_counter() - began
        print(f"  {store:<7} {n:,} objects               {took:7.2f} s  ({n / took:,.0f} objects/s; "
              f"filling took {filled:.2f} s)")
        nursery.cancel_scope.cancel()


async def main(quick: bool) -> None:
    scale = 10 if quick else 1
    sources, objects = SOURCES // scale, NAMESPACE_OBJECTS // scale
    print(f"ClusterRole aggregation: {sources:,} source roles, {AGGREGATED} aggregated roles")
    await bench_aggregation_initial(sources, AGGREGATED)
    await bench_aggregation_live(sources, AGGREGATED)
    print("Namespace deletion (delete to gone)")
    with tempfile.TemporaryDirectory() as tmp:
        for store in ("memory", "sqlite"):
            await bench_namespace_deletion(objects, store, Path(tmp))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the objects")
    trio.run(main, parser.parse_args().quick)
