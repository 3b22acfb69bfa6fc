"""The v1.0 text-chunk encoding gives exactly the bytes of the generic wire path."""

from __future__ import annotations

import itertools
import subprocess
import sys

import msgspec
import pytest

from interlingua.core import model as m
from interlingua.core.dialects import _v1_wire as w
from interlingua.core.dialects import get_codec
from interlingua.core.dialects.v1_0 import _text_chunk

_generic = msgspec.json.Encoder()
TEXTS = ["chunk 0001 ", "", 'quote " backslash \\ newline \n tab \t', "ünïcødé ✓ 🚀", "\u2028\x00"]


def _update(parts: list[m.Part], *, append: bool, last: bool, **artifact: object) -> m.ArtifactUpdate:
    return m.ArtifactUpdate(
        task_id="task-1", context_id='ctx "2"',
        artifact=m.Artifact(artifact_id="art-\u00e9", parts=parts, **artifact),  # type: ignore[arg-type]
        append=append, last_chunk=last,
    )


@pytest.mark.parametrize(("append", "last"), list(itertools.product([False, True], repeat=2)))
@pytest.mark.parametrize("texts", [[t] for t in TEXTS] + [TEXTS, []])
def test_text_chunks_match_the_generic_encoding(append: bool, last: bool, texts: list[str]) -> None:
    u = _update([m.TextPart(text=t) for t in texts], append=append, last=last)
    fast = _text_chunk(u)
    assert fast is not None
    assert fast == _generic.encode(w.stream_item_out(u))
    assert get_codec("1.0").encode_stream_item(u) == fast


@pytest.mark.parametrize("update", [
    _update([m.TextPart(text="x", metadata={"k": 1})], append=False, last=False),
    _update([m.TextPart(text="x", media_type="text/markdown")], append=False, last=False),
    _update([m.TextPart(text="x", filename="a.txt")], append=False, last=False),
    _update([m.TextPart(text="x"), m.DataPart(data={"a": 1})], append=False, last=False),
    _update([m.FilePart(raw=b"\x00\x01")], append=True, last=False),
    _update([m.TextPart(text="x")], append=False, last=False, name="report"),
    _update([m.TextPart(text="x")], append=False, last=False, description="d"),
    _update([m.TextPart(text="x")], append=False, last=False, metadata={"m": True}),
    _update([m.TextPart(text="x")], append=False, last=False, extensions=["urn:x"]),
    msgspec.structs.replace(
        _update([m.TextPart(text="x")], append=False, last=False), metadata={"e": 1}),
])
def test_anything_else_takes_the_generic_path(update: m.ArtifactUpdate) -> None:
    assert _text_chunk(update) is None
    assert get_codec("1.0").encode_stream_item(update) == _generic.encode(w.stream_item_out(update))


def test_chunks_of_interleaved_artifacts_and_tasks_keep_their_own_ids() -> None:
    # The encoding's opening is kept for the artifact encoded last; any other
    # task, context or artifact (an empty id included) must get its own.
    ids = [("task-1", "ctx-1", "art-1"), ("task-1", "ctx-1", "art-2"),
           ("task-2", "ctx-1", "art-1"), ("task-1", "ctx-2", "art-1"), ("", "", "")]
    for task_id, context_id, artifact_id in [*ids, *reversed(ids), ids[0], ids[0]]:
        u = m.ArtifactUpdate(
            task_id=task_id, context_id=context_id, append=True,
            artifact=m.Artifact(artifact_id=artifact_id, parts=[m.TextPart(text=task_id)]))
        assert _text_chunk(u) == _generic.encode(w.stream_item_out(u)), (task_id, context_id,
                                                                          artifact_id)


def test_the_first_chunk_a_process_encodes_gets_its_own_ids() -> None:
    # Before any chunk was encoded nothing is kept, not even for empty ids.
    code = (
        "from interlingua.core import model as m\n"
        "from interlingua.core.dialects.v1_0 import _text_chunk\n"
        "u = m.ArtifactUpdate(task_id='', context_id='', artifact=m.Artifact("
        "artifact_id='', parts=[m.TextPart(text='x')]))\n"
        "print(_text_chunk(u).decode())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert msgspec.json.decode(out) == {"artifactUpdate": {
        "taskId": "", "contextId": "",
        "artifact": {"artifactId": "", "parts": [{"text": "x"}]}}}
