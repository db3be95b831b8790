"""`miniplane serve --workers N`: N processes serving one port over one store, and the parent that keeps them.

Contract of `run_workers(options, run_worker)` (the parent; returns its exit status):

- It prepares the data directory (PKI, admin token, continue-token key:
  made once, here, so workers never race to make them), binds the
  listening socket, and forks N workers; each runs `run_worker(options)`
  with `options.worker` set (`api.assembly.WorkerSpec`: the socket, its ready
  pipe, a lifeline pipe and, for SQLite, its peer links, all inherited).
- All start at once; worker 0 (the primary: bootstrap, compactor, built-in
  controllers) serves first, the others get ready (store, watch cache)
  meanwhile and serve once it does, so that none serves a store the
  bootstrap has not reached. When all serve, the parent writes the admin
  kubeconfig and prints `miniplane serving at URL` and the workers' pids.
- A worker that exits while the parent runs (killed with -9, crashed) is
  forked again with the same index, slot and sockets; one that keeps dying
  at once is restarted after a growing delay (up to `MAX_RESTART_DELAY`).
- SIGTERM or SIGINT to the parent: it sends SIGTERM to every worker, waits
  `STOP_GRACE` seconds for them to stop cleanly, kills the rest and returns
  0. Workers are in their own process group (a terminal's Ctrl-C reaches
  only the parent, which stops them in order) and stop by themselves when
  the parent dies (their lifeline pipe reads end-of-file).

Why fork, and a parent without trio: a forked worker starts with the
server's modules already imported (importing them takes 2 s on an idle
2-core machine, 12 s on a loaded one), and forking is safe only from a
process with no threads and no running event loop. The parent is a small
loop over select(2): the signals it handles (SIGCHLD, SIGTERM, SIGINT) and
the workers' ready pipes are all file descriptors there.

Why one inherited socket and not SO_REUSEPORT: the port stays bound while a
worker restarts (with SO_REUSEPORT connections the kernel queued on a dead
worker's socket are reset), `--port 0` needs no coordination, and it is how
Gunicorn's and Hypercorn's own workers share a port. The kernel gives each
new connection to one accepting worker; a connection stays with it.
"""

from __future__ import annotations

import logging
import os
import select
import signal
import socket
import sys
import threading
import time
import traceback
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from api import certs
from api.assembly import ServeOptions, WorkerSpec, peer_group, prepare_data_dir
from api.serving.server import ListenError
from runtime.client.kubeconfig import write_kubeconfig

__all__ = ["run_workers", "resolve_workers", "STOP_GRACE", "MAX_RESTART_DELAY"]

log = logging.getLogger("miniplane.workers")

#: Seconds workers get to stop after SIGTERM before they are killed.
STOP_GRACE = 30.0
#: Longest wait before restarting a worker that keeps dying at start.
MAX_RESTART_DELAY = 5.0
#: A worker that ran this long before dying is restarted at once.
_HEALTHY_RUN = 10.0
_BACKLOG = 1024
_SIGNALS = (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT)


def resolve_workers(text: str) -> int:
    """`--workers`: a positive count, or `auto` (the cores this process may run on). Raises ValueError."""
    if text == "auto":
        return len(os.sched_getaffinity(0))
    try:
        count = int(text)
    except ValueError:
        raise ValueError(f"--workers: expected a positive number or auto, got {text!r}") from None
    if count < 1:
        raise ValueError(f"--workers: expected a positive number or auto, got {text!r}")
    return count


def _listen(options: ServeOptions) -> socket.socket:
    family = socket.AF_INET6 if ":" in options.bind else socket.AF_INET
    try:
        sock = socket.create_server((options.bind, options.port), family=family, backlog=_BACKLOG)
    except OSError as exc:  # as one server says it (api.serving.server)
        host = options.bind if ":" not in options.bind else f"[{options.bind}]"
        raise ListenError.of(exc, f"{host}:{options.port}") from exc
    sock.set_inheritable(True)
    return sock


@dataclass
class _Worker:
    """One worker slot and its current process."""

    index: int
    pid: int = 0
    started: float = 0.0
    ready_fd: int = -1  # the read end of its ready pipe while it gets ready
    ready_line: bytes = b""
    url: str = ""
    restart_at: float | None = None  # when to fork it again (it died)
    delay: float = 0.1


class _Supervisor:
    """The parent's loop (see the module doc); `run()` returns the exit status."""

    def __init__(self, options: ServeOptions, run_worker: Callable[[ServeOptions], int]) -> None:
        self.options = options
        self.run_worker = run_worker
        self.data_dir = Path(options.data_dir)
        self.token = prepare_data_dir(options)
        self.pki = certs.ensure_pki(self.data_dir)
        self.sock = _listen(options)
        self.group = peer_group(options)
        self.lifeline_read, self.lifeline_write = os.pipe()
        self.go_read, self.go_write = os.pipe()  # end-of-file: the primary serves
        self.signal_read, self.signal_write = os.pipe()
        for fd in (self.signal_read, self.signal_write):
            os.set_blocking(fd, False)
        self.workers = [_Worker(i) for i in range(options.workers)]
        self.stopping = False
        self.serving = False

    # -- workers ------------------------------------------------------------

    def _fork(self, worker: _Worker) -> None:
        ready_read, ready_write = os.pipe()
        start_fd = self.go_read if worker.index and self.go_write >= 0 else -1
        spec = WorkerSpec(worker.index, self.sock.fileno(), ready_write, self.lifeline_read,
                          self.group.links(worker.index) if self.group is not None else None, start_fd)
        if threading.active_count() > 1:
            log.warning("forking worker %d with %d threads running", worker.index, threading.active_count())
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            self._child(spec, ready_read)  # never returns
        os.close(ready_write)
        worker.pid, worker.started, worker.ready_fd, worker.ready_line, worker.url = \
            pid, time.monotonic(), ready_read, b"", ""
        worker.restart_at = None

    def _child(self, spec: WorkerSpec, ready_read: int) -> None:
        code = 1
        try:
            signal.set_wakeup_fd(-1)
            for signum in _SIGNALS:
                signal.signal(signum, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            os.setpgid(0, 0)
            parent_only = [ready_read, self.lifeline_write, self.signal_read, self.signal_write,
                           *(w.ready_fd for w in self.workers if w.ready_fd >= 0)]
            if self.go_write >= 0:
                parent_only.append(self.go_write)
            for fd in parent_only:
                os.close(fd)
            code = self.run_worker(replace(self.options, workers=1, worker=spec))
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)

    def _read_ready(self, worker: _Worker) -> None:
        chunk = os.read(worker.ready_fd, 4096)
        worker.ready_line += chunk
        if chunk and not worker.ready_line.endswith(b"\n"):
            return
        os.close(worker.ready_fd)
        worker.ready_fd = -1
        if not chunk:
            return  # it exited before serving: SIGCHLD tells the rest
        worker.url = worker.ready_line.decode().strip()
        if self.serving:
            log.info("worker %d restarted (pid %d) at %s", worker.index, worker.pid, worker.url)
        if worker.index == 0 and self.go_write >= 0:
            os.close(self.go_write)  # the others may serve now
            self.go_write = -1

    def _reap(self) -> bool:
        """Collect exited workers; returns False when the first start failed (the parent gives up)."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return True
            if pid == 0:
                return True
            worker = next((w for w in self.workers if w.pid == pid), None)
            if worker is None:
                continue
            worker.pid = 0
            if worker.ready_fd >= 0:
                os.close(worker.ready_fd)
                worker.ready_fd = -1
            code = os.waitstatus_to_exitcode(status)
            if self.stopping:
                continue
            if not self.serving:
                log.error("worker %d exited with code %d before serving", worker.index, code)
                return False
            ran = time.monotonic() - worker.started
            worker.delay = 0.1 if ran >= _HEALTHY_RUN else min(worker.delay * 2, MAX_RESTART_DELAY)
            worker.restart_at = time.monotonic() + (0.0 if ran >= _HEALTHY_RUN else worker.delay)
            log.warning("worker %d (pid %d) exited with code %d; restarting it", worker.index, pid, code)

    def _announce(self) -> None:
        self.serving = True
        url = self.workers[0].url
        kubeconfig = self.options.kubeconfig_path or str(self.data_dir / "admin.kubeconfig")
        ca_pem = self.pki.ca_cert_pem if not self.options.tls_cert_file else None
        write_kubeconfig(kubeconfig, url, ca_pem, token=self.token)
        pids = " ".join(str(w.pid) for w in self.workers)
        log.info("miniplane serving at %s with %d workers (%s); admin kubeconfig: %s", url, len(self.workers),
                 pids, kubeconfig)
        print(f"miniplane serving at {url}\n  {len(self.workers)} workers: {pids}\n"
              f"  export KUBECONFIG={os.path.abspath(kubeconfig)}\n  kubectl get clusterroles", flush=True)

    # -- the loop ------------------------------------------------------------------

    def _signals(self) -> list[int]:
        received = b""
        while True:
            try:
                chunk = os.read(self.signal_read, 64)
            except BlockingIOError:
                break
            if not chunk:
                break
            received += chunk
        return list(received)

    def run(self) -> int:
        for worker in self.workers:
            self._fork(worker)
        deadline: float | None = None  # set once stopping: when the stragglers are killed
        while True:
            if self.stopping and not any(w.pid for w in self.workers):
                return 0
            now = time.monotonic()
            waits = [w.restart_at - now for w in self.workers if w.restart_at is not None]
            if deadline is not None:
                waits.append(deadline - now)
            timeout = max(0.0, min(waits)) if waits else None
            fds = [self.signal_read, *(w.ready_fd for w in self.workers if w.ready_fd >= 0)]
            readable, _, _ = select.select(fds, [], [], timeout)
            for signum in self._signals() if self.signal_read in readable else []:
                if signum in (signal.SIGTERM, signal.SIGINT) and not self.stopping:
                    log.info("received %s; stopping %d workers", signal.Signals(signum).name, len(self.workers))
                    self.stopping = True
                    deadline = time.monotonic() + STOP_GRACE
                    for worker in self.workers:
                        if worker.pid:
                            os.kill(worker.pid, signal.SIGTERM)
            for worker in self.workers:
                if worker.ready_fd in readable:
                    self._read_ready(worker)
            if not self._reap():
                self.stopping = True
                for worker in self.workers:
                    if worker.pid:
                        os.kill(worker.pid, signal.SIGKILL)
                self._wait_all()
                return 1
            if not self.serving and not self.stopping and all(w.url for w in self.workers):
                self._announce()
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                for worker in self.workers:
                    if worker.pid:
                        log.warning("worker %d did not stop within %.0f s; killing it", worker.index, STOP_GRACE)
                        os.kill(worker.pid, signal.SIGKILL)
                deadline = None
            for worker in self.workers:
                if not self.stopping and worker.restart_at is not None and now >= worker.restart_at:
                    self._fork(worker)

    def _wait_all(self) -> None:
        for worker in self.workers:
            if worker.pid:
                os.waitpid(worker.pid, 0)
                worker.pid = 0

    def close(self) -> None:
        for fd in (self.lifeline_write, self.lifeline_read, self.go_read, self.go_write, self.signal_read,
                   self.signal_write, *(w.ready_fd for w in self.workers)):
            if fd >= 0:
                os.close(fd)
        self.sock.close()
        if self.group is not None:
            self.group.close()


def run_workers(options: ServeOptions, run_worker: Callable[[ServeOptions], int]) -> int:
    """Serve with `options.workers` forked processes until SIGTERM or SIGINT (see the module doc).

    `run_worker(options)` runs one worker in the forked child and returns
    its exit status. Returns 0 once stopped by a signal, 1 when a worker
    exits before it first serves. Call from the main thread, with no
    threads and no event loop running.
    """
    supervisor = _Supervisor(options, run_worker)
    handlers = {signum: signal.signal(signum, lambda *_: None) for signum in _SIGNALS}
    previous = signal.set_wakeup_fd(supervisor.signal_write, warn_on_full_buffer=False)
    try:
        return supervisor.run()
    finally:
        signal.set_wakeup_fd(previous)
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        supervisor.close()
