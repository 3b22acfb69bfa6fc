"""SSE frames of text chunks, spliced: the most frequent stream event, made cheaply.

A streaming agent sends most of its output as chunks of one artifact that
differ in their text alone. Such a chunk's encoding, in any dialect, is the
encoding of the chunk before it with the other text put in its place; so a
stream keeps the bytes before and after the text, and frames each chunk with
one formatting instead of building and encoding its wire structs (measured
with ``benchmarks/in_process.py stream``; docs/architecture.md).

The bytes around the text are found, once per run of chunks, by encoding the
chunk with a marker for its text through the dialect's own codec. A dialect
that writes the text anywhere but once, as a JSON string, gets no template,
and its chunks take the codec's path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from ...core.model import Artifact, ArtifactUpdate, TextPart
from ...server.streams import Entry, StreamOutput
from ...stores.base import StoredEvent

__all__ = ["ChunkFrames"]

_json = msgspec.json.Encoder().encode
#: the text a probe chunk carries: characters that JSON escapes and characters it
#: does not, so that a codec whose strings differ from ours in either finds no slot
_MARK = '\u2063chunk "slot"\n\u00e9\u2063'
_MARK_JSON = _json(_MARK)

#: the fields a chunk may differ in from the one before while sharing its template
#: (the others must all be equal), and the ones that must be unset; a test keeps
#: them in step with the model
KEYED = {
    # (a generation differs from chunk to chunk: spliced where a codec writes it
    # not, else the codec frames every chunk, see _make)
    ArtifactUpdate: ("task_id", "context_id", "append", "last_chunk", "generation"),
    Artifact: ("artifact_id", "index"),
}
UNSET = {
    ArtifactUpdate: ("metadata",),
    Artifact: ("name", "description", "metadata", "extensions"),
    TextPart: ("metadata", "media_type", "filename"),
}


#: templates a stream keeps (chunks of several artifacts may come interleaved);
#: past this many it starts again with none
MAX_TEMPLATES = 16

_Template = tuple[bytes, bytes] | None


#: whether an encode function (a codec's, bound) writes a chunk's generation: a
#: trait of the codec, not of a chunk, learned by its first template with one
#: encoding more (a stream makes a template for each of its runs of chunks)
_WRITES_GENERATION: dict[Callable[[ArtifactUpdate], bytes], bool] = {}
#: the codecs (one each, ``get_codec``) it keeps at most: bounded all the same
_CODECS_AT_MOST = 64

#: the probe before any run: equal to no chunk (no chunk names no task)
_NO_RUN = ArtifactUpdate(task_id="", context_id="\x00", artifact=Artifact(artifact_id="",
                                                                      parts=[]))


class ChunkFrames:
    """One stream's SSE frames of text chunks, for one codec and envelope.

    ``encode`` is the codec's encoding of a stream item; ``prefix`` and
    ``suffix`` the envelope around it in an event's data.
    """

    __slots__ = ("_encode", "_part", "_prefix", "_probe", "_suffix", "_template", "_templates")

    def __init__(self, encode: Callable[[ArtifactUpdate], bytes], prefix: bytes,
                 suffix: bytes) -> None:
        self._encode = encode
        self._prefix = prefix
        self._suffix = suffix
        #: the one part of every probe: a chunk's text is put in it before the
        #: chunk is compared with the probe of the run framed last
        self._part = TextPart(text="")
        #: that run's template (None: none can be made) and probe (None: no run yet)
        self._template: _Template = None
        self._probe: ArtifactUpdate = _NO_RUN
        #: every run's template and probe so far, for chunks of runs that alternate
        self._templates: dict[tuple[object, ...], tuple[_Template, ArtifactUpdate]] = {}

    def add(self, parts: list[bytes], seq: int, u: ArtifactUpdate) -> bool:
        """Append the SSE event of ``u`` with id ``seq`` to ``parts``; False (and
        nothing appended) when ``u`` is not a plain text chunk, or its dialect
        writes text otherwise."""
        part = self._part
        try:
            text = part.text = u.artifact.parts[0].text  # type: ignore[union-attr]
        except (AttributeError, IndexError):  # no parts, or a first part of no text
            return False
        # With its text in the probe's part (and its generation), a chunk of the
        # run framed last is equal to the probe: one comparison in C of every field.
        probe = self._probe
        probe.generation = u.generation
        if u != probe and not self._switch(u):
            return False
        template = self._template
        if template is None or not text:  # a dialect may leave an empty text out
            return False
        # Pieces, joined with the rest of the write: one copy of each byte, where
        # formatting a frame first would make two.
        parts += (b"id: %d" % seq, template[0], _json(text), template[1])
        return True

    def write(self, parts: list[bytes], got: Sequence[StreamOutput],
              other: Callable[[StreamOutput], bytes]) -> None:
        """Append the SSE events of a batch of stream outputs to ``parts``: a lone
        reader's text chunk (a ``StoredEvent``, or an ``Entry`` sharing no log
        entry) as ``add`` frames it, every other output, and a chunk ``add``
        would refuse, as ``other`` frames it. ``add``'s work, done here for each
        chunk: no call per event."""
        part = self._part
        # the current run's probe and template, in locals: looked up again only
        # when a chunk switches runs
        probe = self._probe
        template = self._template
        u: Any
        for out in got:
            if type(out) is StoredEvent:  # a log entry read alone (take_stored): an update
                u = out.event  # (StoredEvent.event: any event)
            elif type(out) is Entry and out.stored is None:
                u = out.item
                # (a snapshot's artifact names no id: framed by ``other``, which knows)
                if type(u) is not ArtifactUpdate or out.id_follows:
                    parts.append(other(out))
                    continue
            else:
                parts.append(other(out))
                continue
            try:
                text = part.text = u.artifact.parts[0].text
            except (AttributeError, IndexError):  # no parts, or a first part of no text
                parts.append(other(out))
                continue
            probe.generation = u.generation  # as add does: chunks differ by it
            if u != probe:
                if not self._switch(u):
                    parts.append(other(out))
                    continue
                probe = self._probe
                template = self._template
            if template is not None and text:
                parts += (b"id: %d" % out.seq, template[0], _json(text), template[1])
                continue
            parts.append(other(out))

    def _switch(self, u: ArtifactUpdate) -> bool:
        """Make ``u``'s run the current one; False when ``u`` is no plain text chunk."""
        a = u.artifact
        chunk_parts = a.parts
        if (len(chunk_parts) != 1 or u.metadata is not None or a.name is not None
                or a.description is not None or a.metadata is not None
                or a.extensions is not None):
            return False
        p = chunk_parts[0]
        if (type(p) is not TextPart or p.metadata is not None or p.media_type is not None
                or p.filename is not None):
            return False
        key = (u.task_id, u.context_id, a.artifact_id, a.index, u.append, u.last_chunk)
        templates = self._templates
        known = templates.get(key)
        if known is None:
            if len(templates) >= MAX_TEMPLATES:
                templates.clear()
            probe = msgspec.structs.replace(
                u, artifact=msgspec.structs.replace(a, parts=[self._part]))
            known = templates[key] = (self._make(probe), probe)
        self._template, self._probe = known
        return True

    def _make(self, probe: ArtifactUpdate) -> _Template:
        # The probe itself, with the marker for its text (its one part is every
        # probe's, and takes the next chunk's text before any comparison).
        self._part.text = _MARK
        encode = self._encode
        data = encode(probe)
        writes = _WRITES_GENERATION.get(encode)
        if writes is None:
            probe.generation += 1
            writes = encode(probe) != data
            probe.generation -= 1
            if len(_WRITES_GENERATION) >= _CODECS_AT_MOST:
                _WRITES_GENERATION.clear()
            _WRITES_GENERATION[encode] = writes
        if writes:
            return None  # the codec writes the generation (A2A 1.1): no template
        at = data.find(_MARK_JSON)
        if at < 0 or data.find(_MARK_JSON, at + 1) >= 0:
            return None
        return (b"\ndata: " + self._prefix + data[:at],
                data[at + len(_MARK_JSON):] + self._suffix + b"\n\n")
