"""The v1.0 text-chunk encoding gives exactly the bytes of the generic wire path."""

from __future__ import annotations

import itertools

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
