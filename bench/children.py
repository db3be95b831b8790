"""`ServerChild`: a server process of a benchmark, started until it says where it serves.

Contract: `ServerChild(cmd, marker, log, cwd=ROOT, timeout=None)` runs `cmd` from the project root (or
`cwd`: another checkout's, whose code `-m` then runs)
with stderr to `log`, reads stdout until a line holds `marker` followed by
the URL (`url`), and records the seconds that took (`startup`); it raises
RuntimeError if the child exits first, or is killed for not serving within
`timeout` seconds. `rss_mib()` reads its memory,
`cpu_seconds()` the CPU time it and its child processes (`--workers`) have
used, `stop()` ends it with SIGTERM (SIGKILL after 60 s). Its stdout stays open
unread: a server's few later lines fit in the pipe's buffer.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

__all__ = ["ServerChild", "tree_cpu_seconds"]

ROOT = Path(__file__).resolve().parents[1]


class ServerChild:
    """See the module doc."""

    def __init__(self, cmd: list[str], marker: str, log: Path, cwd: Path = ROOT, timeout: float | None = None) -> None:
        started = time.monotonic()
        self.log = open(log, "w")
        self.proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=self.log, text=True)
        assert self.proc.stdout is not None
        # A child that hangs before serving is killed: its stdout then ends, and so does the wait.
        timed_out = threading.Event()

        def kill() -> None:
            timed_out.set()
            self.proc.kill()
        watchdog = threading.Timer(timeout, kill) if timeout is not None else None
        if watchdog is not None:
            watchdog.start()
        try:
            for line in self.proc.stdout:
                if marker in line:
                    self.url = line.split(marker, 1)[1].split()[0]
                    break
            else:
                self.log.close()
                why = f"did not serve within {timeout:.0f} s" if timed_out.is_set() else "exited before serving"
                raise RuntimeError(f"{' '.join(cmd[:6])} {why}: see {log}")
        finally:
            if watchdog is not None:
                watchdog.cancel()
        self.startup = time.monotonic() - started

    def rss_mib(self) -> tuple[float, float]:
        """(resident now, peak resident) in MiB."""
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024

    def cpu_seconds(self) -> float:
        """CPU time (user + system) used so far by the server and its live child processes."""
        return tree_cpu_seconds(self.proc.pid)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def tree_cpu_seconds(pid: int) -> float:
    """CPU time (user + system, every thread) of process `pid` and its live descendants, from /proc."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue  # exited meanwhile
        fields = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
        parents[int(entry)] = int(fields[1])
        times[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
    tree, total = [pid], 0.0
    while tree:
        current = tree.pop()
        total += times.get(current, 0.0)
        tree.extend(child for child, parent in parents.items() if parent == current)
    return total
