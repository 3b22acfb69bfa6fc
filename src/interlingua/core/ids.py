"""What an id a caller gives may be, whichever store keeps it.

A message id, a context id, a task id the caller names for a new task, and a tenant
are keys of the stores' indexes. PostgreSQL cannot hold the NUL character in text,
and refuses an index entry past 2,704 bytes (several ids share one: tenant, owner,
context, task); SQLite and the memory store take either. So every store is held to
what all of them take, before any of them is asked: at most ``MAX_ID_BYTES`` bytes of
UTF-8, without NUL.

Nor does an id hold any other control character (a line feed, an escape, DEL, the C1
range): ids are written into logs, onto terminals by the command line and into MQTT
topics, where one would forge a log line or recolour a terminal; a push config's id
was already held to this.
"""

from __future__ import annotations

import unicodedata

from .model import Message

__all__ = ["MAX_ID_BYTES", "id_fault", "send_id_fault"]

#: bytes (UTF-8) an id may take
MAX_ID_BYTES = 256


def id_fault(value: str) -> str | None:
    """What is wrong with ``value`` as an id (None: nothing)."""
    if "\x00" in value:
        return "holds the NUL character"
    if not value.isprintable():  # (false for a control character, and for some others)
        control = next((ch for ch in value if unicodedata.category(ch) == "Cc"), None)
        if control is not None:
            return f"holds a control character (U+{ord(control):04X})"
    # (an ASCII text's length is its size in bytes: no encoding for nearly every id)
    if len(value) > MAX_ID_BYTES or (
            not value.isascii()
            and len(value.encode("utf-8", "surrogatepass")) > MAX_ID_BYTES):
        return f"is longer than {MAX_ID_BYTES} bytes"
    return None


def send_id_fault(message: Message, task_id: str | None) -> tuple[list[str], str] | None:
    """The first id of a send that ``id_fault`` finds wrong: its path in v0.3 JSON-RPC's
    params and what is wrong (``task_id``: the one the caller names for a new task,
    v0.1's ``id``; None: all are fine). The tenant, which every call names, is checked
    where a call is admitted.

    The caller's dialect spells the path as its params do (``Codec.member_path``: v0.1's
    ``sessionId``, SAM's ``context_id``), and a binding whose caller sent other names
    (HTTP+JSON's body, gRPC's proto fields) renames it so (``core/dialects/as_sent.py``)."""
    for path, value in ((["message", "messageId"], message.message_id),
                        (["message", "contextId"], message.context_id),
                        (["message", "taskId"], message.task_id), (["id"], task_id)):
        if value:
            fault = id_fault(value)
            if fault is not None:
                return path, fault
    for n, ref in enumerate(message.reference_task_ids or ()):
        fault = id_fault(ref)
        if fault is not None:
            return ["message", "referenceTaskIds", f"[{n}]"], fault
    return None
