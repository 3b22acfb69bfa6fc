"""Spliced text-chunk frames give, byte for byte, what the codec's own path gives."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from interlingua.bindings.http.chunk_frames import KEYED, MAX_TEMPLATES, UNSET, ChunkFrames
from interlingua.bindings.http.sse_writer import Envelope, _encoded
from interlingua.bindings.jsonrpc.endpoint import jsonrpc_envelope
from interlingua.bindings.rest.endpoint import _ENVELOPE
from interlingua.core import model as m
from interlingua.core.dialects import all_codecs
from interlingua.server.streams import Entry

#: the codecs that do not write a chunk's generation (A2A 1.1 does: its chunks take
#: the codec's path, test_a_codec_writing_generations_frames_every_chunk_itself)
SPLICED = sorted(d for d in all_codecs() if d != "1.1")

TEXTS = ["chunk 0001 ", 'quote " backslash \\ newline \n tab \t', "ünïcødé ✓ 🚀",
         "\u2028\x00\x1f", "</script>", "\u2063chunk"]


def _envelopes() -> list[tuple[str, Envelope]]:
    out = [(f"jsonrpc {rid!r}", jsonrpc_envelope(rid)) for rid in (7, "req-\u00e9", None)]
    out.append(("rest", _ENVELOPE))
    return out


def _chunk(text: str, *, task: str = "task-1", context: str = 'ctx "2"', artifact: str = "art-é",
           index: int | None = None, append: bool = True, last: bool = False) -> m.ArtifactUpdate:
    return m.ArtifactUpdate(
        task_id=task, context_id=context, append=append, last_chunk=last,
        artifact=m.Artifact(artifact_id=artifact, parts=[m.TextPart(text=text)], index=index))


def _codec_path(codec: object, envelope: Envelope, seq: int, u: m.ArtifactUpdate) -> bytes:
    return _encoded(Entry(seq, u), codec, envelope)  # type: ignore[arg-type]


def test_a_codec_writing_generations_frames_every_chunk_itself() -> None:
    codec = all_codecs()["1.1"]
    frames = ChunkFrames(codec.encode_stream_item, b"", b"")
    for seq in (1, 2):
        u = _chunk(f"t{seq}")
        u.generation = seq + 4
        parts: list[bytes] = []
        assert not frames.add(parts, seq, u)
        assert parts == []
        assert f'"generation":"{seq + 4}"'.encode() in codec.encode_stream_item(u)


@pytest.mark.parametrize("dialect", SPLICED)
@pytest.mark.parametrize(("label", "envelope"), _envelopes())
def test_every_dialects_chunks_are_framed_as_its_codec_frames_them(
        dialect: str, label: str, envelope: Envelope) -> None:
    codec = all_codecs()[dialect]
    frames = ChunkFrames(codec.encode_stream_item, envelope.prefix, envelope.suffix)
    parts: list[bytes] = []
    expected: list[bytes] = []
    seq = 0
    for append, last, index in itertools.product([True, False], [False, True], [None, 0, 3]):
        for text in TEXTS:
            seq += 1
            u = _chunk(text, append=append, last=last, index=index)
            assert frames.add(parts, seq, u), (dialect, label, append, last, index, text)
            expected.append(_codec_path(codec, envelope, seq, u))
    assert b"".join(parts) == b"".join(expected)


@pytest.mark.parametrize("dialect", SPLICED)
def test_interleaved_artifacts_tasks_and_contexts_keep_their_own_frames(dialect: str) -> None:
    codec = all_codecs()[dialect]
    envelope = jsonrpc_envelope(1)
    frames = ChunkFrames(codec.encode_stream_item, envelope.prefix, envelope.suffix)
    ids = [("task-1", "ctx-1", "art-1"), ("task-1", "ctx-1", "art-2"),
           ("task-2", "ctx-1", "art-1"), ("task-1", "ctx-2", "art-1"), ("", "", "")]
    for seq, (task, context, artifact) in enumerate([*ids, *reversed(ids), ids[0]], 1):
        parts: list[bytes] = []
        u = _chunk(f"text of {seq}", task=task, context=context, artifact=artifact)
        assert frames.add(parts, seq, u)
        assert b"".join(parts) == _codec_path(codec, envelope, seq, u), (task, context, artifact)


@pytest.mark.parametrize("update", [
    _chunk(""),
    m.ArtifactUpdate(task_id="t", context_id="c", metadata={"e": 1},
                     artifact=m.Artifact(artifact_id="a", parts=[m.TextPart(text="x")])),
    *(m.ArtifactUpdate(task_id="t", context_id="c", artifact=m.Artifact(
        artifact_id="a", parts=[m.TextPart(text="x")], **{field: value}))  # type: ignore[arg-type]
      for field, value in [("name", "n"), ("description", "d"), ("metadata", {"k": 1}),
                           ("extensions", ["urn:x"]), ("extensions", [])]),
    *(m.ArtifactUpdate(task_id="t", context_id="c", artifact=m.Artifact(
        artifact_id="a", parts=[m.TextPart(text="x", **{field: value})]))  # type: ignore[arg-type]
      for field, value in [("metadata", {"k": 1}), ("media_type", "text/markdown"),
                           ("filename", "a.txt")]),
    m.ArtifactUpdate(task_id="t", context_id="c", artifact=m.Artifact(
        artifact_id="a", parts=[m.TextPart(text="x"), m.TextPart(text="y")])),
    m.ArtifactUpdate(task_id="t", context_id="c", artifact=m.Artifact(
        artifact_id="a", parts=[m.DataPart(data={"text": "x"})])),
    m.ArtifactUpdate(task_id="t", context_id="c", artifact=m.Artifact(artifact_id="a", parts=[])),
])
def test_anything_but_a_plain_text_chunk_is_left_to_the_codec(update: m.ArtifactUpdate) -> None:
    envelope = jsonrpc_envelope(1)
    for codec in map(all_codecs().__getitem__, SPLICED):
        frames = ChunkFrames(codec.encode_stream_item, envelope.prefix, envelope.suffix)
        # a plain chunk of the same artifact first, so a template is there to misuse
        plain = _chunk("plain", task="t", context="c", artifact="a", append=False)
        assert frames.add([], 1, plain)
        parts: list[bytes] = []
        assert not frames.add(parts, 2, update)
        assert parts == []


def _echoing(times: int, dump: Callable[[str], bytes] = msgspec.json.encode,
             ) -> Callable[[m.ArtifactUpdate], bytes]:
    def encode(u: m.ArtifactUpdate) -> bytes:
        text = u.artifact.parts[0].text  # type: ignore[union-attr]
        return b"{" + b",".join([dump(text)] * times) + b"}"
    return encode


@pytest.mark.parametrize(("encode", "why"), [
    (_echoing(2), "the text written twice"),
    (_echoing(0), "no text at all"),
    (_echoing(1, lambda t: json.dumps(t).encode()), "non-ASCII escaped"),
    (_echoing(1, lambda t: json.dumps(t, ensure_ascii=False).replace("\\n", "\n").encode()),
     "a newline left raw"),
])
def test_a_codec_that_writes_text_otherwise_gets_no_template(
        encode: Callable[[m.ArtifactUpdate], bytes], why: str) -> None:
    frames = ChunkFrames(encode, b"", b"")
    parts: list[bytes] = []
    assert not frames.add(parts, 1, _chunk("x")), why
    assert not frames.add(parts, 2, _chunk("ü\n")), why
    assert parts == []


@pytest.mark.parametrize("dialect", SPLICED)
def test_a_chunk_differing_in_one_keyed_field_gets_its_own_frame(dialect: str) -> None:
    codec = all_codecs()[dialect]
    envelope = jsonrpc_envelope(1)
    frames = ChunkFrames(codec.encode_stream_item, envelope.prefix, envelope.suffix)
    base = _chunk("base", index=1, append=True, last=False)
    variants = [_chunk("v", task="task-9", index=1), _chunk("v", context="ctx-9", index=1),
                _chunk("v", artifact="art-9", index=1), _chunk("v", index=2),
                _chunk("v", index=None), _chunk("v", index=1, append=False),
                _chunk("v", index=1, last=True)]
    seq = 0
    for variant in variants:
        for u in (base, variant, base):
            seq += 1
            parts: list[bytes] = []
            assert frames.add(parts, seq, u)
            assert b"".join(parts) == _codec_path(codec, envelope, seq, u), variant


#: a value other than the plain chunk's for every field a chunk has but its text
#: (a field added to the model and missing here fails the tests below)
OTHER = {"task_id": "task-9", "context_id": "ctx-9", "append": False, "last_chunk": True,
         "metadata": {"k": 1}, "artifact_id": "art-9", "index": 5, "name": "n",
         "description": "d", "extensions": ["urn:x"], "media_type": "text/markdown",
         "filename": "a.txt", "generation": 7}


def _changed(u: m.ArtifactUpdate, struct: type, field: str) -> m.ArtifactUpdate:
    value = OTHER[field]
    replace = msgspec.structs.replace
    if struct is m.ArtifactUpdate:
        return replace(u, **{field: value})
    if struct is m.Artifact:
        return replace(u, artifact=replace(u.artifact, **{field: value}))
    part = replace(u.artifact.parts[0], **{field: value})
    return replace(u, artifact=replace(u.artifact, parts=[part]))


@pytest.mark.parametrize("dialect", sorted(all_codecs()))
def test_a_chunk_changed_in_any_field_is_framed_as_its_codec_frames_it_or_left_to_it(
        dialect: str) -> None:
    codec = all_codecs()[dialect]
    envelope = jsonrpc_envelope(1)
    frames = ChunkFrames(codec.encode_stream_item, envelope.prefix, envelope.suffix)
    base = _chunk("base", index=1)
    seq = 0
    for struct in (m.ArtifactUpdate, m.Artifact, m.TextPart):
        for field in set(struct.__struct_fields__) - {"artifact", "parts", "text"}:
            for u in (base, _changed(base, struct, field), base):
                seq += 1
                parts: list[bytes] = []
                if frames.add(parts, seq, u):
                    assert field in KEYED.get(struct, ()) or u is base, field
                    assert b"".join(parts) == _codec_path(codec, envelope, seq, u), field
                else:
                    # (a codec that writes the generation gets no template)
                    assert (field in UNSET[struct] and u is not base) \
                        or frames._template is None, field
                    assert parts == []


def test_the_fields_checked_are_every_field_of_a_chunk() -> None:
    # A field added to the model must be keyed or required unset here, or a
    # chunk differing in it would be given another chunk's template.
    spliced = {m.ArtifactUpdate: {"artifact"}, m.Artifact: {"parts"}, m.TextPart: {"text"}}
    for struct, fields in spliced.items():
        named = set(KEYED.get(struct, ())) | set(UNSET.get(struct, ())) | fields
        assert named == set(struct.__struct_fields__), struct.__name__


def test_alternating_runs_keep_their_templates() -> None:
    # Chunks of two artifacts in turn (an answer and its reasoning, say): each
    # run's template is made once, not again at every switch.
    codec = all_codecs()["0.3"]
    envelope = jsonrpc_envelope(1)
    made: list[m.ArtifactUpdate] = []

    def encode(u: m.ArtifactUpdate) -> bytes:
        made.append(u)
        return codec.encode_stream_item(u)

    frames = ChunkFrames(encode, envelope.prefix, envelope.suffix)
    parts: list[bytes] = []
    expected: list[bytes] = []
    for seq in range(1, 41):
        u = _chunk(f"t{seq}", artifact="answer" if seq % 2 else "thought")
        assert frames.add(parts, seq, u)
        expected.append(_codec_path(codec, envelope, seq, u))
    assert b"".join(parts) == b"".join(expected)
    # each made of one encoding; the first one more, to see the codec writes no generation
    assert len(made) == 2 + 1


def test_a_stream_of_many_runs_keeps_a_bounded_number_of_templates() -> None:
    codec = all_codecs()["1.0"]
    envelope = jsonrpc_envelope(1)
    frames = ChunkFrames(codec.encode_stream_item, envelope.prefix, envelope.suffix)
    for seq in range(1, 3 * MAX_TEMPLATES):
        parts: list[bytes] = []
        u = _chunk("x", artifact=f"art-{seq}")
        assert frames.add(parts, seq, u)
        assert b"".join(parts) == _codec_path(codec, envelope, seq, u)
        assert len(frames._templates) <= MAX_TEMPLATES


@pytest.mark.parametrize("dialect", sorted(all_codecs()))
def test_a_batch_is_written_as_each_of_its_outputs_is_framed_alone(dialect: str) -> None:
    """``write``: a stream's batch, text chunks spliced, the rest (a status, a
    chunk with two parts, one with no parts, an empty text, one shared with
    other readers, a heartbeat) framed by the codec's path, in order."""
    from interlingua.server.streams import Heartbeat
    from interlingua.stores.base import StoredEvent

    codec = all_codecs()[dialect]
    envelope = jsonrpc_envelope(3)
    status, two_parts = _not_spliced()
    no_parts = _chunk("x")
    no_parts.artifact.parts.clear()
    shared = _chunk("shared")
    outputs: list[object] = [
        Entry(1, _chunk("one ")), Entry(2, _chunk("two ")), Entry(3, status),
        Entry(4, _chunk("three ")), Entry(5, two_parts), Entry(6, no_parts),
        Entry(7, _chunk("")), Entry(8, _chunk("other", artifact="art-2")),
        Entry(9, shared, StoredEvent(9, shared)), Heartbeat(), Entry(10, _chunk("four "))]
    frames, parts, others, other = _recording_frames(codec, envelope)
    frames.write(parts, outputs, other)  # type: ignore[arg-type]
    expected = b"".join(_encoded(out, codec, envelope) for out in outputs)  # type: ignore[arg-type]
    assert b"".join(parts) == expected
    if frames._template is None:  # (the template of the last chunk's run)
        # a dialect that writes each chunk's generation (1.1) has no template: the
        # codec frames every output
        assert others == outputs
        return
    # the other dialects have templates (the first test): only the plain text chunks
    # for this reader alone were spliced, the rest went to ``other``
    assert [getattr(out, "seq", None) for out in others] == [3, 5, 6, 7, 9, None]


@pytest.mark.parametrize("dialect", sorted(all_codecs()))
def test_a_snapshots_chunk_before_its_last_event_is_framed_without_an_id(dialect: str) -> None:
    """A snapshot's items but its last name no event id (``Entry.id_follows``): a plain
    text chunk among them is left to the codec's path, which writes no ``id:``."""
    codec = all_codecs()[dialect]
    envelope = jsonrpc_envelope(3)
    chunk = _chunk("whole ")
    outputs = [Entry(5, chunk, id_follows=True), Entry(5, _chunk("after ")),
               Entry(6, _chunk("more "))]
    frames, parts, others, other = _recording_frames(codec, envelope)
    frames.write(parts, outputs, other)  # type: ignore[arg-type]
    written = b"".join(parts)
    assert written == b"".join(_encoded(out, codec, envelope) for out in outputs)
    assert written.startswith(b"data: ") and written.count(b"id: 5\n") == 1
    assert others[0] is outputs[0]


@pytest.mark.parametrize("dialect", sorted(all_codecs()))
def test_a_batch_of_log_entries_is_framed_as_the_same_entries_would_be(dialect: str) -> None:
    """A lone reader's batch of artifact updates as the log's own entries
    (``Stream.take_stored``): each framed as an ``Entry`` of it would be, text
    chunks spliced, a status or a chunk of two parts by the codec."""
    from interlingua.stores.base import StoredEvent

    codec = all_codecs()[dialect]
    envelope = jsonrpc_envelope("r")
    status, two_parts = _not_spliced()
    events = [_chunk("one "), _chunk("two "), status, two_parts, _chunk(""), _chunk("three ")]
    for generation, event in enumerate(events, 4):
        event.generation = generation
    stored = [StoredEvent(seq, event) for seq, event in enumerate(events, 20)]
    frames, parts, others, other = _recording_frames(codec, envelope)
    frames.write(parts, stored, other)  # type: ignore[arg-type]
    expected = b"".join(_codec_path(codec, envelope, seq, e) for seq, e in enumerate(events, 20))
    assert b"".join(parts) == expected
    if dialect != "1.1":  # (1.1 writes generations: the codec frames every chunk)
        assert [out.seq for out in others] == [22, 23, 24]  # type: ignore[attr-defined]


def _not_spliced() -> tuple[m.StatusUpdate, m.ArtifactUpdate]:
    """A status and a chunk of two parts: outputs the codec frames, never a template."""
    status = m.StatusUpdate(task_id="task-1", context_id='ctx "2"',
                            status=m.TaskStatus(state=m.TaskState.WORKING))
    two_parts = _chunk("a")
    two_parts.artifact.parts.append(m.TextPart(text="b"))
    return status, two_parts


def _recording_frames(codec: Any, envelope: Any) -> tuple[
        ChunkFrames, list[bytes], list[object], Callable[[object], bytes]]:
    """A ``ChunkFrames``, the list it writes to, and its ``other`` writer, which
    records each output it is handed (those not spliced from a template)."""
    frames = ChunkFrames(codec.encode_stream_item, envelope.prefix, envelope.suffix)
    parts: list[bytes] = []
    others: list[object] = []

    def other(out: object) -> bytes:
        others.append(out)
        return _encoded(out, codec, envelope)  # type: ignore[arg-type]

    return frames, parts, others, other
