"""What makes two sends "the same message" for idempotency.

A client that retries a send repeats its ``messageId``; one that reuses the id
for something else has made a mistake that must not be answered with an
unrelated task. The digest covers what a retry repeats exactly: the role, the
parts, and the task and context the message names (as sent). Metadata and
extensions are left out: clients add tracing and timestamps there on retries.
"""

from __future__ import annotations

import hashlib

import msgspec

from ..core.model import Message

__all__ = ["message_digest"]

_encode = msgspec.json.Encoder(order="deterministic").encode


def message_digest(message: Message, client_task_id: str | None = None) -> bytes:
    """16 bytes that differ, for all practical purposes, between different messages."""
    body = _encode((message.role, message.parts, message.task_id or client_task_id or "",
                    message.context_id or ""))
    return hashlib.blake2b(body, digest_size=16).digest()
