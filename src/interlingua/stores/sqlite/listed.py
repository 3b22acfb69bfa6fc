"""A task's listing, kept on its row in v1.0 JSON: what ListTasks answers with.

ListTasks exists in v1.0 alone, and its JSON-RPC and HTTP+JSON forms write a task
the same way. Decoding 50 rows into tasks, converting them to the wire model and
encoding them again took four fifths of a page's CPU; a row that holds the task's
JSON (without artifacts, which a listing leaves out unless asked) is copied into
the page as it is (docs/architecture.md, "A task's listing is kept in v1.0 JSON").

The JSON is kept in two parts: the head, ``{"id":…,"contextId":…,"status":…``
and the metadata, which change with the status; and the tail, the history and
the closing brace, which change with the history. ``listed_split`` is where the
tail starts, so a write that moves only one of them rewrites only that one.
``listed_at`` is the task version the JSON is current at: a write by a process
that does not know these columns moves the version on, and readers then build
the task from the other columns, as they did before.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ...core.dialects import _v1_wire as w
from ...core.model import Message, TaskStatus

_encode = msgspec.json.Encoder().encode

Listed = tuple[bytes, int]


def head(task_id: str, context_id: str, status: TaskStatus, metadata: bytes | None) -> bytes:
    """``{"id":…,"contextId":…,"status":…`` and the metadata, when the task has some."""
    out = b"".join((b'{"id":', _encode(task_id), b',"contextId":', _encode(context_id),
                    b',"status":', _encode(w.status_out(status))))
    return out if metadata is None else out + b',"metadata":' + metadata


def tail(history: list[Message]) -> bytes:
    """The history (none when empty, as ``task_out`` leaves it out) and the closing brace."""
    if not history:
        return b"}"
    out: Any = [w.message_out(m) for m in history]
    return b',"history":' + _encode(out) + b"}"


def listed(task_id: str, context_id: str, status: TaskStatus, metadata: bytes | None,
           history: list[Message]) -> Listed:
    """The task's listing and where its tail starts."""
    first = head(task_id, context_id, status, metadata)
    return first + tail(history), len(first)
