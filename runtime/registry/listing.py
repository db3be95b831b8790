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
  with the store's current revision (waiting up to `READ_WAIT` s), otherwise
  from the store.
- Any: the watch cache as it is.
- Not older than N: the cache once it reached N; 504 "Too large resource
  version" with `Retry-After` if it does not within `READ_WAIT` s (or
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

import bisect
import json

from runtime import errors
from runtime.errors import Cause
from runtime.objects import StoredObject, decode_stored
from runtime.rbac.user import UserInfo
from runtime.registry.common import (
    ListResult, expired_continue, expired_list, parse_resource_version, store_errors, too_large,
)
from runtime.registry.core import READ_WAIT, RegistryCore, Selection
from runtime.requests import ListOptions
from runtime.scheme import ResourceType

__all__ = ["list_objects", "validate_list_options", "SNAPSHOT_GATE"]

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


async def _reach(core: RegistryCore, revision: int, wait: float) -> None:
    """Wait until the cache has `revision`; 504 Too large resource version if it does not in `wait` s."""
    if core.cache.revision < revision and not await core.cache.wait_for(revision, timeout=wait):
        raise too_large(revision, core.cache.revision)


async def _from_store(core: RegistryCore, rt: ResourceType, prefix: str, revision: int | None,
                      *, continuation: bool) -> tuple[list[StoredObject], int]:
    """The store's list at `revision` (None: now); objects the cache holds at that version are reused."""
    with store_errors(rt, continuation=continuation):
        entries, at, _ = await core.store.list(prefix, revision=revision)
    current = core.kind_cache(rt).objects
    items = []
    for e in entries:
        cached = current.get(e.key)
        # A value that does not decode fails the list with Kubernetes' 500 "corrupt object".
        items.append(cached if cached is not None and cached.revision == e.mod_revision
                     else decode_stored(e.key, e.value, e.mod_revision))
    return items, at


async def _at_revision(core: RegistryCore, rt: ResourceType, prefix: str, revision: int,
                       *, continuation: bool) -> list[StoredObject]:
    """The list under `prefix` exactly at `revision` (<= the cache's): cache, snapshot or store."""
    kind = core.kind_cache(rt)
    if revision == core.cache.revision:
        return kind.list(prefix)
    with store_errors(rt):
        compacted = await core.store.compacted_revision()
    if revision < compacted:
        raise expired_continue() if continuation else expired_list()
    if core.gate(SNAPSHOT_GATE):
        snapshot = kind.snapshot(revision, prefix)
        if snapshot is not None:
            return snapshot
    items, _ = await _from_store(core, rt, prefix, revision, continuation=continuation)
    return items


async def list_objects(core: RegistryCore, user: UserInfo, rt: ResourceType, namespace: str,
                       opts: ListOptions) -> ListResult:
    """A list of `rt` in `namespace` ("" = all) as the spec's list table says (see the module doc).

    Raises Forbidden, MethodNotAllowed, Invalid (422), BadRequest (400), Expired (410),
    ResourceVersionTooLarge (504).
    """
    selection = core.authorized_selection(user, "list", rt, namespace, opts)
    return await select(core, rt, namespace, opts, selection)


async def select(core: RegistryCore, rt: ResourceType, namespace: str, opts: ListOptions,
                 match: Selection) -> ListResult:
    """`list_objects` once authorized: the objects `match` selects, as the list table says."""
    validate_list_options(opts, watch=False)
    prefix = rt.namespace_prefix(namespace if rt.namespaced else None)
    kind = core.kind_cache(rt)
    tokens = core.continue_tokens
    rv, rv_match, limit = opts.resource_version or "", opts.resource_version_match, max(0, opts.limit)
    wait = READ_WAIT if not opts.timeout_seconds or opts.timeout_seconds <= 0 else \
        min(READ_WAIT, float(opts.timeout_seconds))
    start_after = ""
    if opts.continue_token:
        # Continuation: the token's revision and position. The table wins over the error
        # list: resourceVersion "0" with continue is a continuation too.
        revision, start_after, issued = tokens.decode(opts.continue_token, prefix)
        if rv not in ("", "0"):
            raise errors.BadRequest("specifying resource version is not allowed when using continue")
        if tokens.expired(issued):
            raise expired_continue()
        await _reach(core, revision, wait)
        items = await _at_revision(core, rt, prefix, revision, continuation=True)
    elif rv_match == "Exact" or (not rv_match and limit and rv not in ("", "0")):
        revision = parse_resource_version(rv)
        await _reach(core, revision, wait)
        items = await _at_revision(core, rt, prefix, revision, continuation=False)
    elif rv == "":
        # Most Recent: a consistent read; the store answers while the cache lags.
        if await core.cache.wait_fresh(wait):
            revision, items = core.cache.revision, kind.list(prefix)
        else:
            items, revision = await _from_store(core, rt, prefix, None, continuation=False)
    else:
        if rv != "0":  # Not older than N
            await _reach(core, parse_resource_version(rv), wait)
        revision, items = core.cache.revision, kind.list(prefix)
    first = bisect.bisect_right(items, start_after, key=_key) if start_after else 0
    if not limit:
        return ListResult([o for o in items[first:] if match(o)], revision)
    page: list[StoredObject] = []
    i = first
    while i < len(items) and len(page) < limit:
        if match(items[i]):
            page.append(items[i])
        i += 1
    selective = match.selective
    more = any(match(o) for o in items[i:]) if selective else i < len(items)
    if not more or not page:
        return ListResult(page, revision)
    token = tokens.encode(revision, page[-1].key, prefix)
    return ListResult(page, revision, token, None if selective else len(items) - i)


def _key(obj: StoredObject) -> str:
    return obj.key
