"""What makes two sends "the same message" for idempotency, and what is kept of
a message that carried a credential.

A client that retries a send repeats its ``messageId``; one that reuses the id
for something else must not be answered with an unrelated task. The digest
covers what a retry repeats exactly: the role, the parts, and the task and
context the message names (as sent). Metadata and extensions are left out:
clients add tracing and timestamps there on retries.

Two modes (``EngineConfig.message_ids``): ``"content"`` (the default) keys a
message by its id and its digest, so an id reused for other content is another
message; ``"strict"`` keys it by the id alone and refuses other content under a
known id with InvalidParams.
"""

from __future__ import annotations

import hashlib
from typing import Literal

import msgspec

from ..core.errors import InvalidParams
from ..core.model import Message, TextPart

__all__ = ["MESSAGE_ID_MODES", "REDACTED", "MessageIds", "check_same", "message_digest",
           "message_id_mode", "redacted", "reused"]

#: how a message id names a message (see the module's doc)
MessageIds = Literal["content", "strict"]
MESSAGE_ID_MODES: tuple[MessageIds, ...] = ("content", "strict")


def message_id_mode(value: str) -> MessageIds:
    """``value`` as a mode; ValueError naming the modes if it is none."""
    for mode in MESSAGE_ID_MODES:
        if value == mode:
            return mode
    raise ValueError(f"message_ids={value!r}: use one of {', '.join(MESSAGE_ID_MODES)}")

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


def reused(message_id: str) -> InvalidParams:
    """The refusal, in strict mode, of other content under a known message id."""
    return InvalidParams(
        f"Invalid params: messageId {message_id!r} was already used for a different "
        "message (another role, other parts, or another taskId or contextId); "
        "a new message needs a new messageId"
    )


def check_same(message_id: str, stored: bytes, digest: bytes) -> None:
    """InvalidParams unless ``digest`` is the one ``stored`` for the message id."""
    # b"": recorded before digests were kept, or for an answer to auth-required
    # (nothing derived from a credential is kept): nothing to compare
    if stored and stored != digest:
        raise reused(message_id)
