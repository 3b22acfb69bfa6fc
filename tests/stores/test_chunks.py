"""Finding a run of text chunks: the texts, up to the first chunk unlike its head."""

from __future__ import annotations

import msgspec

from interlingua.core import model as m
from interlingua.stores._chunks import texts_after


def _chunk(text: str, *, append: bool = True, **artifact: object) -> m.ArtifactUpdate:
    return m.ArtifactUpdate(task_id="t", context_id="c", append=append, artifact=m.Artifact(
        artifact_id="a", parts=[m.TextPart(text=text)], **artifact))  # type: ignore[arg-type]


def test_the_run_ends_at_the_first_unlike_chunk_and_nothing_is_changed() -> None:
    head = _chunk("h", append=False, index=2)
    events: list[m.Event] = [head, *(_chunk(f"t{n}", index=2) for n in range(5)),
                             _chunk("other", index=3), _chunk("t9", index=2)]
    before = msgspec.json.encode(events)
    assert texts_after(head, events, 1, len(events)) == [f"t{n}" for n in range(5)]
    assert texts_after(head, events, 1, 3) == ["t0", "t1"]
    assert texts_after(head, events, 6, len(events)) == []
    assert msgspec.json.encode(events) == before  # the head and the chunks are untouched


def test_a_chunk_differing_in_any_field_but_its_text_ends_the_run() -> None:
    head = _chunk("h", append=False)
    for odd in [_chunk("x", append=False), _chunk("x", name="n"), _chunk("x", metadata={"k": 1}),
                _chunk("x", index=0), _chunk("x", extensions=["urn:x"]),
                msgspec.structs.replace(_chunk("x"), last_chunk=True),
                msgspec.structs.replace(_chunk("x"), metadata={"e": 1}),
                msgspec.structs.replace(_chunk("x"), task_id="t2"),
                m.ArtifactUpdate(task_id="t", context_id="c", append=True, artifact=m.Artifact(
                    artifact_id="a", parts=[m.TextPart(text="x", media_type="text/plain")])),
                m.ArtifactUpdate(task_id="t", context_id="c", append=True, artifact=m.Artifact(
                    artifact_id="a", parts=[m.TextPart(text="x"), m.TextPart(text="y")])),
                m.ArtifactUpdate(task_id="t", context_id="c", append=True, artifact=m.Artifact(
                    artifact_id="a", parts=[])),
                m.ArtifactUpdate(task_id="t", context_id="c", append=True, artifact=m.Artifact(
                    artifact_id="a", parts=[m.DataPart(data={"text": "x"})])),
                m.ArtifactUpdate(task_id="t", context_id="c", append=True, artifact=m.Artifact(
                    artifact_id="a", parts=[m.FilePart(uri="https://example.com/x")])),
                m.StatusUpdate(task_id="t", context_id="c",
                               status=m.TaskStatus(state=m.TaskState.WORKING)),
                m.HistoryAppended(message=m.Message(message_id="m", role=m.Role.AGENT,
                                                    parts=[m.TextPart(text="x")]))]:
        assert texts_after(head, [head, _chunk("ok"), odd, _chunk("late")], 1, 4) == ["ok"], odd


def test_a_chunk_changed_in_any_field_but_its_text_ends_the_run() -> None:
    # Every field the model has: one added and not compared would let a chunk
    # unlike its run be stored as its run's text.
    other = {"task_id": "t-9", "context_id": "c-9", "append": False, "last_chunk": True,
             "metadata": {"k": 1}, "artifact_id": "a-9", "index": 5, "name": "n",
             "description": "d", "extensions": ["urn:x"], "media_type": "text/markdown",
             "filename": "a.txt", "generation": 7}
    replace = msgspec.structs.replace
    head = _chunk("h", append=False)
    for struct in (m.ArtifactUpdate, m.Artifact, m.TextPart):
        for field in set(struct.__struct_fields__) - {"artifact", "parts", "text"}:
            u = _chunk("x")
            value = other[field]
            if struct is m.ArtifactUpdate:
                odd = replace(u, **{field: value})
            elif struct is m.Artifact:
                odd = replace(u, artifact=replace(u.artifact, **{field: value}))
            else:
                odd = replace(u, artifact=replace(u.artifact, parts=[
                    replace(u.artifact.parts[0], **{field: value})]))
            assert texts_after(head, [head, _chunk("ok"), odd], 1, 3) == ["ok"], field
