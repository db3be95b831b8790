"""Overload protection, as kube-apiserver's: requests in flight, request timeouts, watch timeouts, and
miniplane's own bounds on open connections and on watches per user.

- In flight (`WithMaxInFlightLimit`): requests that are not long-running are
  counted apart as read-only (verbs get, list, watch) or mutating (every other
  verb); past `max_requests_inflight` or `max_mutating_requests_inflight` a
  request is answered 429 TooManyRequests, `Retry-After: 1`, with Kubernetes'
  words "Too many requests, please try again later.". A member of
  `system:masters` is always served (as kube-apiserver, "a super-admin or a
  loopback connection"). 0 turns a limit off. Watches are long-running and
  count apart (`apiserver_longrunning_requests`).
- Request timeout (`WithRequestDeadline`): a request that is not long-running
  ends after `request_timeout` seconds, or after the client's `?timeout=`
  (a Go duration) when shorter, with 504 Timeout "request did not complete
  within requested timeout - context deadline exceeded".
- Watch timeout (the watch handler): a watch without `timeoutSeconds` (or 0)
  ends after a random time between `min_request_timeout` and twice that,
  spreading reconnections; a client's `timeoutSeconds` is honoured as given.
- Watches per user: past `max_watches_per_user` open watches a user's next
  watch is 429 (its clients back off and retry). 0: no bound.
- Open connections (`api.serving.listener` counts them): past `max_connections` a
  connection's requests are answered 429 with `Connection: close`.

`RequestLimits` only counts; it does no I/O and never blocks.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from runtime.machinery import errors
from runtime.server.rbac.user import UserInfo

__all__ = ["LimitOptions", "RequestLimits", "READ_ONLY", "MUTATING", "parse_go_duration", "is_read_only"]

READ_ONLY, MUTATING = "readOnly", "mutating"
_READ_ONLY_VERBS = frozenset(("get", "list", "watch"))
_PRIVILEGED = "system:masters"


@dataclass(frozen=True)
class LimitOptions:
    """The bounds (see the module docs and the README's "Limits under load")."""

    max_requests_inflight: int = 400
    max_mutating_requests_inflight: int = 200
    request_timeout: float = 60.0
    min_request_timeout: float = 1800.0
    max_connections: int = 1000
    max_watches_per_user: int = 1000


def is_read_only(verb: str) -> bool:
    """Whether a request of `verb` counts against the read-only limit (kube's nonMutatingRequestVerbs)."""
    return verb in _READ_ONLY_VERBS


_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_go_duration(text: str) -> float:
    """Seconds of a Go duration (`30s`, `1m30s`, `500ms`, `-1h`); ValueError in Go's words otherwise."""
    quoted = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    rest, sign = text, 1.0
    if rest[:1] in ("-", "+"):
        sign, rest = (-1.0 if rest[0] == "-" else 1.0), rest[1:]
    if rest == "0":
        return 0.0
    if not rest:
        raise ValueError(f"time: invalid duration {quoted}")
    total, pos = 0.0, 0
    while pos < len(rest):
        match = _DURATION.match(rest, pos)
        if match is None:
            number = re.match(r"\d*\.?\d*", rest[pos:]).group(0)
            if not number:
                raise ValueError(f"time: invalid duration {quoted}")
            unit = re.match(r"[^\d.]*", rest[pos + len(number):]).group(0)
            if not unit:
                raise ValueError(f"time: missing unit in duration {quoted}")
            raise ValueError(f'time: unknown unit "{unit}" in duration {quoted}')
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    return sign * total


class RequestLimits:
    """Counts requests in flight, open watches per user and open connections against `options`."""

    def __init__(self, options: LimitOptions = LimitOptions(), *, rng: random.Random | None = None) -> None:
        self.options = options
        self.read_only = 0
        self.mutating = 0
        self.connections = 0
        self._watches: dict[str, int] = {}
        self._rng = rng if rng is not None else random.Random()

    # ---- requests in flight ----------------------------------------------------------------------

    def in_flight(self, verb: str, user: UserInfo) -> "_Slot":
        """A context holding a slot of the request's kind while the block runs (its `kind`: `readOnly`,
        `mutating`).

        Entering raises TooManyRequests (429, Retry-After 1) when every slot of the kind is taken, unless
        `user` is in `system:masters` (then served without a slot).
        """
        return _Slot(self, verb in _READ_ONLY_VERBS, user)

    def timeout(self, asked: str | None) -> float:
        """Seconds a non-watch request may take: `request_timeout`, or the client's `?timeout=` when shorter.

        Raises BadRequest for a `timeout` that is not a Go duration, as kube-apiserver.
        """
        limit = self.options.request_timeout
        if asked:
            try:
                seconds = parse_go_duration(asked)
            except ValueError as exc:
                raise errors.BadRequest(f"invalid timeout specified in the request URL - {exc}") from None
            if 0 < seconds < limit:
                return seconds
        return limit

    # ---- watches ---------------------------------------------------------------------------------

    def watch_timeout(self, asked: int | None) -> int:
        """A watch's timeoutSeconds: the client's when set and not 0, else random in [min, 2 * min)."""
        if asked:
            return asked
        low = self.options.min_request_timeout
        return max(1, int(low * (1.0 + self._rng.random())))

    @contextmanager
    def watch(self, user: UserInfo) -> Iterator[None]:
        """Count one open watch of `user` while the block runs.

        Raises TooManyRequests (429, Retry-After 1) when `user` has `max_watches_per_user` open already.
        """
        limit = self.options.max_watches_per_user
        name = user.name
        open_now = self._watches.get(name, 0)
        if limit and open_now >= limit:
            raise errors.TooManyRequests(
                f'too many open watches for user "{name}": {open_now} of at most {limit}; close some, or retry '
                "later", retry_after=1)
        self._watches[name] = open_now + 1
        try:
            yield
        finally:
            left = self._watches[name] - 1
            if left:
                self._watches[name] = left
            else:
                del self._watches[name]

    def open_watches(self, user: str) -> int:
        return self._watches.get(user, 0)

    # ---- connections -----------------------------------------------------------------------------

    def connection_opened(self) -> bool:
        """Count a new connection; False when it is past `max_connections` (its requests are then refused)."""
        self.connections += 1
        limit = self.options.max_connections
        return not limit or self.connections <= limit

    def connection_closed(self) -> None:
        self.connections -= 1

    def refuse_connection(self) -> errors.StatusError:
        """The answer to a request on a connection past the limit (the server then closes it)."""
        limit = self.options.max_connections
        return errors.TooManyRequests(f"too many open connections to the server (at most {limit}); retry later",
                                      retry_after=1)


class _Slot:
    """One request's in-flight slot (a class, not a generator: it is on every request's path)."""

    __slots__ = ("_limits", "_read_only", "_user", "_held", "kind")

    def __init__(self, limits: RequestLimits, read_only: bool, user: UserInfo) -> None:
        self._limits, self._read_only, self._user = limits, read_only, user
        self._held = False
        self.kind = READ_ONLY if read_only else MUTATING

    def __enter__(self) -> "_Slot":
        limits = self._limits
        if self._read_only:
            limit, current = limits.options.max_requests_inflight, limits.read_only
        else:
            limit, current = limits.options.max_mutating_requests_inflight, limits.mutating
        if limit and current >= limit:
            if _PRIVILEGED in self._user.groups:
                return self
            raise errors.TooManyRequests("Too many requests, please try again later.", retry_after=1)
        self._held = True
        if self._read_only:
            limits.read_only += 1
        else:
            limits.mutating += 1
        return self

    def __exit__(self, *exc: object) -> None:
        if self._held:
            self._held = False
            if self._read_only:
                self._limits.read_only -= 1
            else:
                self._limits.mutating -= 1
