"""Continue tokens: opaque, tamper-evident, expiring positions in a paged list.

Internal to `runtime.server.registry`: imported by its modules only.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from typing import Callable

import trio

from runtime.machinery import errors

__all__ = ["ContinueTokens"]


class ContinueTokens:
    """Opaque, tamper-evident, expiring continue tokens.

    A token holds the list's revision, the last key served (relative to the
    list's key prefix) and when it was issued, signed with a per-server
    secret: a modified token is 400 Bad Request, an old one 410 Expired.
    `clock` gives the time in seconds (default: trio's clock).
    """

    _MAC = 16

    def __init__(self, ttl_seconds: float = 300.0, secret: bytes | None = None,
                 clock: Callable[[], float] | None = None) -> None:
        self.ttl = ttl_seconds
        self._secret = secret or secrets.token_bytes(32)
        self._clock = clock or trio.current_time

    def encode(self, revision: int, last_key: str, prefix: str = "") -> str:
        """A token continuing after `last_key` of the list under `prefix` at `revision`."""
        start = last_key[len(prefix):] if prefix and last_key.startswith(prefix) else last_key
        payload = json.dumps({"v": "meta.k8s.io/v1", "rv": revision, "start": start,
                              "t": round(self._clock(), 3)}, separators=(",", ":")).encode()
        mac = hmac.new(self._secret, payload, hashlib.sha256).digest()[:self._MAC]
        return base64.urlsafe_b64encode(payload + mac).decode().rstrip("=")

    def decode(self, token: str, prefix: str = "") -> tuple[int, str, float]:
        """(revision, key to continue after, issue time). Raises BadRequest if forged or malformed."""
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            payload, mac = raw[:-self._MAC], raw[-self._MAC:]
            if len(raw) <= self._MAC or not hmac.compare_digest(
                    mac, hmac.new(self._secret, payload, hashlib.sha256).digest()[:self._MAC]):
                raise ValueError("the token was not issued by this server")
            data = json.loads(payload)
            revision, start, issued = int(data["rv"]), str(data["start"]), float(data["t"])
            if revision <= 0:
                raise ValueError("incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
        except (ValueError, KeyError, TypeError) as exc:
            raise errors.BadRequest(f"invalid continue token: continue key is not valid: {exc}") from None
        return revision, prefix + start, issued

    def expired(self, issued: float) -> bool:
        """Past the TTL, or issued "in the future" (a clock that went backwards): age unknown."""
        age = self._clock() - issued
        return age > self.ttl or age < -1.0  # (issue times are rounded to the millisecond)
