"""Where audit events go: one JSON line each, to stdout or to a file rotated as kube-apiserver's.

`open_audit_log(path, max_size_mb, max_backups, max_age_days)` returns an
`AuditLog` whose `write(line)` appends a line (flushed at once: an event is on
disk, or in the pipe, when the request's answer leaves). `-` is stdout.

A file is rotated as kube-apiserver's (it uses lumberjack): when a line would
take it past `max_size_mb` megabytes (0: 100, lumberjack's default), it is
renamed `NAME-<UTC time, 2006-01-02T15-04-05.000>EXT` beside itself and a new
one is started; then backups beyond the `max_backups` newest (0: all kept) and
backups older than `max_age_days` days (0: no age limit) are deleted.

Caveats:
    Writes are synchronous on the server's thread (kube-apiserver's default
    `--audit-log-mode=blocking`); a slow disk slows requests rather than
    losing events. The standard library's `RotatingFileHandler` was not used:
    it names backups `.1`, `.2`, has no age limit, and re-stats the file for
    every line.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import sys
from pathlib import Path
from typing import IO, Callable

__all__ = ["AuditLog", "open_audit_log", "BACKUP_TIME_FORMAT"]

_MEGABYTE = 1024 * 1024
_DEFAULT_MAX_MB = 100
#: lumberjack's backup time stamp, in strftime's words (milliseconds appended).
BACKUP_TIME_FORMAT = "%Y-%m-%dT%H-%M-%S"


class AuditLog:
    """An append-only sink of lines (see the module docs)."""

    def __init__(self, stream: IO[str], path: Path | None = None, *, max_bytes: int = 0, max_backups: int = 0,
                 max_age_days: int = 0, clock: Callable[[], dt.datetime] | None = None) -> None:
        self._stream = stream
        self.path = path
        self._max_bytes = max_bytes
        self._max_backups = max_backups
        self._max_age = dt.timedelta(days=max_age_days) if max_age_days > 0 else None
        self._clock = clock if clock is not None else (lambda: dt.datetime.now(dt.timezone.utc))
        self._size = path.stat().st_size if path is not None and path.exists() else 0

    def write(self, line: str) -> None:
        """Append `line` (which ends with a newline), rotating first when it would not fit."""
        if self.path is not None:
            size = len(line.encode())
            if self._size and self._size + size > self._max_bytes:
                self._rotate()
            self._size += size
        self._stream.write(line)
        self._stream.flush()

    def close(self) -> None:
        if self.path is not None:
            self._stream.close()

    def backups(self) -> list[Path]:
        """The rotated files, oldest first."""
        if self.path is None:
            return []
        pattern = re.compile(re.escape(self.path.stem) + r"-(\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3})"
                             + re.escape(self.path.suffix) + "$")
        found = [(m.group(1), p) for p in self.path.parent.iterdir() if (m := pattern.match(p.name))]
        return [p for _, p in sorted(found)]

    def _rotate(self) -> None:
        assert self.path is not None
        self._stream.close()
        now = self._clock()
        stamp = now.strftime(BACKUP_TIME_FORMAT) + f".{now.microsecond // 1000:03d}"
        self.path.rename(self.path.with_name(f"{self.path.stem}-{stamp}{self.path.suffix}"))
        self._stream = _open(self.path)
        self._size = 0
        self._clean(now)

    def _clean(self, now: dt.datetime) -> None:
        backups = self.backups()
        doomed = set(backups[:-self._max_backups]) if self._max_backups > 0 else set()
        if self._max_age is not None:
            for backup in backups:
                taken = dt.datetime.strptime(backup.name[len(self.path.stem) + 1:][:23], BACKUP_TIME_FORMAT + ".%f")
                if now - taken.replace(tzinfo=dt.timezone.utc) > self._max_age:
                    doomed.add(backup)
        for backup in doomed:
            backup.unlink(missing_ok=True)


def _open(path: Path) -> IO[str]:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    return os.fdopen(fd, "a", encoding="utf-8")


def open_audit_log(path: str, *, max_size_mb: int = 0, max_backups: int = 0, max_age_days: int = 0,
                   clock: Callable[[], dt.datetime] | None = None) -> AuditLog:
    """The audit log at `path` (`-`: stdout), its directory made when missing (readable by the owner only).

    Raises OSError when the file cannot be opened.
    """
    if path == "-":
        return AuditLog(sys.stdout)
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    max_bytes = (max_size_mb if max_size_mb > 0 else _DEFAULT_MAX_MB) * _MEGABYTE
    return AuditLog(_open(file), file, max_bytes=max_bytes, max_backups=max_backups, max_age_days=max_age_days,
                    clock=clock)
