"""Canonical stream events and answers straight into ``lf.a2a.v1`` wire bytes.

The same messages ``v1_out`` builds, serialized: a stream event is written once
per log entry and read by every gRPC subscriber, and building a protobuf object
only to serialize it at once costs several times writing its bytes here (most of
it in the Python half of protobuf's ``Struct`` support, which every event's
metadata needs for its event id). Fields are written in field-number order and
map entries sorted by key, as protobuf's deterministic serialization writes
them; what is rare and nested (a ``Struct`` or ``Value`` other than the event
id, a data part) is serialized by protobuf itself and embedded. A test holds
these bytes equal to ``v1_out``'s and to the codec's ProtoJSON parsed by
``json_format``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from google.protobuf import struct_pb2

from ...core import model as m
from .v1_out import _value

__all__ = ["message_bytes", "send_response_bytes", "stream_item_bytes", "task_bytes"]

_ROLES = {m.Role.USER: b"\x20\x01", m.Role.AGENT: b"\x20\x02"}  # field 4, varint
_STATES = {
    m.TaskState.SUBMITTED: 1,
    m.TaskState.WORKING: 2,
    m.TaskState.COMPLETED: 3,
    m.TaskState.FAILED: 4,
    m.TaskState.CANCELED: 5,
    m.TaskState.INPUT_REQUIRED: 6,
    m.TaskState.REJECTED: 7,
    m.TaskState.AUTH_REQUIRED: 8,
}
_STATE_FIELDS = {state: bytes((0x08, n)) for state, n in _STATES.items()}
_SMALL = [bytes((n,)) for n in range(128)]


def _varint(n: int) -> bytes:
    if n < 0x80:
        return _SMALL[n] if n >= 0 else _varint(n & 0xFFFF_FFFF_FFFF_FFFF)
    if n < 0x4000:  # lengths of most messages
        return bytes((n & 0x7F | 0x80, n >> 7))
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _field(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field: its tag, its length, its bytes."""
    n = len(payload)
    return tag + (_SMALL[n] if n < 0x80 else _varint(n)) + payload


def _text(tag: bytes, value: str | None) -> bytes:
    """A proto3 string: left out when empty."""
    return _field(tag, value.encode()) if value else b""


def _texts(tag: bytes, values: list[str] | None) -> bytes:
    return b"".join([_field(tag, v.encode()) for v in values]) if values else b""


def _struct(data: dict[str, Any]) -> bytes:
    out = struct_pb2.Struct()
    out.update(data)
    return out.SerializeToString(deterministic=True)  # type: ignore[no-any-return]


def _metadata(tag: bytes, data: dict[str, Any] | None) -> bytes:
    # None: no field; {}: an empty Struct, as the codec's {} parses
    return b"" if data is None else _field(tag, _struct(data) if data else b"")


# ------------------------------------------------------------------------- parts


def _part(p: m.Part) -> bytes:
    kind = type(p)
    if kind is m.TextPart:
        assert isinstance(p, m.TextPart)
        # oneof member: written even when empty
        head = _field(b"\x0a", p.text.encode())
        if p.metadata is None and not p.filename and not p.media_type:
            return head  # the usual part: text alone
    elif kind is m.FilePart:
        assert isinstance(p, m.FilePart)
        if p.raw is not None or p.uri is None:
            # inline content wins when a part carries both; neither: empty bytes
            head = _field(b"\x12", p.raw or b"")
        else:
            head = _field(b"\x1a", p.uri.encode())
    else:
        assert isinstance(p, m.DataPart)
        head = _field(b"\x22", _value(p.data).SerializeToString(deterministic=True))
    return (head + _metadata(b"\x2a", p.metadata) + _text(b"\x32", p.filename)
            + _text(b"\x3a", p.media_type))


def _parts(tag: bytes, parts: list[m.Part]) -> bytes:
    out = b""
    for p in parts:
        if type(p) is m.TextPart and p.metadata is None and not p.filename \
                and not p.media_type:
            # the usual part, text alone, in one go
            text = p.text.encode()
            n = len(text)
            if n < 0x7E:  # the part's length fits one byte too
                out += tag + _SMALL[n + 2] + b"\x0a" + _SMALL[n] + text
                continue
        out += _field(tag, _part(p))
    return out


# -------------------------------------------------------------- messages, artifacts


def _message(msg: m.Message, extra: bytes = b"") -> bytes:
    """``extra``: the event id's metadata, merged into the message's own."""
    return (_text(b"\x0a", msg.message_id) + _text(b"\x12", msg.context_id)
            + _text(b"\x1a", msg.task_id) + _ROLES.get(msg.role, b"")
            + _parts(b"\x2a", msg.parts) + extra
            + _texts(b"\x3a", msg.extensions) + _texts(b"\x42", msg.reference_task_ids))


def message_bytes(msg: m.Message) -> bytes:
    """A serialized ``Message``."""
    return _message(msg, _metadata(b"\x32", msg.metadata))


def _artifact(a: m.Artifact) -> bytes:
    return (_text(b"\x0a", a.artifact_id) + _text(b"\x12", a.name)
            + _text(b"\x1a", a.description) + _parts(b"\x22", a.parts)
            + _metadata(b"\x2a", a.metadata) + _texts(b"\x32", a.extensions))


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NAIVE_EPOCH = datetime(1970, 1, 1)


def _timestamp(stamp: str) -> bytes:
    # datetime arithmetic, in C: calendar.timegm costs several times this
    when = datetime.fromisoformat(stamp)
    delta = when - (_NAIVE_EPOCH if when.tzinfo is None else _EPOCH)
    seconds = delta.days * 86400 + delta.seconds
    nanos = when.microsecond * 1000
    head = _seconds.get(seconds)
    if head is None:
        # the statuses of a process are seconds apart: a few entries serve them all
        if len(_seconds) >= 256:
            _seconds.clear()
        head = _seconds[seconds] = b"\x08" + _varint(seconds) if seconds else b""
    return head + (b"\x10" + _varint(nanos) if nanos else b"")


_seconds: dict[int, bytes] = {}


def _status(s: m.TaskStatus) -> bytes:
    out = _STATE_FIELDS.get(s.state, b"")
    if s.message is not None:
        out += _field(b"\x12", message_bytes(s.message))
    if s.timestamp:
        out += _field(b"\x1a", _timestamp(s.timestamp))
    return out


def _task(t: m.Task, extra: bytes = b"") -> bytes:
    return (_text(b"\x0a", t.id) + _text(b"\x12", t.context_id)
            + _field(b"\x1a", _status(t.status))
            + b"".join([_field(b"\x22", _artifact(a)) for a in t.artifacts])
            + b"".join([_field(b"\x2a", message_bytes(h)) for h in t.history]) + extra)


def task_bytes(t: m.Task) -> bytes:
    """A serialized ``Task``."""
    return _task(t, _metadata(b"\x32", t.metadata))


def send_response_bytes(result: m.Task | m.Message) -> bytes:
    """A serialized ``SendMessageResponse``: the task, or the agent's message."""
    if type(result) is m.Task:
        return _field(b"\x0a", task_bytes(result))
    assert isinstance(result, m.Message)
    return _field(b"\x12", message_bytes(result))


# ---------------------------------------------------------------------- stream items


_event_keys: dict[str, bytes] = {}


def _event_metadata(tag: bytes, own: dict[str, Any] | None, key: str,
                    seq: int | None) -> bytes:
    """The ``Struct`` of an event's metadata: its own members and its event id (None:
    none, its own members alone)."""
    if seq is None:
        return _field(tag, _struct(own)) if own else b""
    if own:
        return _field(tag, _struct({**own, key: str(seq)}))
    head = _event_keys.get(key)
    if head is None:
        head = _event_keys[key] = _field(b"\x0a", key.encode())
    # Struct{fields: {key: Value{string_value: "<seq>"}}}; a seq has at most 20 digits
    digits = str(seq).encode()
    n = len(digits)
    return _field(tag, _field(b"\x0a", head + b"\x12" + _SMALL[n + 2] + b"\x1a" + _SMALL[n]
                              + digits))


#: the task and context ids of recent events, written: every event of a task repeats them
_ids: dict[tuple[str, str], bytes] = {}


def _ids_of(task_id: str, context_id: str) -> bytes:
    key = (task_id, context_id)
    found = _ids.get(key)
    if found is None:
        if len(_ids) >= 1024:
            _ids.clear()
        found = _ids[key] = _text(b"\x0a", task_id) + _text(b"\x12", context_id)
    return found


#: a chunk's task and context id fields, and its artifact id field, per (task, context, artifact)
_chunk_heads: dict[tuple[str, str, str], tuple[bytes, bytes]] = {}
#: an event id's metadata field up to its digits, per (event key, number of digits)
_seq_heads: dict[tuple[str, int], bytes] = {}
_FLAGS = [b"", b"\x28\x01", b"\x20\x01", b"\x20\x01\x28\x01"]  # append, last_chunk


def _chunk(item: m.ArtifactUpdate, a: m.Artifact, event_key: str, seq: int) -> bytes:
    """The chunk of a stream: the same ids and artifact id, text parts, the event id.

    The common event, written from pieces kept per task and per digit count: the
    measured CPU per streamed event of the gRPC server needs it.
    """
    key = (item.task_id, item.context_id, a.artifact_id)
    heads = _chunk_heads.get(key)
    if heads is None:
        if len(_chunk_heads) >= 1024:
            _chunk_heads.clear()
        heads = _chunk_heads[key] = (_text(b"\x0a", item.task_id)
                                     + _text(b"\x12", item.context_id),
                                     _text(b"\x0a", a.artifact_id))
    ids, aid = heads
    parts = a.parts
    p = parts[0] if len(parts) == 1 else None
    text = p.text.encode() if type(p) is m.TextPart and p.metadata is None \
        and not p.filename and not p.media_type else None
    if text is not None and len(text) < 0x7E:
        # one short text part: its length and the part's fit one byte each
        n = len(text)
        art = aid + b"\x22" + _SMALL[n + 2] + b"\x0a" + _SMALL[n] + text
    else:
        art = aid + _parts(b"\x22", parts)
    digits = str(seq).encode()
    meta = _seq_heads.get((event_key, len(digits)))
    if meta is None:
        # Struct{fields: {key: Value{string_value: "<seq>"}}}, all but the digits
        n = len(digits)
        entry = _field(b"\x0a", event_key.encode()) + b"\x12" + _SMALL[n + 2] + b"\x1a" \
            + _SMALL[n]
        whole = _field(b"\x32", _field(b"\x0a", entry + digits))
        meta = _seq_heads[(event_key, n)] = whole[:-n]
    n = len(art)
    inner = (ids + b"\x1a" + (_SMALL[n] if n < 0x80 else _varint(n)) + art
             + _FLAGS[item.append * 2 + item.last_chunk] + meta + digits)
    n = len(inner)
    return b"\x22" + (_SMALL[n] if n < 0x80 else _varint(n)) + inner


def stream_item_bytes(item: m.Task | m.Message | m.StatusUpdate | m.ArtifactUpdate,
                      event_key: str, seq: int | None) -> bytes:
    """One serialized ``StreamResponse``, its sequence number under ``event_key``
    in its metadata (None: an event that names none, ``Entry.id_follows``)."""
    kind = type(item)
    if kind is m.ArtifactUpdate:
        assert isinstance(item, m.ArtifactUpdate)
        a = item.artifact
        if item.metadata or a.name or a.description or a.metadata is not None or a.extensions \
                or seq is None:
            return _field(b"\x22", (
                _ids_of(item.task_id, item.context_id) + _field(b"\x1a", _artifact(a))
                + (b"\x20\x01" if item.append else b"")
                + (b"\x28\x01" if item.last_chunk else b"")
                + _event_metadata(b"\x32", item.metadata, event_key, seq)))
        return _chunk(item, a, event_key, seq)
    if kind is m.StatusUpdate:
        assert isinstance(item, m.StatusUpdate)
        return _field(b"\x1a", (
            _ids_of(item.task_id, item.context_id) + _field(b"\x1a", _status(item.status))
            + _event_metadata(b"\x22", item.metadata, event_key, seq)))
    if kind is m.Task:
        assert isinstance(item, m.Task)
        return _field(b"\x0a", _task(item, _event_metadata(b"\x32", item.metadata,
                                                            event_key, seq)))
    assert isinstance(item, m.Message)
    return _field(b"\x12", _message(item, _event_metadata(b"\x32", item.metadata,
                                                          event_key, seq)))
