"""Health endpoints `/healthz`, `/livez`, `/readyz` as Kubernetes' apiserver answers them.

`await health_answer(path, query, checks)` returns (status, body) or None
when the path is not a health endpoint. Each endpoint runs the checks that
name it: `ping` and `log` everywhere (they pass whenever this code runs); on
etcd, `etcd` everywhere and `etcd-readiness` on `/readyz` (`etcd_checks`),
both one read of etcd within 2 s (kube-apiserver's `--etcd-healthcheck-timeout`
and `--etcd-readycheck-timeout`), its outcome shared and kept for a second so
that probes do not become etcd's load. All pass: `ok`; with `verbose` each check
is listed (`[+]ping ok`) and the answer ends `<name> check passed`. One
fails: 500 and the list whatever `verbose` says, the failed check `[-]etcd
failed: reason withheld`, the end `<name> check failed`. `exclude=<check>`
skips a check (`[+]ping excluded: ok`) and an unknown name earns a `warn:`
line. `/<endpoint>/<check>` runs one check: `ok`, or 500 `internal server
error: <why>`; a check the endpoint does not run is None (404). Kubernetes'
`staging/src/k8s.io/apiserver/pkg/server/healthz`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Awaitable, Callable, Mapping, Sequence

import trio

__all__ = ["HEALTH_ENDPOINTS", "CHECKS", "HealthCheck", "BASE_CHECKS", "etcd_checks", "health_answer"]

log = logging.getLogger(__name__)

HEALTH_ENDPOINTS = ("healthz", "livez", "readyz")
#: How long a store check may take, and how long its outcome is reused.
CHECK_TIMEOUT, CHECK_REUSE = 2.0, 1.0


@dataclass(frozen=True)
class HealthCheck:
    """One named check; `probe` raises, its message saying why, when it fails (None: always passes)."""

    name: str
    probe: Callable[[], Awaitable[object]] | None = None
    endpoints: tuple[str, ...] = HEALTH_ENDPOINTS

    async def failure(self) -> str | None:
        """Why the check fails now, or None."""
        if self.probe is None:
            return None
        try:
            await self.probe()
        except Exception as exc:  # any failure of the probe is the check's failure, reported, never raised
            return str(exc)
        return None


class _EtcdRead:
    """One read of etcd within `CHECK_TIMEOUT`, its outcome reused for `CHECK_REUSE` s by every check
    that calls it (probes are not etcd's load); raises in kube-apiserver's words when it fails."""

    def __init__(self, read: Callable[[], Awaitable[object]]) -> None:
        self._read = read
        self._last: tuple[float, str | None] | None = None  # when, and why it failed (None: it passed)

    async def __call__(self) -> None:
        now = trio.current_time()
        if self._last is None or now - self._last[0] >= CHECK_REUSE:
            why: str | None = None
            try:
                with trio.fail_after(CHECK_TIMEOUT):
                    await self._read()
            except trio.TooSlowError:
                why = f"error getting data from etcd: no answer within {CHECK_TIMEOUT:g}s"
            except Exception as exc:
                why = f"error getting data from etcd: {exc}"
            if why is not None and (self._last is None or self._last[1] is None):
                log.warning("health check of etcd failed: %s", why)
            self._last = (now, why)
        if self._last[1] is not None:
            raise RuntimeError(self._last[1])


#: The checks every Kubernetes apiserver has: the server answers (ping) and can log (log).
BASE_CHECKS = (HealthCheck("ping"), HealthCheck("log"))
#: What a server on etcd adds: `etcd` on every endpoint, `etcd-readiness` on /readyz.
_ETCD_CHECKS = (("etcd", HEALTH_ENDPOINTS), ("etcd-readiness", ("readyz",)))
#: Every check name a path may carry (the filter chain's known paths).
CHECKS = (*(c.name for c in BASE_CHECKS), *(name for name, _ in _ETCD_CHECKS))


def etcd_checks(read: Callable[[], Awaitable[object]]) -> tuple[HealthCheck, ...]:
    """The checks a server on etcd adds, `read` being one cheap read of etcd; they share its outcome."""
    probe = _EtcdRead(read)
    return tuple(HealthCheck(name, probe, endpoints) for name, endpoints in _ETCD_CHECKS)


async def health_answer(path: str, query: Mapping[str, Sequence[str]],
                        checks: Sequence[HealthCheck] = BASE_CHECKS) -> tuple[int, bytes] | None:
    """Return (HTTP status, text body) for a health path (`/readyz`, `/livez/ping`), None if it is none.

    `query` maps each query parameter to its values (`verbose`, `exclude`).
    """
    parts = path.strip("/").split("/")
    if not parts or parts[0] not in HEALTH_ENDPOINTS or len(parts) > 2:
        return None
    name = parts[0]
    mine = [c for c in checks if name in c.endpoints]
    if len(parts) == 2:
        check = next((c for c in mine if c.name == parts[1]), None)
        if check is None:
            return None
        why = await check.failure()
        return (200, b"ok") if why is None else (500, f"internal server error: {why}\n".encode())
    excluded = set(query.get("exclude") or ())  # one name per `exclude` parameter, as Kubernetes reads them
    lines, failed = [], False
    for check in mine:
        if check.name in excluded:
            lines.append(f"[+]{check.name} excluded: ok")
        elif await check.failure() is None:
            lines.append(f"[+]{check.name} ok")
        else:
            lines.append(f"[-]{check.name} failed: reason withheld")
            failed = True
    unknown = sorted(excluded - {c.name for c in mine})
    if unknown:
        quoted = ",".join(f'"{u}"' for u in unknown)
        lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}")
    if failed:  # Go's http.Error: the text and a newline
        return 500, ("\n".join(lines) + f"\n{name} check failed\n").encode()
    if "verbose" not in query:
        return 200, b"ok"
    lines.append(f"{name} check passed")
    return 200, ("\n".join(lines) + "\n").encode()
