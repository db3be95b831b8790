"""`miniplane serve` as a child process, for crash tests, restart tests and benchmarks."""

from __future__ import annotations

import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import trio

from runtime.kubeconfig import load_kubeconfig

ROOT = Path(__file__).resolve().parents[2]

__all__ = ["spawn_server", "admin_client"]


async def spawn_server(data_dir: Path | str, *args: str, timeout: float = 60) -> tuple[trio.Process, str]:
    """Start `miniplane serve --data-dir DATA_DIR --port 0 ARGS...`; return (process, URL) once it serves.

    The URL is read from the line the server prints; its admin kubeconfig is
    `DATA_DIR/admin.kubeconfig`. Raises AssertionError if the server exits first.
    """
    proc = await trio.lowlevel.open_process(
        [sys.executable, "-m", "api.cli", "serve", "--data-dir", str(data_dir), "--port", "0", *args],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=str(ROOT))
    assert proc.stdout is not None
    buffer = b""
    with trio.fail_after(timeout):
        while b"serving at " not in buffer or not buffer.endswith(b"\n"):
            chunk = await proc.stdout.receive_some(4096)
            if not chunk:
                raise AssertionError(f"server exited early: {buffer!r}")
            buffer += chunk
    return proc, buffer.split(b"serving at ", 1)[1].split(b"\n", 1)[0].decode().strip()


def admin_client(data_dir: Path | str, url: str, *, timeout: float = 10) -> httpx.AsyncClient:
    """An httpx client of the server in `data_dir`: its CA trusted, its admin token sent."""
    cfg = load_kubeconfig(Path(data_dir) / "admin.kubeconfig")
    ctx = ssl.create_default_context(cadata=cfg.ca_pem.decode())
    return httpx.AsyncClient(base_url=url, verify=ctx, headers={"Authorization": f"Bearer {cfg.token}"},
                             timeout=timeout)
