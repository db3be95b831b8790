"""Encryption at rest: create and get rates of a 1 KiB and a 512 KiB Secret, without and with encryption, in one run.

Run: `.venv/bin/python bench/bench_encryption.py [--store sqlite|memory] [--seconds 1.5]`. Prints figures;
asserts nothing. Two levels, each phase bounded by `--seconds` (or its count of objects):

- store: the raw store (the baseline) and `EncryptingStore` over it with each provider (aesgcm, aescbc,
  secretbox): what sealing and opening cost per write and per read;
- API: an in-process server (ASGI, no TLS) without and with `--encryption-provider-config` (aesgcm first):
  creates and GETs of Secrets whose data is the payload. A GET is served from the watch cache (plaintext):
  encryption costs it nothing; a create seals once.
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Awaitable, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import trio  # noqa: E402

from runtime.machinery.storedobject import ObjectEncoder  # noqa: E402
from runtime.server.storage import MemoryStore, Store  # noqa: E402
from runtime.server.storage.encryption import EncryptingStore, parse_config  # noqa: E402
from runtime.server.storage.sqlite.store import SqliteStore  # noqa: E402
from tests.support.server import start_in_process  # noqa: E402

SIZES = {"1 KiB": 1024, "512 KiB": 512 * 1024}
#: Most objects a phase writes (then reads), per size: bounded in time by --seconds too.
MOST = {"1 KiB": 2000, "512 KiB": 100}
KEY = base64.b64encode(b"k" * 32).decode()
SECRETS = "/api/v1/namespaces/default/secrets"


def config_text(provider: str) -> str:
    return (f'{{"apiVersion": "apiserver.config.k8s.io/v1", "kind": "EncryptionConfiguration", "resources": '
            f'[{{"resources": ["serviceaccounts", "secrets"], "providers": '
            f'[{{"{provider}": {{"keys": [{{"name": "key1", "secret": "{KEY}"}}]}}}}, {{"identity": {{}}}}]}}]}}')


async def rate(n: int, seconds: float, op: Callable[[int], Awaitable[object]]) -> tuple[float, int]:
    """(ops/s, ops done): `op(0..)` in order until `n` are done or `seconds` have passed."""
    start = time.perf_counter()
    done = 0
    while done < n and (done < 3 or time.perf_counter() - start < seconds):
        await op(done)
        done += 1
    return done / (time.perf_counter() - start), done


def payload(size: int) -> dict:
    """A Secret whose data holds `size` bytes (random: nothing for a compressor to find)."""
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"namespace": "default"}, "type": "Opaque",
            "data": {"payload": base64.b64encode(os.urandom(size)).decode()}}


#: The baseline of each row: (row kind, size) -> (create/s, get/s) of the raw store / the API without encryption.
BASELINE: dict[tuple[str, str], tuple[float, float]] = {}


def report(row: str, label: str, size_name: str, made: float, got: float, baseline: bool) -> None:
    """One row, with its ratio to the baseline of its kind measured in this run (the first row of a size)."""
    if baseline:
        BASELINE[(row, size_name)] = (made, got)
    base_made, base_got = BASELINE[(row, size_name)]
    print(f"{row:<6} {label:<18} {size_name:>8}   create {made:8.0f}/s ({made / base_made:4.2f})"
          f"   get {got:9.0f}/s ({got / base_got:4.2f})")


async def bench_store(label: str, store: Store, size_name: str, seconds: float) -> None:
    obj = payload(SIZES[size_name])
    prefix = f"/core/serviceaccounts/default/{label}-{size_name.replace(' ', '')}-"

    async def create(i: int) -> None:
        await store.create(f"{prefix}{i}", ObjectEncoder({**obj, "metadata": {"name": str(i)}}))

    made, done = await rate(MOST[size_name], seconds, create)

    async def get(i: int) -> None:
        entry = await store.get(f"{prefix}{i % done}")
        assert entry is not None and entry.value[:1] == b"{"

    got, _ = await rate(MOST[size_name] * 5, seconds, get)
    report("store", label, size_name, made, got, baseline=label.startswith("raw"))


async def open_raw(kind: str, tmp: Path, name: str) -> Store:
    return MemoryStore() if kind == "memory" else await SqliteStore.open(str(tmp / f"{name}.db"))


async def bench_api(nursery: trio.Nursery, tmp: Path, store: str, label: str, config: str | None,
                    seconds: float) -> None:
    options = {"encryption_provider_config": config} if config else {}
    srv = await start_in_process(nursery, tmp / label, store=store, **options)
    async with srv.client() as c:
        for size_name, size in SIZES.items():
            obj = payload(size)
            tag = size_name.replace(" ", "").lower()

            async def create(i: int) -> None:
                r = await c.post(SECRETS, json={**obj, "metadata": {"name": f"{tag}-{i}"}})
                assert r.status_code == 201, r.text[:200]

            made, done = await rate(MOST[size_name], seconds, create)

            async def get(i: int) -> None:
                assert (await c.get(f"{SECRETS}/{tag}-{i % done}")).status_code == 200

            got, _ = await rate(MOST[size_name] * 5, seconds, get)
            report("API", label, size_name, made, got, baseline=config is None)


async def main(store: str, seconds: float) -> None:
    print(f"encryption at rest benchmark: store={store}, at most {seconds} s a phase, cpus={os.cpu_count()};"
          " (ratio): to the raw store's row (store rows) or the API's without encryption (API rows), this run")
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for size_name in SIZES:
            raw = await open_raw(store, tmp, f"raw-{size_name[0]}")
            await bench_store("raw (baseline)", raw, size_name, seconds)
            await raw.aclose()
            for provider in ("aesgcm", "aescbc", "secretbox"):
                raw = await open_raw(store, tmp, f"{provider}-{size_name[0]}")
                sealed = EncryptingStore(raw, parse_config(config_text(provider), "svc.io"))
                await bench_store(provider, sealed, size_name, seconds)
                await sealed.aclose()
        path = tmp / "enc.json"
        path.write_text(config_text("aesgcm"))
        async with trio.open_nursery() as nursery:
            await bench_api(nursery, tmp, store, "plain", None, seconds)
            await bench_api(nursery, tmp, store, "aesgcm", str(path), seconds)
            nursery.cancel_scope.cancel()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", choices=("sqlite", "memory"), default="sqlite")
    parser.add_argument("--seconds", type=float, default=1.5)
    args = parser.parse_args()
    trio.run(main, args.store, args.seconds)
