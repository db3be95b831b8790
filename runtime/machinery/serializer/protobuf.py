"""Kubernetes' Protobuf wire format for JSON-form objects.

The body of `application/vnd.kubernetes.protobuf` is the 4-byte prefix
`k8s\\0` followed by a `runtime.Unknown` message whose `typeMeta` names
apiVersion and kind and whose `raw` holds the typed message (Kubernetes'
`apimachinery/pkg/runtime/serializer/protobuf`). The typed messages are Kubernetes' own
(trimmed copies of their `generated.proto` in `runtime.machinery.serializer.proto`), so the
real kubectl can send and read them.

Objects stay in their Kubernetes JSON form (camelCase dicts). One converter,
driven by the message descriptors, maps JSON keys to the fields of the same
name (Kubernetes names its Protobuf fields after the JSON keys); the special
cases are the types whose JSON form is not an object: `Time`/`MicroTime`
(RFC 3339 strings), `FieldsV1` and `RawExtension` (embedded JSON bytes),
`ExtraValue` (a list of strings), `IntOrString` (`type`/`intVal`/`strVal`, a
JSON number or string: a Service's `targetPort`) and `Quantity` (its `string`,
a JSON string; a JSON number sent is written as its text); `bytes` fields (a
ConfigMap's `binaryData`, a Secret's `data`) are base64 text in JSON, as Go's
encoder writes `[]byte`. Embedded Go structs (`json:",inline"`: a Volume's
`volumeSource`, a Probe's `handler`) are one field in Protobuf and their fields
the parent's in JSON; a few fields are named unlike their JSON key
(`IngressClassParametersReference.aPIGroup` is `apiGroup`). The tables of these
facts, and of which message a kind travels as, are `protofacts`'; `protoplan`
turns them into a rendering plan per message type, built once.

Decoding renders what Kubernetes' JSON encoder would write for the decoded
Go struct, because Go clients write every non-pointer field, empty or not:

- empty strings, zero numbers, false, empty lists and maps are left out;
- except the fields without `omitempty` in Kubernetes' JSON tags
  (`ALWAYS`, e.g. `PolicyRule.verbs`, `RoleRef.name`, `status.allowed`,
  `Container.name`, `ReplicaSetStatus.replicas`),
  which are always written (an absent list as `[]`);
- pointer fields (`NULLABLE`, e.g. `OwnerReference.controller`,
  `DeploymentSpec.replicas`, `PodSpec.securityContext`) are written when
  present, zero or not (a pointer without omitempty too, as Go writes `null`);
- other nested objects (`metadata`, `spec`, `status`, `roleRef`) are always
  written, as `{}` when empty; a zero `Time` is left out (Go writes `null`).

Lists can be written item by item (`encode_list_chunks`), as Kubernetes'
streaming collection encoder does: the envelope's `raw` is length-prefixed,
so the items' sizes are summed first, then the header and the items follow;
a list larger than `buffer_limit` is encoded twice rather than held whole.

Watch streams (`;stream=watch`) are length-delimited frames: a 4-byte
big-endian length, then a `meta.v1.WatchEvent` without prefix or envelope,
whose `object.raw` holds the object's complete envelope (prefix included);
see Kubernetes' `apiserver/pkg/endpoints/handlers/watch.go`, which encodes the
event with the raw serializer and the object with the enveloping one.

Caveats:
- `Table` has no Protobuf schema: Kubernetes marks it `+protobuf=false` and
  serves it only as JSON or YAML (406 otherwise). `supports()` says False and
  `encode` raises, so callers can negotiate JSON instead.
- `Time` keeps whole seconds in JSON, as Kubernetes' JSON does; sub-second
  input is encoded as `nanos` but not rendered back.
- Unknown JSON keys and unknown Protobuf fields are dropped.
"""

from __future__ import annotations

import base64
import json
import struct
from array import array
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

from google.protobuf import message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message

from runtime.machinery.serializer import protofacts
from runtime.machinery.serializer.protoplan import (
    ALWAYS_WRITTEN, BYTES, BYTES_LIST, BYTES_MAP, Field, INLINE, INT_OR_STRING, JSON_BYTES, LIST, MAP, MESSAGE,
    MESSAGE_LIST, MESSAGE_MAP, PLAIN, POINTER, SCALAR, SCALARS, STRING_LISTS, STRUCT, TIMES, is_map, plan,
)
from runtime.machinery.serializer.proto import meta_v1_pb2 as meta
from runtime.machinery.serializer.proto import runtime_pb2

__all__ = [
    "PROTOBUF_PREFIX",
    "ProtobufError",
    "SUPPORTED_KINDS",
    "decode",
    "decode_watch_frames",
    "encode",
    "encode_list_chunks",
    "LIST_BUFFER_BYTES",
    "encode_watch_event",
    "supports",
]

PROTOBUF_PREFIX = b"k8s\x00"
"""The magic bytes 0x6b 0x38 0x73 0x00 before every enveloped message."""


class ProtobufError(ValueError):
    """Bytes are not a decodable Kubernetes Protobuf message, or a dict cannot be encoded."""


SUPPORTED_KINDS: frozenset[str] = frozenset(protofacts.KINDS)
"""Kinds with a Protobuf encoding (each only in its own group family, see `supports`)."""

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_FRAME_HEADER = struct.Struct(">I")


def supports(api_version: str, kind: str) -> bool:
    """Return whether `kind` in `api_version` has a Protobuf encoding here.

    Kinds are matched by name and by their group: exactly for the core group and the domain-free
    groups (`apps`, `batch`, `policy`, `autoscaling`), by the domain-free start for groups under the
    configurable domain (`rbac.authorization.`, `networking.`, `discovery.`, `scheduling.`, `storage.`,
    `events.` for events.k8s.io's own Event), any group for meta.v1 kinds; autoscaling's
    HorizontalPodAutoscaler by version too. `Table` and custom kinds return False.
    """
    return _spec(api_version, kind) is not None


def _spec(api_version: str, kind: str) -> protofacts.Kind | None:
    """The message of `kind` in the group of `api_version` (None when it has none there)."""
    group, _, version = api_version.rpartition("/")
    for spec in protofacts.KINDS.get(kind, ()):
        if spec.version is not None and spec.version != version:
            continue
        if (spec.group is None or group == spec.group
                or (spec.group.endswith(".") and group.startswith(spec.group))):
            return spec
    return None


def encode(obj: Mapping[str, Any]) -> bytes:
    """Return the enveloped Protobuf bytes of the JSON-form object `obj`.

    The message is chosen by `obj["kind"]` (see `supports`); `typeMeta` copies
    `apiVersion` and `kind`. JSON keys without a field are dropped, `null`
    means unset. Raises `ProtobufError` for a missing or unsupported kind or a
    value of the wrong JSON type (the message names the field path).
    """
    if not isinstance(obj, Mapping):
        raise ProtobufError(f"expected a JSON object, got {type(obj).__name__}")
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not api_version or not kind:
        raise ProtobufError("object needs string apiVersion and kind")
    message = _message_for(api_version, kind)
    _fill(message, obj, kind)
    envelope = runtime_pb2.Unknown(
        typeMeta=runtime_pb2.TypeMeta(apiVersion=api_version, kind=kind),
        raw=message.SerializeToString(deterministic=True),
    )
    return PROTOBUF_PREFIX + envelope.SerializeToString(deterministic=True)


def decode(data: bytes) -> dict[str, Any]:
    """Return the JSON-form dict of the enveloped Protobuf bytes `data`.

    `apiVersion` and `kind` come from the envelope's `typeMeta`; the rest is
    rendered as Kubernetes' JSON would render it (see the module docstring).
    Raises `ProtobufError` when the prefix is missing, the bytes do not parse,
    the envelope lacks apiVersion or kind, the kind is unsupported, or `raw`
    is compressed or not Protobuf.
    """
    if bytes(data[: len(PROTOBUF_PREFIX)]) != PROTOBUF_PREFIX:
        raise ProtobufError(f"data does not start with the Protobuf prefix {PROTOBUF_PREFIX!r}")
    envelope = runtime_pb2.Unknown()
    _parse(envelope, data[len(PROTOBUF_PREFIX):])
    if envelope.contentEncoding:
        raise ProtobufError(f"unsupported content encoding {envelope.contentEncoding!r}")
    if envelope.contentType and "protobuf" not in envelope.contentType:
        raise ProtobufError(f"unsupported content type {envelope.contentType!r}")
    api_version, kind = envelope.typeMeta.apiVersion, envelope.typeMeta.kind
    if not api_version or not kind:
        raise ProtobufError("envelope lacks apiVersion or kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):  # proto2 hands invalid UTF-8 back as bytes
        raise ProtobufError("envelope's apiVersion or kind is not UTF-8")
    message = _message_for(api_version, kind)
    _parse(message, envelope.raw)
    try:
        body = _to_json(message)
    except ValueError as exc:  # bad embedded JSON or undecodable text
        raise ProtobufError(f"{kind}: {exc}") from exc
    return {"apiVersion": api_version, "kind": kind, **body}


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field_head(number: int, length: int) -> bytes:
    """The tag and length of a length-delimited field (wire type 2)."""
    return _varint(number << 3 | 2) + _varint(length)


LIST_BUFFER_BYTES = 1 << 20
"""Item bytes `encode_list_chunks` keeps between its sizing and writing passes before it stops keeping them."""


def encode_list_chunks(header: Mapping[str, Any], items: Sequence[Mapping[str, Any]], *,
                       buffer_limit: int | None = None) -> Iterator[bytes]:
    """Yield the enveloped Protobuf bytes of a list, one chunk per item after a header chunk.

    `header` holds the list's `apiVersion`, `kind` (a `...List` kind, see
    `supports`) and `metadata`; `items` are the JSON-form items. The chunks
    joined equal `encode(dict(header, items=items))`. Items are encoded once
    while their total stays under `buffer_limit` bytes (default
    `LIST_BUFFER_BYTES`); past it, sizes are
    taken in a first pass and items encoded again while writing, so memory
    stays bounded by one item. `items` is read twice in that case. Raises
    `ProtobufError` like `encode` (before the first chunk for the header, at
    the offending item otherwise).
    """
    api_version, kind = header.get("apiVersion"), header.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        raise ProtobufError("list needs string apiVersion and kind")
    message = _message_for(api_version, kind)
    items_field = message.DESCRIPTOR.fields_by_name.get("items")
    if items_field is None or items_field.message_type is None:
        raise ProtobufError(f"{kind} is not a list kind")
    item_class = message_factory.GetMessageClass(items_field.message_type)
    list_meta = meta.ListMeta()
    _fill(list_meta, header.get("metadata") or {}, f"{kind}.metadata")
    meta_bytes = list_meta.SerializeToString(deterministic=True)

    def item_bytes(index: int, obj: Mapping[str, Any]) -> bytes:
        item = item_class()
        _fill(item, obj, f"{kind}.items[{index}]")
        return item.SerializeToString(deterministic=True)

    limit = LIST_BUFFER_BYTES if buffer_limit is None else buffer_limit
    sizes = array("I")  # 4 bytes an item: the only per-item memory kept past the buffer
    kept: list[bytes] | None = []
    total = 0
    for index, obj in enumerate(items):
        data = item_bytes(index, obj)
        sizes.append(len(data))
        total += len(data)
        if kept is not None:
            kept.append(data)
            if total > limit:
                kept = None  # too big to hold: encode again while writing
    raw_length = len(_field_head(1, len(meta_bytes))) + len(meta_bytes) + sum(
        len(_field_head(2, size)) + size for size in sizes)
    type_meta = runtime_pb2.TypeMeta(apiVersion=api_version, kind=kind).SerializeToString(deterministic=True)
    yield (PROTOBUF_PREFIX + _field_head(1, len(type_meta)) + type_meta + _field_head(2, raw_length)
           + _field_head(1, len(meta_bytes)) + meta_bytes)
    if kept is not None:
        for data in kept:
            yield _field_head(2, len(data)) + data
        return
    for index, obj in enumerate(items):
        data = item_bytes(index, obj)
        if index >= len(sizes) or len(data) != sizes[index]:
            raise ProtobufError(f"{kind}.items[{index}] changed while the list was written")
        yield _field_head(2, len(data)) + data


def encode_watch_event(event_type: str, obj: Mapping[str, Any] | None = None, *, encoded: bytes | None = None
                       ) -> bytes:
    """Return one watch-stream frame: a 4-byte big-endian length, then a WatchEvent.

    The WatchEvent has no prefix or envelope; its `object.raw` is
    `encode(obj)` (or `encoded`, the object's enveloped bytes when the
    caller has them cached), envelope and prefix included, as Kubernetes
    writes it. Raises `ProtobufError` like `encode`.
    """
    if encoded is None:
        if obj is None:
            raise ProtobufError("a watch event needs an object")
        encoded = encode(obj)
    event = meta.WatchEvent(type=event_type, object=runtime_pb2.RawExtension(raw=encoded))
    body = event.SerializeToString(deterministic=True)
    return _FRAME_HEADER.pack(len(body)) + body


def decode_watch_frames(buffer: bytes) -> list[tuple[str, dict[str, Any]]]:
    """Return the `(type, object)` pairs of the complete watch frames in `buffer`.

    `buffer` must hold whole frames only. Raises `ProtobufError` on a
    truncated frame or an object `decode` rejects.
    """
    events: list[tuple[str, dict[str, Any]]] = []
    view, offset = memoryview(buffer), 0
    while offset < len(view):
        if len(view) - offset < _FRAME_HEADER.size:
            raise ProtobufError("truncated watch frame header")
        (size,) = _FRAME_HEADER.unpack_from(view, offset)
        start, offset = offset + _FRAME_HEADER.size, offset + _FRAME_HEADER.size + size
        if offset > len(view):
            raise ProtobufError(f"truncated watch frame: {size} bytes announced, {len(view) - start} left")
        event = meta.WatchEvent()
        _parse(event, bytes(view[start:offset]))
        events.append((event.type, decode(event.object.raw)))
    return events


# --- descriptor-driven conversion ------------------------------------------

def _message_for(api_version: str, kind: str) -> Message:
    spec = _spec(api_version, kind)
    if spec is None:
        raise ProtobufError(f"{kind} in {api_version} has no Protobuf encoding")
    return spec.message()


def _parse(message: Message, data: bytes) -> None:
    try:
        message.ParseFromString(bytes(data))
    except DecodeError as exc:
        raise ProtobufError(f"malformed {message.DESCRIPTOR.name}: {exc}") from exc



def _expect(kind: type, value: Any, path: str) -> Any:
    if value.__class__ is kind or (kind is Mapping and value.__class__ is dict):  # the common case, fast
        return value
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ProtobufError(f"{path}: expected {kind.__name__}, got {type(value).__name__}")
    return value


def _fill(message: Message, value: Any, path: str) -> None:
    """Set `message` from its JSON form `value` (never None)."""
    name = message.DESCRIPTOR.full_name
    if name in SCALARS:
        _fill_scalar(message, name, value, path)
        return
    layout = plan(message.DESCRIPTOR)
    message.SetInParent()
    by_key = layout.by_key
    for key, item in _expect(Mapping, value, path).items():
        spec = by_key.get(key)
        if spec is None or item is None:
            continue
        if spec.shape == SCALAR and item.__class__ is not bool:  # the common case, without a call
            try:
                setattr(message, spec.field.name, item)
            except (TypeError, ValueError) as exc:
                raise ProtobufError(f"{path}.{key}: {exc}") from exc
        else:
            _set_field(message, spec, item, f"{path}.{key}")
    for field in layout.inline:  # an embedded struct reads its keys from the same JSON object
        _fill(getattr(message, field.name), value, path)


def _fill_scalar(message: Message, name: str, value: Any, path: str) -> None:
    """Set a message whose JSON form is not an object."""
    if name in TIMES:
        seconds, nanos = _parse_time(_expect(str, value, path), path)
        message.seconds, message.nanos = seconds, nanos
    elif name in JSON_BYTES:
        setattr(message, JSON_BYTES[name], json.dumps(value, separators=(",", ":")).encode())
    elif name in STRING_LISTS:
        message.items.extend(_expect(str, item, f"{path}[{i}]")
                             for i, item in enumerate(_expect(list, value, path)))
    elif name == INT_OR_STRING:
        if isinstance(value, str):
            message.type, message.strVal = 1, value
        else:
            message.type, message.intVal = 0, _expect(int, value, path)
    else:  # Quantity: its text; a JSON number is written as the number's text
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(int(value)) if float(value).is_integer() else repr(float(value))
        message.string = _expect(str, value, path)


def _set_field(message: Message, spec: Field, value: Any, path: str) -> None:
    field, shape = spec.field, spec.shape
    target = getattr(message, field.name)
    try:
        if shape == SCALAR:
            if isinstance(value, bool) and field.type != FieldDescriptor.TYPE_BOOL:
                raise TypeError(f"bool for a {field.name} field")
            setattr(message, field.name, value)
        elif shape == MESSAGE:
            _fill(target, value, path)
        elif shape == MESSAGE_LIST:
            for i, item in enumerate(_expect(list, value, path)):
                _fill(target.add(), item, f"{path}[{i}]")
        elif shape == LIST:
            target.extend(_expect(list, value, path))
        elif shape == BYTES:
            setattr(message, field.name, _bytes_of(_expect(str, value, path), path))
        elif shape == BYTES_LIST:
            target.extend(_bytes_of(_expect(str, item, f"{path}[{i}]"), f"{path}[{i}]")
                          for i, item in enumerate(_expect(list, value, path)))
        else:
            for key, item in _expect(Mapping, value, path).items():
                if shape == MAP:
                    target[key] = item
                elif shape == BYTES_MAP:
                    target[key] = _bytes_of(_expect(str, item, f"{path}[{key}]"), f"{path}[{key}]")
                else:
                    _fill(target[key], item, f"{path}[{key}]")
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ProtobufError):
            raise
        raise ProtobufError(f"{path}: {exc}") from exc


def _bytes_of(text: str, path: str) -> bytes:
    """The bytes of a `[]byte` field's JSON form (base64, newlines allowed as Go's decoder allows them)."""
    try:
        return base64.b64decode(text.replace("\n", "").replace("\r", ""), validate=True)
    except ValueError as exc:
        raise ProtobufError(f"{path}: not base64: {exc}") from None


def _to_json(message: Message) -> Any:
    """Return the JSON form of `message`; None for a zero Time or empty embedded JSON."""
    name = message.DESCRIPTOR.full_name
    if name in SCALARS:
        return _scalar_json(message, name)
    layout = plan(message.DESCRIPTOR)
    by_number = layout.by_number
    out: dict[str, Any] = {}
    for field, value in message.ListFields():  # the set fields only: a Pod's message has hundreds unset
        spec = by_number[field.number]
        mode = spec.mode
        if mode == INLINE:
            out.update(_to_json(value))
            continue
        rendered = _value_json(value, spec.shape)
        if mode == PLAIN and rendered in ("", 0, [], {}):  # omitempty; 0 == False
            continue
        if rendered is not None:
            out[spec.key] = rendered
    for spec in layout.written:  # what Go writes when unset: zero values, empty structs
        if spec.key in out:
            continue
        if spec.mode == INLINE:
            if not message.HasField(spec.field.name):
                out.update(_to_json(getattr(message, spec.field.name)))
        elif spec.shape == MESSAGE:
            if spec.mode == STRUCT and message.HasField(spec.field.name):
                continue  # set, and rendered as nothing (empty embedded JSON)
            rendered = _to_json(getattr(message, spec.field.name))
            if rendered is not None:
                out[spec.key] = rendered
            elif spec.mode == ALWAYS_WRITTEN:
                out[spec.key] = {}
        else:
            out[spec.key] = _zero(spec.field)
    return out


def _value_json(value: Any, shape: int) -> Any:
    """The JSON form of a set field's value."""
    if shape == SCALAR or shape == LIST:
        return list(value) if shape == LIST else value
    if shape == MESSAGE:
        return _to_json(value)
    if shape == MESSAGE_LIST:
        return [_to_json(item) for item in value]
    if shape == MAP:
        return {key: value[key] for key in sorted(value)}
    if shape == MESSAGE_MAP:
        return {key: _to_json(value[key]) for key in sorted(value)}
    if shape == BYTES_MAP:
        return {key: base64.b64encode(value[key]).decode("ascii") for key in sorted(value)}
    if shape == BYTES_LIST:
        return [base64.b64encode(item).decode("ascii") for item in value]
    return base64.b64encode(value).decode("ascii")


def _scalar_json(message: Message, name: str) -> Any:
    """The JSON form of a message whose JSON form is not an object."""
    if name in TIMES:
        return _format_time(message, micro=TIMES[name]) if message.ListFields() else None
    if name in JSON_BYTES:
        raw = getattr(message, JSON_BYTES[name])
        return json.loads(raw) if raw else None
    if name in STRING_LISTS:
        return list(message.items)
    if name == INT_OR_STRING:
        return message.strVal if message.type == 1 else message.intVal
    return message.string or "0"  # Quantity: Go writes a zero Quantity as "0"


def _zero(field: FieldDescriptor) -> Any:
    if field.is_repeated:
        return {} if is_map(field) else []
    if field.message_type is not None:
        return {}
    return field.default_value


def _parse_time(text: str, path: str) -> tuple[int, int]:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise ProtobufError(f"{path}: not an RFC 3339 time: {text!r}") from exc
    if moment.tzinfo is None:
        raise ProtobufError(f"{path}: RFC 3339 time without offset: {text!r}")
    delta = moment - _EPOCH
    return delta.days * 86400 + delta.seconds, delta.microseconds * 1000


def _format_time(message: Message, *, micro: bool) -> str:
    moment = _EPOCH + timedelta(seconds=message.seconds, microseconds=message.nanos // 1000)
    if micro:  # Kubernetes' RFC3339Micro
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
