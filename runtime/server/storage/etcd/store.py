"""`EtcdStore`: the `Store` log in a real etcd v3 cluster, as kube-apiserver keeps its objects.

Contract: the full `Store` semantics (see `runtime.server.storage.base`), with
etcd's MVCC revision as the revision (the resourceVersion) and these mappings:

- Keys: the store's key prefix (default `/registry`) joined to the store key,
  so `/rbac.authorization/clusterroles/admin` lives at
  `/registry/rbac.authorization/clusterroles/admin`. Store keys start with '/'.
- create: a txn comparing `create_revision == 0`, then put. update/delete: a
  txn comparing `version > 0` (the key exists) and, when a revision is
  expected, `mod_revision == expected`; its else-branch reads the key, so
  KeyNotFound or RevisionConflict (with the current entry) costs no second
  round trip. A refused txn writes nothing and uses no revision.
- list: one range read at one revision, from the page's first key with
  etcd's `limit`; `more` is etcd's. A revision below etcd's compaction
  raises Compacted; one above its head is read as now.
- watch: an etcd watch from `after_revision` with `prev_kv`, events at or
  below it dropped (starting one early makes etcd refuse exactly the
  starts our contract refuses); PUT is ADDED when create_revision ==
  mod_revision, else MODIFIED; DELETE is DELETED with the previous value.
  `progress_notify` lets an idle watch learn the revision. A broken stream is
  reopened from the last revision seen; when no endpoint answers, the watch
  raises StoreUnavailable and the caller resumes from its last revision.
  The event of this store's own write carries the write's encoder as its
  `origin`, whether it comes before or after etcd's answer to the txn: the
  encoder is kept from the moment the txn is sent, under the key and the
  bytes sent, and an event of that key with those bytes takes it (the same
  bytes are the same object). The watch cache then takes the encoder's object
  instead of decoding the value again (see `runtime.server.storage.base.StoreEvent`); it
  still decodes when etcd gave the write another revision than predicted
  (below) and the event came before the answer.

The ValueEncoder and the revision: etcd assigns the revision when it applies
the txn, after the value was sent. The store passes the encoder its
prediction (the revision after the newest it saw and after those it guessed
for its writes in flight): exact while this store is the only writer and
its writes do not overlap.
When the write gets another revision the store calls the encoder again with
the real one for the returned Entry (so the caller's answer carries the true
resourceVersion) and counts a misprediction in `statistics()`; the bytes
stored keep the predicted one. Readers take the revision from
`mod_revision`, as kube-apiserver does (it never trusts a resourceVersion
inside etcd's value): the registry's decoder of stored values re-stamps it.

The compacted revision: etcd does not report it. `compacted_revision()` is
the newest this store knows: its own compactions, and others' learned from
a refused read or watch (a watch from below the compaction answers with
`compact_revision`; a refused range sends such a watch to find out).

Caveats:
- Every call to etcd is bounded by `timeout` seconds; the store then raises
  StoreUnavailable. The outcome of such a write is unknown (as with etcd
  itself), as is that of a write whose caller was cancelled while it ran.
- Events of one revision written by another client's multi-key txn are
  delivered together, but a stream broken between them resumes after that
  revision. This store's own writes are one key per revision.
- A watch's stream has no read timeout: an etcd that stops answering without
  closing the connection is noticed at the next progress notification.
- With TLS client authentication (`--client-cert-auth`), etcd 3.4's JSON
  gateway dials etcd's own gRPC port with etcd's serving certificate, so that
  certificate must allow client auth as well as server auth.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, AsyncIterator, Coroutine, TypeVar

import trio

from runtime.server.storage.base import (
    Compacted, Entry, StoreEvent, KeyExists, KeyNotFound, Page, RevisionConflict, StoreError,
    StoreStatistics, StoreUnavailable, ValueEncoder,
)
from runtime.server.storage.etcd.client import (
    COMPACTED_MESSAGE, FUTURE_MESSAGE, EtcdClient, EtcdRequestError, b64, parse_endpoints,
    tls_context, unb64,
)
from runtime.server.storage.fanout import as_bytes

__all__ = ["EtcdStore", "EtcdStoreStatistics", "DEFAULT_PREFIX", "COMPACT_KEY"]

#: kube-apiserver's default --etcd-prefix.
DEFAULT_PREFIX = "/registry"

#: The key several servers' compactors take turns through (kube-apiserver's `compact_rev_key`), kept
#: under the prefix so that its writes reach every watch cache as progress (see `compact_in_turn`).
COMPACT_KEY = "/compact_rev_key"

_T = TypeVar("_T")

#: A broken watch stream is reopened this many times in a row without a message before giving up.
_REOPENS = 3

#: At most this many own writes wait for their watch event to carry their encoder (see `_awaited`);
#: `EtcdStore(awaited_max=)` takes another bound.
_AWAITED_MAX = 4096

_Awaited = tuple[str, bytes]  # an own write a watch has yet to deliver: (store key, the value sent)


@dataclass(frozen=True)
class EtcdStoreStatistics(StoreStatistics):
    """A snapshot of an EtcdStore.

    `revision` is the newest etcd revision this store has seen; `writes`
    counts applied writes and `mispredicted` those whose revision differed
    from the one predicted for the encoder (each cost a second encode);
    `keys_read` the keys every list so far received from etcd; `calls` the
    number of calls awaiting etcd's answer (a watch stream counts while it
    opens); `delivered` the revision every open watch has delivered up to
    (the least of them; `revision` when none is open): a watch below
    `revision` has events on their way; `awaited` the own writes whose
    encoder waits for a watch's event to take it (see the module docstring).
    """

    writes: int
    mispredicted: int
    endpoint: str
    keys_read: int = 0
    calls: int = 0
    delivered: int = 0
    awaited: int = 0


class _Refused(Exception):
    """A txn's compare failed; `current` is the key's kv (None: the key is missing)."""

    def __init__(self, current: dict[str, Any] | None) -> None:
        super().__init__()
        self.current = current


def _range_end(key: bytes) -> bytes:
    """The least key greater than every key starting with `key` (etcd's prefix range end)."""
    stripped = key.rstrip(b"\xff")
    if not stripped:
        return b"\x00"  # etcd: every key >= the start
    return stripped[:-1] + bytes([stripped[-1] + 1])


class EtcdStore:
    """The `Store` protocol over etcd v3. Open with `await EtcdStore.open("127.0.0.1:2379")`."""

    def __init__(self, client: EtcdClient, *, prefix: str = DEFAULT_PREFIX, awaited_max: int = _AWAITED_MAX) -> None:
        """Use `EtcdStore.open()`; this takes an already made client (or a fake of its `call` and `stream`).

        `awaited_max` bounds the own writes kept for their watch event (the oldest goes first).
        """
        self._client = client
        self._prefix = prefix.rstrip("/")
        self._root = (self._prefix + "/").encode()
        self._revision = 0     # the newest header revision seen
        self._inflight = 0     # writes sent, not answered
        self._predicted = 0    # the last revision predicted for a write in flight
        self._compacted = 0    # the newest compaction known (see the module docstring)
        self._writes = 0
        self._mispredicted = 0
        self._keys_read = 0
        self._watches: dict[object, int] = {}  # each open watch's delivered revision
        # Own writes a watch has yet to deliver: (store key, value sent) -> the write's encoder, from
        # before the txn is sent until a watch's event with those bytes takes it as its origin.
        self._awaited: dict[_Awaited, ValueEncoder] = {}
        self._awaited_max = awaited_max
        self._calls = 0
        self._closed = False
        self._scopes: set[trio.CancelScope] = set()  # calls to cut short on aclose()

    @classmethod
    async def open(cls, endpoints: str | list[str], *, prefix: str = DEFAULT_PREFIX,
                   secure: bool = False, cafile: str | None = None, certfile: str | None = None,
                   keyfile: str | None = None, timeout: float = 5.0) -> EtcdStore:
        """Connect to etcd at `endpoints` (`host:port[,host:port]`, or a list of URLs).

        TLS when `secure` or any of cafile/certfile/keyfile is given (kube-apiserver's
        --etcd-cafile/--etcd-certfile/--etcd-keyfile). Checks that one endpoint
        answers. Raises StoreUnavailable, ValueError (bad endpoint or TLS files).
        """
        secure = secure or bool(cafile or certfile or keyfile)
        urls = parse_endpoints(endpoints if isinstance(endpoints, str) else ",".join(endpoints),
                               secure=secure)
        ctx = tls_context(cafile, certfile, keyfile) if secure else None
        store = cls(EtcdClient(urls, ssl_context=ctx, timeout=timeout), prefix=prefix)
        try:
            await store.current_revision()
        except BaseException:
            await store.aclose()
            raise
        return store

    # -- keys and answers -------------------------------------------------------

    def _key(self, key: str) -> bytes:
        if not key.startswith("/"):
            raise ValueError(f"store keys start with '/': {key!r}")
        return self._prefix.encode() + key.encode()

    def _store_key(self, raw: bytes) -> str:
        return raw[len(self._prefix.encode()):].decode()

    def _entry(self, kv: dict[str, Any]) -> Entry:
        return Entry(self._store_key(unb64(kv.get("key"))), unb64(kv.get("value")),
                     int(kv.get("mod_revision", 0)), int(kv.get("create_revision", 0)))

    def _saw(self, answer: dict[str, Any]) -> int:
        """Note the answer's header revision; returns it."""
        rev = int(answer.get("header", {}).get("revision", 0))
        self._revision = max(self._revision, rev)
        return rev

    async def _call(self, path: str, body: dict[str, Any], *, idempotent: bool) -> dict[str, Any]:
        self._calls += 1
        try:
            answer = await self._guarded(self._client.call(path, body, idempotent=idempotent))
        finally:
            self._calls -= 1
        self._saw(answer)
        return answer

    def _full_prefix(self, prefix: str) -> bytes:
        if prefix and not prefix.startswith("/"):
            raise ValueError(f"store keys start with '/': prefix {prefix!r}")
        return self._prefix.encode() + prefix.encode() if prefix else self._root

    # -- writes -----------------------------------------------------------------

    async def _write(self, key: str, encode: ValueEncoder | None, compare: list[dict[str, Any]],
                     op: str) -> tuple[dict[str, Any], int, bytes | None]:
        """Run one txn: `compare`, then `op` ("create", "put" or "delete") on `key`, else read `key`.

        Returns (the success branch's answer, the write's revision, the value
        for the returned Entry). Raises `_Refused` (carrying the key's current
        kv, None when missing) when the compare failed.
        """
        k = b64(self._key(key))
        # Writes in flight take the revisions after the newest seen, in the order sent (a guess:
        # their requests may reach etcd in another order); once none is in flight, the guess resets.
        predicted = self._predicted = max(self._revision, self._predicted) + 1
        value = as_bytes(encode(predicted)) if encode is not None else None
        if op != "delete":
            assert value is not None
            # A replaced key's prev_kv gives its create_revision; a created key has none to read.
            success = {"request_put": {"key": k, "value": b64(value), "prev_kv": op == "put"}}
        else:
            success = {"request_delete_range": {"key": k, "prev_kv": True}}
        body = {"compare": compare, "success": [success], "failure": [{"request_range": {"key": k}}]}
        awaited = self._await_event(key, value, encode)
        self._inflight += 1
        try:
            answer = await self._call("/v3/kv/txn", body, idempotent=False)
        except BaseException:
            self._settle(awaited)  # the outcome is unknown: an event of it, if any, is decoded
            raise
        finally:
            self._inflight -= 1
            if not self._inflight:
                self._predicted = self._revision  # a refused write's guess must not linger
        rev = int(answer.get("header", {}).get("revision", 0))
        branch = (answer.get("responses") or [{}])[0]
        if not answer.get("succeeded"):
            self._settle(awaited)
            kvs = branch.get("response_range", {}).get("kvs") or []
            raise _Refused(kvs[0] if kvs else None)
        self._writes += 1
        self._settle(awaited, rev)
        if value is not None and encode is not None and rev != predicted:
            self._mispredicted += 1
            value = _encode_again(encode, rev, value)
        return branch, rev, value

    def _await_event(self, key: str, value: bytes | None, encode: ValueEncoder | None) -> _Awaited | None:
        """Keep the encoder of an own write for its watch event (none when no watch is open)."""
        if value is None or encode is None or not self._watches:
            return None
        awaited = self._awaited
        while len(awaited) >= self._awaited_max:  # bounded: the oldest goes first
            del awaited[next(iter(awaited))]
        entry = (key, value)
        awaited[entry] = encode
        return entry

    def _settle(self, entry: _Awaited | None, revision: int = 0) -> None:
        """Drop an own write's entry once no watch can take it: the write failed or is in doubt (no
        revision), or every watch is already past its revision (its event went by: a watch closed)."""
        if entry is None or entry not in self._awaited:
            return
        if not revision or min(self._watches.values(), default=revision) >= revision:
            del self._awaited[entry]

    async def _write_existing(self, key: str, encode: ValueEncoder | None, op: str,
                              expected_revision: int | None) -> tuple[dict[str, Any], int, bytes | None]:
        """`_write` of `op` on a key that must exist, at `expected_revision` when given.

        Raises KeyNotFound, RevisionConflict (with the key's current entry), StoreUnavailable.
        """
        k = b64(self._key(key))
        # version > 0: the key exists, so an unconditional write still reports KeyNotFound.
        compare = [{"target": "VERSION", "key": k, "version": "0", "result": "GREATER"}]
        if expected_revision is not None:
            compare.append({"target": "MOD", "key": k, "mod_revision": str(expected_revision),
                            "result": "EQUAL"})
        try:
            return await self._write(key, encode, compare, op)
        except _Refused as refused:
            if refused.current is None:
                raise KeyNotFound(key) from None
            raise RevisionConflict(key, self._entry(refused.current)) from None

    async def create(self, key: str, encode: ValueEncoder) -> Entry:
        """Store a new key. Returns its entry. Raises KeyExists, StoreUnavailable."""
        k = b64(self._key(key))
        compare = [{"target": "CREATE", "key": k, "create_revision": "0", "result": "EQUAL"}]
        try:
            _, rev, value = await self._write(key, encode, compare, "create")
        except _Refused:
            raise KeyExists(key) from None
        assert value is not None
        return Entry(key, value, rev, rev)

    async def update(self, key: str, encode: ValueEncoder, *, expected_revision: int | None) -> Entry:
        """Replace a key's value. Returns the new entry.

        Raises KeyNotFound, RevisionConflict, StoreUnavailable.
        """
        branch, rev, value = await self._write_existing(key, encode, "put", expected_revision)
        assert value is not None
        prev = branch.get("response_put", {}).get("prev_kv") or {}
        return Entry(key, value, rev, int(prev.get("create_revision", rev)))

    async def delete(self, key: str, *, expected_revision: int | None) -> tuple[int, Entry]:
        """Delete a key. Returns (delete revision, last entry).

        Raises KeyNotFound, RevisionConflict, StoreUnavailable.
        """
        branch, rev, _ = await self._write_existing(key, None, "delete", expected_revision)
        return rev, self._entry(branch["response_delete_range"]["prev_kvs"][0])

    # -- reads ------------------------------------------------------------------

    async def get(self, key: str) -> Entry | None:
        """The key's current entry, or None. Raises StoreUnavailable."""
        answer = await self._call("/v3/kv/range", {"key": b64(self._key(key))}, idempotent=True)
        kvs = answer.get("kvs") or []
        return self._entry(kvs[0]) if kvs else None

    async def list(self, prefix: str, *, revision: int | None = None, start_after: str = "",
                   limit: int = 0) -> Page:
        """A page of the entries under `prefix` sorted by key, as of `revision` (None or future: now).

        Keys > `start_after`, at most `limit` (0: all): one range read.
        Raises Compacted, StoreUnavailable.
        """
        full = self._full_prefix(prefix)
        start = self._key(start_after) + b"\x00" if start_after and start_after >= prefix else full
        body: dict[str, Any] = {"key": b64(start), "range_end": b64(_range_end(full))}
        if limit:
            body["limit"] = str(limit)
        if revision is not None:
            body["revision"] = str(max(revision, 1))
        try:
            answer = await self._call("/v3/kv/range", body, idempotent=True)
        except EtcdRequestError as exc:
            if revision is not None and FUTURE_MESSAGE in exc.message:
                return await self.list(prefix, start_after=start_after, limit=limit)
            if revision is not None and COMPACTED_MESSAGE in exc.message:
                raise Compacted(revision, await self._learn_compaction(revision)) from None
            raise
        at = revision if revision is not None else self._saw(answer)
        entries = [self._entry(kv) for kv in answer.get("kvs") or []]
        self._keys_read += len(entries)
        return Page(entries, at, bool(answer.get("more")))

    async def current_revision(self) -> int:
        """etcd's current revision (one cheap range: count only, one key). Raises StoreUnavailable."""
        answer = await self._call("/v3/kv/range", {"key": b64(self._root), "count_only": True},
                                  idempotent=True)
        return self._saw(answer)

    async def compacted_revision(self) -> int:
        """The newest compaction this store knows of (see the module docstring)."""
        return self._compacted

    # -- watch ------------------------------------------------------------------

    async def watch(self, prefix: str, *, after_revision: int) -> AsyncIterator[StoreEvent]:
        """Events under `prefix` with revision > after_revision, in order, forever.

        Raises Compacted (first iteration, or when a reopened stream finds its
        start compacted), StoreUnavailable when no endpoint answers, StoreError
        after aclose().
        """
        if self._closed:
            raise StoreError("store is closed")
        if after_revision < self._compacted:
            raise Compacted(after_revision, self._compacted)
        full = self._full_prefix(prefix)
        last = after_revision  # every event up to here was delivered
        failures = 0           # streams in a row that failed or ended before any message
        token = object()
        self._watches[token] = last
        try:
            while True:
                # Starting at `last` (not last + 1) makes etcd refuse a compacted `last`.
                request = {"create_request": {
                    "key": b64(full), "range_end": b64(_range_end(full)),
                    "start_revision": str(max(last, 1)), "prev_kv": True, "progress_notify": True}}
                try:
                    async with AsyncExitStack() as stack:
                        self._calls += 1
                        try:
                            lines = await self._guarded(
                                stack.enter_async_context(self._client.stream("/v3/watch", request)))
                        finally:
                            self._calls -= 1
                        while (message := await self._guarded(lines.next())) is not None:
                            failures = 0
                            compact = int(message.get("compact_revision", 0))
                            if compact:
                                self._compacted = max(self._compacted, compact)
                                raise Compacted(last, compact)
                            if message.get("canceled"):
                                raise StoreError(f"etcd canceled the watch: {message.get('cancel_reason', '')}")
                            events = message.get("events") or []
                            if not events and not message.get("created"):
                                last = self._watches[token] = max(last, self._saw(message))  # progress
                            for raw in events:
                                event = self._event(raw)
                                if event.revision > last:
                                    last = self._watches[token] = event.revision
                                    yield event
                except StoreUnavailable:
                    if failures >= _REOPENS or self._closed:
                        raise
                # Broken or ended: reopen from `last` at once (another endpoint, or
                # the same one back); give up after a few failures in a row.
                failures += 1
        finally:
            del self._watches[token]
            if not self._watches:
                self._awaited.clear()  # no watch is left to take them

    def _event(self, raw: dict[str, Any]) -> StoreEvent:
        kv, prev = raw.get("kv") or {}, raw.get("prev_kv")
        key, rev = self._store_key(unb64(kv.get("key"))), int(kv.get("mod_revision", 0))
        prev_value = unb64(prev.get("value")) if prev else None
        if raw.get("type") == "DELETE":
            return StoreEvent("DELETED", key, rev, None, prev_value)
        value = unb64(kv.get("value"))
        origin = self._awaited.pop((key, value), None) if self._awaited else None
        if int(kv.get("create_revision", 0)) == rev:
            return StoreEvent("ADDED", key, rev, value, None, origin)
        return StoreEvent("MODIFIED", key, rev, value, prev_value, origin)

    async def _guarded(self, call: Coroutine[Any, Any, _T]) -> _T:
        """Await `call` so that aclose() can cut it short: it then raises StoreError."""
        if self._closed:
            call.close()
            raise StoreError("store is closed")
        with trio.CancelScope() as scope:
            self._scopes.add(scope)
            try:
                return await call
            finally:
                self._scopes.discard(scope)
        raise StoreError("store is closed")  # reached only when aclose() cancelled the scope

    async def _learn_compaction(self, requested: int) -> int:
        """etcd's compacted revision, known to be above `requested`: a watch from it says which."""
        if self._compacted > requested:
            return self._compacted
        body = {"create_request": {"key": b64(self._root), "start_revision": str(max(requested, 1))}}
        try:
            with trio.move_on_after(self._client.timeout):
                async with self._client.stream("/v3/watch", body) as lines:
                    while (message := await lines.next()) is not None:
                        if int(message.get("compact_revision", 0)):
                            self._compacted = max(self._compacted, int(message["compact_revision"]))
                            break
        except StoreUnavailable:
            pass  # the range said compacted: requested + 1 is a true lower bound
        return max(self._compacted, requested + 1)

    # -- maintenance ------------------------------------------------------------

    async def compact(self, revision: int) -> None:
        """Compact etcd's history at `revision` (not physical: etcd frees space in the background).

        Compacts the whole cluster, not only this store's prefix, as
        kube-apiserver's compactor does. A revision at or below the compacted
        one is a no-op. Raises ValueError for a revision newer than the
        current one, StoreUnavailable.
        """
        if revision <= self._compacted:
            return
        try:
            await self._call("/v3/kv/compaction", {"revision": str(revision)}, idempotent=True)
        except EtcdRequestError as exc:
            if FUTURE_MESSAGE in exc.message:
                raise ValueError(f"cannot compact at {revision}: it is a future revision") from None
            if COMPACTED_MESSAGE not in exc.message:
                raise
        self._compacted = max(self._compacted, revision)

    async def compact_in_turn(self, turn: int, revision: int) -> tuple[int, int]:
        """One tick of kube-apiserver's compactor, shared with every store on this etcd and prefix.

        `turn` is the version of the compaction key (`COMPACT_KEY` under the
        prefix) this store saw at its last tick, `revision` etcd's revision
        then (0 at the first tick). One txn puts `revision` there if the key's
        version is still `turn`; only the store whose txn succeeds compacts
        (at `revision`, history one interval old; never at 0). So of several
        servers ticking every interval, one compacts per interval: the others
        find the version moved and learn the new one. Returns (the key's
        version now, etcd's revision now): the next tick's arguments. Raises
        StoreUnavailable; a failed compaction after a won txn raises too (the
        turn is then taken: the next one compacts).
        """
        k = b64(self._key(COMPACT_KEY))
        body = {"compare": [{"target": "VERSION", "key": k, "version": str(turn), "result": "EQUAL"}],
                "success": [{"request_put": {"key": k, "value": b64(str(revision).encode())}}],
                "failure": [{"request_range": {"key": k}}]}
        answer = await self._call("/v3/kv/txn", body, idempotent=False)
        now = int(answer.get("header", {}).get("revision", 0))
        if not answer.get("succeeded"):
            kvs = (answer.get("responses") or [{}])[0].get("response_range", {}).get("kvs") or []
            return (int(kvs[0].get("version", 0)) if kvs else 0), now
        if revision:
            await self.compact(revision)
        return turn + 1, now

    def statistics(self) -> EtcdStoreStatistics:
        """Revisions seen, open watches, writes, encoder mispredictions, own writes awaiting their event."""
        return EtcdStoreStatistics(self._revision, self._compacted, len(self._watches), self._writes,
                                   self._mispredicted, self._client.endpoint, self._keys_read, self._calls,
                                   min(self._watches.values(), default=self._revision), len(self._awaited))

    async def aclose(self) -> None:
        """Refuse further calls, end watches and calls in flight (StoreError), close connections."""
        self._closed = True
        for scope in list(self._scopes):
            scope.cancel()
        await self._client.aclose()


def _encode_again(encode: ValueEncoder, revision: int, sent: bytes) -> bytes:
    """The encoder's value for the revision the write got; the sent bytes if it now fails.

    The write is applied by now: an encoder that fails the second time must
    not turn it into an error. The sent bytes differ only in the embedded revision.
    """
    try:
        return as_bytes(encode(revision))
    except Exception:
        return sent
