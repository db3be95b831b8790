"""`miniplane serve` as a process: what it sets up for itself once serving (see `api.serving.gc_tuning`)."""

from __future__ import annotations

from tests.support.serverproc import admin_client, spawn_server


def _gauge(exposition: str, name: str) -> float:
    return next(float(line.split()[-1]) for line in exposition.splitlines() if line.startswith(name + " "))


async def test_a_serving_process_has_frozen_what_start_up_built(tmp_path):
    data_dir = tmp_path / "data"
    proc, url = await spawn_server(data_dir, "--store", "sqlite")
    try:
        async with admin_client(data_dir, url) as client:
            resp = await client.get("/metrics")
            assert resp.status_code == 200
            # Start-up built the caches with the collector paused, then froze them (tens of thousands of
            # objects even empty: modules, the bootstrap policy, the caches).
            assert _gauge(resp.text, "python_gc_frozen_objects") > 10_000
            assert 'python_gc_collections_total{generation="0"}' in resp.text
    finally:
        proc.terminate()
        await proc.wait()
