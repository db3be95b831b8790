"""How each Protobuf message's fields render in Kubernetes' JSON: a plan per message type, built once.

Internal to `runtime.machinery.serializer` (`protobuf` reads it). A field's mode says when it is written
(`PLAIN`: omitempty; `ALWAYS_WRITTEN`: no omitempty; `POINTER`: when set, zero or not; `STRUCT`: a non-pointer
struct, always; `INLINE`: an embedded struct whose fields are the parent's), from `protofacts`' tables; its
shape says what its value is (a scalar, bytes, a message, a list or a map of them). The messages whose JSON form
is not an object (`TIMES`, `JSON_BYTES`, `STRING_LISTS`, IntOrString, Quantity) are named here too.
"""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf.descriptor import FieldDescriptor

from runtime.machinery.serializer import protofacts
from runtime.machinery.serializer.proto import authentication_v1_pb2 as authn
from runtime.machinery.serializer.proto import authorization_v1_pb2 as authz
from runtime.machinery.serializer.proto import intstr_pb2 as intstr
from runtime.machinery.serializer.proto import meta_v1_pb2 as meta
from runtime.machinery.serializer.proto import resource_pb2 as resource
from runtime.machinery.serializer.proto import runtime_pb2

__all__ = ["ALWAYS_WRITTEN", "BYTES", "BYTES_LIST", "BYTES_MAP", "Field", "INLINE", "INT_OR_STRING", "JSON_BYTES", "LIST", "MAP", "MESSAGE", "MESSAGE_LIST", "MESSAGE_MAP", "PLAIN", "POINTER", "Plan", "QUANTITY", "SCALAR", "SCALARS", "STRING_LISTS", "STRUCT", "TIMES", "is_map", "plan"]

# Messages whose JSON form is not an object, by full name.
TIMES = {  # name -> whether JSON carries microseconds (MicroTime) or whole seconds (Time)
    meta.Time.DESCRIPTOR.full_name: False,
    meta.MicroTime.DESCRIPTOR.full_name: True,
}
JSON_BYTES = {  # name -> the bytes field holding embedded JSON
    meta.FieldsV1.DESCRIPTOR.full_name: "Raw",
    runtime_pb2.RawExtension.DESCRIPTOR.full_name: "raw",
}
STRING_LISTS = frozenset({  # []string wrappers with one `items` field
    authz.ExtraValue.DESCRIPTOR.full_name,
    authn.ExtraValue.DESCRIPTOR.full_name,
})
INT_OR_STRING = intstr.IntOrString.DESCRIPTOR.full_name
QUANTITY = resource.Quantity.DESCRIPTOR.full_name
SCALARS = frozenset({*TIMES, *JSON_BYTES, *STRING_LISTS, INT_OR_STRING, QUANTITY})


def _expand(table: dict[str, dict[str, str]]) -> frozenset[str]:
    """`package.Message.field` for each field a per-package table names."""
    return frozenset(f"{package}.{message}.{field}" for package, messages in table.items()
                     for message, fields in messages.items() for field in fields.split())


_ALWAYS_FULL = _expand(protofacts.ALWAYS_FIELDS)
_NULLABLE_FULL = _expand(protofacts.NULLABLE_FIELDS)
_INLINE_FULL = _expand(protofacts.INLINE_FIELDS)

# How a field is rendered in JSON (see the module docstring).
PLAIN, ALWAYS_WRITTEN, POINTER, STRUCT, INLINE = range(5)
# The shape of a field's value.
SCALAR, BYTES, MESSAGE, LIST, BYTES_LIST, MESSAGE_LIST, MAP, BYTES_MAP, MESSAGE_MAP = range(9)


@dataclass(frozen=True)
class Field:
    field: FieldDescriptor
    key: str
    """The JSON key."""
    mode: int
    shape: int


@dataclass(frozen=True)
class Plan:
    by_key: dict[str, Field]
    """The non-inline fields by JSON key."""
    by_number: dict[int, Field]
    inline: tuple[FieldDescriptor, ...]
    written: tuple[Field, ...]
    """The fields written even when unset (no omitempty, non-pointer structs, inline structs)."""


_PLANS: dict[str, Plan] = {}


def _shape(field: FieldDescriptor) -> int:
    if is_map(field):
        value = field.message_type.fields_by_name["value"]
        return (BYTES_MAP if value.type == FieldDescriptor.TYPE_BYTES
                else MAP if value.message_type is None else MESSAGE_MAP)
    if field.is_repeated:
        return (MESSAGE_LIST if field.message_type is not None
                else BYTES_LIST if field.type == FieldDescriptor.TYPE_BYTES else LIST)
    if field.message_type is not None:
        return MESSAGE
    return BYTES if field.type == FieldDescriptor.TYPE_BYTES else SCALAR


def _mode(descriptor, field: FieldDescriptor) -> int:
    full, short = f"{descriptor.full_name}.{field.name}", f"{descriptor.name}.{field.name}"
    if full in _INLINE_FULL:
        return INLINE
    if full in _NULLABLE_FULL or short in protofacts.NULLABLE:
        return POINTER
    if full in _ALWAYS_FULL or short in protofacts.ALWAYS:
        # a zero Time is left out (Go writes null), whatever the tag
        if field.message_type is not None and field.message_type.full_name in TIMES:
            return POINTER
        return ALWAYS_WRITTEN
    if field.message_type is not None and not field.is_repeated:
        return POINTER if field.message_type.full_name in TIMES else STRUCT
    return PLAIN


def plan(descriptor) -> Plan:
    """The JSON rendering of a message type's fields, built once per type."""
    plan = _PLANS.get(descriptor.full_name)
    if plan is None:
        fields = [Field(field, protofacts.JSON_NAMES.get(f"{descriptor.full_name}.{field.name}", field.name),
                         _mode(descriptor, field), _shape(field)) for field in descriptor.fields]
        plan = Plan({f.key: f for f in fields if f.mode != INLINE}, {f.field.number: f for f in fields},
                     tuple(f.field for f in fields if f.mode == INLINE),
                     tuple(f for f in fields if f.mode in (ALWAYS_WRITTEN, STRUCT, INLINE)))
        _PLANS[descriptor.full_name] = plan
    return plan


def is_map(field: FieldDescriptor) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry
