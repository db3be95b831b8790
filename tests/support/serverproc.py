"""`miniplane serve` as a child process, for crash tests, restart tests and benchmarks.

`spawn_server` starts one and returns once it serves; `spawn_workers` starts
`miniplane serve --workers N` and also returns the workers' pids (what the
parent prints); `worker_pids(parent)` lists its live workers now, and
`wait_exited(pid)` waits for any process (a child or not) to end.

`controllers_process(kubeconfig, module, log)` runs `miniplane controllers
--module MODULE --builtin false` for a block (killed if it outlives it), and
`stop_cleanly(process, log)` signals it and asserts it exits 0.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from contextlib import asynccontextmanager
from pathlib import Path
from typing import AsyncIterator

import httpx
import trio

from runtime.client.kubeconfig import load_kubeconfig, ssl_context

ROOT = Path(__file__).resolve().parents[2]

__all__ = ["spawn_server", "spawn_workers", "worker_pids", "wait_exited", "admin_client",
           "controllers_process", "stop_cleanly"]


async def _spawn(data_dir: Path | str, args: tuple[str, ...], until: bytes, timeout: float,
                 wrapper: tuple[str, ...] = ()) -> tuple[trio.Process, bytes]:
    # The server's log goes to an unlinked file: read back only when it exits before serving, to say why.
    with tempfile.TemporaryFile() as log:
        proc = await trio.lowlevel.open_process(
            [*wrapper, sys.executable, "-m", "api.cli", "serve", "--data-dir", str(data_dir), "--port", "0", *args],
            stdout=subprocess.PIPE, stderr=log, cwd=str(ROOT))
        assert proc.stdout is not None
        buffer = b""
        with trio.fail_after(timeout):
            while until not in buffer or not buffer.split(until, 1)[1].count(b"\n"):
                chunk = await proc.stdout.receive_some(4096)
                if not chunk:
                    log.seek(0)
                    raise AssertionError(f"server exited early (code {await proc.wait()}): {buffer!r}; its log "
                                         f"ends: {log.read()[-4000:].decode(errors='replace')}")
                buffer += chunk
    return proc, buffer


async def spawn_server(data_dir: Path | str, *args: str, timeout: float = 60, wrapper: tuple[str, ...] = ()
                       ) -> tuple[trio.Process, str]:
    """Start `miniplane serve --data-dir DATA_DIR --port 0 ARGS...`; return (process, URL) once it serves.

    The URL is read from the line the server prints; its admin kubeconfig is
    `DATA_DIR/admin.kubeconfig`. `wrapper`: a command that runs the server
    (it ends by exec-ing its arguments; see `tests.support.smalldisk`).
    Raises AssertionError if the server exits first.
    """
    proc, buffer = await _spawn(data_dir, args, b"serving at ", timeout, wrapper)
    return proc, buffer.split(b"serving at ", 1)[1].split(b"\n", 1)[0].decode().strip()


async def spawn_workers(data_dir: Path | str, count: int, *args: str, timeout: float = 120
                        ) -> tuple[trio.Process, str, list[int]]:
    """`spawn_server` with `--workers COUNT`; returns (the parent, URL, the workers' pids by index)."""
    proc, buffer = await _spawn(data_dir, ("--workers", str(count), *args), b" workers: ", timeout)
    url = buffer.split(b"serving at ", 1)[1].split(b"\n", 1)[0].decode().strip()
    pids = [int(p) for p in buffer.split(b" workers: ", 1)[1].split(b"\n", 1)[0].split()]
    assert len(pids) == count, buffer
    return proc, url, pids


def worker_pids(parent: int) -> list[int]:
    """The live child processes of `parent` (Linux: /proc/PID/task/PID/children)."""
    children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
    return [int(pid) for pid in children]


async def wait_exited(pid: int) -> None:
    """Wait until process `pid` (any process of ours, child or not) has ended: a pidfd reads ready."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        await trio.lowlevel.wait_readable(fd)
    finally:
        os.close(fd)


def admin_client(data_dir: Path | str, url: str, *, timeout: float = 10, kubeconfig: Path | None = None
                 ) -> httpx.AsyncClient:
    """An httpx client of the server in `data_dir`: its CA trusted, its admin token sent.

    `kubeconfig`: where the server wrote its admin kubeconfig, when not in `data_dir`.
    """
    cfg = load_kubeconfig(kubeconfig or Path(data_dir) / "admin.kubeconfig")
    return httpx.AsyncClient(base_url=url, verify=ssl_context(cfg), headers={"Authorization": f"Bearer {cfg.token}"},
                             timeout=timeout)


def _miniplane() -> list[str]:
    """The installed `miniplane` command, else the module it runs."""
    miniplane = Path(sys.executable).parent / "miniplane"
    return [str(miniplane)] if miniplane.exists() else [sys.executable, "-m", "api.cli"]


@asynccontextmanager
async def controllers_process(kubeconfig: Path, module: str | Path, log: Path, *,
                              piped_stdout: bool = False) -> AsyncIterator[trio.Process]:
    """`miniplane controllers` running `module` (no built-in controllers) against `kubeconfig` for the block;
    its output in `log` (its stdout a pipe instead with `piped_stdout`); killed if it outlives the block."""
    with log.open("wb") as out:
        process = await trio.lowlevel.open_process(
            [*_miniplane(), "controllers", "--kubeconfig", str(kubeconfig), "--module", str(module),
             "--builtin", "false"], cwd=str(ROOT), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if piped_stdout else out, stderr=out)
        try:
            yield process
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()


async def stop_cleanly(process: trio.Process, log: Path, signum: int = signal.SIGTERM) -> None:
    """Send `signum` and wait (at most 30 s) for the process to exit 0; its log says why it did not."""
    process.send_signal(signum)
    with trio.fail_after(30):
        code = await process.wait()
    assert code == 0, log.read_text()
