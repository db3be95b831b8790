"""`StoredObject`: one object at one resourceVersion, decoded once, encoded once per media type.

The dict is shared by every reader and must never be mutated: copy it
(`obj.copy_dict()`) before changing anything. Encodings are cached on the
object, so a thousand watchers of one event share one set of bytes.

`decode_stored(key, value, revision)` is the one decoder of stored bytes (the
registry, the watch cache and log replays all use it); a value that is not a
JSON object with an object `metadata` raises `CorruptObject` (500, Kubernetes'
`StorageError: corrupt object`). The watch cache's objects decode lazily
(`decode_stored(..., lazy=budget)`): checked at once, decoded when first read,
the newest decodes kept within a `DecodeBudget`. A budget with a `view` (what
the server's own informers cache of every object: `take_view`) keeps that
view of each object its check decoded, so that no object is parsed twice.
"""

from __future__ import annotations

import json
import re
from collections import deque
from typing import Any, Callable

import orjson

from runtime.machinery.errors import InternalError

__all__ = ["StoredObject", "copy_json", "CorruptObject", "DEFAULT_DECODE_BUDGET", "DecodeBudget", "ObjectEncoder", "decode_stored", "dumps_json",
           "loads_json", "object_key"]


_DECODER = json.JSONDecoder()
#: Where orjson may read a number otherwise than `json` (an integer past 64 bits becomes a float): a run of
#: 19 digits, found in bytes as a run of "0" once every digit is "0" and every other byte a space (a tenth
#: of a regular expression's search).
_DIGITS_AS_ZEROS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_RUN = b"0" * 19
_LONG_DIGITS_TEXT = re.compile(r"[0-9]{19}")


def dumps_json(obj: Any) -> bytes:
    """Compact JSON, as stored and as served."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def loads_json(data: bytes | bytearray | str) -> Any:
    """Decode JSON text (UTF-8 bytes, or str) exactly as `json.loads` does, about four times quicker.

    orjson decodes, except where its result could differ from `json`'s: a run of 19 digits anywhere (an
    integer past 64 bits, which orjson turns into a float; a string of digits trips it too, harmlessly),
    and anything orjson refuses (NaN and Infinity, lone surrogates, nesting past 1,024 levels, bad input):
    those go to `json`, whose errors (ValueError; TypeError for what is neither bytes nor text) are raised.
    """
    if isinstance(data, (bytes, bytearray)):
        if _LONG_RUN not in data.translate(_DIGITS_AS_ZEROS):
            try:
                return orjson.loads(data)
            except orjson.JSONDecodeError:
                pass
        data = data.decode()
    elif isinstance(data, str):
        if _LONG_DIGITS_TEXT.search(data) is None:
            try:
                return orjson.loads(data)
            except orjson.JSONDecodeError:
                pass
    else:
        raise TypeError(f"the JSON object must be str or bytes, not {type(data).__name__}")
    return _DECODER.decode(data)


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON-shaped value (dicts, lists, scalars), several times quicker than `copy.deepcopy`:
    what a cache hands out, free to change (the informer caches' objects are shared)."""
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    return value


class StoredObject:
    """An immutable object of a kind at `resource_version`, with cached encodings.

    Built from a decoded dict (`StoredObject(key, obj, revision)`), or from its stored JSON alone
    (`StoredObject.from_json`: what the watch cache holds). The latter decodes `obj` when it is first
    read and keeps it while a `DecodeBudget` holds it: a server of 100,000 objects keeps their bytes,
    not 100,000 decoded dicts (about eight times the bytes), and a GET or LIST in JSON never decodes.
    `name` and `namespace` then come from the key, `labels` are kept once read (what selectors match).
    """

    __slots__ = ("key", "obj", "revision", "_json", "_encoded", "_budget", "_labels", "_view")

    def __init__(self, key: str, obj: dict[str, Any], revision: int, json_bytes: bytes | None = None) -> None:
        self.key = key
        self.obj = obj
        self.revision = revision
        self._json = json_bytes
        self._encoded: dict[str, bytes] | None = None
        self._budget: DecodeBudget | None = None
        self._labels: dict[str, str] | None = None
        self._view: dict[str, Any] | None = None

    @classmethod
    def from_json(cls, key: str, value: bytes, revision: int, budget: "DecodeBudget",
                  view: dict[str, Any] | None = None) -> "StoredObject":
        """The object stored as `value` (valid JSON of an object stamped with `revision`: `decode_stored`
        checks), decoded on first read of `obj`; storage `key` is `/<group>/<plural>/[<namespace>/]<name>`.
        `view`: `budget.view` of the object, made by the check (see `take_view`)."""
        self = cls.__new__(cls)
        self.key, self.revision, self._json, self._encoded, self._budget, self._labels, self._view = \
            key, revision, value, None, budget, None, view
        return self

    def __getattr__(self, name: str) -> Any:
        # Reached only for a slot never set or dropped: `obj` of an object built `from_json`.
        if name != "obj" or self._budget is None:
            raise AttributeError(name)
        obj = self.obj = loads_json(self._json)  # type: ignore[arg-type]  (from_json sets it)
        self._budget.hold(self)
        return obj

    @property
    def is_decoded(self) -> bool:
        """Whether the decoded dict is held now (reading `obj` then costs no decode)."""
        try:
            StoredObject.obj.__get__(self)  # the slot itself, not `__getattr__`'s decode
        except AttributeError:
            return False
        return True

    @property
    def name(self) -> str:
        if self._budget is not None:
            return self.key.rpartition("/")[2]
        return self.obj["metadata"].get("name", "")

    @property
    def namespace(self) -> str:
        if self._budget is not None:
            parts = self.key.split("/")
            return parts[3] if len(parts) == 5 else ""
        return self.obj["metadata"].get("namespace", "")

    @property
    def labels(self) -> dict[str, str]:
        labels = self._labels
        if labels is None:
            labels = self._labels = self.obj["metadata"].get("labels") or {}
        return labels

    def take_view(self, transform: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
        """`transform(obj)`, for a reader that keeps only that (an informer's transform): the view the
        check made, handed out once (its reader keeps it; the object in the watch history then holds
        only bytes), else made now from the dict, or from a decode that is not kept (no decode budget
        spent, no dict retained for one read)."""
        view, budget = self._view, self._budget
        if view is not None and budget is not None and budget.view is transform:
            self._view = None
            return view
        if budget is not None and not self.is_decoded:
            budget.decodes += 1
            return transform(loads_json(self._json))  # type: ignore[arg-type]  (from_json sets it)
        return transform(self.obj)

    def encoded(self, codec: str, encode: Callable[[dict[str, Any]], bytes]) -> bytes:
        """The object's bytes in `codec`, encoded on first use and cached."""
        if codec == "json":
            data = self._json
            if data is None:
                data = self._json = encode(self.obj)
            return data
        encodings = self._encoded
        if encodings is None:
            encodings = self._encoded = {}
        data = encodings.get(codec)
        if data is None:
            data = encodings[codec] = encode(self.obj)
        return data

    def json_bytes(self) -> bytes:
        return self.encoded("json", dumps_json)

    def copy_dict(self) -> dict[str, Any]:
        """A deep copy of the object, free to modify.

        Decoded from the cached JSON bytes (the stored ones, for an object
        read from the store): about three times quicker than `copy.deepcopy`.
        """
        return loads_json(self.json_bytes())

    def with_revision(self, revision: int) -> "StoredObject":
        """The same object stamped with another resourceVersion (a DELETED event's object)."""
        obj = dict(self.obj)
        obj["metadata"] = dict(obj["metadata"], resourceVersion=str(revision))
        return StoredObject(self.key, obj, revision)

    def keep_within(self, budget: "DecodeBudget") -> "StoredObject":
        """This object (built from its dict: a write of this process, a DELETED event's) held as a decoded
        one of `budget`: its JSON kept (encoded now if it has none), its dict dropped once `budget` has kept
        as many newer ones, so the watch cache's history and current objects hold bytes, not dicts. From
        now on its name and namespace come from its storage key. Returns it."""
        if self._budget is None:
            if self._json is None:
                self._json = dumps_json(self.obj)
            self._budget = budget
            budget.keep(self)
        return self

    def _release(self) -> None:
        """Forget the decoded dict (`DecodeBudget`); the next read of `obj` decodes again."""
        if self._budget is not None:
            try:
                del self.obj
            except AttributeError:
                pass


#: Decoded dicts a `DecodeBudget` keeps by default: the newest decodes (a dict is about eight times its JSON;
#: 100,000 of them were three quarters of a server's memory).
DEFAULT_DECODE_BUDGET = 2048


class DecodeBudget:
    """How many objects built `StoredObject.from_json` keep their decoded dict: the last `capacity`
    decoded. An older one drops it and decodes again when next read; whoever still holds the dict keeps
    it (objects are immutable, so two decodes are equal)."""

    def __init__(self, capacity: int = DEFAULT_DECODE_BUDGET,
                 view: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> None:
        self.capacity = capacity
        #: What each object's check keeps of it for `StoredObject.take_view` (None: nothing). Its values
        #: come from orjson's decode, so it keeps no number past 64 bits (metadata's are int64).
        self.view = view
        self._held: deque[StoredObject] = deque()
        #: Decodes so far, kept or not (`StoredObject.take_view`'s): a counting test's figure.
        self.decodes = 0

    def hold(self, stored: StoredObject) -> None:
        """`stored` was just decoded: keep its dict among the newest."""
        self.decodes += 1
        self.keep(stored)

    def keep(self, stored: StoredObject) -> None:
        """Keep `stored`'s dict among the newest, the oldest dropping theirs beyond `capacity`."""
        held = self._held
        held.append(stored)
        if len(held) > self.capacity:
            held.popleft()._release()


class ObjectEncoder:
    """The store's `ValueEncoder` of a decoded object: stamps `metadata.resourceVersion` and encodes JSON.

    `obj` is the object (stamped with the last revision encoded), `value` the
    bytes of that revision. A store event whose `origin` is this encoder at
    its `revision` carries `obj`, so the watch cache takes it as it is rather
    than decoding `value` again (`stored(key)`): one decode and one encode per
    write, shared by the answer and the cache.
    """

    __slots__ = ("obj", "revision", "value", "_stored")

    def __init__(self, obj: dict[str, Any]) -> None:
        self.obj = obj
        self.revision = 0
        self.value = b""
        self._stored: StoredObject | None = None

    def __call__(self, revision: int) -> bytes:
        self.obj["metadata"]["resourceVersion"] = str(revision)
        self.value = dumps_json(self.obj)
        self.revision = revision
        self._stored = None
        return self.value

    def stored(self, key: str, revision: int) -> "StoredObject | None":
        """The object as stored at `revision`, one instance for every caller (so its encodings are made
        once); None when the encoder last ran for another revision."""
        if revision != self.revision or not self.value:
            return None
        if self._stored is None or self._stored.key != key:
            self._stored = StoredObject(key, self.obj, revision, self.value)
        return self._stored


def object_key(namespace: str | None, name: str) -> str:
    """`namespace/name`, or `name` for cluster-scoped objects (client-go's MetaNamespaceKey)."""
    return f"{namespace}/{name}" if namespace else name


class CorruptObject(InternalError):
    """A stored value that cannot be decoded (500 InternalError, as Kubernetes' corrupt object).

    `key` is the storage key; `detail` the decoder's complaint.
    """

    def __init__(self, key: str, detail: str) -> None:
        super().__init__(f"Internal error occurred: StorageError: corrupt object, Code: 7, Key: {key}, "
                         f"ResourceVersion: 0, AdditionalErrorMsg: {detail}")
        self.key = key
        self.detail = detail


def decode_stored(key: str, value: bytes, revision: int | None, origin: object = None,
                  lazy: DecodeBudget | None = None) -> StoredObject:
    """A stored value as an object at `revision` (None: the version written inside it, a past state
    from the log). Raises CorruptObject when it is not a JSON object.

    `origin`: the store event's (`runtime.server.storage.StoreEvent.origin`); this process's own write (an
    `ObjectEncoder` at `revision`) gives the object it encoded, not a second decode of its bytes.
    `lazy`: a value stamped with `revision` is checked (orjson; nothing kept but the budget's `view` of it,
    when it has one) and decoded when first read, within that budget (`StoredObject.from_json`); anything else is decoded now;
    the object of this process's own write is kept within the budget as a decoded one (`keep_within`).
    """
    if isinstance(origin, ObjectEncoder) and revision is not None:
        written = origin.stored(key, revision)
        if written is not None:
            return written if lazy is None else written.keep_within(lazy)
    if lazy is not None and revision is not None:
        checked = _stamped_object(value, revision)
        if checked is not None:
            view = lazy.view(checked) if lazy.view is not None else None
            return StoredObject.from_json(key, value, revision, lazy, view)
    try:
        obj = loads_json(value)
    except (ValueError, TypeError) as exc:
        raise CorruptObject(key, f"couldn't decode the stored object: {exc}") from None
    if not isinstance(obj, dict) or not isinstance(obj.setdefault("metadata", {}), dict):
        raise CorruptObject(key, "couldn't decode the stored object: not a JSON object")
    if revision is None:
        written = str(obj["metadata"].get("resourceVersion") or "0")
        return StoredObject(key, obj, int(written) if written.isdigit() else 0, value)
    if obj["metadata"].get("resourceVersion") != str(revision):
        # Written by a backend that does not embed the revision (or a delete tombstone).
        obj["metadata"]["resourceVersion"] = str(revision)
        return StoredObject(key, obj, revision)
    return StoredObject(key, obj, revision, value)


def _stamped_object(value: bytes, revision: int) -> dict[str, Any] | None:
    """orjson's decode of `value` when it is a JSON object whose `metadata.resourceVersion` is `revision`;
    None otherwise, and for anything orjson refuses that `json` may take (NaN, lone surrogates, nesting
    past 1,024): the eager path judges."""
    try:
        obj = orjson.loads(value)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(obj, dict):
        return None
    meta = obj.get("metadata")
    return obj if isinstance(meta, dict) and meta.get("resourceVersion") == str(revision) else None
