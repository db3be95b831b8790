"""`miniplane serve` as a child process shared by a whole test module (one server, many tests).

Contract: `with served(data_dir, *args) as server:` starts `miniplane serve
--data-dir DATA_DIR --port 0 ARGS...`, blocks until it prints the URL it
serves, and yields a `Server` (url, data directory, admin kubeconfig and
token, domain, CA); on leaving it stops the server (SIGTERM, then SIGKILL
after 30 s). Synchronous, so a `scope="module"` fixture can hold it
(pytest-trio's fixtures live one test). Raises AssertionError, with the end
of the server's log, if it exits before serving.

Caveats: the tests of the module share the server's objects; each names its
own.
"""

from __future__ import annotations

import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from runtime.client.kubeconfig import load_kubeconfig
from tests.support.server import Server

__all__ = ["served"]

ROOT = Path(__file__).resolve().parents[2]


def _domain(args: tuple[str, ...]) -> str:
    return args[args.index("--api-domain") + 1] if "--api-domain" in args else "svc.io"


@contextmanager
def served(data_dir: Path, *args: str) -> Iterator[Server]:
    """A `miniplane serve` process for the block (see the module docstring)."""
    log_path = data_dir.parent / f"{data_dir.name}.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "api.cli", "serve", "--data-dir", str(data_dir),
                                 "--port", "0", *args], stdout=subprocess.PIPE, stderr=log,
                                stdin=subprocess.DEVNULL, cwd=str(ROOT))
        try:
            assert proc.stdout is not None
            for line in proc.stdout:  # ends when the server exits
                if b"serving at " in line:
                    url = line.split(b"serving at ", 1)[1].decode().strip()
                    break
            else:
                raise AssertionError(f"server exited early ({proc.wait()}): {log_path.read_text()[-4000:]}")
            kubeconfig = data_dir / "admin.kubeconfig"
            config = load_kubeconfig(kubeconfig)
            yield Server(url, data_dir, kubeconfig, config.token or "", _domain(args), ca_pem=config.ca_pem)
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
