"""Helpers to make and read messages, parts and tasks, whatever the dialect.

These are the public, version-neutral building blocks an agent or an
orchestrator uses; codecs take care of each version's spelling.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from .model import (
    Artifact,
    DataPart,
    FilePart,
    Message,
    Metadata,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)
from .output import InvalidOutput as _InvalidOutput

__all__ = [
    "agent_data_message",
    "agent_message",
    "agent_parts_message",
    "agent_text_message",
    "as_parts",
    "data_part",
    "data_parts",
    "file_part",
    "file_part_from_bytes",
    "file_part_from_uri",
    "file_parts",
    "final_task",
    "get_bytes_from_file_part",
    "get_data",
    "get_data_from_data_part",
    "get_text",
    "get_uri_from_file_part",
    "initial_task",
    "new_id",
    "task_status",
    "text_part",
    "user_message",
]


def new_id() -> str:
    """A time-ordered (version 7, RFC 9562) UUID string: Unix milliseconds, then
    74 random bits.

    Ids made one after another sort next to each other, so the store indexes
    keyed by them (task, context, message) grow at their end instead of at
    random pages: on SQLite a stored task cost about a third less CPU than with
    random (version 4) ids. The random tails come from the OS 200 at a time
    (one ``getrandom`` call per id cost more than the rest of making it), and
    the time head is formatted once per millisecond.
    """
    global _ms, _head
    ms = time.time_ns() // 1_000_000
    if ms != _ms:
        t = f"{ms:012x}"
        _ms, _head = ms, f"{t[:8]}-{t[8:]}-7"
    if not _tails:
        _refill()
    return _head + _tails.pop()


_ms = -1
_head = ""
_tails: list[str] = []
#: tails made per refill
_REFILL = 200
#: a tail's 19 random hex digits (76 bits) and a separator: 3, a dash, the variant
#: digit, 3, a dash, 12, a space; the dashes and spaces are written over
#: random digits
_STRIDE = 22
_DASHES = b"-" * _REFILL
_SPACES = b" " * _REFILL
# the RFC 4122 variant bits (10xx) in the first hex digit of the fourth group:
# a random hex digit's low two bits kept (74 random bits in all)
_VARIANT = bytes.maketrans(b"0123456789abcdef", b"89ab89ab89ab89ab")


def _refill() -> None:
    # Made by slicing one buffer, in C: no bytecode per tail.
    out = bytearray(os.urandom(_REFILL * _STRIDE // 2).hex(), "ascii")
    out[3::_STRIDE] = _DASHES
    out[4::_STRIDE] = out[4::_STRIDE].translate(_VARIANT)
    out[8::_STRIDE] = _DASHES
    out[21::_STRIDE] = _SPACES
    _tails.extend(out.decode("ascii").split())


def _forget_tails() -> None:
    # A forked child must not hand out the ids its parent will hand out.
    _tails.clear()


os.register_at_fork(after_in_child=_forget_tails)


def text_part(text: str, *, metadata: Metadata | None = None) -> TextPart:
    """A text part."""
    return TextPart(text=text, metadata=metadata)


def data_part(data: Any, *, metadata: Metadata | None = None) -> DataPart:
    """A data part holding ``data``, any JSON value (v0.2/v0.3 peers get non-objects wrapped)."""
    return DataPart(data=data, metadata=metadata)


def file_part(
    *,
    raw: bytes | None = None,
    uri: str | None = None,
    media_type: str | None = None,
    filename: str | None = None,
    metadata: Metadata | None = None,
) -> FilePart:
    """A file part given inline (``raw``) or by reference (``uri``): exactly one."""
    if (raw is None) == (uri is None):
        raise ValueError("give exactly one of raw= or uri=")
    return FilePart(raw=raw, uri=uri, media_type=media_type, filename=filename, metadata=metadata)


def file_part_from_uri(
    uri: str,
    *,
    name: str | None = None,
    mime_type: str | None = None,
    metadata: Metadata | None = None,
) -> FilePart:
    """A file part that refers to ``uri`` (``name`` is its file name, ``mime_type`` its media type)."""
    return FilePart(uri=uri, filename=name, media_type=mime_type, metadata=metadata)


def file_part_from_bytes(
    data: bytes | bytearray | memoryview,
    *,
    name: str | None = None,
    mime_type: str | None = None,
    metadata: Metadata | None = None,
) -> FilePart:
    """A file part carrying ``data`` inline (sent base64-encoded)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"file content must be bytes, not {type(data).__name__}")
    return FilePart(raw=bytes(data), filename=name, media_type=mime_type, metadata=metadata)


def as_parts(content: Any) -> list[Part]:
    """Turn what an agent returns into parts.

    ``str`` -> a text part; ``bytes`` -> an inline file; a part -> itself;
    ``dict``/``list`` of non-parts / numbers / booleans -> a data part; a
    list or tuple of the above -> their parts in order.
    """
    if isinstance(content, str):
        return [TextPart(text=content)]
    if isinstance(content, (TextPart, FilePart, DataPart)):
        return [content]
    if isinstance(content, (bytes, bytearray)):
        return [FilePart(raw=bytes(content), media_type="application/octet-stream")]
    if isinstance(content, (list, tuple)) and content and all(
        isinstance(c, (str, bytes, TextPart, FilePart, DataPart)) for c in content
    ):
        out: list[Part] = []
        for c in content:
            out.extend(as_parts(c))
        return out
    if content is None or isinstance(content, msgspec.Struct):
        # (a Message, an Artifact, a Task, None: each went out as data, a Struct's
        # fields by their Python names)
        name = type(content).__name__
        what = "None" if content is None else \
            f"{'an' if name[:1] in ('A', 'E', 'I', 'O', 'U') else 'a'} {name}"
        raise _InvalidOutput(f"{what} is no content of a part: give text, data (a dict, "
                            "a list, a number), bytes or parts (a Message is returned "
                            "or replied, not emitted)")
    return [DataPart(data=content)]


def _message(role: Role, content: Any, task_id: str | None, context_id: str | None,
             metadata: Metadata | None) -> Message:
    return Message(
        message_id=new_id(),
        role=role,
        parts=as_parts(content),
        task_id=task_id,
        context_id=context_id,
        metadata=metadata,
    )


def agent_message(
    content: Any,
    *,
    task_id: str | None = None,
    context_id: str | None = None,
    metadata: Metadata | None = None,
) -> Message:
    """An agent message from text, data, bytes, parts or a list of them."""
    return _message(Role.AGENT, content, task_id, context_id, metadata)


def user_message(
    content: Any,
    *,
    task_id: str | None = None,
    context_id: str | None = None,
    metadata: Metadata | None = None,
) -> Message:
    """A user message from text, data, bytes, parts or a list of them."""
    return _message(Role.USER, content, task_id, context_id, metadata)


def agent_text_message(
    text: str,
    *,
    task_id: str | None = None,
    context_id: str | None = None,
    metadata: Metadata | None = None,
) -> Message:
    """An agent message of one text part."""
    return agent_parts_message([TextPart(text=text)], task_id=task_id, context_id=context_id,
                               metadata=metadata)


def agent_data_message(
    data: Any,
    *,
    task_id: str | None = None,
    context_id: str | None = None,
    metadata: Metadata | None = None,
) -> Message:
    """An agent message of one data part holding ``data`` (even a string or a list)."""
    return agent_parts_message([DataPart(data=data)], task_id=task_id, context_id=context_id,
                               metadata=metadata)


def agent_parts_message(
    parts: Iterable[Part],
    *,
    task_id: str | None = None,
    context_id: str | None = None,
    metadata: Metadata | None = None,
) -> Message:
    """An agent message of the given parts, in order.

    Raises ``TypeError`` for an item that is not a part and ``ValueError`` for
    no parts at all (every version requires at least one).
    """
    items = list(parts)
    for item in items:
        if not isinstance(item, (TextPart, FilePart, DataPart)):
            raise TypeError(f"not a part: {type(item).__name__}")
    if not items:
        raise ValueError("a message needs at least one part")
    return Message(
        message_id=new_id(),
        role=Role.AGENT,
        parts=items,
        task_id=task_id,
        context_id=context_id,
        metadata=metadata,
    )


def get_text(source: Message | Artifact | Sequence[Part], sep: str = "\n") -> str:
    """The text parts of a message, an artifact or a list of parts, joined."""
    parts = source if isinstance(source, Sequence) else source.parts
    if len(parts) == 1:  # most messages: no generator to run
        part = parts[0]
        return part.text if isinstance(part, TextPart) else ""
    return sep.join(p.text for p in parts if isinstance(p, TextPart))


def data_parts(source: Message | Artifact | Sequence[Part]) -> list[DataPart]:
    """The data parts of a message, an artifact or a list of parts."""
    parts = source if isinstance(source, Sequence) else source.parts
    return [p for p in parts if isinstance(p, DataPart)]


def get_data(source: Message | Artifact | Sequence[Part]) -> list[Any]:
    """The values of the data parts."""
    return [p.data for p in data_parts(source)]


def file_parts(source: Message | Artifact | Sequence[Part]) -> list[FilePart]:
    """The file parts of a message, an artifact or a list of parts."""
    parts = source if isinstance(source, Sequence) else source.parts
    return [p for p in parts if isinstance(p, FilePart)]


def get_data_from_data_part(part: DataPart) -> Any:
    """The value a data part holds."""
    if not isinstance(part, DataPart):
        raise TypeError(f"not a data part: {type(part).__name__}")
    return part.data


def get_uri_from_file_part(part: FilePart) -> str | None:
    """The URI a file part refers to, or None when its content is inline."""
    if not isinstance(part, FilePart):
        raise TypeError(f"not a file part: {type(part).__name__}")
    return part.uri


def get_bytes_from_file_part(part: FilePart) -> bytes | None:
    """The inline content of a file part (already base64-decoded), or None when it is by URI."""
    if not isinstance(part, FilePart):
        raise TypeError(f"not a file part: {type(part).__name__}")
    return part.raw


def task_status(
    state: TaskState | str,
    message: Message | None = None,
    timestamp: str | None = None,
) -> TaskStatus:
    """A task status; ``state`` as a ``TaskState`` or its name (``"completed"``, ``"input-required"``).

    ``timestamp`` is an RFC 3339 string; none is made up here (the core has no
    clock): the engine stamps statuses as it records them.
    """
    if not isinstance(state, TaskState):
        try:
            state = TaskState(state)
        except ValueError:
            known = ", ".join(s.value for s in TaskState)
            raise ValueError(f"unknown task state {state!r}; known: {known}") from None
    return TaskStatus(state=state, message=message, timestamp=timestamp)


def initial_task(
    message: Message,
    *,
    task_id: str | None = None,
    context_id: str | None = None,
    timestamp: str | None = None,
    metadata: Metadata | None = None,
) -> Task:
    """A new task in ``submitted`` whose history is ``message``."""
    return Task(
        id=task_id or message.task_id or new_id(),
        context_id=context_id or message.context_id or new_id(),
        status=TaskStatus(state=TaskState.SUBMITTED, timestamp=timestamp),
        history=[message],
        metadata=metadata,
    )


def final_task(
    task: Task,
    *,
    state: TaskState = TaskState.COMPLETED,
    message: Message | None = None,
    artifacts: Iterable[Artifact] = (),
    timestamp: str | None = None,
    status: TaskStatus | None = None,
) -> Task:
    """``task`` finished in ``state`` with extra artifacts (a new Task; ``task`` is left as is).

    ``status`` (from ``task_status``) gives state, message and timestamp in one,
    in place of the three separate arguments.
    """
    if status is None:
        status = TaskStatus(state=state, message=message, timestamp=timestamp)
    history = list(task.history)
    if status.message is not None:
        history.append(status.message)
    return Task(
        id=task.id,
        context_id=task.context_id,
        status=status,
        artifacts=[*task.artifacts, *artifacts],
        history=history,
        metadata=task.metadata,
    )
