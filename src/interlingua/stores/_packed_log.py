"""A finished task's log in few bytes, for the memory store.

Every update of a log names its task and context, and so does each message in
the task's history: stored as they are, those ids take more room than the rest
of a small task. Here an event is written without what its task already knows
(its id and context id), in a row that names its fields by position, and is
given them back when read. An event that names another task or context (which
the engine never writes, but a store does not rely on that) is kept whole. A
run of text chunks of one artifact (``_chunks``) is a row of its first chunk
and the texts of the others.

JSON, not MessagePack: metadata may hold integers beyond 64 bits, and reading
back must give what JSON gave before (strings for dates, say).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from ..core.generation import recount
from ..core.model import (
    Artifact,
    ArtifactUpdate,
    Event,
    HistoryAppended,
    Message,
    StatusUpdate,
    Task,
    TaskCreated,
    TaskStatus,
)
from . import _chunks

__all__ = ["pack", "unpack"]

Metadata = dict[str, Any]


# One row per event; the tag (a small integer) says which. A message whose task
# and context are its task's own is kept without them, and ``own`` says so (for
# a history: one bit per message).
class _Created(msgspec.Struct, array_like=True, gc=False, tag=0):
    status: TaskStatus
    artifacts: list[Artifact]
    history: list[Message]
    metadata: Metadata | None
    own: int
    #: the task's generation at creation: 1 for a log written with generations
    #: (``unpack`` numbers the others), 0 for one written before
    generation: int = 0


class _Status(msgspec.Struct, array_like=True, gc=False, tag=1):
    status: TaskStatus
    metadata: Metadata | None


class _Chunk(msgspec.Struct, array_like=True, gc=False, tag=2):
    artifact: Artifact
    append: bool
    last_chunk: bool
    metadata: Metadata | None


class _Said(msgspec.Struct, array_like=True, gc=False, tag=3):
    message: Message
    own: bool


class _Whole(msgspec.Struct, array_like=True, gc=False, tag=4):
    event: Event


class _Texts(msgspec.Struct, array_like=True, gc=False, tag=5):
    """A run of text chunks: the first one's fields, then the others' texts."""

    artifact: Artifact
    append: bool
    last_chunk: bool
    metadata: Metadata | None
    texts: list[str]


class _TextsRead(msgspec.Struct, array_like=True, gc=False, tag=5):
    """``_Texts`` as read back: each text as its JSON string."""

    artifact: Artifact
    append: bool
    last_chunk: bool
    metadata: Metadata | None
    texts: list[msgspec.Raw]


_Row = _Created | _Status | _Chunk | _Said | _Whole | _Texts
_ReadRow = _Created | _Status | _Chunk | _Said | _Whole | _TextsRead

#: the fields each row stands for; a test keeps them in step with the model
FIELDS: dict[type[msgspec.Struct], tuple[str, ...]] = {
    # (generations are not kept: ``unpack`` counts them again)
    Task: ("id", "context_id", "status", "artifacts", "history", "metadata", "generation"),
    StatusUpdate: ("task_id", "context_id", "status", "metadata", "generation"),
    ArtifactUpdate: ("task_id", "context_id", "artifact", "append", "last_chunk", "metadata",
                     "generation"),
    HistoryAppended: ("message",),
}

_encode_into = msgspec.json.Encoder().encode_into
_decode = msgspec.json.Decoder(list[_ReadRow]).decode
_replace = msgspec.structs.replace


def pack(events: Sequence[Event], task_id: str, context_id: str, buffer: bytearray) -> bytes:
    """``events`` (the whole log of the task ``task_id`` in ``context_id``) as bytes;
    ``buffer`` is scratch space, reused from call to call by one caller."""
    # One loop, no calls per event but for runs of chunks: this runs in every
    # send that ends a task.
    rows: list[_Row] = []
    i, count = 0, len(events)
    while i < count:
        e = events[i]
        i += 1
        if type(e) is StatusUpdate:
            if e.task_id == task_id and e.context_id == context_id:
                rows.append(_Status(e.status, e.metadata))
                continue
        elif type(e) is ArtifactUpdate:
            if e.task_id == task_id and e.context_id == context_id:
                if i < count and type(events[i]) is ArtifactUpdate:
                    texts = _chunks.texts_after(e, events, i, count)
                    if texts:
                        rows.append(_Texts(e.artifact, e.append, e.last_chunk, e.metadata, texts))
                        i += len(texts)
                        continue
                rows.append(_Chunk(e.artifact, e.append, e.last_chunk, e.metadata))
                continue
        elif type(e) is TaskCreated:
            task = e.task
            if task.id == task_id and task.context_id == context_id:
                history, own = task.history, 0
                if len(history) == 1:
                    # a new task's one message (nearly every log): without the loop's
                    # enumerate and copy
                    m = history[0]
                    if m.task_id == task_id and m.context_id == context_id:
                        history, own = [_replace(m, task_id=None, context_id=None)], 1
                else:
                    for n, m in enumerate(history):
                        if m.task_id == task_id and m.context_id == context_id:
                            if not own:
                                history = list(history)
                            history[n] = _replace(m, task_id=None, context_id=None)
                            own |= 1 << n
                rows.append(_Created(task.status, task.artifacts, history, task.metadata, own,
                                     task.generation))
                continue
        elif type(e) is HistoryAppended:
            m = e.message
            mine = m.task_id == task_id and m.context_id == context_id
            rows.append(_Said(_replace(m, task_id=None, context_id=None) if mine else m, mine))
            continue
        rows.append(_Whole(e))
    # Through a buffer: the encoder's own answer would keep room to spare for as
    # long as a store keeps the task; a copy of the buffer has exactly its length.
    _encode_into(rows, buffer)
    return bytes(buffer)


def unpack(data: bytes, task_id: str, context_id: str) -> list[Event]:
    """The events ``pack`` was given, as new objects the caller owns."""
    events: list[Event] = []
    for row in _decode(data):
        if type(row) is _TextsRead:
            events.extend(_chunks.run_events(ArtifactUpdate(
                task_id, context_id, row.artifact, row.append, row.last_chunk, row.metadata),
                row.texts))
        else:
            events.append(_event(row, task_id, context_id))
    # rows keep no generations but the first: counted again, as the writer counted them
    if events and type(events[0]) is TaskCreated and events[0].task.generation:
        recount(events)
    return events


def _event(row: _ReadRow, task_id: str, context_id: str) -> Event:
    # ``type(row) is``: an isinstance that misses costs a metaclass call
    if type(row) is _Status:
        return StatusUpdate(task_id, context_id, row.status, row.metadata)
    if type(row) is _Chunk:
        return ArtifactUpdate(
            task_id, context_id, row.artifact, row.append, row.last_chunk, row.metadata
        )
    if type(row) is _Created:
        for n, m in enumerate(row.history):
            if row.own >> n & 1:
                m.task_id, m.context_id = task_id, context_id
        return TaskCreated(
            Task(task_id, context_id, row.status, row.artifacts, row.history, row.metadata,
                 row.generation)
        )
    if type(row) is _Said:
        if row.own:
            row.message.task_id, row.message.context_id = task_id, context_id
        return HistoryAppended(row.message)
    assert type(row) is _Whole
    return row.event
