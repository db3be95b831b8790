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
(RFC 3339 strings), `FieldsV1` and `RawExtension` (embedded JSON bytes) and
`ExtraValue` (a list of strings); `bytes` fields (a ConfigMap's `binaryData`,
a Secret's `data`) are base64 text in JSON, as Go's encoder writes `[]byte`.

Decoding renders what Kubernetes' JSON encoder would write for the decoded
Go struct, because Go clients write every non-pointer field, empty or not:

- empty strings, zero numbers, false, empty lists and maps are left out;
- except the fields without `omitempty` in Kubernetes' JSON tags
  (`_ALWAYS`, e.g. `PolicyRule.verbs`, `RoleRef.name`, `status.allowed`),
  which are always written (an absent list as `[]`);
- pointer fields (`_NULLABLE`, e.g. `OwnerReference.controller`,
  `ClusterRole.aggregationRule`) are written when present, zero or not;
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
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from google.protobuf import message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message

from runtime.machinery.serializer.proto import authentication_v1_pb2 as authn
from runtime.machinery.serializer.proto import authorization_v1_pb2 as authz
from runtime.machinery.serializer.proto import core_v1_pb2 as core
from runtime.machinery.serializer.proto import events_v1_pb2 as events
from runtime.machinery.serializer.proto import meta_v1_pb2 as meta
from runtime.machinery.serializer.proto import rbac_v1_pb2 as rbac
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


@dataclass(frozen=True)
class _Kind:
    message: type[Message]
    group_prefix: str | None
    """The kind's API group must start with this ("" = core group only, None = any group)."""


# Group names come from a configurable domain (rbac.authorization.<domain>), so
# kinds are matched by the domain-free start of their group.
_RBAC, _AUTHZ, _AUTHN, _CORE, _ANY = "rbac.authorization.", "authorization.", "authentication.", "", None
_EVENTS = "events."

_KINDS: dict[str, _Kind] = {
    "ClusterRole": _Kind(rbac.ClusterRole, _RBAC),
    "ClusterRoleList": _Kind(rbac.ClusterRoleList, _RBAC),
    "ClusterRoleBinding": _Kind(rbac.ClusterRoleBinding, _RBAC),
    "ClusterRoleBindingList": _Kind(rbac.ClusterRoleBindingList, _RBAC),
    "Role": _Kind(rbac.Role, _RBAC),
    "RoleList": _Kind(rbac.RoleList, _RBAC),
    "RoleBinding": _Kind(rbac.RoleBinding, _RBAC),
    "RoleBindingList": _Kind(rbac.RoleBindingList, _RBAC),
    "SubjectAccessReview": _Kind(authz.SubjectAccessReview, _AUTHZ),
    "LocalSubjectAccessReview": _Kind(authz.LocalSubjectAccessReview, _AUTHZ),
    "SelfSubjectAccessReview": _Kind(authz.SelfSubjectAccessReview, _AUTHZ),
    "SelfSubjectRulesReview": _Kind(authz.SelfSubjectRulesReview, _AUTHZ),
    "SelfSubjectReview": _Kind(authn.SelfSubjectReview, _AUTHN),
    "TokenRequest": _Kind(authn.TokenRequest, _AUTHN),
    "TokenReview": _Kind(authn.TokenReview, _AUTHN),
    "Namespace": _Kind(core.Namespace, _CORE),
    "NamespaceList": _Kind(core.NamespaceList, _CORE),
    "Event": _Kind(core.Event, _CORE),
    "EventList": _Kind(core.EventList, _CORE),
    "ConfigMap": _Kind(core.ConfigMap, _CORE),
    "ConfigMapList": _Kind(core.ConfigMapList, _CORE),
    "Secret": _Kind(core.Secret, _CORE),
    "SecretList": _Kind(core.SecretList, _CORE),
    "ServiceAccount": _Kind(core.ServiceAccount, _CORE),
    "ServiceAccountList": _Kind(core.ServiceAccountList, _CORE),
    # meta.v1 kinds travel in every group (Status as "v1", DeleteOptions in the
    # resource's group, PartialObjectMetadata in meta.<domain>).
    "Status": _Kind(meta.Status, _ANY),
    "DeleteOptions": _Kind(meta.DeleteOptions, _ANY),
    "PartialObjectMetadata": _Kind(meta.PartialObjectMetadata, _ANY),
    "PartialObjectMetadataList": _Kind(meta.PartialObjectMetadataList, _ANY),
}

# Kinds named as a kind of `_KINDS` but in another group, tried first: events.k8s.io's Event is not core's.
_GROUP_KINDS: dict[str, _Kind] = {
    "Event": _Kind(events.Event, _EVENTS),
    "EventList": _Kind(events.EventList, _EVENTS),
}

SUPPORTED_KINDS: frozenset[str] = frozenset(_KINDS)
"""Kinds with a Protobuf encoding (each only in its own group family, see `supports`)."""

# Fields whose Kubernetes JSON tag lacks omitempty: written even when zero.
_ALWAYS = frozenset({
    "PolicyRule.verbs", "ClusterRole.rules", "Role.rules",
    "RoleRef.apiGroup", "RoleRef.kind", "RoleRef.name", "Subject.kind", "Subject.name",
    "SubjectAccessReviewStatus.allowed", "SubjectRulesReviewStatus.incomplete",
    "SubjectRulesReviewStatus.resourceRules", "SubjectRulesReviewStatus.nonResourceRules",
    "ResourceRule.verbs", "NonResourceRule.verbs",
    "FieldSelectorRequirement.key", "FieldSelectorRequirement.operator",
    "LabelSelectorRequirement.key", "LabelSelectorRequirement.operator",
    "OwnerReference.apiVersion", "OwnerReference.kind", "OwnerReference.name", "OwnerReference.uid",
    "NamespaceCondition.type", "NamespaceCondition.status",
    # core/v1 Event's (events.k8s.io/v1's messages share the name: its reportingInstance is written too)
    "Event.reportingComponent", "Event.reportingInstance",
    "TokenRequestStatus.token",
    *(f"{kind}.items" for kind in _KINDS if kind.endswith("List")),
})

# Pointer fields in Kubernetes' Go types: present-but-zero is meaningful.
_NULLABLE = frozenset({
    "ObjectMeta.deletionGracePeriodSeconds", "ListMeta.remainingItemCount",
    "OwnerReference.controller", "OwnerReference.blockOwnerDeletion",
    "DeleteOptions.gracePeriodSeconds", "DeleteOptions.preconditions",
    "DeleteOptions.orphanDependents", "DeleteOptions.propagationPolicy",
    "Preconditions.uid", "Preconditions.resourceVersion", "Status.details",
    "ClusterRole.aggregationRule", "Event.series", "Event.related",
    "SubjectAccessReviewSpec.resourceAttributes", "SubjectAccessReviewSpec.nonResourceAttributes",
    "SelfSubjectAccessReviewSpec.resourceAttributes", "SelfSubjectAccessReviewSpec.nonResourceAttributes",
    "ResourceAttributes.fieldSelector", "ResourceAttributes.labelSelector",
    "ServiceAccount.automountServiceAccountToken", "TokenRequestSpec.expirationSeconds",
    "TokenRequestSpec.boundObjectRef", "ConfigMap.immutable", "Secret.immutable",
})

# Messages whose JSON form is not an object, by full name.
_TIMES = {  # name -> whether JSON carries microseconds (MicroTime) or whole seconds (Time)
    meta.Time.DESCRIPTOR.full_name: False,
    meta.MicroTime.DESCRIPTOR.full_name: True,
}
_JSON_BYTES = {  # name -> the bytes field holding embedded JSON
    meta.FieldsV1.DESCRIPTOR.full_name: "Raw",
    runtime_pb2.RawExtension.DESCRIPTOR.full_name: "raw",
}
_STRING_LISTS = frozenset({  # []string wrappers with one `items` field
    authz.ExtraValue.DESCRIPTOR.full_name,
    authn.ExtraValue.DESCRIPTOR.full_name,
})

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_FRAME_HEADER = struct.Struct(">I")


def supports(api_version: str, kind: str) -> bool:
    """Return whether `kind` in `api_version` has a Protobuf encoding here.

    Kinds are matched by name and by the domain-free start of their group
    (`rbac.authorization.` for RBAC kinds, the core group for ConfigMap, Namespace, Secret, ServiceAccount and
    Event, `events.` for events.k8s.io's own Event, any group for meta.v1
    kinds). `Table` and custom kinds return False.
    """
    return _spec(api_version, kind) is not None


def _spec(api_version: str, kind: str) -> _Kind | None:
    """The message of `kind` in the group of `api_version` (None when it has none there)."""
    group = api_version.rpartition("/")[0]
    for spec in (_GROUP_KINDS.get(kind), _KINDS.get(kind)):
        if spec is None:
            continue
        if (spec.group_prefix is None or (group == "" if spec.group_prefix == _CORE
                                          else group.startswith(spec.group_prefix))):
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


def _is_map(field: FieldDescriptor) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def _expect(kind: type, value: Any, path: str) -> Any:
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ProtobufError(f"{path}: expected {kind.__name__}, got {type(value).__name__}")
    return value


def _fill(message: Message, value: Any, path: str) -> None:
    """Set `message` from its JSON form `value` (never None)."""
    name = message.DESCRIPTOR.full_name
    if name in _TIMES:
        seconds, nanos = _parse_time(_expect(str, value, path), path)
        message.seconds, message.nanos = seconds, nanos
    elif name in _JSON_BYTES:
        setattr(message, _JSON_BYTES[name], json.dumps(value, separators=(",", ":")).encode())
    elif name in _STRING_LISTS:
        message.items.extend(_expect(str, item, f"{path}[{i}]")
                             for i, item in enumerate(_expect(list, value, path)))
    else:
        fields = message.DESCRIPTOR.fields_by_name
        message.SetInParent()
        for key, item in _expect(Mapping, value, path).items():
            field = fields.get(key)
            if field is not None and item is not None:
                _set_field(message, field, item, f"{path}.{key}")


def _set_field(message: Message, field: FieldDescriptor, value: Any, path: str) -> None:
    target = getattr(message, field.name)
    try:
        if _is_map(field):
            value_field = field.message_type.fields_by_name["value"]
            for key, item in _expect(Mapping, value, path).items():
                if value_field.type == FieldDescriptor.TYPE_BYTES:
                    target[key] = _bytes_of(_expect(str, item, f"{path}[{key}]"), f"{path}[{key}]")
                elif value_field.message_type is None:
                    target[key] = item
                else:
                    _fill(target[key], item, f"{path}[{key}]")
        elif field.is_repeated:
            for i, item in enumerate(_expect(list, value, path)):
                if field.message_type is None:
                    target.append(item)
                else:
                    _fill(target.add(), item, f"{path}[{i}]")
        elif field.message_type is not None:
            _fill(target, value, path)
        else:
            if field.type != FieldDescriptor.TYPE_BOOL and isinstance(value, bool):
                raise TypeError(f"bool for a {field.name} field")
            setattr(message, field.name, value)
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
    if name in _TIMES:
        return _format_time(message, micro=_TIMES[name]) if message.ListFields() else None
    if name in _JSON_BYTES:
        raw = getattr(message, _JSON_BYTES[name])
        return json.loads(raw) if raw else None
    if name in _STRING_LISTS:
        return list(message.items)
    out: dict[str, Any] = {}
    for field in message.DESCRIPTOR.fields:
        key = f"{message.DESCRIPTOR.name}.{field.name}"
        value = _field_json(message, field)
        if key in _ALWAYS:
            out[field.name] = value if value is not None else _zero(field)
        elif key in _NULLABLE or field.message_type is not None and not field.is_repeated:
            if value is not None:
                out[field.name] = value
        elif value is not None and value not in ("", 0, [], {}):  # omitempty; 0 == False
            out[field.name] = value
    return out


def _field_json(message: Message, field: FieldDescriptor) -> Any:
    """Return the JSON form of one field, or None when a singular field is unset."""
    target = getattr(message, field.name)
    if _is_map(field):
        value_field = field.message_type.fields_by_name["value"]
        if value_field.type == FieldDescriptor.TYPE_BYTES:
            return {key: base64.b64encode(target[key]).decode("ascii") for key in sorted(target)}
        scalar = value_field.message_type is None
        return {key: target[key] if scalar else _to_json(target[key]) for key in sorted(target)}
    if field.is_repeated:
        return [item if field.message_type is None else _to_json(item) for item in target]
    if field.message_type is not None:
        # Go always writes non-pointer structs; only pointer fields may be absent.
        key = f"{message.DESCRIPTOR.name}.{field.name}"
        if not message.HasField(field.name) and (key in _NULLABLE or field.message_type.full_name in _TIMES):
            return None
        return _to_json(target)
    return target if message.HasField(field.name) else None


def _zero(field: FieldDescriptor) -> Any:
    if field.is_repeated:
        return {} if _is_map(field) else []
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
