"""ArtifactAssembler: chunks put back together by the append / lastChunk rules
(v1.0 TaskArtifactUpdateEvent: ``append`` adds to the artifact of the same id,
``last_chunk`` marks its final chunk)."""

from __future__ import annotations

import pytest

from interlingua.client import ArtifactAssembler, StreamEvent
from interlingua.core.model import (
    Artifact,
    ArtifactUpdate,
    DataPart,
    Message,
    Part,
    Role,
    StatusUpdate,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)


def update(aid: str, *texts: str, append: bool = False, last: bool = False,
           name: str | None = None, description: str | None = None,
           metadata: dict[str, object] | None = None) -> ArtifactUpdate:
    parts: list[Part] = [TextPart(t) for t in texts]
    return ArtifactUpdate(
        task_id="t1", context_id="c1",
        artifact=Artifact(artifact_id=aid, parts=parts, name=name, description=description,
                          metadata=metadata),
        append=append, last_chunk=last,
    )


def test_append_joins_chunks_and_last_chunk_returns_the_whole() -> None:
    asm = ArtifactAssembler()
    assert asm.add(update("a", "Once ", name="story.txt")) is None
    assert asm.add(update("a", "upon ", append=True)) is None
    assert asm.pending and not asm.completed
    whole = asm.add(update("a", "a time.", append=True, last=True))
    assert whole is not None
    assert [p.text for p in whole.parts if isinstance(p, TextPart)] == ["Once ", "upon ", "a time."]
    assert whole.name == "story.txt"  # kept from the first chunk
    assert asm.text("a") == "Once upon a time."
    assert asm.text("story.txt") == "Once upon a time."
    assert asm.is_complete("a")
    assert [a.artifact_id for a in asm.completed] == ["a"]
    assert asm.pending == []


def test_a_single_update_with_last_chunk_is_complete_at_once() -> None:
    asm = ArtifactAssembler()
    whole = asm.add(update("r", "all of it", last=True))
    assert whole is not None and asm.text("r") == "all of it"


def test_update_without_append_replaces_the_artifact_in_its_place() -> None:
    asm = ArtifactAssembler()
    asm.add(update("a", "draft ", name="first"))
    asm.add(update("b", "other"))
    asm.add(update("a", "more", append=True))
    asm.add(update("a", "final text", name="second"))  # no append: replaces
    assert asm.text("a") == "final text"
    assert asm.get("a") is not None and asm.get("a").name == "second"  # type: ignore[union-attr]
    # the replaced artifact keeps its position
    assert [a.artifact_id for a in asm.artifacts] == ["a", "b"]
    assert not asm.is_complete("a")


def test_several_artifacts_interleaved() -> None:
    asm = ArtifactAssembler()
    asm.add(update("x", "1", name="numbers"))
    asm.add(update("y", "a", name="letters"))
    asm.add(update("x", "2", append=True))
    done_y = asm.add(update("y", "b", append=True, last=True))
    asm.add(update("x", "3", append=True))
    assert done_y is not None and asm.text("letters") == "ab"
    assert [a.artifact_id for a in asm.completed] == ["y"]
    assert [a.artifact_id for a in asm.pending] == ["x"]
    assert asm.text() == "123\nab"
    assert len(asm) == 2


def test_later_chunks_may_name_describe_and_add_metadata() -> None:
    asm = ArtifactAssembler()
    asm.add(update("a", "x", metadata={"k": 1}))
    asm.add(update("a", "y", append=True, name="late", description="named later",
                   metadata={"j": 2}))
    got = asm.get("a")
    assert got is not None
    assert (got.name, got.description, got.metadata) == ("late", "named later", {"k": 1, "j": 2})


def test_append_to_an_unknown_artifact_starts_it() -> None:
    asm = ArtifactAssembler()
    asm.add(update("late", "tail", append=True, last=True))
    assert asm.text("late") == "tail" and asm.is_complete("late")


def test_a_task_snapshot_seeds_what_later_chunks_continue() -> None:
    # A subscriber joining mid-stream first gets the task with the chunks so far.
    task = Task(id="t1", context_id="c1", status=TaskStatus(state=TaskState.WORKING),
                artifacts=[Artifact(artifact_id="a", parts=[TextPart("Once ")], name="s")])
    asm = ArtifactAssembler()
    asm.feed(task)
    asm.feed(update("a", "upon a time.", append=True, last=True))
    assert asm.text("a") == "Once upon a time."
    # the task's own artifact was not changed by the append
    assert [p.text for p in task.artifacts[0].parts if isinstance(p, TextPart)] == ["Once "]


def test_feed_takes_stream_events_and_ignores_what_is_not_an_artifact() -> None:
    asm = ArtifactAssembler()
    status = StatusUpdate(task_id="t1", context_id="c1",
                          status=TaskStatus(state=TaskState.WORKING))
    msg = Message(message_id="m", role=Role.AGENT, parts=[TextPart("hi")])
    assert asm.feed(StreamEvent(1, status)) is None
    assert asm.feed(StreamEvent(0, msg)) is None
    whole = asm.feed(StreamEvent(2, update("a", "x", last=True)))
    assert whole is not None and whole.artifact_id == "a"
    assert len(asm) == 1


def test_results_are_copies_and_events_are_not_changed() -> None:
    asm = ArtifactAssembler()
    first = update("a", "one ")
    asm.add(first)
    asm.add(update("a", "two", append=True))
    assert len(first.artifact.parts) == 1  # the event's own list stays as sent
    snapshot = asm.get("a")
    assert snapshot is not None
    snapshot.parts.append(DataPart({"x": 1}))
    assert asm.text("a") == "one two"
    assert len(asm.get("a").parts) == 2  # type: ignore[union-attr]


def test_text_skips_non_text_parts_and_unknown_key_raises() -> None:
    asm = ArtifactAssembler()
    asm.add(ArtifactUpdate(task_id="t", context_id="c", artifact=Artifact(
        artifact_id="m", parts=[TextPart("a"), DataPart({"n": 1}), TextPart("b")])))
    assert asm.text("m") == "ab"
    with pytest.raises(KeyError):
        asm.text("nope")
    assert asm.get("nope") is None
