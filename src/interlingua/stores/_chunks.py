"""Runs of text chunks: what a streaming agent emits most, stored in less room.

A run is an artifact chunk (the *head*) followed by chunks that are, exactly,
the head made an appended chunk (``append`` true) whose one part is a plain
text part: they differ from it in their text alone. A store keeps the head and
the texts (the SQL stores' event rows, the memory store's packed logs):
about 14 bytes a chunk where a chunk event takes about 190.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice

import msgspec

from ..core.model import ArtifactUpdate, Event, TextPart

__all__ = ["run_events", "texts_after"]

_encode = msgspec.json.Encoder().encode
_chunks_decoder = msgspec.json.Decoder(list[ArtifactUpdate])
# Where a chunk's text sits in its JSON: artifact_id, the one string field of
# the artifact encoded before its parts, cannot hold these quotes unescaped,
# and the event's own fields before it are strings too.
_TEXT_SLOT = b'"parts":[{"kind":"text","text":""}]'


def texts_after(head: ArtifactUpdate, events: Sequence[Event], start: int,
                end: int) -> list[str]:
    """The texts of the events from ``start`` (before ``end``) that are ``head``
    made an appended chunk with one plain text part, up to the first that is not."""
    # With its text put in the probe's one part, a chunk of the run is equal to
    # the probe: one comparison in C of every field, parts and all, where a
    # check field by field in Python took half as long again.
    part = TextPart(text="")
    like = msgspec.structs.replace(head.artifact, parts=[part])  # a copy, never head's own
    probe = msgspec.structs.replace(head, append=True, artifact=like)
    texts: list[str] = []
    # the chunks of a run follow each other: their generations are the head's and one
    # more each (a head with none, 0, has chunks with none); the probe is given the
    # generation the next chunk must have, and the run ends before one out of step
    generation = head.generation
    step = 1 if generation else 0
    for event in islice(events, start, end):  # no index to keep, no subscript
        try:
            # (the except is the check: an event of another kind, no parts, a
            # first part of no text)
            text = part.text = event.artifact.parts[0].text  # type: ignore[union-attr]
        except (AttributeError, IndexError):
            break
        generation += step
        probe.generation = generation
        if event != probe:
            break
        texts.append(text)
    return texts


def run_events(head: ArtifactUpdate, texts: Sequence[msgspec.Raw]) -> list[Event]:
    """``head`` and the chunks after it that ``texts`` (each its JSON string) stand
    for, as new objects: each chunk's JSON is the empty-text chunk's with its text
    put in the slot, all decoded at once (cheaper than building them field by field)."""
    events: list[Event] = [head]
    if not texts:
        return events
    chunk = msgspec.structs.replace(
        head, append=True,
        artifact=msgspec.structs.replace(head.artifact, parts=[TextPart(text="")]))
    encoded = _encode(chunk)
    at = encoded.index(_TEXT_SLOT) + len(_TEXT_SLOT) - 4
    before, after = encoded[:at], encoded[at + 2:]
    # one copy of the run's JSON (a chain of + would make one per step)
    chunks = _chunks_decoder.decode(
        b"".join((b"[", before, (after + b"," + before).join(texts), after, b"]")))
    generation = head.generation
    if generation:
        for chunk in chunks:
            generation += 1
            chunk.generation = generation
    events.extend(chunks)
    return events
