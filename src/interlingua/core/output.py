"""What an agent emits must be for every store and every binding to take it.

The durable stores encode each event as they write it, and refuse one they cannot
encode; the memory store keeps objects and encodes a task's log once it is finished,
and the bindings encode an event as they send it. An event that one of them cannot
encode would be kept by some and refused by others, or refused after it was taken.
So an agent's events are checked where its context makes them, before any of them is
queued (``Context._check``; the quick paths, a stream's chunk of plain text and a
unary answer, check their text themselves): values nested no deeper than the bound
(``core/nesting.py``), text that UTF-8 carries (no lone surrogate, as a model's
stream split between the halves of a pair leaves), and data and metadata that JSON
encodes.

ASCII text, nearly every chunk, costs one ``isascii()``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from .model import (
    Artifact,
    ArtifactUpdate,
    DataPart,
    Event,
    FilePart,
    Message,
    Part,
    StatusUpdate,
    TextPart,
)
from .nesting import deeper_than

__all__ = ["InvalidOutput", "message_fault", "output_fault", "text_fault"]

_encode = msgspec.json.Encoder().encode


class InvalidOutput(ValueError):
    """What an agent emitted no store or binding could carry as it is: nested too
    deeply, text that is not UTF-8, data that JSON cannot encode."""


def text_fault(text: str, where: str) -> str | None:
    """Why ``text`` cannot be carried (a lone surrogate), or None."""
    if text.isascii():
        return None
    try:
        text.encode()
    except UnicodeEncodeError as exc:
        return (f"the agent's {where} holds a lone surrogate (U+{ord(text[exc.start]):04X} "
                f"at {exc.start}), which UTF-8 cannot carry")
    return None


def _value_fault(value: Any, limit: int, where: str) -> str | None:
    if deeper_than(value, limit):
        return (f"the agent's {where} nests more than {limit} levels deep, more than every "
                "binding carries (Limits.max_nesting)")
    try:
        _encode(value)
    except UnicodeEncodeError as exc:
        return f"the agent's {where} holds a lone surrogate, which UTF-8 cannot carry ({exc})"
    except (TypeError, ValueError, OverflowError, RecursionError) as exc:
        return f"the agent's {where} cannot be encoded as JSON: {exc}"
    return None


def _part_fault(part: Part, limit: int, where: str) -> str | None:
    kind = type(part)
    if kind is TextPart:
        found = text_fault(part.text, where + ".text")  # type: ignore[union-attr]
    elif kind is DataPart:
        found = _value_fault(part.data, limit, where + ".data")  # type: ignore[union-attr]
    else:
        assert isinstance(part, FilePart)
        found = None
        for name in ("uri", "media_type", "filename"):
            text = getattr(part, name)
            if text is not None and (found := text_fault(text, f"{where}.{name}")):
                break
    if found is None and part.metadata is not None:
        found = _value_fault(part.metadata, limit, where + ".metadata")
    return found


def message_fault(message: Message, limit: int, where: str) -> str | None:
    """Why ``message``, which the agent sends, cannot be carried, or None."""
    for n, part in enumerate(message.parts):
        found = _part_fault(part, limit, f"{where}.parts[{n}]")
        if found is not None:
            return found
    if message.metadata is not None:
        return _value_fault(message.metadata, limit, where + ".metadata")
    return None


def _artifact_fault(artifact: Artifact, limit: int) -> str | None:
    for n, part in enumerate(artifact.parts):
        found = _part_fault(part, limit, f"artifact.parts[{n}]")
        if found is not None:
            return found
    for name in ("artifact_id", "name", "description"):
        text = getattr(artifact, name)
        if text is not None and (found := text_fault(text, "artifact." + name)):
            return found
    if artifact.metadata is not None:
        return _value_fault(artifact.metadata, limit, "artifact.metadata")
    return None


def output_fault(events: Sequence[Event], limit: int) -> str | None:
    """Why one of an agent's ``events`` (its statuses and artifacts) cannot be kept or
    carried, or None. ``limit``: the levels a value may nest."""
    for event in events:
        kind = type(event)
        if kind is ArtifactUpdate:
            artifact = event.artifact  # type: ignore[union-attr]
            # plain ASCII text, and nothing more (nearly every artifact): no call
            plain = (artifact.metadata is None and artifact.name is None
                     and artifact.description is None and artifact.artifact_id.isascii())
            if plain:
                for part in artifact.parts:
                    if (type(part) is not TextPart or part.metadata is not None
                            or not part.text.isascii()):
                        plain = False
                        break
            found = None if plain else _artifact_fault(artifact, limit)
        elif kind is StatusUpdate:
            message = event.status.message  # type: ignore[union-attr]
            found = None if message is None else \
                message_fault(message, limit, "status.message")
        else:
            continue  # a task created, or a message added: the caller's, checked at admission
        if found is not None:
            return found
        metadata = event.metadata  # type: ignore[union-attr]
        if metadata is not None:
            found = _value_fault(metadata, limit, "event.metadata")
            if found is not None:
                return found
    return None
