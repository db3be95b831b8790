"""An admission webhook server for `bench_admission.py`: HTTPS on 127.0.0.1, every AdmissionReview allowed.

Run: `python bench/admission_webhook.py`; prints `webhook at URL CA_BUNDLE` (the caBundle a clientConfig takes)
once it serves; SIGTERM stops it. Serves with `tests/support/webhookserver.py`, the tests' webhook server.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.webhookserver import WebhookRequest, start_webhook_server  # noqa: E402


async def allow(request: WebhookRequest) -> dict[str, Any]:
    review = request.json()
    return {"apiVersion": review["apiVersion"], "kind": "AdmissionReview",
            "response": {"uid": review["request"]["uid"], "allowed": True}}


async def main() -> None:
    async with trio.open_nursery() as nursery:
        server = await start_webhook_server(nursery, allow)
        server.requests = _Discard()  # a benchmark keeps no record
        print(f"webhook at {server.url} {server.ca_bundle}", flush=True)


class _Discard(list):
    def append(self, item: Any) -> None:
        pass


if __name__ == "__main__":
    trio.run(main)
