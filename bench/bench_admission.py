"""Admission's cost: ConfigMap creates per second over HTTPS with 0, 1 and 3 validating webhooks and with one
ValidatingAdmissionPolicy, in one run, beside the bare route's POST (the floor).

Run: `.venv/bin/python bench/bench_admission.py [--n 1000] [--concurrency 16]`. Prints figures; asserts nothing.

The server (`miniplane serve`, sqlite, no controllers) and the webhook server
(`bench/admission_webhook.py`: one HTTPS process that allows everything, the
way a real webhook answers) run as subprocesses; the load runs here. Each
phase creates `n` ConfigMaps with 16 keep-alive clients, after a warm-up; the
webhooks and the policy match ConfigMaps only and are removed before the next
phase. Ratios are to the phase without admission of the same run, and to
the bare route's POST (`bare_route.py`, the same TLS certificate).
"""

from __future__ import annotations

import argparse
import json
import os
import ssl
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

import httpx
import trio

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from runtime.client.kubeconfig import load_kubeconfig  # noqa: E402
from tests.support.serverproc import spawn_server  # noqa: E402

DOMAIN = "svc.io"
ADMISSION = f"/apis/admissionregistration.{DOMAIN}/v1"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
RULES = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}]


async def rate(n: int, concurrency: int, request: Callable[[int], Awaitable[None]]) -> float:
    """Requests per second of `n` calls of `request(i)` over `concurrency` tasks."""
    counter = iter(range(n))

    async def worker() -> None:
        for i in counter:
            await request(i)

    began = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for _ in range(concurrency):
            nursery.start_soon(worker)
    return n / (time.perf_counter() - began)


async def _spawn_line(args: list[str], marker: bytes) -> tuple[trio.Process, bytes]:
    """Start `args`; answer the process and the first stdout line that holds `marker`."""
    proc = await trio.lowlevel.open_process(args, stdout=-1)
    buffer = b""
    with trio.fail_after(60):
        while marker not in buffer or not buffer.split(marker, 1)[1].count(b"\n"):
            chunk = await proc.stdout.receive_some(4096)
            if not chunk:
                raise RuntimeError(f"{args[1]} exited: {buffer.decode(errors='replace')}")
            buffer += chunk
    return proc, buffer.split(marker, 1)[1].split(b"\n", 1)[0].strip()


def webhook_configuration(name: str, hooks: int, url: str, ca_bundle: str) -> dict[str, Any]:
    return {"apiVersion": f"admissionregistration.{DOMAIN}/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": name},
            "webhooks": [{"name": f"allow-{i}.bench.example.com", "rules": RULES, "sideEffects": "None",
                          "admissionReviewVersions": ["v1"], "failurePolicy": "Fail",
                          "clientConfig": {"url": f"{url}/allow-{i}", "caBundle": ca_bundle}}
                         for i in range(hooks)]}


def policy() -> tuple[dict[str, Any], dict[str, Any]]:
    api = f"admissionregistration.{DOMAIN}/v1"
    return ({"apiVersion": api, "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "bench-size"},
             "spec": {"failurePolicy": "Fail", "matchConstraints": {"resourceRules": RULES},
                      "validations": [{"expression": "!has(object.data) || object.data.size() < 100",
                                       "message": "at most 100 keys"}]}},
            {"apiVersion": api, "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "bench-size"},
             "spec": {"policyName": "bench-size", "validationActions": ["Deny"]}})


async def main(n: int, concurrency: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server, url = await spawn_server(tmp, "--store", "sqlite", "--controllers", "false")
        pki = Path(tmp) / "pki"
        hook, hook_line = await _spawn_line([sys.executable, str(BENCH / "admission_webhook.py")], b"webhook at ")
        hook_url, ca_bundle = hook_line.decode().split()
        bare, bare_url = await _spawn_line([sys.executable, str(BENCH / "bare_route.py"), "--cert",
                                            str(pki / "serving.crt"), "--key", str(pki / "serving.key")],
                                           b"bare route at ")
        cfg = load_kubeconfig(Path(tmp) / "admin.kubeconfig")
        ctx = ssl.create_default_context(cadata=cfg.ca_pem.decode())
        limits = httpx.Limits(max_connections=concurrency)
        figures: dict[str, float] = {}
        try:
            async with httpx.AsyncClient(base_url=url, verify=ctx, limits=limits, timeout=60,
                                         headers={"Authorization": f"Bearer {cfg.token}"}) as c, \
                    httpx.AsyncClient(base_url=bare_url.decode(), verify=ctx, limits=limits, timeout=60) as floor:
                print(f"admission benchmark: n={n}, concurrency={concurrency}, cpus={os.cpu_count()}")
                body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "floor"},
                                   "data": {"a": "1"}}).encode()

                async def bare_post(i: int) -> None:
                    assert (await floor.post("/x", content=body)).status_code == 201

                def creates(tag: str) -> Callable[[int], Awaitable[None]]:
                    async def create(i: int) -> None:
                        obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{tag}-{i}"},
                               "data": {"a": "1"}}
                        r = await c.post(CONFIGMAPS, json=obj)
                        assert r.status_code == 201, r.text
                    return create

                async def phase(name: str, setup: list[tuple[str, dict[str, Any]]], tag: str) -> None:
                    for path, obj in setup:
                        r = await c.post(path, json=obj)
                        assert r.status_code == 201, r.text
                    await rate(concurrency * 4, concurrency, creates(f"warm-{tag}"))
                    figures[name] = await rate(n, concurrency, creates(tag))
                    for path, obj in setup:
                        assert (await c.delete(f"{path}/{obj['metadata']['name']}")).status_code == 200

                await rate(concurrency * 4, concurrency, bare_post)
                figures["bare route POST (floor)"] = await rate(n, concurrency, bare_post)
                await phase("create, no admission", [], "none")
                hooks = f"{ADMISSION}/validatingwebhookconfigurations"
                await phase("create, 1 validating webhook", [(hooks, webhook_configuration("one", 1, hook_url,
                                                                                          ca_bundle))], "one")
                await phase("create, 3 validating webhooks", [(hooks, webhook_configuration("three", 3, hook_url,
                                                                                            ca_bundle))], "three")
                vap, binding = policy()
                await phase("create, 1 admission policy", [(f"{ADMISSION}/validatingadmissionpolicies", vap),
                                                           (f"{ADMISSION}/validatingadmissionpolicybindings",
                                                            binding)], "policy")
            none = figures["create, no admission"]
            floor_rate = figures["bare route POST (floor)"]
            for name, value in figures.items():
                print(f"{name:<32} {value:8.0f} req/s   {value / none:5.2f} of no admission   "
                      f"{value / floor_rate:5.2f} of the bare POST")
        finally:
            for proc in (server, hook, bare):
                proc.kill()
                await proc.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    trio.run(main, args.n, args.concurrency)
