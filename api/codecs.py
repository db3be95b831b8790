"""Wire codecs: request bodies in (JSON, YAML, Protobuf, CBOR) and answers out.

Decoding keeps what field validation needs: keys named twice (JSON and YAML),
with their paths. YAML is loaded safely (no Python tags) and alias expansion
is bounded, so a 'billion laughs' body is a 400, not a hang.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

import cbor2
import yaml

from runtime import errors
from runtime.codec import protobuf
from runtime.objects import StoredObject, dumps_json
from runtime.registry.decode import Body

__all__ = ["decode_body", "encode", "encode_stored", "CBOR_SELF_DESCRIBED", "MAX_YAML_NODES"]

CBOR_SELF_DESCRIBED = 55799
#: Nodes a YAML document may expand to (aliases counted at every use).
MAX_YAML_NODES = 100_000


class _Pairs(dict):
    """A JSON/YAML object that remembers which keys it saw twice."""

    __slots__ = ("dups",)


def _json_hook(pairs: list[tuple[str, Any]]) -> dict:
    obj = _Pairs()
    dups = []
    for key, value in pairs:
        if key in obj:
            dups.append(key)
        obj[key] = value
    obj.dups = dups
    return obj


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
    """SafeLoader that records duplicate keys and refuses documents that expand too far."""

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


def _expanded_size(node: yaml.Node, budget: list[int], memo: dict[int, int]) -> int:
    """Nodes the document has once aliases are expanded; stops past the budget."""
    key = id(node)
    if key in memo:
        size = memo[key]
    else:
        size = 1
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                size += _expanded_size(k, budget, memo) + _expanded_size(v, budget, memo)
        elif isinstance(node, yaml.SequenceNode):
            for v in node.value:
                size += _expanded_size(v, budget, memo)
        memo[key] = size
    if size > budget[0]:
        raise errors.BadRequest("yaml: document contains excessive aliasing")
    return size


def _load_yaml(raw: bytes) -> Any:
    loader = _BoundedLoader(raw.decode("utf-8"))
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, [MAX_YAML_NODES], {})
        return loader.construct_document(node)
    finally:
        loader.dispose()


def decode_body(codec: str, raw: bytes) -> Body:
    """Decode a request body. Raises BadRequest for bytes that do not parse."""
    try:
        if codec == "json":
            data = json.loads(raw, object_pairs_hook=_json_hook) if raw.strip() else None
        elif codec == "yaml":
            data = _load_yaml(raw)
        elif codec == "protobuf":
            data = protobuf.decode(raw)
        elif codec == "cbor":
            data = cbor2.loads(raw)
            if isinstance(data, cbor2.CBORTag) and data.tag == CBOR_SELF_DESCRIBED:
                data = data.value
        else:
            raise errors.UnsupportedMediaType(f"unsupported body encoding {codec}")
    except errors.StatusError:
        raise
    except (ValueError, yaml.YAMLError, UnicodeDecodeError, cbor2.CBORDecodeError) as exc:
        raise errors.BadRequest(f"the body of the request could not be decoded: {exc}") from None
    if data is None:
        raise errors.BadRequest("the body of the request was empty")
    return Body(data, tuple(_duplicate_paths(data)))


def encode(codec: str, obj: dict[str, Any], *, pretty: bool = False) -> bytes:
    """Encode one document (object, list, Status, Table...) in `codec`."""
    if codec == "json":
        if pretty:
            return json.dumps(obj, indent=2, ensure_ascii=False).encode() + b"\n"
        return dumps_json(obj)
    if codec == "yaml":
        return yaml.safe_dump(_plain(obj), sort_keys=True, allow_unicode=True).encode()
    if codec == "protobuf":
        return protobuf.encode(obj)
    if codec == "cbor":
        return cbor2.dumps(cbor2.CBORTag(CBOR_SELF_DESCRIBED, obj))
    raise ValueError(codec)


def _plain(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_plain(v) for v in obj]
    return obj


def encode_stored(codec: str, obj: StoredObject, *, pretty: bool = False) -> bytes:
    """A stored object's bytes, from its per-resourceVersion cache when not pretty-printed."""
    if pretty:
        return encode(codec, obj.obj, pretty=True)
    if codec == "json":
        return obj.json_bytes()
    return obj.encoded(codec, lambda o: encode(codec, o))


def encode_list_chunks(codec: str, header: dict[str, Any], items: Iterable[StoredObject]) -> Iterable[bytes]:
    """A list written item by item (JSON), so a huge list never sits whole in memory."""
    if codec != "json":
        doc = dict(header, items=[o.obj for o in items])
        yield encode(codec, doc)
        return
    head = dumps_json(header)
    yield head[:-1] + b',"items":['
    first = True
    for obj in items:
        yield (b"" if first else b",") + obj.json_bytes()
        first = False
    yield b"]}"
