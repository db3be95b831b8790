"""Running the `miniplane` command as a user does (`python -m api.cli`), and a free port for it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import trio

from api.cli import DEBUG_ENV

ROOT = Path(__file__).resolve().parents[2]


async def miniplane(*args: str, debug_env: bool = False, timeout: float = 60) -> tuple[int, list[str]]:
    """Run `miniplane ARGS` (`python -m api.cli`, as the script); return its exit code and its stderr's lines."""
    env = {k: v for k, v in os.environ.items() if k != DEBUG_ENV}
    if debug_env:
        env[DEBUG_ENV] = "1"
    with trio.fail_after(timeout):
        done = await trio.run_process([sys.executable, "-m", "api.cli", *args], cwd=str(ROOT), env=env, check=False,
                                      stdin=subprocess.DEVNULL, capture_stdout=True, capture_stderr=True)
    return done.returncode, done.stderr.decode().splitlines()


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def read_lines(stream: trio.abc.ReceiveStream, until: str | None = None) -> list[str]:
    """Lines from `stream` up to one starting with `until`, or up to EOF when `until` is None."""
    lines: list[str] = []
    buffer = b""
    while True:
        chunk = await stream.receive_some(4096)
        if not chunk:
            return lines
        buffer += chunk
        *complete, buffer = buffer.split(b"\n")
        for line in complete:
            lines.append(line.decode())
            if until is not None and line.decode().startswith(until):
                return lines
