"""What makes two sends "the same message" for idempotency, and what is kept of
a message that carried a credential.

A client that retries a send repeats its ``messageId``; one that reuses the id
for something else has made a mistake that must not be answered with an
unrelated task. The digest covers what a retry repeats exactly: the role, the
parts, and the task and context the message names (as sent). Metadata and
extensions are left out: clients add tracing and timestamps there on retries.
"""

from __future__ import annotations

import hashlib

import msgspec

from ..core.model import Message, TextPart

__all__ = ["REDACTED", "message_digest", "redacted"]

#: what the log keeps of a message that answered auth-required
REDACTED = ("[redacted: this message answered an auth-required state; the agent received "
            "it, and its content is not kept]")

_encode = msgspec.json.Encoder(order="deterministic").encode


def redacted(message: Message) -> Message:
    """``message`` with its parts replaced by one note, and no metadata."""
    return msgspec.structs.replace(message, parts=[TextPart(text=REDACTED)], metadata=None)


def message_digest(message: Message, client_task_id: str | None = None) -> bytes:
    """16 bytes that differ, for all practical purposes, between different messages."""
    body = _encode((message.role, message.parts, message.task_id or client_task_id or "",
                    message.context_id or ""))
    return hashlib.blake2b(body, digest_size=16).digest()
