"""A real etcd for tests: a child process on free loopback ports with its own data directory.

Contract: `EtcdServer(data_dir)` picks free client and peer ports; `start()`
launches etcd (returns at once), `await wait_healthy()` waits until its
`/health` answers (bounded by `trio.fail_after`; the only polling allowed in
tests: a real child process becoming ready), `stop()` terminates it and
waits for it to exit. The same object can start again on the same ports and
data (a restart). `start_etcd(data_dir)` does both from synchronous code (a
session fixture), `etcd_binary()` finds the binary.

etcd comes from Debian's `etcd-server`, installed by `make etcd` (a
prerequisite of `make test`); `MINIPLANE_ETCD` may name another binary. When
there is none, `etcd_binary()` raises EtcdNotFound saying so, and tests that
need etcd fail with that reason: they are never skipped.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import httpx
import trio

__all__ = ["EtcdServer", "EtcdNotFound", "etcd_binary", "start_etcd"]


class EtcdNotFound(RuntimeError):
    """No etcd binary: `make etcd` installs Debian's etcd-server."""


def etcd_binary() -> str:
    """The etcd binary to run: $MINIPLANE_ETCD, else `etcd` on PATH. Raises EtcdNotFound."""
    named = os.environ.get("MINIPLANE_ETCD")
    if named:
        if not os.access(named, os.X_OK):
            raise EtcdNotFound(f"MINIPLANE_ETCD={named} is not an executable")
        return named
    found = shutil.which("etcd") or next(
        (p for p in ("/usr/bin/etcd", "/usr/local/bin/etcd") if os.access(p, os.X_OK)), None)
    if found is None:
        raise EtcdNotFound("etcd is not installed: run `make etcd` (apt-get install etcd-server), "
                           "or set MINIPLANE_ETCD to an etcd binary")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class EtcdServer:
    """One etcd member serving http://127.0.0.1:<port>, its data under `data_dir`."""

    def __init__(self, data_dir: Path, *, binary: str | None = None) -> None:
        self.binary = binary or etcd_binary()
        self.data_dir = Path(data_dir)
        self.client_port = _free_port()
        self.peer_port = _free_port()
        self.log_path = self.data_dir.with_name(self.data_dir.name + ".log")
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        """`127.0.0.1:PORT`, as `EtcdStore.open` and `etcd://` URLs take it."""
        return f"127.0.0.1:{self.client_port}"

    @property
    def url(self) -> str:
        return f"http://{self.endpoint}"

    def start(self) -> None:
        """Launch etcd; returns at once (see wait_healthy)."""
        assert self._proc is None or self._proc.poll() is not None, "already running"
        peer = f"http://127.0.0.1:{self.peer_port}"
        log = open(self.log_path, "ab")
        try:
            self._proc = subprocess.Popen(
                [self.binary, "--name", "test", "--data-dir", str(self.data_dir),
                 "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
                 "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                 "--initial-cluster", f"test={peer}", "--log-level", "warn"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        finally:
            log.close()  # the child keeps its own descriptor

    async def wait_healthy(self, timeout: float = 60) -> None:
        """Wait until etcd answers `/health` with true. Raises AssertionError if it exits first."""
        async with httpx.AsyncClient(timeout=2, trust_env=False) as http:
            with trio.fail_after(timeout):
                while True:
                    if self._proc is None or self._proc.poll() is not None:
                        raise AssertionError(f"etcd exited early; its log:\n{self.log_tail()}")
                    try:
                        resp = await http.get(self.url + "/health")
                        if resp.status_code == 200 and resp.json().get("health") == "true":
                            return
                    except httpx.TransportError:
                        pass
                    await trio.sleep(0.05)  # a child process becoming ready: nothing to wait on

    def stop(self) -> None:
        """Terminate etcd (SIGTERM, then SIGKILL after 10 s) and wait for it to exit."""
        if self._proc is None or self._proc.poll() is not None:
            return
        self._proc.terminate()
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


def start_etcd(data_dir: Path, *, timeout: float = 60) -> EtcdServer:
    """Start etcd from synchronous code and wait until it is healthy. Raises EtcdNotFound."""
    server = EtcdServer(data_dir)
    server.start()
    try:
        trio.run(server.wait_healthy, timeout)
    except BaseException:
        server.stop()
        raise
    return server
