"""Wire codecs of the HTTP layer: request bodies in (JSON, YAML, Protobuf, CBOR) and answers out.

- `decode_body(codec, raw)` decodes a request body, keeping what field
  validation needs: keys named twice (JSON and YAML), with their paths. YAML
  is loaded safely (only the YAML core types: no Python tags) and its alias
  expansion is bounded (`MAX_YAML_NODES`), so a "billion laughs" body is a
  400, never expanded. CBOR follows Kubernetes' decoder
  (`runtime.machinery.serializer.cbor`: duplicate keys are a 400 outright).
- `encode(codec, doc)` writes one document; `encode_stored` a stored object
  from its per-resourceVersion cache.
- `encode_list_chunks(codec, header, items)` writes a list item by item for
  JSON and Protobuf (Kubernetes' streaming collection encoders), so a huge
  list is never held whole as one bytes object; other codecs build the
  document. `coalesce` groups the chunks into writes of a useful size,
  `gzip_chunks` compresses a chunk stream incrementally.
- `coalesce_queued(items, backlog, frame=, written=)` frames a watch's events
  and writes them together while more events are queued (kube-apiserver
  flushes a watch once its channel is empty), and each at once when none is.

A JSON or YAML body nested deeper than `MAX_NESTING` is refused whole
(CBOR's decoder stops at 64 levels), so no later stage recurses past
Python's stack. A lone UTF-16 surrogate written as an escape (`"\\ud800"`)
becomes U+FFFD, as Go's decoder does: it could not be encoded as UTF-8 again.

Every decoding failure is a `BadRequest` (400); an unknown codec name is a
`ValueError` (a programming error: negotiation names the codecs).
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from contextlib import aclosing
from typing import Any

import yaml

from runtime.machinery import errors
from runtime.machinery.serializer import cbor
from runtime.machinery.serializer import protobuf
from runtime.machinery.storedobject import StoredObject, dumps_json
from runtime.machinery.options import Body

__all__ = ["decode_body", "encode", "encode_stored", "encode_list_chunks", "coalesce", "coalesce_queued",
           "gzip_chunks", "gzip_bytes", "gzip_stored", "MAX_YAML_NODES", "CHUNK_BYTES", "MAX_NESTING", "FRAMES_PER_WRITE"]

#: Nodes a YAML document may expand to (aliases counted at every use).
MAX_YAML_NODES = 100_000
#: Size of the writes a streamed list is grouped into.
CHUNK_BYTES = 64 * 1024
#: How deep a JSON or YAML body may nest. No object of these kinds comes close; the patch engines,
#: copies and validation recurse per level, so a deeper body would end in a RecursionError (500).
MAX_NESTING = 100


class _Pairs(dict):
    """A JSON/YAML object that remembers which keys it saw twice."""

    __slots__ = ("dups",)


def _load_json(raw: bytes) -> tuple[Any, bool]:
    """The JSON document (objects as `_Pairs`) and whether any object repeated a key."""
    repeated = False

    def hook(pairs: list[tuple[str, Any]]) -> dict:
        nonlocal repeated
        obj = _Pairs(pairs)
        if len(obj) != len(pairs):  # a key seen twice (the last value wins, as in Go)
            repeated = True
            seen: set[str] = set()
            obj.dups = [key for key, _ in pairs if key in seen or seen.add(key)]
        else:
            obj.dups = ()
        return obj

    # UTF-8 strictly: json.loads(bytes) would let encoded surrogates through (`surrogatepass`).
    return (json.loads(raw.decode("utf-8"), object_pairs_hook=hook) if raw.strip() else None), repeated


def _duplicate_paths(data: Any, path: str = "") -> list[str]:
    out: list[str] = []
    if isinstance(data, dict):
        for key in getattr(data, "dups", ()):
            out.append(f"{path}.{key}" if path else key)
        for key, value in data.items():
            out.extend(_duplicate_paths(value, f"{path}.{key}" if path else key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            out.extend(_duplicate_paths(value, f"{path}[{i}]"))
    return out


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that records duplicate keys (expansion is bounded before construction, see `_load_yaml`)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        self.flatten_mapping(node)
        obj = _Pairs()
        dups = []
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, str):
                key = str(key) if not isinstance(key, (dict, list)) else json.dumps(key)
            if key in obj:
                dups.append(key)
            obj[key] = self.construct_object(value_node, deep=deep)
        obj.dups = dups
        return obj


_BoundedLoader.add_constructor("tag:yaml.org,2002:map", _BoundedLoader.construct_mapping)


def _expanded_size(node: yaml.Node, budget: int, memo: dict[int, int]) -> int:
    """Nodes the document has once aliases are expanded; BadRequest past the budget.

    An alias is the same node object as its anchor, so sizes are memoized
    per node: the walk is linear in the document as written, while the sum
    counts every use, which is what construction would build.
    """
    key = id(node)
    if key in memo:
        size = memo[key]
    else:
        size = 1
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                size += _expanded_size(k, budget, memo) + _expanded_size(v, budget, memo)
                if size > budget:
                    break
        elif isinstance(node, yaml.SequenceNode):
            for v in node.value:
                size += _expanded_size(v, budget, memo)
                if size > budget:
                    break
        memo[key] = size
    if size > budget:
        raise errors.BadRequest("yaml: document contains excessive aliasing")
    return size


def _load_yaml(raw: bytes) -> Any:
    loader = _BoundedLoader(raw.decode("utf-8"))
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, MAX_YAML_NODES, {})
        return loader.construct_document(node)
    finally:
        loader.dispose()


def decode_body(codec: str, raw: bytes) -> Body:
    """Return the decoded request body. Raises BadRequest for bytes that do not parse or are empty."""
    if codec not in ("json", "yaml", "protobuf", "cbor"):
        raise ValueError(f"unknown codec {codec!r}")
    try:
        repeated = True  # unknown: look for them
        if codec == "json":
            data, repeated = _load_json(raw)
        elif codec == "yaml":
            data = _load_yaml(raw)
        elif codec == "protobuf":
            data = protobuf.decode(raw)
        else:
            data = cbor.decode(raw)
    except errors.StatusError:
        raise
    except (ValueError, yaml.YAMLError, UnicodeDecodeError, RecursionError) as exc:
        raise errors.BadRequest(f"the body of the request could not be decoded: {exc}") from None
    if data is None:
        raise errors.BadRequest("the body of the request was empty")
    # JSON nests no deeper than it has brackets: most bodies need no walk (two scans in C).
    if (codec != "json" or raw.count(b"{") + raw.count(b"[") > MAX_NESTING) and _nesting_exceeds(data, MAX_NESTING):
        raise errors.BadRequest(f"the body of the request could not be decoded: exceeded max depth {MAX_NESTING}")
    if codec in ("json", "yaml") and (b"\\u" in raw or b"\\U" in raw):  # only escapes make surrogates
        data = _without_surrogates(data)
    return Body(data, tuple(_duplicate_paths(data)) if repeated else ())


_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_surrogates(data: Any) -> Any:
    """`data` with every lone surrogate in its strings (keys too) replaced by U+FFFD, in place."""
    def fix(value: Any) -> Any:
        return _SURROGATE.sub("\ufffd", value) if isinstance(value, str) else value
    if isinstance(data, str):
        return fix(data)
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if any(isinstance(k, str) and _SURROGATE.search(k) for k in value):
                items = [(fix(k), v) for k, v in value.items()]
                value.clear()
                value.update(items)
            for k, v in value.items():
                if isinstance(v, str):
                    value[k] = fix(v)
                elif isinstance(v, (dict, list)):
                    stack.append(v)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                if isinstance(v, str):
                    value[i] = fix(v)
                elif isinstance(v, (dict, list)):
                    stack.append(v)
    return data


def _nesting_exceeds(data: Any, limit: int) -> bool:
    """Whether objects and arrays in `data` nest deeper than `limit` (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Iterable[Any] = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def _plain(obj: Any) -> Any:
    """Plain dicts and lists, for PyYAML's safe dumper (which refuses dict subclasses)."""
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_plain(v) for v in obj]
    return obj


def encode(codec: str, obj: dict[str, Any], *, pretty: bool = False) -> bytes:
    """Return one document (object, list, Status, Table...) in `codec`; `pretty` indents JSON.

    Raises `ProtobufError`/`CBORError` (ValueErrors) for a document with no
    such form, `ValueError` for an unknown codec.
    """
    if codec == "json":
        if pretty:
            return json.dumps(obj, indent=2, ensure_ascii=False).encode() + b"\n"
        return dumps_json(obj)
    if codec == "yaml":
        # sigs.k8s.io/yaml's JSONToYAML: keys sorted, block style.
        return yaml.safe_dump(_plain(obj), sort_keys=True, allow_unicode=True, default_flow_style=False).encode()
    if codec == "protobuf":
        return protobuf.encode(obj)
    if codec == "cbor":
        return cbor.encode(obj)
    raise ValueError(f"unknown codec {codec!r}")


def encode_stored(codec: str, obj: StoredObject, *, pretty: bool = False) -> bytes:
    """Return a stored object's bytes, from its per-resourceVersion cache when not pretty-printed."""
    if pretty:
        return encode(codec, obj.obj, pretty=True)
    if codec == "json":
        return obj.json_bytes()
    return obj.encoded(codec, lambda o: encode(codec, o))


class _Dicts(Sequence):
    """The JSON-form dicts of a sequence of stored objects or dicts, without copying the sequence."""

    __slots__ = ("items",)

    def __init__(self, items: Sequence[StoredObject | dict[str, Any]]) -> None:
        self.items = items

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: Any) -> Any:
        item = self.items[index]
        return item.obj if isinstance(item, StoredObject) else item

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for item in self.items:
            yield item.obj if isinstance(item, StoredObject) else item


def _json_item(item: StoredObject | dict[str, Any]) -> bytes:
    return item.json_bytes() if isinstance(item, StoredObject) else dumps_json(item)


def encode_list_chunks(codec: str, header: dict[str, Any], items: Sequence[StoredObject | dict[str, Any]]
                       ) -> Iterator[bytes]:
    """Yield a list document (`header` plus `items`) in `codec`, in chunks whose concatenation is the document.

    JSON and Protobuf are written item by item, each stored object's JSON
    from its cache; YAML and CBOR yield the whole document once. Raises like
    `encode` (Protobuf: before the first chunk for the header and the sizing
    pass, see `protobuf.encode_list_chunks`).
    """
    if codec == "json":
        head = dumps_json(header)
        yield head[:-1] + (b',"items":[' if len(head) > 2 else b'"items":[')
        for index, item in enumerate(items):
            yield (b"," if index else b"") + _json_item(item)
        yield b"]}"
    elif codec == "protobuf":
        yield from protobuf.encode_list_chunks(header, _Dicts(items))
    else:
        yield encode(codec, dict(header, items=list(_Dicts(items))))


def coalesce(chunks: Iterable[bytes], size: int = CHUNK_BYTES) -> Iterator[bytes]:
    """Yield `chunks` regrouped into pieces of at least `size` bytes (the last may be smaller)."""
    pending: list[bytes] = []
    held = 0
    for chunk in chunks:
        pending.append(chunk)
        held += len(chunk)
        if held >= size:
            yield b"".join(pending)
            pending, held = [], 0
    if held:
        yield b"".join(pending)


#: At most this many queued events' frames go out in one write (a long backlog is still sent in pieces).
FRAMES_PER_WRITE = 64


async def coalesce_queued(items: AsyncIterator[Any], backlog: Callable[[], int], *,
                          frame: Callable[[Any], bytes] | None = None, written: Callable[[int], Any] | None = None,
                          limit: int = FRAMES_PER_WRITE) -> AsyncIterator[bytes]:
    """A watch's `items` as writes: each item made a frame by `frame` (the items are frames when None), a
    frame held while more events are queued (`backlog()`), up to `limit` frames per write; what is held
    when `items` ends is written then. `written(n)`, when given, is told the frames of each write first.

    Why: kube-apiserver's serveWatch flushes once its event channel is empty. Under load a watcher then
    costs a send (HTTP chunk, TLS record, system call) per backlog, not per event; an idle watch still
    gets each event at once (nothing queued behind it). The framing and the count are here, not in a
    generator of their own, because each generator between the cache and the socket is a resumption per
    event and watcher.
    """
    held: list[bytes] = []
    async with aclosing(items):
        async for item in items:
            held.append(item if frame is None else frame(item))
            if backlog() and len(held) < limit:
                continue
            if written is not None:
                written(len(held))
            yield held[0] if len(held) == 1 else b"".join(held)
            held = []
    if held:
        if written is not None:
            written(len(held))
        yield b"".join(held)


def gzip_bytes(data: bytes) -> bytes:
    """`data` gzipped at Kubernetes' level 1, its header's time zero (as Go's gzip writer and `gzip_chunks`
    write it): the same bytes for the same data, so cacheable."""
    return gzip.compress(data, compresslevel=1, mtime=0)


def gzip_stored(codec: str, obj: StoredObject) -> bytes:
    """A stored object's bytes in `codec`, gzipped: from its per-resourceVersion cache, as its encoding."""
    return obj.encoded(codec + "+gzip", lambda _: gzip_bytes(encode_stored(codec, obj)))


def gzip_chunks(chunks: Iterable[bytes], level: int = 1) -> Iterator[bytes]:
    """Yield the gzip stream (RFC 1952) of `chunks`, compressed incrementally.

    Level 1 is Kubernetes' (`defaultGzipContentEncodingLevel`). Memory is
    the compressor's window plus one chunk.
    """
    compressor = zlib.compressobj(level, zlib.DEFLATED, 31)  # wbits 16+15: gzip header and trailer
    for chunk in chunks:
        out = compressor.compress(chunk)
        if out:
            yield out
    yield compressor.flush()
