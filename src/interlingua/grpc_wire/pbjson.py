"""Protobuf messages to and from ProtoJSON-shaped Python values, quickly.

The codecs read and write ProtoJSON; the gRPC binding hands them its messages
in that shape. ``google.protobuf.json_format`` does the same conversion, but it
is general and slow (several times the cost of the codec's whole decode on a
small ``SendMessage``), so this walks only the fields that are set, with what each field needs worked
out once per field. It covers what the A2A messages use: scalars (64-bit
integers as strings, as ProtoJSON writes them), enums (by
name; a number the enum does not have stays a number, for the codec to
refuse), bytes (base64), nested and repeated messages, maps, and the
well-known ``Struct``, ``Value``, ``Timestamp`` and ``Empty``.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from ..core.dialects._common import OUT_OF_RANGE, TimestampOutOfRange, normalize_timestamp
from ..core.errors import InvalidParams

__all__ = ["fill", "set_value", "to_doc"]

_STRUCT = "google.protobuf.Struct"
_VALUE = "google.protobuf.Value"
_LIST = "google.protobuf.ListValue"
_TIMESTAMP = "google.protobuf.Timestamp"

_MESSAGE = FieldDescriptor.TYPE_MESSAGE
_ENUM = FieldDescriptor.TYPE_ENUM
_BYTES = FieldDescriptor.TYPE_BYTES
#: the 64-bit integers, which ProtoJSON writes as strings (A2A 1.1's generations)
_INT64_TYPES = frozenset({FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_UINT64,
                          FieldDescriptor.TYPE_SINT64, FieldDescriptor.TYPE_FIXED64,
                          FieldDescriptor.TYPE_SFIXED64})


# ------------------------------------------------------------------ messages out


def _value_doc(v: Any) -> Any:
    kind = v.WhichOneof("kind")
    if kind == "string_value":
        return v.string_value
    if kind == "number_value":
        n = v.number_value
        # a double holds integers exactly to 2**53 and rounded past it: either way an
        # integer arrives as one (docs/grpc.md), on the agent's side and the caller's
        return int(n) if n.is_integer() else n
    if kind == "bool_value":
        return v.bool_value
    if kind == "struct_value":
        return _struct_doc(v.struct_value)
    if kind == "list_value":
        return [_value_doc(x) for x in v.list_value.values]
    return None


def _struct_doc(s: Any) -> dict[str, Any]:
    return {k: _value_doc(v) for k, v in s.fields.items()}


@functools.cache
def _reader(field: FieldDescriptor) -> Callable[[Any], Any]:
    """How one field's value becomes its ProtoJSON value."""
    one: Callable[[Any], Any]
    if field.type == _MESSAGE:
        message = field.message_type
        if message.GetOptions().map_entry:
            value_field = message.fields_by_name["value"]
            inner = _reader_single(value_field)
            return lambda m: {k: inner(v) for k, v in m.items()}
        one = _reader_single(field)
    else:
        one = _reader_single(field)
    if field.is_repeated:
        return lambda values: [one(v) for v in values]
    return one


def _reader_single(field: FieldDescriptor) -> Callable[[Any], Any]:
    if field.type == _MESSAGE:
        name = field.message_type.full_name
        if name == _STRUCT:
            return _struct_doc
        if name == _VALUE:
            return _value_doc
        if name == _TIMESTAMP:
            return _timestamp_text
        return to_doc
    if field.type == _ENUM:
        names = {v.number: v.name for v in field.enum_type.values}
        return lambda n: names.get(n, n)
    if field.type == _BYTES:
        return lambda b: base64.b64encode(b).decode("ascii")
    if field.type in _INT64_TYPES:
        return str  # ProtoJSON writes 64-bit integers as strings (beyond a double's 2^53)
    return lambda v: v


def _timestamp_text(t: Any) -> str:
    try:
        return str(t.ToJsonString())
    except ValueError:  # outside Timestamp's range: the reader refuses it by its field's name
        return f"seconds={t.seconds}, nanos={t.nanos}"


def to_doc(message: Message) -> dict[str, Any]:
    """The set fields of ``message`` as ProtoJSON (lowerCamelCase names)."""
    out: dict[str, Any] = {}
    for field, value in message.ListFields():
        out[field.json_name] = _reader(field)(value)
    return out


# ------------------------------------------------------------------- messages in


def set_value(v: Any, doc: Any) -> None:
    """Make the ``google.protobuf.Value`` ``v`` hold the JSON value ``doc``."""
    if doc is None:
        v.null_value = 0
    elif isinstance(doc, bool):
        v.bool_value = doc
    elif isinstance(doc, int | float):
        v.number_value = doc
    elif isinstance(doc, str):
        v.string_value = doc
    elif isinstance(doc, dict):
        # (set first: an empty object or list, updated, would leave the value unset,
        # read back as null)
        v.struct_value.SetInParent()
        v.struct_value.update(doc)
    elif isinstance(doc, list | tuple):
        v.list_value.SetInParent()
        v.list_value.extend(doc)
    else:  # (what JSON has no value for is checked where it is made: core/output.py)
        v.string_value = str(doc)


# what a field's value is, for filling it: worked out once per field
_PLAIN, _ENUM_NAME, _BASE64, _MSG, _STRUCT_KIND, _VALUE_KIND, _TIME, _MAP, _MAP_OF_MSG = range(9)
#: a 64-bit integer, which ProtoJSON writes as a string (A2A 1.1's generations)
_INT64 = -1


def _kind_of(field: FieldDescriptor) -> int:
    if field.type == _MESSAGE:
        message = field.message_type
        if message.GetOptions().map_entry:
            value_field = message.fields_by_name["value"]
            return _MAP_OF_MSG if value_field.type == _MESSAGE else _MAP
        return {_STRUCT: _STRUCT_KIND, _VALUE: _VALUE_KIND, _TIMESTAMP: _TIME}.get(
            message.full_name, _MSG)
    if field.type == _ENUM:
        return _ENUM_NAME
    if field.type == _BYTES:
        return _BASE64
    if field.type in _INT64_TYPES:
        return _INT64
    return _PLAIN


@functools.cache
def _plan(descriptor: Descriptor) -> dict[str, tuple[str, int, bool, FieldDescriptor]]:
    """Per JSON (and proto) name: (attribute, kind, repeated, field)."""
    out: dict[str, tuple[str, int, bool, FieldDescriptor]] = {}
    for field in descriptor.fields:
        entry = (field.name, _kind_of(field), field.is_repeated, field)
        out[field.name] = entry
        out[field.json_name] = entry
    return out


def _scalar(kind: int, field: FieldDescriptor, doc: Any) -> Any:
    if kind == _ENUM_NAME:
        if isinstance(doc, str):
            found = field.enum_type.values_by_name.get(doc)
            return None if found is None else found.number
        return doc
    if kind == _BASE64:
        return base64.b64decode(doc) if isinstance(doc, str) else doc
    if kind == _INT64:
        return int(doc) if isinstance(doc, str) else doc
    return doc


def _timestamp(target: Any, doc: str, name: str) -> None:
    """RFC 3339 (``…Z`` or an offset) into a Timestamp, fast for the usual shape. Text
    that is none is refused as the codecs refuse it, naming the field ``name``."""
    try:
        normalize_timestamp(doc, name)
    except TimestampOutOfRange:
        raise ValueError(f"{name} {OUT_OF_RANGE}: {doc!r}") from None
    except InvalidParams:
        raise ValueError(f"{name} is not an RFC 3339 timestamp: {doc!r}") from None
    try:
        when = datetime.fromisoformat(doc.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        target.FromJsonString(doc)
        return
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    seconds = int((when - _EPOCH).total_seconds() // 1)
    target.seconds = seconds
    target.nanos = when.microsecond * 1000


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _fill_one(target: Any, kind: int, doc: Any, name: str) -> None:
    if kind == _MSG:
        fill(target, doc)
    elif kind == _STRUCT_KIND:
        target.update(doc)
    elif kind == _VALUE_KIND:
        set_value(target, doc)
    elif kind == _TIME:
        _timestamp(target, doc, name)


def fill(message: Message, doc: dict[str, Any]) -> Message:
    """Set ``message``'s fields from a ProtoJSON document (unknown members and
    enum names are left out) and return it."""
    plan = _plan(message.DESCRIPTOR)
    for key, value in doc.items():
        entry = plan.get(key)
        # (null leaves a field unset, but a google.protobuf.Value's: that is null)
        if entry is None or (value is None and entry[1] != _VALUE_KIND):
            continue
        name, kind, repeated, field = entry
        if kind >= _MSG:
            target = getattr(message, name)
            if kind == _MAP:
                value_field = field.message_type.fields_by_name["value"]
                value_kind = _kind_of(value_field)
                for k, v in value.items():
                    target[k] = _scalar(value_kind, value_field, v)
            elif kind == _MAP_OF_MSG:
                value_field = field.message_type.fields_by_name["value"]
                value_kind = _kind_of(value_field)
                for k, v in value.items():
                    _fill_one(target[k], value_kind, v, field.json_name)
            elif repeated:
                for item in value:
                    _fill_one(target.add(), kind, item, field.json_name)
            else:
                target.SetInParent()
                _fill_one(target, kind, value, field.json_name)
        elif repeated:
            getattr(message, name).extend(
                x for x in (_scalar(kind, field, v) for v in value) if x is not None)
        elif kind == _PLAIN:
            setattr(message, name, value)
        else:
            scalar = _scalar(kind, field, value)
            if scalar is not None:
                setattr(message, name, scalar)
    return message
