"""List: the resourceVersion / resourceVersionMatch table of the spec, paging with continue tokens.

| resourceVersionMatch | paging        | rv unset    | rv "0"       | rv N                    |
|----------------------|---------------|-------------|--------------|-------------------------|
| unset                | no limit      | Most Recent | Any          | Not older than N        |
| unset                | limit         | Most Recent | Any          | Exact N                 |
| unset                | continue      | Continuation| Continuation | 400 Bad Request         |
| Exact                | with/no limit | 422 Invalid | 422 Invalid  | Exact N                 |
| NotOlderThan         | with/no limit | 422 Invalid | Any          | Not older than N        |

Where each is served from:

- Most Recent: a consistent read, from the watch cache once it has caught up
  with the store's current revision (waiting up to `LIST_WAIT` s), otherwise
  from the store.
- Any: the watch cache as it is.
- Not older than N: the cache once it reached N; 504 "Too large resource
  version" with `Retry-After` if it does not within `LIST_WAIT` s (or
  `timeoutSeconds`, if shorter).
- Exact N and Continuation: the cache's state when N is its revision; a
  snapshot of the cache (feature gate `ListFromCacheSnapshot`, default on)
  when one is kept and N is not compacted; else the store's log at N, which
  answers 410 Gone (reason Expired) once N is compacted.

Paging: every page carries the first page's resourceVersion;
`remainingItemCount` is set except with selectors and on the last page.
Continue tokens are opaque, signed (a modified one is 400) and expire (410
Expired) after the server's continue TTL or when their revision is compacted.
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import hmac
import json
import secrets
from typing import TYPE_CHECKING, Callable

import trio

from runtime import errors
from runtime.errors import Cause
from runtime.featuregates import DEFAULT_GATES
from runtime.objects import StoredObject
from runtime.registry.decode import decode_stored
from runtime.registry.options import ListOptions
from runtime.scheme import ResourceType
from runtime.storage import Compacted

if TYPE_CHECKING:
    from runtime.registry.registry import ListResult, Registry

__all__ = [
    "list_objects", "validate_list_options", "ContinueTokens", "expired_continue", "too_large",
    "LIST_WAIT", "SNAPSHOT_GATE",
]

#: Seconds a read waits for the cache to reach a version (Kubernetes' blockTimeout).
LIST_WAIT = 3.0
#: The feature gate of lists served from cache snapshots.
SNAPSHOT_GATE = "ListFromCacheSnapshot"

_LIST_MATCHES = ("Exact", "NotOlderThan")


def _invalid_list_options(errs: list[tuple[str, str, str]]) -> errors.Invalid:
    """Kubernetes' NewInvalid(ListOptions.meta.k8s.io, "", errs): 422 with one cause per error."""
    texts = [f"{field}: {body}" for field, body, _ in errs]
    joined = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    return errors.Invalid(f'ListOptions.meta.k8s.io "" is invalid: {joined}', group="meta.k8s.io",
                          kind="ListOptions",
                          causes=[Cause(reason, body, field) for field, body, reason in errs])


def _forbidden(field: str, detail: str) -> tuple[str, str, str]:
    return field, f"Forbidden: {detail}", "FieldValueForbidden"


def _not_supported(field: str, value: str, supported: tuple[str, ...]) -> tuple[str, str, str]:
    values = ", ".join(json.dumps(v) for v in supported)
    return field, f"Unsupported value: {json.dumps(value)}: supported values: {values}", "FieldValueNotSupported"


def validate_list_options(opts: ListOptions, *, watch: bool) -> None:
    """apimachinery's ValidateListOptions: the 'Invalid' cells of the spec's table.

    Raises Invalid (422, `ListOptions.meta.k8s.io "" is invalid: ...`).
    """
    match = opts.resource_version_match
    errs: list[tuple[str, str, str]] = []
    if watch:
        if opts.send_initial_events is not None and match != "NotOlderThan":
            errs.append(_forbidden("resourceVersionMatch",
                                   "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
        if match:
            if opts.send_initial_events is None:
                errs.append(_forbidden("resourceVersionMatch",
                                       "resourceVersionMatch is forbidden for watch unless sendInitialEvents "
                                       "is provided"))
            if match != "NotOlderThan":
                errs.append(_not_supported("resourceVersionMatch", match, ("NotOlderThan",)))
            if opts.continue_token:
                errs.append(_forbidden("resourceVersionMatch",
                                       "resourceVersionMatch is forbidden when continue is provided"))
    else:
        if match:
            if not opts.resource_version:
                errs.append(_forbidden("resourceVersionMatch",
                                       "resourceVersionMatch is forbidden unless resourceVersion is provided"))
            if opts.continue_token:
                errs.append(_forbidden("resourceVersionMatch",
                                       "resourceVersionMatch is forbidden when continue is provided"))
            if match not in _LIST_MATCHES:
                errs.append(_not_supported("resourceVersionMatch", match, (*_LIST_MATCHES, "")))
            if match == "Exact" and opts.resource_version == "0":
                errs.append(_forbidden("resourceVersionMatch",
                                       'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
        if opts.send_initial_events is not None:
            errs.append(_forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    if errs:
        raise _invalid_list_options(errs)


def too_large(wanted: int, current: int) -> errors.ResourceVersionTooLarge:
    """Kubernetes' NewTooLargeResourceVersionError: 504 Timeout, Retry-After 1."""
    return errors.ResourceVersionTooLarge(
        f"Timeout: Too large resource version: {wanted}, current: {current}", retry_after=1,
        causes=[Cause("ResourceVersionTooLarge", "Too large resource version")])


def expired_continue() -> errors.Expired:
    """410 Expired for a continue token past its TTL or its revision compacted."""
    return errors.Expired(
        "The provided continue parameter is too old to display a consistent list result. You can start a "
        "new list without the continue parameter, or use the continue token in this response to retrieve "
        "the remainder of the results. Continuing with the provided token results in an inconsistent list - "
        "objects that were created, modified, or deleted between the time the first chunk was returned and "
        "now may show up in the list.")


def _expired_list() -> errors.Expired:
    return errors.Expired("The resourceVersion for the provided list is too old.")


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


async def _reach(registry: "Registry", revision: int, wait: float) -> None:
    """Wait until the cache has `revision`; 504 Too large resource version if it does not in `wait` s."""
    if registry.cache.revision < revision and not await registry.cache.wait_for(revision, timeout=wait):
        raise too_large(revision, registry.cache.revision)


async def _from_store(registry: "Registry", rt: ResourceType, prefix: str, revision: int | None,
                      *, continuation: bool) -> tuple[list[StoredObject], int]:
    """The store's list at `revision` (None: now); objects the cache holds at that version are reused."""
    try:
        entries, at, _ = await registry.store.list(prefix, revision=revision)
    except Compacted:
        raise (expired_continue() if continuation else _expired_list()) from None
    current = registry.kind_cache(rt).objects
    items = []
    for e in entries:
        cached = current.get(e.key)
        # A value that does not decode fails the list with Kubernetes' 500 "corrupt object".
        items.append(cached if cached is not None and cached.revision == e.mod_revision
                     else decode_stored(e.key, e.value, e.mod_revision))
    return items, at


async def _at_revision(registry: "Registry", rt: ResourceType, prefix: str, revision: int,
                       *, continuation: bool) -> list[StoredObject]:
    """The list under `prefix` exactly at `revision` (<= the cache's): cache, snapshot or store."""
    kind = registry.kind_cache(rt)
    if revision == registry.cache.revision:
        return kind.list(prefix)
    compacted = await registry.store.compacted_revision()
    if revision < compacted:
        raise expired_continue() if continuation else _expired_list()
    if registry.feature_gates.get(SNAPSHOT_GATE, DEFAULT_GATES[SNAPSHOT_GATE]):
        snapshot = kind.snapshot(revision, prefix)
        if snapshot is not None:
            return snapshot
    items, _ = await _from_store(registry, rt, prefix, revision, continuation=continuation)
    return items


async def list_objects(registry: "Registry", rt: ResourceType, namespace: str, opts: ListOptions) -> "ListResult":
    """A list of `rt` in `namespace` ("" = all) as the spec's list table says (see the module doc).

    Raises Invalid (422), BadRequest (400), Expired (410), ResourceVersionTooLarge (504).
    """
    from runtime.registry.registry import ListResult, parse_resource_version
    validate_list_options(opts, watch=False)
    match = registry.matcher(rt, namespace, opts)
    selective = bool(opts.label_selector or opts.field_selector)
    prefix = rt.namespace_prefix(namespace if rt.namespaced else None)
    kind = registry.kind_cache(rt)
    tokens: ContinueTokens = registry.continue_tokens
    rv, rv_match, limit = opts.resource_version or "", opts.resource_version_match, max(0, opts.limit)
    wait = LIST_WAIT if not opts.timeout_seconds or opts.timeout_seconds <= 0 else \
        min(LIST_WAIT, float(opts.timeout_seconds))
    start_after = ""
    if opts.continue_token:
        # Continuation: the token's revision and position. The table wins over the error
        # list: resourceVersion "0" with continue is a continuation too.
        revision, start_after, issued = tokens.decode(opts.continue_token, prefix)
        if rv not in ("", "0"):
            raise errors.BadRequest("specifying resource version is not allowed when using continue")
        if tokens.expired(issued):
            raise expired_continue()
        await _reach(registry, revision, wait)
        items = await _at_revision(registry, rt, prefix, revision, continuation=True)
    elif rv_match == "Exact" or (not rv_match and limit and rv not in ("", "0")):
        revision = parse_resource_version(rv)
        await _reach(registry, revision, wait)
        items = await _at_revision(registry, rt, prefix, revision, continuation=False)
    elif rv == "":
        # Most Recent: a consistent read; the store answers while the cache lags.
        if await registry.cache.wait_fresh(wait):
            revision, items = registry.cache.revision, kind.list(prefix)
        else:
            items, revision = await _from_store(registry, rt, prefix, None, continuation=False)
    else:
        if rv != "0":  # Not older than N
            await _reach(registry, parse_resource_version(rv), wait)
        revision, items = registry.cache.revision, kind.list(prefix)
    first = bisect.bisect_right(items, start_after, key=_key) if start_after else 0
    if not limit:
        return ListResult([o for o in items[first:] if match(o)], revision)
    page: list[StoredObject] = []
    i = first
    while i < len(items) and len(page) < limit:
        if match(items[i]):
            page.append(items[i])
        i += 1
    more = any(match(o) for o in items[i:]) if selective else i < len(items)
    if not more or not page:
        return ListResult(page, revision)
    token = tokens.encode(revision, page[-1].key, prefix)
    return ListResult(page, revision, token, None if selective else len(items) - i)


def _key(obj: StoredObject) -> str:
    return obj.key
