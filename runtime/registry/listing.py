"""List: the resourceVersion / resourceVersionMatch table of the spec, paging with continue tokens.

Lists are served from the watch cache whenever the table allows (unset: once
the cache has caught up with the store, a consistent read; `0`: as the cache
is; NotOlderThan: once the cache reached that version) and from the store's
log at a past revision when an exact version is needed (Exact, continuation).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from typing import TYPE_CHECKING

from runtime import errors
from runtime.errors import Cause
from runtime.objects import StoredObject
from runtime.registry.options import ListOptions
from runtime.scheme import ResourceType
from runtime.storage import Compacted

if TYPE_CHECKING:
    from runtime.registry.registry import ListResult, Registry

__all__ = ["list_objects", "validate_list_options", "ContinueTokens"]

_MATCHES = ("", "Exact", "NotOlderThan")


def _invalid_list_options(message: str, field: str, reason: str = "FieldValueForbidden") -> errors.Invalid:
    return errors.Invalid(f'ListOptions.meta.k8s.io "" is invalid: {field}: {message}', group="meta.k8s.io",
                          kind="ListOptions", causes=[Cause(reason, message, field)])


def validate_list_options(opts: ListOptions, *, watch: bool) -> None:
    """apimachinery's ValidateListOptions: the 'Invalid' cells of the spec's table (422)."""
    match = opts.resource_version_match
    if match not in _MATCHES:
        raise _invalid_list_options(
            f'Unsupported value: "{match}": supported values: "Exact", "NotOlderThan"',
            "resourceVersionMatch", "FieldValueNotSupported")
    if opts.send_initial_events is not None:
        if not watch:
            raise _invalid_list_options("Forbidden: sendInitialEvents is forbidden for list",
                                        "sendInitialEvents")
        if opts.send_initial_events and match != "NotOlderThan":
            raise _invalid_list_options(
                "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                "resourceVersionMatch")
        return
    if match and watch:
        raise _invalid_list_options("Forbidden: resourceVersionMatch is forbidden for watch",
                                    "resourceVersionMatch")
    if match and not opts.resource_version:
        raise _invalid_list_options(
            "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
            "resourceVersionMatch")
    if match and opts.continue_token:
        raise _invalid_list_options("Forbidden: resourceVersionMatch is forbidden when continue is provided",
                                    "resourceVersionMatch")
    if match == "Exact" and opts.resource_version == "0":
        raise _invalid_list_options('Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                                    "resourceVersionMatch")


class ContinueTokens:
    """Opaque, tamper-evident, expiring continue tokens.

    A token holds the list's revision, the last key served and when it was
    issued, signed with a per-server secret: a modified token is 400, an old one
    410 Expired.
    """

    def __init__(self, ttl_seconds: float = 300.0, secret: bytes | None = None) -> None:
        self.ttl = ttl_seconds
        self._secret = secret or secrets.token_bytes(32)

    def encode(self, revision: int, last_key: str) -> str:
        payload = json.dumps({"v": "meta.k8s.io/v1", "rv": revision, "start": last_key + "\x00",
                              "t": int(time.time())}, separators=(",", ":")).encode()
        mac = hmac.new(self._secret, payload, hashlib.sha256).digest()[:16]
        return base64.urlsafe_b64encode(payload + mac).decode().rstrip("=")

    def decode(self, token: str) -> tuple[int, str]:
        """(revision, key to start after). BadRequest if forged, Expired if too old."""
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            payload, mac = raw[:-16], raw[-16:]
            if not hmac.compare_digest(mac, hmac.new(self._secret, payload, hashlib.sha256).digest()[:16]):
                raise ValueError("bad signature")
            data = json.loads(payload)
            revision, start, issued = int(data["rv"]), str(data["start"]), int(data["t"])
        except (ValueError, KeyError, TypeError):
            raise errors.BadRequest("continue key is not valid: incorrect encoded start resourceVersion "
                                    "(version meta.k8s.io/v1)") from None
        if time.time() - issued > self.ttl:
            raise expired_continue()
        return revision, start


def expired_continue() -> errors.Expired:
    return errors.Expired(
        "The provided continue parameter is too old to display a consistent list result. You can start a "
        "new list without the continue parameter, or use the continue token in this response to retrieve "
        "the remainder of the results. Continuing with the provided token results in an inconsistent list - "
        "objects that were created, modified, or deleted between the time the first chunk was returned and "
        "now may show up in the list.")


async def _from_store(registry: "Registry", rt: ResourceType, prefix: str, revision: int) -> list[StoredObject]:
    try:
        entries, _ = await registry.store.list(prefix, revision=revision)
    except Compacted:
        raise errors.Gone(f"The resourceVersion for the provided list is too old.") from None
    return [StoredObject.from_json(e.key, e.value, e.mod_revision) for e in entries]


async def list_objects(registry: "Registry", rt: ResourceType, namespace: str, opts: ListOptions) -> "ListResult":
    from runtime.registry.registry import ListResult, parse_resource_version
    validate_list_options(opts, watch=False)
    match = registry.matcher(rt, namespace, opts)
    prefix = rt.namespace_prefix(namespace if rt.namespaced else None)
    cache = registry.kind_cache(rt)
    tokens: ContinueTokens = registry.continue_tokens
    rv, rv_match, limit = opts.resource_version, opts.resource_version_match, max(0, opts.limit)
    start_after = ""
    if opts.continue_token:
        if rv not in (None, "", "0"):
            raise errors.BadRequest("specifying resource version is not allowed when using continue")
        revision, start_after = tokens.decode(opts.continue_token)
        if revision < registry.cache.oldest_revision and revision < await registry.store.compacted_revision():
            raise expired_continue()
        items = await _from_store(registry, rt, prefix, revision)
    elif rv_match == "Exact" or (rv not in (None, "", "0") and limit and not rv_match):
        revision = parse_resource_version(rv)
        if revision > registry.cache.revision and not await registry.cache.wait_for(revision, timeout=3.0):
            raise errors.ResourceVersionTooLarge(f"Too large resource version: {revision}, current: "
                                                 f"{registry.cache.revision}", retry_after=1)
        if revision == registry.cache.revision:
            items = cache.list(prefix)
        else:
            items = await _from_store(registry, rt, prefix, revision)
    else:
        await registry._wait_for_version(rv)
        revision = registry.cache.revision
        items = cache.list(prefix)
        if rv_match == "NotOlderThan" and limit and revision < parse_resource_version(rv):
            raise errors.Gone(f"Too large resource version: {rv}")
    if start_after:
        import bisect
        keys = [o.key for o in items]
        items = items[bisect.bisect_left(keys, start_after):]
    filtered = [o for o in items if match(o)]
    token, remaining = "", None
    if limit and len(filtered) > limit:
        page = filtered[:limit]
        token = tokens.encode(revision, page[-1].key)
        if not opts.label_selector and not opts.field_selector:
            remaining = len(filtered) - limit
        filtered = page
    return ListResult(filtered, revision, token, remaining)
