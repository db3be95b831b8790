"""The real kubectl, run against a test's server.

Contract: `Kubectl(server, cache_dir)` is awaitable with kubectl's
arguments (`await kubectl("get", "roles", "-A")`); it runs `KUBECTL` with
the server's admin kubeconfig, its own discovery cache and a 30 s request
timeout (`env` adds environment variables, e.g. `KUBE_EDITOR`), and returns
a `Result` (exit code, stdout, stderr). With
`check=True` (the default) a non-zero exit raises AssertionError with
kubectl's output. `KUBECTL` is the kubectl on PATH (else /usr/bin/kubectl).
kubectl is another process: the server must be a real HTTPS one
(`tests.support.server.start_server`). `await read_until(stream, needle,
seen)` reads a running kubectl's output (`seen` collects it) until it holds
`needle`, for `get --watch`.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

import trio

from tests.support.server import Server

__all__ = ["KUBECTL", "Kubectl", "Result", "read_until"]

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"


@dataclass
class Result:
    code: int
    out: str
    err: str


@dataclass
class Kubectl:
    server: Server
    cache_dir: str

    async def __call__(self, *args: str, stdin: bytes | None = None, check: bool = True,
                       env: dict[str, str] | None = None) -> Result:
        cmd = [KUBECTL, "--kubeconfig", str(self.server.kubeconfig), "--cache-dir", self.cache_dir,
               "--request-timeout", "30s", *args]
        proc = await trio.run_process(cmd, stdin=stdin, capture_stdout=True, capture_stderr=True, check=False,
                                      env={**os.environ, **env} if env else None)
        result = Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())
        if check and result.code != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.code}): {result.err}{result.out}")
        return result


async def read_until(stream: trio.abc.ReceiveStream, needle: str, seen: list[str]) -> None:
    """Read `stream` into `seen` until the text holds `needle`. Raises AssertionError if it ends first."""
    while needle not in "".join(seen):
        chunk = await stream.receive_some(65536)
        if not chunk:
            raise AssertionError(f"kubectl ended before printing {needle!r}: {''.join(seen)!r}")
        seen.append(chunk.decode())
