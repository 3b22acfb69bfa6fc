"""Client.stream and Client.subscribe against a real server over loopback, in both
dialects and every binding ("rest": v1.0 HTTP+JSON, "rest-0.3": v0.3 HTTP+JSON,
"rest-card": the HTTP+JSON interface the card names; "grpc", "grpc-0.3",
"grpc-card" likewise over gRPC)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import msgspec
import pytest

from interlingua.client import ArtifactAssembler, Client, StreamEvent
from interlingua.core.errors import TaskNotFound, UnsupportedOperation
from interlingua.core.model import ArtifactUpdate, Message, StatusUpdate, Task, TaskState
from tests.e2e.agents import story
from tests.e2e.sse_client import STREAM_DEADLINE
from tests.live import grpc_address_of, live_grpc_agent

# Streams that never end are this module's likely failure: fail them quickly.
pytestmark = pytest.mark.timeout(30)

DIALECTS = ["card", "1.0", "0.3", "rest", "rest-0.3", "rest-card", "grpc", "grpc-0.3",
            "grpc-card"]
# every way of speaking to the agent that is not chosen from its whole card
SPOKEN = ["1.0", "0.3", "rest", "rest-0.3", "rest-card", "grpc", "grpc-0.3", "grpc-card"]


@pytest.fixture(scope="module")
def story_url() -> Iterator[str]:
    with live_grpc_agent(story) as (url, _):
        yield url


def client_for(url: str, dialect: str) -> Client:
    if dialect == "rest":
        return Client(url, dialect="1.0", binding="rest")
    if dialect == "rest-0.3":
        return Client(url, dialect="0.3", binding="rest")
    if dialect == "rest-card":
        return Client(url, binding="rest")
    if dialect == "grpc":
        return Client(grpc_address_of(url), dialect="1.0", binding="grpc")
    if dialect == "grpc-0.3":
        return Client(grpc_address_of(url), dialect="0.3", binding="grpc")
    if dialect == "grpc-card":
        return Client(url, binding="grpc")
    return Client(url) if dialect == "card" else Client(url + "/", dialect=dialect)


def chunks(n: int) -> str:
    return "".join(f"chunk {i};" for i in range(n))


async def collect(events: object) -> list[StreamEvent]:
    async with asyncio.timeout(STREAM_DEADLINE):  # heartbeats keep a stream alive
        return [e async for e in events]  # type: ignore[attr-defined]


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_stream_yields_every_event_in_order(story_url: str, dialect: str) -> None:
    async with client_for(story_url, dialect) as client:
        events = await collect(client.stream("6"))
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    first, second, *middle, last = events
    assert isinstance(first.item, Task) and first.item.status.state is TaskState.SUBMITTED
    assert isinstance(second.item, StatusUpdate) and second.state is TaskState.WORKING
    assert all(isinstance(e.item, ArtifactUpdate) for e in middle) and len(middle) == 6
    assert isinstance(last.item, StatusUpdate) and last.state is TaskState.COMPLETED
    assert last.final and not any(e.final for e in events[:-1])
    assert {e.task_id for e in events} == {first.item.id}
    asm = ArtifactAssembler()
    done = [a for a in map(asm.feed, events) if a is not None]
    assert [a.name for a in done] == ["story.txt"]
    assert asm.text("story.txt") == chunks(6)
    # raw is the result member as the dialect and binding spell it (ProtoJSON over
    # HTTP+JSON and gRPC)
    wire = msgspec.json.decode(middle[0].raw)
    assert client.endpoint is not None
    if client.dialect == "0.3" and client.endpoint.binding == "JSONRPC":
        assert wire["kind"] == "artifact-update"
    else:
        assert set(wire) == {"artifactUpdate"}


@pytest.mark.parametrize("dialect", SPOKEN)
async def test_subscribe_mid_way_starts_with_the_task_so_far(story_url: str,
                                                             dialect: str) -> None:
    async with client_for(story_url, dialect) as client:
        task = await client.send("30 0.02", blocking=False)
        assert isinstance(task, Task)
        # mid-way: once the story has begun and before it ends
        async with asyncio.timeout(STREAM_DEADLINE):
            while not (await client.get_task(task.id)).artifacts:
                await asyncio.sleep(0.01)
        events = await collect(client.subscribe(task.id))
    snapshot = events[0]
    assert isinstance(snapshot.item, Task) and snapshot.item.id == task.id
    assert snapshot.item.artifacts  # the story so far
    seqs = [e.seq for e in events]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    assert events[-1].state is TaskState.COMPLETED
    asm = ArtifactAssembler()
    for e in events:
        asm.feed(e)
    assert asm.text("story.txt") == chunks(30)


@pytest.mark.parametrize("dialect", SPOKEN)
async def test_subscribe_from_an_event_id_replays_the_rest(story_url: str,
                                                           dialect: str) -> None:
    async with client_for(story_url, dialect) as client:
        full = await collect(client.stream("4"))
        task_id = full[0].task_id
        assert task_id is not None
        rest = await collect(client.subscribe(task_id, last_event_id=3))
        assert [e.seq for e in rest] == [e.seq for e in full[3:]]
        assert [e.raw for e in rest] == [e.raw for e in full[3:]]
        # from the very last event: nothing is missing, the iteration just ends
        assert await collect(client.subscribe(task_id, last_event_id=full[-1].seq)) == []


async def test_subscribe_to_a_finished_task_per_dialect(story_url: str) -> None:
    async with Client(story_url + "/", dialect="1.0") as v1:
        events = await collect(v1.stream("1"))
        task_id = events[0].task_id
        assert task_id is not None
        with pytest.raises(UnsupportedOperation):
            await collect(v1.subscribe(task_id))
    async with Client(story_url + "/", dialect="0.3") as v03:
        once = await collect(v03.subscribe(task_id))
    assert len(once) == 1 and once[0].state is TaskState.COMPLETED and once[0].final


@pytest.mark.parametrize("dialect", SPOKEN)
async def test_subscribe_to_an_unknown_task(story_url: str, dialect: str) -> None:
    async with client_for(story_url, dialect) as client:
        with pytest.raises(TaskNotFound):
            await collect(client.subscribe("no-such-task"))
        with pytest.raises(ValueError):
            await collect(client.subscribe("x", last_event_id=-1))


@pytest.mark.parametrize("dialect", SPOKEN)
async def test_a_reply_without_a_task_is_one_message(agent_url: str, dialect: str) -> None:
    async with client_for(agent_url, dialect) as client:
        events = await collect(client.stream("reply just this"))
    assert len(events) == 1
    item = events[0].item
    assert isinstance(item, Message) and events[0].final
    assert item.parts[0].text == "just this"  # type: ignore[union-attr]


@pytest.mark.parametrize("dialect", SPOKEN)
async def test_input_required_ends_the_stream_and_a_second_stream_continues(
        agent_url: str, dialect: str) -> None:
    async with client_for(agent_url, dialect) as client:
        first = await collect(client.stream("greet"))
        assert first[-1].state is TaskState.INPUT_REQUIRED and first[-1].final
        task_id = first[-1].task_id
        assert task_id is not None
        second = await collect(client.stream("Ada", task_id=task_id))
    assert second[-1].state is TaskState.COMPLETED
    assert {e.task_id for e in second} == {task_id}
    # the second turn's events continue the task's log
    assert second[0].seq is not None and first[-1].seq is not None
    assert second[0].seq > first[-1].seq
    asm = ArtifactAssembler()
    for e in second:
        asm.feed(e)
    assert asm.text("greeting") == "Hello, Ada!"


@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
async def test_a_continued_stream_keeps_to_its_history_length(agent_url: str,
                                                              dialect: str) -> None:
    # (the snapshot a stream to a task with a history opens with carried all of it)
    async with client_for(agent_url, dialect) as client:
        first = await collect(client.stream("greet"))
        task_id = first[-1].task_id
        second = await collect(client.stream("Ada", task_id=task_id, history_length=1))
    snapshots = [e.item for e in second if isinstance(e.item, Task)]
    assert snapshots and len(snapshots[0].history) == 1, snapshots[0].history
