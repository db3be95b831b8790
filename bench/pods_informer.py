"""One informer on Pods in a process of its own, as an operator runs one: prints `{"sync_s", "rss_mib", "pods"}`.

Run by `bench_pods.py`: `python bench/pods_informer.py KUBECONFIG`. It lists and watches every Pod through the
runtime's HTTP client (JSON), waits until synced, reports, and exits.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import trio  # noqa: E402

from runtime.client.http import open_http_client  # noqa: E402
from runtime.client.kubeconfig import load_kubeconfig  # noqa: E402
from runtime.controller.informer import Informer  # noqa: E402
from runtime.machinery.scheme import ResourceType  # noqa: E402


def rss_mib() -> float:
    status = Path("/proc/self/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024


async def main(kubeconfig: str) -> None:
    async with open_http_client(load_kubeconfig(kubeconfig)) as client:
        pods = Informer(client, ResourceType.of("v1", "Pod", "pods"))
        began = time.monotonic()
        async with trio.open_nursery() as nursery:
            await nursery.start(pods.run)
            await pods.wait_synced()
            synced = time.monotonic() - began
            print(json.dumps({"sync_s": synced, "rss_mib": rss_mib(), "pods": len(pods.keys())}), flush=True)
            nursery.cancel_scope.cancel()


if __name__ == "__main__":
    trio.run(main, sys.argv[1])
