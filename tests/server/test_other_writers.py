"""Another writer wins: a running turn whose task was changed behind it, on SQLite.

Two processes (replicas) can share one task log; each write states the
version it read, so the later of two writers finds the task moved on. The
turn then reloads the task and checks its events again: they are written on
top of the other writer's when the lifecycle still allows them, and the turn
is told it was canceled when the other writer canceled the task.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from interlingua.bus import LocalBus
from interlingua.core.calls import GetTask, SendConfig, SendMessage
from interlingua.core.model import (
    Artifact,
    ArtifactUpdate,
    HistoryAppended,
    Message,
    Role,
    StatusUpdate,
    Task,
    TaskCreated,
    TaskState,
    TaskStatus,
    TextPart,
)
from interlingua.core.parts import new_id
from interlingua.server import Agent, Context, Engine, RequestInfo, TaskCanceled
from interlingua.stores import Store, open_store

pytestmark = pytest.mark.timeout(30)

REQ = RequestInfo(principal="p")
NOW = "2030-01-01T00:00:00Z"


class Turn:
    """An executor that says it is working, waits to be let go, then finishes."""

    def __init__(self) -> None:
        self.go = asyncio.Event()
        self.outcome: list[str] = []

    async def __call__(self, ctx: Context) -> None:
        await ctx.update("working")
        await self.go.wait()
        try:
            await ctx.artifact("mine", name="mine")
            await ctx.complete("done")
        except TaskCanceled:
            self.outcome.append("told it was canceled")
            raise
        except BaseException as exc:
            self.outcome.append(f"failed: {type(exc).__name__}")
            raise
        self.outcome.append("completed")


@pytest.fixture
async def other(tmp_path: Path) -> AsyncIterator[Store]:
    """The other writer: a second store on the same file, as another process has."""
    store = open_store(f"sqlite:///{tmp_path}/tasks.db")
    yield store
    await store.close()


async def start(tmp_path: Path, turn: Turn) -> tuple[Engine, Task]:
    engine = Engine(Agent("t", "t", turn), open_store(f"sqlite:///{tmp_path}/tasks.db"),
                    LocalBus())
    await engine.start()
    message = Message(message_id=new_id(), role=Role.USER, parts=[TextPart(text="go")])
    task = await engine.send(SendMessage(message=message, config=SendConfig(blocking=False)),
                             REQ)
    assert isinstance(task, Task)
    return engine, task


async def stored_when(engine: Engine, task: Task, state: TaskState) -> Task:
    """The task as stored, once it is in ``state``."""
    async with asyncio.timeout(10):
        while True:
            got = await engine.get_task(GetTask(id=task.id), REQ)
            if got.status.state is state:
                return got
            await asyncio.sleep(0.01)


async def version_of(store: Store, task: Task) -> int:
    rec = await store.get_task(REQ.scope, task.id)
    assert rec is not None
    return rec.version


async def test_events_are_written_on_top_of_the_other_writers(
        tmp_path: Path, other: Store) -> None:
    turn = Turn()
    engine, task = await start(tmp_path, turn)
    try:
        await stored_when(engine, task, TaskState.WORKING)
        await other.open()
        before = await version_of(other, task)
        theirs = ArtifactUpdate(task_id=task.id, context_id=task.context_id, artifact=Artifact(
            artifact_id="theirs", name="theirs", parts=[TextPart(text="theirs")]))
        assert await other.append(REQ.scope, task.id, before, [theirs],
                                  now=NOW) == before + 1
        turn.go.set()
        done = await stored_when(engine, task, TaskState.COMPLETED)
    finally:
        await engine.stop()
    assert turn.outcome == ["completed"]
    assert [a.name for a in done.artifacts] == ["theirs", "mine"]
    # their artifact, then the turn's artifact and its completion: nothing lost or doubled
    assert await version_of(other, task) == before + 3


async def test_a_turn_whose_task_was_canceled_elsewhere_is_told_so(
        tmp_path: Path, other: Store) -> None:
    turn = Turn()
    engine, task = await start(tmp_path, turn)
    try:
        await stored_when(engine, task, TaskState.WORKING)
        await other.open()
        before = await version_of(other, task)
        cancel = StatusUpdate(task_id=task.id, context_id=task.context_id,
                              status=TaskStatus(state=TaskState.CANCELED))
        await other.append(REQ.scope, task.id, before, [cancel], now=NOW)
        turn.go.set()
        async with asyncio.timeout(10):
            while not turn.outcome:
                await asyncio.sleep(0.01)
        canceled = await stored_when(engine, task, TaskState.CANCELED)
    finally:
        await engine.stop()
    assert turn.outcome == ["told it was canceled"]
    assert canceled.artifacts == []  # the turn's events after the cancel were not written
    assert await version_of(other, task) == before + 1


class StreamingTurn(Turn):
    """Working, then (once let go) three queued chunks of one artifact and completed."""

    async def __call__(self, ctx: Context) -> None:
        await ctx.update("working")
        await self.go.wait()
        aid = None
        for text in ("a", "b", "c"):
            aid = await ctx.artifact(text, artifact_id=aid, append=aid is not None)
        await ctx.complete("done")
        self.outcome.append("completed")


async def test_chunks_numbered_before_the_other_writer_wrote_are_numbered_again(
        tmp_path: Path, other: Store) -> None:
    # The turn's chunks are made with the generations after its own last event; the
    # other writer's event takes the first of them, so they are written one later.
    turn = StreamingTurn()
    engine, task = await start(tmp_path, turn)
    try:
        working = await stored_when(engine, task, TaskState.WORKING)
        await other.open()
        before = await version_of(other, task)
        theirs = ArtifactUpdate(task_id=task.id, context_id=task.context_id, artifact=Artifact(
            artifact_id="theirs", name="theirs", parts=[TextPart(text="theirs")]),
            generation=working.generation + 1)
        await other.append(REQ.scope, task.id, before, [theirs], now=NOW)
        turn.go.set()
        done = await stored_when(engine, task, TaskState.COMPLETED)
    finally:
        await engine.stop()
    assert turn.outcome == ["completed"]
    log = [s.event for s in await other.read_events(REQ.scope, task.id, 0)]
    generations = [e.task.generation if isinstance(e, TaskCreated) else e.generation
                   for e in log if not isinstance(e, HistoryAppended)]
    # one more for each event, none used twice: the other's, three chunks, the completion
    assert generations == list(range(1, len(generations) + 1))
    assert generations[-5:] == list(range(working.generation + 1, working.generation + 6))
    assert done.generation == generations[-1]
