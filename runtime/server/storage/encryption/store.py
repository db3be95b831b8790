"""`EncryptingStore`: a `Store` that seals values on their way in and opens them on their way out.

Wraps any backend (memory, SQLite, etcd, a store `--workers` share): the
backend, its log and a snapshot of it hold what the configuration's first
provider wrote (`k8s:enc:<provider>:v1:<key>:...`); everything that reads
through the wrapper (gets, lists, watches, the watch cache) sees plaintext.
The storage key is each value's context (AES-GCM's authenticated data).

Own writes keep their origin: the backend's events carry the sealing
encoder, whose plaintext (and the registry's encoder inside it) the wrapper
hands on, so the watch cache takes this process's writes without decoding or
decrypting them again (`StoreEvent.origin`).

A value no provider can read comes out as `Unreadable`: bytes (the stored
ones) whose decoding raises ValueError with the transformer's words, so the
object's decoder reports it as a corrupt object (500 InternalError) and the
rest of the kind is served, as a value that does not decode is.

`stale(key)`: whether the key's stored value was read with other than the
write key (kube's stale transform): a rewrite of the unchanged object must
then reach the store (key rotation). `swap(config)` puts a new configuration
in force (automatic reload).

Internal to `runtime.server.storage.encryption`: imported by its modules only.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, AsyncIterator, Callable

from runtime.server.storage.base import Entry, Page, RevisionConflict, StoreEvent, ValueEncoder
from runtime.server.storage.encryption.config import EncryptionConfig
from runtime.server.storage.encryption.providers import PrefixTransformers, TransformError

__all__ = ["EncryptingStore", "Unreadable"]


class Unreadable(bytes):
    """A stored value no transformer could read: the stored bytes; `decode()` raises ValueError(`reason`)."""

    reason: str

    def __new__(cls, value: bytes, reason: str) -> "Unreadable":
        made = super().__new__(cls, value)
        made.reason = reason
        return made

    def decode(self, *args: Any, **kwargs: Any) -> str:  # type: ignore[override]
        raise ValueError(self.reason)


def _prefix_of(key: str) -> str | None:
    """`/<group>/<plural>/` of a key `/<group>/<plural>/...` (None for other keys: they pass untouched)."""
    second = key.find("/", 1)
    third = key.find("/", second + 1) if second > 1 else -1
    return key[:third + 1] if third > second + 1 else None


class _Sealing:
    """The encoder handed to the backend: the caller's encoder, then the write provider.

    Remembers what it sealed (plaintext by ciphertext), so the entry and the
    live event of the write need no decryption; `inner` is the caller's encoder.
    """

    __slots__ = ("inner", "_transformer", "_context", "_made")

    def __init__(self, inner: ValueEncoder, transformer: PrefixTransformers, key: str) -> None:
        self.inner = inner
        self._transformer = transformer
        self._context = key.encode()
        self._made: list[tuple[bytes, bytes]] = []

    def __call__(self, revision: int) -> bytes:
        plain = self.inner(revision)
        sealed = self._transformer.to_storage(plain, self._context)
        self._made.append((sealed, plain))
        return sealed

    def plain_of(self, value: bytes) -> bytes | None:
        for sealed, plain in reversed(self._made):
            if sealed is value or sealed == value:
                return plain
        return None


class EncryptingStore:
    """A `Store` over `store`, sealing and opening values as `config` says (see the module doc).

    Its members are the `Store` protocol's, plus `follow` when the wrapped
    store has one, `stale(key)` and `swap(config)`.
    """

    def __init__(self, store: Any, config: EncryptionConfig) -> None:
        self._store = store
        self.config = config
        self._transformers: dict[str, PrefixTransformers | None] = {}
        if getattr(store, "follow", None) is not None:  # the watch cache asks for it, and watches otherwise
            self.follow = self._follow

    def swap(self, config: EncryptionConfig) -> None:
        """Put `config` in force: writes from now on use its first provider; reads try all of its."""
        self.config = config
        self._transformers = {}

    def _transformer(self, key: str) -> PrefixTransformers | None:
        """The transformer of `key`'s resource (None: a key of no resource, passed as it is)."""
        prefix = _prefix_of(key)
        if prefix is None:
            return None
        try:
            return self._transformers[prefix]
        except KeyError:
            found = self._transformers[prefix] = self.config.transformer_for(prefix)
            return found

    def _seal(self, key: str, encode: ValueEncoder) -> ValueEncoder:
        transformer = self._transformer(key)
        return encode if transformer is None else _Sealing(encode, transformer, key)

    def _open(self, key: str, value: bytes) -> bytes:
        transformer = self._transformer(key)
        if transformer is None:
            return value
        try:
            return transformer.from_storage(value, key.encode())[0]
        except TransformError as exc:
            return Unreadable(value, str(exc))

    def _open_entry(self, entry: Entry, encode: ValueEncoder | None = None) -> Entry:
        plain = encode.plain_of(entry.value) if isinstance(encode, _Sealing) else None
        return replace(entry, value=plain if plain is not None else self._open(entry.key, entry.value))

    def _open_event(self, event: StoreEvent) -> StoreEvent:
        origin = event.origin
        value = event.value
        if value is not None:
            plain = origin.plain_of(value) if isinstance(origin, _Sealing) else None
            value = plain if plain is not None else self._open(event.key, value)
        prev = self._open(event.key, event.prev_value) if event.prev_value is not None else None
        return StoreEvent(event.type, event.key, event.revision, value, prev,
                          origin.inner if isinstance(origin, _Sealing) else origin)

    async def stale(self, key: str) -> bool:
        """Whether `key`'s stored value was sealed by other than the write provider and key (False: none, or
        unreadable)."""
        transformer = self._transformer(key)
        if transformer is None or not transformer.rotating:  # one way to read: never stale, nothing to ask
            return False
        entry = await self._store.get(key)
        if entry is None:
            return False
        try:
            return transformer.from_storage(entry.value, key.encode())[1]
        except TransformError:
            return False

    async def create(self, key: str, encode: ValueEncoder) -> Entry:
        sealing = self._seal(key, encode)
        return self._open_entry(await self._store.create(key, sealing), sealing)

    async def update(self, key: str, encode: ValueEncoder, *, expected_revision: int | None) -> Entry:
        sealing = self._seal(key, encode)
        try:
            entry = await self._store.update(key, sealing, expected_revision=expected_revision)
        except RevisionConflict as exc:
            raise RevisionConflict(key, self._open_entry(exc.current)) from None
        return self._open_entry(entry, sealing)

    async def delete(self, key: str, *, expected_revision: int | None) -> tuple[int, Entry]:
        try:
            revision, last = await self._store.delete(key, expected_revision=expected_revision)
        except RevisionConflict as exc:
            raise RevisionConflict(key, self._open_entry(exc.current)) from None
        return revision, self._open_entry(last)

    async def get(self, key: str) -> Entry | None:
        entry = await self._store.get(key)
        return self._open_entry(entry) if entry is not None else None

    async def list(self, prefix: str, **options: Any) -> Page:
        entries, revision, more = await self._store.list(prefix, **options)
        return Page([self._open_entry(e) for e in entries], revision, more)

    async def _opened(self, events: AsyncIterator[StoreEvent]) -> AsyncIterator[StoreEvent]:
        try:
            async for event in events:
                yield self._open_event(event)
        finally:
            await events.aclose()  # type: ignore[attr-defined]

    def watch(self, prefix: str, *, after_revision: int) -> AsyncIterator[StoreEvent]:
        return self._opened(self._store.watch(prefix, after_revision=after_revision))

    def _follow(self, prefix: str, *, after_revision: int, sink: Callable[[StoreEvent], None]
                ) -> AsyncIterator[StoreEvent]:
        events = self._store.follow(prefix, after_revision=after_revision,
                                    sink=lambda event: sink(self._open_event(event)))
        return self._opened(events)

    async def current_revision(self) -> int:
        return await self._store.current_revision()

    async def compacted_revision(self) -> int:
        return await self._store.compacted_revision()

    async def compact(self, revision: int) -> None:
        await self._store.compact(revision)

    async def aclose(self) -> None:
        await self._store.aclose()
