"""How the SQLite store writes events into rows: runs of events per row, ids by
reference."""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec

from ...core.model import (
    ArtifactUpdate,
    Event,
    Message,
    PushConfig,
    Task,
    TaskState,
    TaskStatus,
)
from .. import _chunks, _projection
from .._projection import HISTORY_MAX
from .connection import _Connection
from .schema import _KIND

_encode = msgspec.json.Encoder().encode
_event_decoder = msgspec.json.Decoder(Event)
_events_decoder = msgspec.json.Decoder(list[Event])
_push_config_decoder = msgspec.json.Decoder(PushConfig)
_status_decoder = msgspec.json.Decoder(TaskStatus)
_metadata_decoder = msgspec.json.Decoder(dict[str, Any])
_history_decoder = msgspec.json.Decoder(list[Message])

#: events in one row at most. A fast executor's chunks arrive by the hundred,
#: and one row for a run of them costs far less than a row each, in CPU and in
#: WAL bytes (docs/architecture.md, "SQLite stores a run of events as one row").
RUN_MAX = 256


# A stored event names its task and context again and again: the event does, and
# every message in it (an idle task's two events hold eight such ids in ~800
# bytes). In the rows of that task each is written as a one-byte reference, a
# control character that JSON text never holds raw, and put back when read:
# events take about a third less room in the log, the WAL and the page cache.
# Rows with no references (written before) read the same way.
_TASK_REF = b'"\x01"'
_CONTEXT_REF = b'"\x02"'

_Ids = tuple[bytes, bytes]

#: A blob parameter as the sqlite3 module binds it straight away. A ``bytes``
#: (or None) parameter goes through its adapter look-up first: two attribute
#: look-ups that fail, each raising and clearing an AttributeError, about 3,000
#: instructions a parameter, a third of them formatting the message. A
#: ``bytearray`` skips it (as int, float and str do) and is stored as the same
#: BLOB. A nullable blob is bound as ``_blob(value or b"")`` under ``NULLIF(?, x'')``
#: where the empty blob is no value it can have.
_blob = bytearray


def _ids(task_id: str, context_id: str) -> _Ids:
    """The task's and the context's ids as JSON strings, as they appear in payloads."""
    return _encode(task_id), _encode(context_id)


def _pack(data: bytes, ids: _Ids) -> bytes:
    # Exact both ways: ``data`` has no raw control bytes, so every reference
    # in the result is one this made, and _unpack undoes them in reverse order.
    return data.replace(ids[0], _TASK_REF).replace(ids[1], _CONTEXT_REF)


def _unpack(data: bytes, ids: _Ids) -> bytes:
    return data.replace(_CONTEXT_REF, ids[1]).replace(_TASK_REF, ids[0])


# The history column names the task and context by reference too, but field by
# field: a message's own ``task_id`` and ``context_id`` are written as these
# one-character strings (escaped in the JSON, so the text stays valid JSON) and
# put back after decoding, which costs less than two passes over the bytes.
_TASK_MARK = "\x01"
_CONTEXT_MARK = "\x02"
_MARKS = (_TASK_MARK, _CONTEXT_MARK)


def _history_column(history: list[Message], task_id: str, context_id: str) -> bytes | None:
    """The ``history`` column for ``history``: NULL once it is too long to keep
    (or names a marker as an id of its own, which would not read back)."""
    marked = []
    for m in history:
        if m.task_id in _MARKS or m.context_id in _MARKS:
            return None
        if m.task_id == task_id or m.context_id == context_id:
            m = msgspec.structs.replace(
                m,
                task_id=_TASK_MARK if m.task_id == task_id else m.task_id,
                context_id=_CONTEXT_MARK if m.context_id == context_id else m.context_id,
            )
        marked.append(m)
    data = _encode(marked)
    return data if len(data) <= HISTORY_MAX else None


def _history(data: bytes, task_id: str, context_id: str) -> list[Message]:
    history = _history_decoder.decode(data)
    for m in history:
        if m.task_id == _TASK_MARK:
            m.task_id = task_id
        if m.context_id == _CONTEXT_MARK:
            m.context_id = context_id
    return history


def _row_task(
    task_id: str,
    context_id: str,
    status: bytes,
    metadata: bytes | None,
    history: bytes | None = None,
    history_length: int | None = None,
) -> Task:
    """The task from its row alone: what a fold gives with no artifacts, and no
    history unless the row's ``history`` is given."""
    # only a status whose message names the task holds references
    if b'"\x01"' in status or b'"\x02"' in status:
        status = _unpack(status, _ids(task_id, context_id))
    return Task(
        id=task_id,
        context_id=context_id,
        status=_status_decoder.decode(status),
        # a fresh list, so trimming shares nothing
        history=(
            [] if history is None
            else _trim(_history(history, task_id, context_id), history_length)
        ),
        metadata=None if metadata is None else _metadata_decoder.decode(metadata),
    )


def _trim(history: list[Message], history_length: int | None) -> list[Message]:
    return history if history_length is None else history[-history_length:]


# A run of text chunks of one artifact (see stores/_chunks.py) is written as
# its first event and the texts of the others: such a payload starts with this
# byte (JSON text never does); the JSON after it is ``[first event, [text, ...]]``.
_TEXT_RUN = b"\x03"
_RUN_OPEN = _TEXT_RUN + b"["  # (the JSON of the pair, written in its parts)
_text_run_decoder = msgspec.json.Decoder(tuple[ArtifactUpdate, list[msgspec.Raw]])


def _runs(
    pk: int, first_seq: int, events: Sequence[Event], ids: _Ids
) -> Iterator[tuple[int, int, int, int, bytes]]:
    """The rows for ``events`` numbered from ``first_seq``: one per run of
    consecutive events of one kind, at most RUN_MAX long (a run of text chunks
    of one artifact ends a row where the run ends)."""
    start, count = 0, len(events)
    while start < count:
        head = events[start]
        kind = _KIND[type(head)]
        limit = min(count, start + RUN_MAX)
        # A run of text chunks is looked for first, where one may start: the
        # search ends where the run does, with no scan of the kinds before it.
        if (type(head) is ArtifactUpdate and start + 2 < limit
                and type(events[start + 1]) is ArtifactUpdate):
            texts = _chunks.texts_after(head, events, start + 1, limit)
            if len(texts) > 1:
                end = start + 1 + len(texts)
                # only the head is packed: the ids are in it, and the texts
                # (most of the bytes) are left as written, which unpacking
                # keeps whole (a JSON string holds no raw control byte)
                yield (pk, first_seq + start, kind, end - start, b"".join(
                    (_RUN_OPEN, _pack(_encode(head), ids), b",", _encode(texts), b"]")))
                start = end
                continue
        end = start + 1
        while end < limit and _KIND[type(events[end])] == kind:
            end += 1
        n = end - start
        payload = _encode(head) if n == 1 else _encode(events[start:end])
        yield pk, first_seq + start, kind, n, _pack(payload, ids)
        start = end


def _row_events(n: int, payload: bytes, ids: _Ids) -> list[Event]:
    # (the references are put back first: the marker byte is no part of one)
    payload = _unpack(payload, ids)
    if payload[:1] == _TEXT_RUN:
        return _chunks.run_events(*_text_run_decoder.decode(memoryview(payload)[1:]))
    return [_event_decoder.decode(payload)] if n == 1 else _events_decoder.decode(payload)


# A task's generation (A2A 1.1) is that of its last status or artifact event,
# or of its creation before any: a read that folds neither artifacts nor the
# whole log reads it from that one row (``LAST_NUMBERED``), decoding no more of
# it than the numbers. A row holds a run of one kind: a run of status or
# artifact events is numbered one by one.
class _Numbered(msgspec.Struct):
    generation: int = 0


class _Created(msgspec.Struct):
    task: _Numbered


_created_decoder = msgspec.json.Decoder(_Created)
_numbered_decoder = msgspec.json.Decoder(_Numbered)
_numbered_run_decoder = msgspec.json.Decoder(list[_Numbered])
_numbered_text_run_decoder = msgspec.json.Decoder(tuple[_Numbered, msgspec.Raw])

#: the kinds whose last row holds a task's generation (creation, status, artifact)
NUMBERED_KINDS = (0, 1, 2)


def row_generation(row: Sequence[Any], ids: _Ids) -> int:
    """The generation after the last event of a row (kind, n, payload) of
    ``NUMBERED_KINDS`` (0: a log written before generations)."""
    kind, n, payload = row
    payload = _unpack(payload, ids)
    try:
        if kind == 0:
            return _created_decoder.decode(payload).task.generation
        if payload[:1] == _TEXT_RUN:
            first = _numbered_text_run_decoder.decode(memoryview(payload)[1:])[0].generation
            return first + n - 1 if first else 0
        if n == 1:
            return _numbered_decoder.decode(payload).generation
        return _numbered_run_decoder.decode(payload)[-1].generation
    except (msgspec.DecodeError, msgspec.ValidationError):
        # a row no fold could read either: a read of the row alone still
        # answers, with the generation unknown
        return 0


#: rows of events written by one statement at most: ``_INSERT_ROWS[n]`` writes n
#: (a statement that writes several costs about what one row's statement costs,
#: with one step, one bind of the parameters and one reset; each row of an
#: ``executemany`` costs all three again). More rows: ``executemany``.
ROWS_AT_ONCE = 8
_same = operator.eq
_INSERT_ROWS = ["", *(
    "INSERT INTO events (task_pk, seq, kind, n, payload) VALUES "
    + ", ".join(["(?, ?, ?, ?, ?)"] * n) for n in range(1, ROWS_AT_ONCE + 1))]


def _insert_events(
    conn: _Connection, pk: int, first_seq: int, events: Sequence[Event], ids: _Ids
) -> None:
    values: list[Any] = []
    size = 0
    kinds = list(map(_KIND.__getitem__, map(type, events)))
    if len(kinds) <= ROWS_AT_ONCE and not any(map(_same, kinds, kinds[1:])):
        # No two neighbours of one kind (a new task's creation, artifact and status;
        # a status after a chunk): a row each, as _runs would make them, without
        # its generator.
        for seq, (kind, event) in enumerate(zip(kinds, events, strict=True), first_seq):
            payload = _pack(_encode(event), ids)
            values += (pk, seq, kind, 1, _blob(payload))
            size += len(payload)
    else:
        for _, seq, kind, n, payload in _runs(pk, first_seq, events, ids):
            values += (pk, seq, kind, n, _blob(payload))
            size += len(payload)
    count = len(values) // 5
    if not count:
        return
    if count <= ROWS_AT_ONCE:
        conn.kept(_INSERT_ROWS[count], values)
    else:
        conn.executemany(_INSERT_ROWS[1], [values[k:k + 5] for k in range(0, len(values), 5)])
    conn.payload_bytes += size


def _kind_filter(history: bool, artifacts: bool) -> str:
    """The events a fold needs: creation and status always (status drives the
    lifecycle checks and may carry a history message), the rest when asked."""
    if history and artifacts:
        return ""
    kinds = [0, 1] + ([3] if history else []) + ([2] if artifacts else [])
    return f" AND kind IN ({', '.join(map(str, kinds))})"


def advance_row(task_id: str, context_id: str, state: str, events: Sequence[Event],
                history: bytes | None, current: bool
                ) -> tuple[bool, TaskStatus, bytes | None, list[Message] | None]:
    """Check ``events`` against a task row (its state and, when ``current``, its
    kept history) the way both stores append: (whether the status changed, the
    status after them, the history column after them, None when the log must
    have it, and the history itself when they changed it, else None)."""
    # The lifecycle checks read only the state, so the stored status need not
    # be decoded; a status update in the batch brings its own. The history is,
    # when the batch may add to it (a status message repeating the last one is
    # not added again).
    probe = _projection.probe(task_id, context_id, TaskStatus(state=TaskState(state)))
    if not current:  # kept by no one since (or never): the log has it
        history = None
    if history is None or not _projection.adds_messages(events):
        return _projection.advance_probe(probe, events), probe.status, history, None
    probe.history = _history(history, task_id, context_id)
    kept = len(probe.history)
    changed = _projection.advance_probe(probe, events)
    if len(probe.history) == kept:
        return changed, probe.status, history, None
    history = _history_column(probe.history, task_id, context_id)
    return changed, probe.status, history, probe.history
