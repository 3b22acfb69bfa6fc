"""examples/story.py: the streaming story of the v0.1 spec's §9.2, over real HTTP,
read with Client.stream in both dialects."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import msgspec
import pytest

from interlingua.client import ArtifactAssembler, Client, StreamEvent
from interlingua.core.model import ArtifactUpdate, StatusUpdate, Task, TaskState, TextPart
from tests.live import live_agent

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "story.py"
PROMPT = "Write a very short story about a curious robot exploring Mars."


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("story_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def example() -> ModuleType:
    module = load_example()
    module.DELAY = 0.01  # still streamed in steps, just quicker
    return module


@pytest.fixture(scope="module")
def url(example: ModuleType) -> Iterator[str]:
    with live_agent(example.agent) as base:
        yield base


def status_text(event: StreamEvent) -> str:
    assert isinstance(event.item, StatusUpdate)
    message = event.item.status.message
    assert message is not None
    return "".join(p.text for p in message.parts if isinstance(p, TextPart))


@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
async def test_the_story_streams_in_chunks_and_assembles(example: ModuleType, url: str,
                                                         dialect: str) -> None:
    async with Client(url, dialect=dialect) as client:
        # the card is also served; the dialect is forced to test each one
        events = [e async for e in client.stream(PROMPT)]
        task_id = events[0].task_id
        assert task_id is not None
        stored = await client.get_task(task_id)

    first, working, *chunks, done = events
    assert isinstance(first.item, Task) and first.state is TaskState.SUBMITTED
    assert working.state is TaskState.WORKING
    assert status_text(working) == "Okay, I'm starting to write that story for you..."
    assert len(chunks) == len(example.STORY) >= 3
    updates = [e.item for e in chunks]
    assert all(isinstance(u, ArtifactUpdate) for u in updates)
    assert {u.artifact.name for u in updates} == {"MarsStory.txt"}  # type: ignore[union-attr]
    assert len({u.artifact.artifact_id for u in updates}) == 1  # type: ignore[union-attr]
    # the first chunk starts the artifact, the others append, the last says so
    assert [u.append for u in updates] == [False] + [True] * (len(updates) - 1)  # type: ignore[union-attr]
    assert [u.last_chunk for u in updates] == [False] * (len(updates) - 1) + [True]  # type: ignore[union-attr]
    assert done.state is TaskState.COMPLETED and done.final
    assert status_text(done) == "The story is complete!"

    assembler = ArtifactAssembler()
    completed = [a for a in map(assembler.feed, events) if a is not None]
    story = "".join(example.STORY)
    assert [a.name for a in completed] == ["MarsStory.txt"]
    assert assembler.text("MarsStory.txt") == story
    assert "Mars" in story and "rover" in story

    # the task as stored holds the same story
    assert len(stored.artifacts) == 1
    assert "".join(p.text for p in stored.artifacts[0].parts
                   if isinstance(p, TextPart)) == story


async def test_the_v03_wire_has_the_shapes_of_the_spec_example(url: str) -> None:
    # §9.2: a working status with final false, appended chunks, the last with
    # lastChunk, and a completed status with final true.
    async with Client(url, dialect="0.3") as client:
        wire = [msgspec.json.decode(e.raw) async for e in client.stream(PROMPT)]
    kinds = [w["kind"] for w in wire]
    assert kinds[0] == "task" and kinds[1] == "status-update" and kinds[-1] == "status-update"
    assert wire[1]["status"]["state"] == "working" and wire[1]["final"] is False
    artifacts = [w for w in wire if w["kind"] == "artifact-update"]
    assert all(a["artifact"]["name"] == "MarsStory.txt" for a in artifacts)
    assert "append" not in artifacts[0] or artifacts[0]["append"] is False
    assert all(a["append"] is True for a in artifacts[1:])
    assert artifacts[-1]["lastChunk"] is True
    assert wire[-1]["status"]["state"] == "completed" and wire[-1]["final"] is True
    assert wire[-1]["status"]["message"]["parts"][0]["text"] == "The story is complete!"


def test_the_example_is_served_by_the_serve_command_loader() -> None:
    from interlingua.cli.serve import load_agent

    agent = load_agent(str(EXAMPLE))
    assert agent.name == "Storyteller" and agent.streaming
