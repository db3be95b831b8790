"""A small file system for one child process: a full disk a test can make, and undo, by itself.

Contract: `small_disk_wrapper(mount_point, size)` is a command prefix
(`spawn_server(..., wrapper=...)`) that runs its arguments in a new user
and mount namespace (`unshare --user --map-root-user --mount`, no privilege
needed where user namespaces are allowed) with a `size` tmpfs mounted on
`mount_point`: the child's data directory, seen by that child only.
`mount_view(pid, mount_point)` is the same directory as the test sees it
(`/proc/PID/root/...`: the child's mount namespace), where `fill(path)`
writes a file until the file system has no byte left (returns its size)
and deleting that file gives the space back.

Why this and not a hand-made disk: mounting needs privilege a test does not
have, a loop device even more; a tmpfs in a user namespace is a real file
system whose write(2) fails with ENOSPC when full, which is what SQLite
sees on a full disk. Where `unshare` or user namespaces are missing the
child exits at once and the test fails saying so.
"""

from __future__ import annotations

import errno
import shlex
import shutil
from pathlib import Path

__all__ = ["small_disk_wrapper", "mount_view", "fill"]


def small_disk_wrapper(mount_point: Path, size: str) -> tuple[str, ...]:
    """The command prefix running a child over a `size` (e.g. "16m") tmpfs on `mount_point`."""
    unshare = shutil.which("unshare")
    if unshare is None:
        raise AssertionError("unshare (util-linux) is needed to give the server a small disk of its own")
    mount_point.mkdir(parents=True, exist_ok=True)
    # What fails is said on stdout, where the spawner reads (and reports) what the child printed.
    inner = ('mount -t tmpfs -o "size=$1" tmpfs "$2" '
             '|| { echo "smalldisk: cannot mount a tmpfs in the new namespace"; exit 97; }; shift 2; exec "$@"')
    outer = (f'"$0" --user --map-root-user --mount true 2>/dev/null || {{ echo "smalldisk: user namespaces are '
             f'not available here (unshare --user --mount failed)"; exit 97; }}; '
             f'exec "$0" --user --map-root-user --mount sh -c {shlex.quote(inner)} "$@"')
    return ("sh", "-c", outer, unshare, "sh", size, str(mount_point))


def mount_view(pid: int, mount_point: Path) -> Path:
    """`mount_point` as process `pid` sees it (its tmpfs), reached from this process."""
    return Path(f"/proc/{pid}/root") / mount_point.resolve().relative_to("/")


def fill(path: Path) -> int:
    """Write `path` until its file system is full; returns the bytes written."""
    written = 0
    with open(path, "wb", buffering=0) as f:
        for chunk in (1 << 20, 1 << 12, 1):
            block = b"\0" * chunk
            while True:
                try:
                    written += f.write(block)
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    break
    return written
