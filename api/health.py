"""Health endpoints `/healthz`, `/livez`, `/readyz` as Kubernetes' apiserver answers them.

Pure: `health_answer(path, query)` returns (status, body) or None when the
path is not a health endpoint. The root answers `ok`; with `verbose` it lists
each check (`[+]ping ok`) and ends `<name> check passed`; `exclude=<check>`
skips a check (`[+]ping excluded: ok`) and an unknown name earns a `warn:`
line. `/<endpoint>/<check>` answers one check's `ok`; an unknown check is
None (404). Kubernetes' `staging/src/k8s.io/apiserver/pkg/server/healthz`.
"""

from __future__ import annotations

from typing import Mapping, Sequence

__all__ = ["HEALTH_ENDPOINTS", "CHECKS", "health_answer"]

HEALTH_ENDPOINTS = ("healthz", "livez", "readyz")

# The checks every Kubernetes apiserver has: the server answers (ping) and can log (log).
# Both pass whenever this code runs at all.
CHECKS = ("ping", "log")


def health_answer(path: str, query: Mapping[str, Sequence[str]]) -> tuple[int, bytes] | None:
    """Return (HTTP status, text body) for a health path (`/readyz`, `/livez/ping`), None if it is none.

    `query` maps each query parameter to its values (`verbose`, `exclude`).
    """
    parts = path.strip("/").split("/")
    if not parts or parts[0] not in HEALTH_ENDPOINTS or len(parts) > 2:
        return None
    name = parts[0]
    if len(parts) == 2:
        return (200, b"ok") if parts[1] in CHECKS else None
    excluded = set(query.get("exclude") or ())  # one name per `exclude` parameter, as Kubernetes reads them
    if "verbose" not in query:
        return 200, b"ok"
    lines = []
    for check in CHECKS:
        lines.append(f"[+]{check} excluded: ok" if check in excluded else f"[+]{check} ok")
    unknown = sorted(set(excluded) - set(CHECKS))
    if unknown:
        quoted = ",".join(f'"{u}"' for u in unknown)
        lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}")
    lines.append(f"{name} check passed")
    return 200, ("\n".join(lines) + "\n").encode()
