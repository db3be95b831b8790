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

What a page costs: O(log n + page), wherever it is read from. The cache and
its snapshots are bisected from the page's first key (`KindCache.view`);
the store is read with a start key and a limit (`Store.list(prefix,
revision=, start_after=, limit=)`), `limit` entries (500 at a time with
selectors), so a paged list read from the database costs what one full list
does, not a full list per page. A page with selectors reads on
until it is full and one more match shows that the list goes on (at worst
the part of the collection up to the next match, which the next page reads
again).

Caveats:
    A page read from the store gives `remainingItemCount` as the cache now
    counts the keys after the page, an estimate when the list's revision is
    older (Kubernetes documents the field as an estimate; counting exactly at
    an old revision means reading the rest of the collection).

Internal to `runtime.server.registry`: imported by its modules only.
"""

from __future__ import annotations

from typing import Protocol

from runtime.machinery import errors
from runtime.machinery.errors import Cause
from runtime.machinery.storedobject import StoredObject, decode_stored
from runtime.server.rbac.user import UserInfo
from runtime.server.registry.answers import (
    ListResult, expired_continue, expired_list, parse_resource_version, store_errors, too_large,
)
from runtime.server.registry.primitives import READ_WAIT, RegistryCore, Selection
from runtime.machinery.options import ListOptions
from runtime.machinery.scheme import ResourceType
from runtime.machinery.validation.gofmt import go_quote
from runtime.server.watchcache import SortedObjects

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
    values = ", ".join(go_quote(v) for v in supported)
    return field, f"Unsupported value: {go_quote(value)}: supported values: {values}", "FieldValueNotSupported"


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


#: Entries read at a time for a page with selectors (a page without reads `limit`).
SELECTIVE_CHUNK = 500


class _Pages(Protocol):
    """A list's objects at one revision, read in key order a chunk at a time."""

    revision: int

    async def read(self, start_after: str, limit: int) -> tuple[list[StoredObject], bool]:
        """Up to `limit` (0: all) objects with keys > `start_after`, and whether more remain."""
        ...

    def remaining(self, after: str) -> int:
        """How many objects come after key `after` (see the module Caveats for the store)."""
        ...


class _CachePages:
    """Pages of the cache's state (current or a snapshot): bisected, nothing copied."""

    def __init__(self, view: SortedObjects, prefix: str, revision: int) -> None:
        self.view, self.prefix, self.revision = view, prefix, revision

    async def read(self, start_after: str, limit: int) -> tuple[list[StoredObject], bool]:
        # No checkpoint: the current state's keys cannot change while a page is read.
        return self.view.page(self.prefix, start_after, limit)

    def remaining(self, after: str) -> int:
        return self.view.count_after(self.prefix, after)


class _StorePages:
    """Pages of the store at `revision` (None: now, fixed by the first read); objects the cache holds at
    their version are reused, others decoded (500 for a value that does not decode)."""

    def __init__(self, core: RegistryCore, rt: ResourceType, prefix: str, revision: int | None,
                 *, continuation: bool) -> None:
        self.core, self.rt, self.prefix, self.continuation = core, rt, prefix, continuation
        self._at = revision
        self.revision = revision or 0

    async def read(self, start_after: str, limit: int) -> tuple[list[StoredObject], bool]:
        with store_errors(self.rt, continuation=self.continuation):
            entries, at, more = await self.core.store.list(self.prefix, revision=self._at, start_after=start_after,
                                                           limit=limit)
        self._at = self.revision = at
        current = self.core.kind_cache(self.rt).objects
        items = []
        for e in entries:
            cached = current.get(e.key)
            items.append(cached if cached is not None and cached.revision == e.mod_revision
                         else decode_stored(e.key, e.value, e.mod_revision))
        return items, more

    def remaining(self, after: str) -> int:
        kind = self.core.kind_cache(self.rt)
        view = kind.view(kind.revision)
        assert view is not None  # the current state always has a view
        return view.count_after(self.prefix, after)


async def _pages_at(core: RegistryCore, rt: ResourceType, prefix: str, revision: int,
                    *, continuation: bool) -> _Pages:
    """The list under `prefix` exactly at `revision` (<= the cache's): cache, snapshot or store."""
    kind = core.kind_cache(rt)
    if revision == core.cache.revision:
        return _current(core, rt, prefix)
    with store_errors(rt):
        compacted = await core.store.compacted_revision()
    if revision < compacted:
        raise expired_continue() if continuation else expired_list()
    if core.gate(SNAPSHOT_GATE):
        view = kind.view(revision)
        if view is not None:
            return _CachePages(view, prefix, revision)
    return _StorePages(core, rt, prefix, revision, continuation=continuation)


def _current(core: RegistryCore, rt: ResourceType, prefix: str) -> _CachePages:
    kind = core.kind_cache(rt)
    view = kind.view(kind.revision)
    assert view is not None  # the current state always has a view
    return _CachePages(view, prefix, kind.revision)


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
    tokens = core.continue_tokens
    rv, rv_match, limit = opts.resource_version or "", opts.resource_version_match, max(0, opts.limit)
    wait = READ_WAIT if not opts.timeout_seconds or opts.timeout_seconds <= 0 else \
        min(READ_WAIT, float(opts.timeout_seconds))
    start_after = ""
    pages: _Pages
    if opts.continue_token:
        # Continuation: the token's revision and position. The table wins over the error
        # list: resourceVersion "0" with continue is a continuation too.
        revision, start_after, issued = tokens.decode(opts.continue_token, prefix)
        if rv not in ("", "0"):
            raise errors.BadRequest("specifying resource version is not allowed when using continue")
        if tokens.expired(issued):
            raise expired_continue()
        await _reach(core, revision, wait)
        pages = await _pages_at(core, rt, prefix, revision, continuation=True)
    elif rv_match == "Exact" or (not rv_match and limit and rv not in ("", "0")):
        revision = parse_resource_version(rv)
        await _reach(core, revision, wait)
        pages = await _pages_at(core, rt, prefix, revision, continuation=False)
    elif rv == "":
        # Most Recent: a consistent read; the store answers while the cache lags.
        if await core.wait_fresh(wait):
            pages = _current(core, rt, prefix)
        else:
            pages = _StorePages(core, rt, prefix, None, continuation=False)
    else:
        if rv != "0":  # Not older than N
            await _reach(core, parse_resource_version(rv), wait)
        pages = _current(core, rt, prefix)
    selective = match.selective
    page, more = await _read_page(pages, start_after, limit, match, selective)
    if not more or not page:
        return ListResult(page, pages.revision)
    token = tokens.encode(pages.revision, page[-1].key, prefix)
    return ListResult(page, pages.revision, token, None if selective else pages.remaining(page[-1].key))


async def _read_page(pages: _Pages, start_after: str, limit: int, match: Selection,
                     selective: bool) -> tuple[list[StoredObject], bool]:
    """The first `limit` (0: all) objects after `start_after` that `match` keeps; and whether another follows.

    Without selectors one read of `limit` entries answers (the store says
    whether more follow); with selectors reads go on, `SELECTIVE_CHUNK` at a
    time, until the page is full and one more match is seen, or the end.
    """
    if not limit:
        items, _ = await pages.read(start_after, 0)
        return [o for o in items if match(o)], False
    page: list[StoredObject] = []
    after = start_after
    while True:
        wanted = limit - len(page)
        items, more = await pages.read(after, max(wanted, SELECTIVE_CHUNK) if selective else wanted)
        for obj in items:
            if match(obj):
                if len(page) == limit:
                    return page, True
                page.append(obj)
        if not more or not items:
            return page, False
        if not selective and len(page) == limit:
            return page, True
        after = items[-1].key
