"""Putting streamed artifacts back together.

An agent may send an artifact in pieces: the first ``ArtifactUpdate`` of an
id starts it (or, sent again without ``append``, replaces it), later ones with
``append`` add their parts to it, and ``last_chunk`` says it is whole.
``ArtifactAssembler`` applies those rules to the updates it is fed::

    assembler = ArtifactAssembler()
    async for event in client.stream("Write a story"):
        done = assembler.feed(event)
        if done is not None:
            print(done.name, "is complete")
    story = assembler.text()

A ``Task`` fed to it (the snapshot a subscription starts with) sets the
artifacts the task already has, so the updates that follow continue them.
"""

from __future__ import annotations

import msgspec

from ..core.dialects.base import StreamItem
from ..core.model import Artifact, ArtifactUpdate, Task, TextPart
from .stream import StreamEvent

__all__ = ["ArtifactAssembler"]


class ArtifactAssembler:
    """Whole artifacts from a stream of (chunked) artifact updates."""

    def __init__(self) -> None:
        # insertion order is the order artifacts first appeared in
        self._artifacts: dict[str, Artifact] = {}
        self._complete: set[str] = set()

    def feed(self, event: StreamEvent | StreamItem) -> Artifact | None:
        """Take any stream event; the artifact it completed, if any.

        Artifact updates are applied, a ``Task`` sets the artifacts it holds,
        and anything else is ignored.
        """
        item = event.item if isinstance(event, StreamEvent) else event
        if isinstance(item, ArtifactUpdate):
            return self.add(item)
        if isinstance(item, Task):
            for artifact in item.artifacts:
                self._artifacts[artifact.artifact_id] = _copy(artifact)
                self._complete.discard(artifact.artifact_id)
        return None

    def add(self, update: ArtifactUpdate) -> Artifact | None:
        """Apply one update; the whole artifact when this was its last chunk."""
        new = update.artifact
        aid = new.artifact_id
        old = self._artifacts.get(aid)
        if update.append and old is not None:
            old.parts.extend(new.parts)
            # A later chunk may name or describe the artifact; unset fields keep theirs.
            if new.name is not None:
                old.name = new.name
            if new.description is not None:
                old.description = new.description
            if new.metadata:
                old.metadata = {**(old.metadata or {}), **new.metadata}
            if new.extensions is not None:
                old.extensions = new.extensions
        else:
            # Without append (or appending to an artifact never seen): it starts
            # afresh, in the place it had if it was known.
            self._artifacts[aid] = _copy(new)
        if update.last_chunk:
            self._complete.add(aid)
            return _copy(self._artifacts[aid])
        self._complete.discard(aid)
        return None

    @property
    def artifacts(self) -> list[Artifact]:
        """Every artifact so far, whole or not, in the order they first appeared."""
        return [_copy(a) for a in self._artifacts.values()]

    @property
    def completed(self) -> list[Artifact]:
        """The artifacts whose last chunk has arrived."""
        return [_copy(a) for aid, a in self._artifacts.items() if aid in self._complete]

    @property
    def pending(self) -> list[Artifact]:
        """The artifacts still waiting for their last chunk."""
        return [_copy(a) for aid, a in self._artifacts.items() if aid not in self._complete]

    def get(self, key: str) -> Artifact | None:
        """The artifact with this id, or else the first with this name."""
        artifact = self._artifacts.get(key)
        if artifact is None:
            artifact = next((a for a in self._artifacts.values() if a.name == key), None)
        return _copy(artifact) if artifact is not None else None

    def is_complete(self, artifact_id: str) -> bool:
        return artifact_id in self._complete

    def text(self, key: str | None = None) -> str:
        """The text parts of one artifact (by id or name) run together, as
        streamed chunks are meant to be read; without ``key``, every artifact's
        text, one artifact per line."""
        if key is not None:
            artifact = self._artifacts.get(key)
            if artifact is None:
                artifact = next((a for a in self._artifacts.values() if a.name == key), None)
            if artifact is None:
                raise KeyError(key)
            return _text(artifact)
        return "\n".join(_text(a) for a in self._artifacts.values())

    def __len__(self) -> int:
        return len(self._artifacts)


def _copy(artifact: Artifact) -> Artifact:
    # Own parts list: appends here never reach the caller's (or the event's) list.
    return msgspec.structs.replace(artifact, parts=list(artifact.parts))


def _text(artifact: Artifact) -> str:
    return "".join(p.text for p in artifact.parts if isinstance(p, TextPart))
