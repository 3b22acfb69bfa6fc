"""Stream readers driven directly against the engine: lag, heartbeats, resume rules."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from interlingua.bus import LocalBus
from interlingua.core.calls import GetTask, SendConfig, SendMessage, SubscribeToTask
from interlingua.core.errors import InvalidParams, TaskNotFound, UnsupportedOperation
from interlingua.core.model import (
    ArtifactUpdate,
    Message,
    Role,
    StatusUpdate,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)
from interlingua.core.parts import new_id
from interlingua.server import Agent, Context, Engine, EngineConfig, RequestInfo
from interlingua.server.streams import Entry, Heartbeat, Lagged
from interlingua.stores import open_store

# Streams that never end are this module's likely failure: fail them quickly.
pytestmark = pytest.mark.timeout(30)

REQ = RequestInfo(principal="p")


def msg(text: str) -> Message:
    return Message(message_id=new_id(), role=Role.USER, parts=[TextPart(text=text)])


async def engine_for(executor: Any, **cfg: Any) -> Engine:
    e = Engine(Agent("t", "t", executor), open_store("memory://"), LocalBus(),
               config=EngineConfig(**cfg))
    await e.start()
    return e


async def test_a_reader_too_far_behind_is_told_to_resume() -> None:
    gate = asyncio.Event()

    async def burst(ctx: Context) -> None:
        await ctx.update("go")
        await gate.wait()
        aid = None
        for i in range(20):
            aid = await ctx.artifact(str(i), artifact_id=aid, append=aid is not None)
        await ctx.complete()

    engine = await engine_for(burst, max_lag=5)
    try:
        stream = await engine.open_stream(SendMessage(message=msg("x"), streaming=True), REQ)
        it = aiter(stream)
        first = await anext(it)
        assert isinstance(first, Entry) and isinstance(first.item, Task)
        second = await anext(it)
        assert isinstance(second, Entry) and isinstance(second.item, StatusUpdate)
        gate.set()
        # let the executor run to the end while this reader reads nothing
        task_id = first.item.id
        for _ in range(500):
            got = await engine.get_task(GetTask(id=task_id), REQ)
            if got.status.state is TaskState.COMPLETED:
                break
            await asyncio.sleep(0.005)
        assert got.status.state is TaskState.COMPLETED
        out = await anext(it)
        assert isinstance(out, Lagged) and out.seq == second.seq
        # resuming from there replays everything it missed, in order
        resumed = await engine.open_stream(SubscribeToTask(id=task_id), REQ,
                                           last_event_id=out.seq)
        items = [e async for e in resumed]
        assert all(isinstance(e, Entry) for e in items)
        seqs = [e.seq for e in items if isinstance(e, Entry)]
        assert seqs == list(range(out.seq + 1, out.seq + 1 + len(seqs)))
        arts = [e.item for e in items if isinstance(e, Entry) and isinstance(e.item, ArtifactUpdate)]
        assert [a.artifact.parts[0].text for a in arts] == [str(i) for i in range(20)]  # type: ignore[union-attr]
    finally:
        await engine.stop()


async def test_idle_stream_gets_heartbeats() -> None:
    async def waits(ctx: Context) -> None:
        await ctx.update("working")
        await asyncio.sleep(5)

    engine = await engine_for(waits, heartbeat_interval=0.01)
    try:
        stream = await engine.open_stream(SendMessage(message=msg("x"), streaming=True), REQ)
        kinds = []
        async for out in stream:
            kinds.append(type(out))
            if kinds.count(Heartbeat) == 2:
                break
        assert kinds[:2] == [Entry, Entry] and kinds.count(Heartbeat) == 2
        await stream.aclose()  # type: ignore[attr-defined]
    finally:
        await engine.stop()


async def test_shutdown_ends_open_streams() -> None:
    async def waits(ctx: Context) -> None:
        await ctx.update("working")
        await asyncio.sleep(30)

    engine = await engine_for(waits)
    stream = await engine.open_stream(SendMessage(message=msg("x"), streaming=True), REQ)
    seen: list[object] = []
    both = asyncio.Event()

    async def read() -> None:
        async for out in stream:
            seen.append(out)
            if len(seen) == 2:
                both.set()

    reader = asyncio.get_running_loop().create_task(read())
    await asyncio.wait_for(both.wait(), 5)  # the task and its "working": the stream is open
    await engine.begin_shutdown()
    await asyncio.wait_for(reader, 5)  # it ends by itself
    await engine.stop()
    assert len(seen) == 2


async def test_subscribe_rules() -> None:
    async def echo(text: str) -> str:
        return text

    engine = await engine_for(echo)
    try:
        task = await engine.send(SendMessage(message=msg("x"), config=SendConfig()), REQ)
        assert isinstance(task, Task)
        with pytest.raises(UnsupportedOperation):
            await engine.open_stream(SubscribeToTask(id=task.id), REQ)
        v03 = RequestInfo(principal="p", dialect="0.3")
        items = [e async for e in await engine.open_stream(SubscribeToTask(id=task.id), v03)]
        assert len(items) == 1 and isinstance(items[0], Entry)
        assert isinstance(items[0].item, StatusUpdate)
        with pytest.raises(TaskNotFound):
            await engine.open_stream(SubscribeToTask(id="nope"), REQ)
        with pytest.raises(TaskNotFound):  # another owner's task
            await engine.open_stream(SubscribeToTask(id=task.id), RequestInfo(principal="q"))
        with pytest.raises(InvalidParams):
            await engine.open_stream(SubscribeToTask(id=task.id), REQ, last_event_id=99)
        with pytest.raises(InvalidParams):
            await engine.open_stream(SendMessage(message=msg("y"), streaming=True), REQ,
                                     last_event_id=1)
    finally:
        await engine.stop()


async def test_executor_failure_mid_stream_ends_with_failed() -> None:
    async def breaks(ctx: Context) -> None:
        await ctx.artifact("partial")
        raise ValueError("lost the thread")

    engine = await engine_for(breaks)
    try:
        stream = await engine.open_stream(SendMessage(message=msg("x"), streaming=True), REQ)
        items = [e.item async for e in stream if isinstance(e, Entry)]
        assert isinstance(items[0], Task) and isinstance(items[1], ArtifactUpdate)
        last = items[-1]
        assert isinstance(last, StatusUpdate) and last.status.state.value == "failed"
        assert "lost the thread" in last.status.message.parts[0].text  # type: ignore[union-attr]
    finally:
        await engine.stop()


async def test_bare_message_stream() -> None:
    async def chat(ctx: Context) -> None:
        await ctx.reply("hi back")

    engine = await engine_for(chat)
    try:
        stream = await engine.open_stream(SendMessage(message=msg("hi"), streaming=True), REQ)
        items = [e async for e in stream]
        assert len(items) == 1 and isinstance(items[0], Entry)
        assert isinstance(items[0].item, Message)
    finally:
        await engine.stop()


async def test_log_entries_are_shared_only_when_the_task_has_several_readers() -> None:
    # A shared entry carries its log event, whose encodings other readers reuse;
    # a lone reader's would only be kept alive by the bus.
    gate = asyncio.Event()

    async def two_steps(ctx: Context) -> None:
        await ctx.update("one")
        await gate.wait()
        await ctx.update("two")
        await ctx.complete()

    engine = await engine_for(two_steps)
    try:
        stream = await engine.open_stream(SendMessage(message=msg("x"), streaming=True), REQ)
        it = aiter(stream)
        first = await anext(it)
        assert isinstance(first, Entry) and isinstance(first.item, Task)
        one = await anext(it)
        assert isinstance(one, Entry) and one.stored is None  # alone so far
        watcher = await engine.open_stream(SubscribeToTask(id=first.item.id), REQ)
        wit = aiter(watcher)
        await anext(wit)  # its snapshot
        gate.set()
        two = await anext(it)
        assert isinstance(two, Entry) and isinstance(two.item, StatusUpdate)
        assert two.stored is not None and two.stored.event is two.item
        seen = await anext(wit)
        assert isinstance(seen, Entry) and seen.stored is two.stored
        await stream.aclose()  # type: ignore[attr-defined]
        await watcher.aclose()  # type: ignore[attr-defined]
    finally:
        await engine.stop()


async def test_a_subscriber_slow_after_its_snapshot_still_gets_the_events_that_followed() -> None:
    gate = asyncio.Event()

    async def waits(ctx: Context) -> None:
        await ctx.update("waiting")
        await gate.wait()
        await ctx.complete("done")

    engine = await engine_for(waits)
    try:
        stream = await engine.open_stream(SendMessage(message=msg("x"), streaming=True), REQ)
        it = aiter(stream)
        first = await anext(it)
        assert isinstance(first, Entry) and isinstance(first.item, Task)
        await anext(it)
        watcher = await engine.open_stream(SubscribeToTask(id=first.item.id), REQ)
        snapshot = await anext(aiter(watcher))
        assert isinstance(snapshot, Entry) and isinstance(snapshot.item, Task)
        gate.set()
        # the task finishes before this reader asks for anything more
        rest = [e async for e in it]
        assert [e.item.status.state for e in rest if isinstance(e, Entry)  # type: ignore[union-attr]
                ] == [TaskState.COMPLETED]
        after = [e async for e in watcher]
        finals = [e.item for e in after if isinstance(e, Entry)]
        assert len(finals) == 1 and isinstance(finals[0], StatusUpdate)
        assert finals[0].status.state is TaskState.COMPLETED
    finally:
        await engine.stop()


async def test_a_lone_readers_batch_of_chunks_statuses_and_chunks_comes_whole_in_order() -> None:
    # One batch (nothing awaited between the events): six chunks, a status, three
    # chunks, the completion; a lone reader gets each once, in the log's order.
    gate = asyncio.Event()

    async def batch(ctx: Context) -> None:
        await ctx.update("go")
        await gate.wait()
        aid = None
        for i in range(6):
            aid = await ctx.artifact(str(i), artifact_id=aid, append=aid is not None)
        await ctx.update("half")  # working: not waited for, so queued with the chunks
        for i in range(6, 9):
            aid = await ctx.artifact(str(i), artifact_id=aid, append=True)
        await ctx.complete()

    engine = await engine_for(batch)
    try:
        stream = await engine.open_stream(SendMessage(message=msg("x"), streaming=True), REQ)
        it = aiter(stream)
        await anext(it)  # the task
        go = await anext(it)
        assert isinstance(go, Entry) and isinstance(go.item, StatusUpdate)
        gate.set()
        rest = [e async for e in it]
    finally:
        await engine.stop()
    assert all(isinstance(e, Entry) and e.stored is None for e in rest)
    entries = [e for e in rest if isinstance(e, Entry)]
    assert [e.seq for e in entries] == list(range(go.seq + 1, go.seq + 1 + len(entries)))
    kinds = ["status" if isinstance(e.item, StatusUpdate) else
             e.item.artifact.parts[0].text for e in entries]  # type: ignore[union-attr]
    assert kinds == [*"012345", "status", *"678", "status"]
    assert [e.item.generation for e in entries] == list(  # type: ignore[union-attr]
        range(go.item.generation + 1, go.item.generation + 1 + len(entries)))


async def test_a_lone_reader_that_takes_stored_entries_gets_batches_of_chunks_as_the_log_holds_them(
        ) -> None:
    # A batch of artifact updates alone comes as the log's own entries (no Entry
    # each); any other batch (the task, a status, chunks with the completion) as
    # Entries; together the log's events in order, each once.
    from interlingua.server.dispatch import Items
    from interlingua.stores.base import StoredEvent

    chunks = 600

    async def many(ctx: Context) -> None:
        await ctx.update("go")
        aid = None
        for i in range(chunks):
            aid = await ctx.artifact(f"{i} ", artifact_id=aid, append=aid is not None)
        await ctx.complete()

    engine = await engine_for(many)
    try:
        stream = await engine.open_stream(SendMessage(message=msg("x"), streaming=True), REQ)
        stream.take_stored()
        batches = [batch async for batch in Items(stream)]
    finally:
        await engine.stop()
    stored = [b for b in batches if any(type(out) is StoredEvent for out in b)]
    assert len(stored) == 3, "not every batch of chunks came as the log's entries"
    # the last one ends with the completion, as an Entry
    assert all(type(out) is StoredEvent and type(out.event) is ArtifactUpdate
               for b in stored for out in (b if b is not stored[-1] else b[:-1]))
    assert type(stored[-1][-1]) is Entry and batches[-1] is stored[-1]
    outs = [out for b in batches for out in b]
    assert all(type(out) in (Entry, StoredEvent) for out in outs)
    items = [out.event if type(out) is StoredEvent else out.item  # type: ignore[union-attr]
             for out in outs]
    seqs = [out.seq for out in outs]  # type: ignore[union-attr]
    assert seqs == list(range(seqs[0], seqs[0] + len(outs)))
    assert isinstance(items[0], Task) and isinstance(items[1], StatusUpdate)
    assert [u.artifact.parts[0].text for u in items[2:-1]  # type: ignore[union-attr]
            ] == [f"{i} " for i in range(chunks)]
    assert isinstance(items[-1], StatusUpdate) and items[-1].status.state is TaskState.COMPLETED
    assert [u.generation for u in items[1:]] == list(  # type: ignore[union-attr]
        range(2, 2 + len(items) - 1))


def test_a_batch_with_a_history_entry_between_its_chunks_comes_as_entries() -> None:
    # take_stored's batches are told by their ends' generations: a history entry
    # between two chunks takes a seq and no generation, so that batch is read
    # event by event (the entry left out); statuses between chunks pass as they are,
    # and a batch ends where its stream ends.
    from interlingua.core.model import Artifact, HistoryAppended
    from interlingua.server.streams import _Follow
    from interlingua.stores.base import Scope, StoredEvent

    class Sub:
        latest = 13

        def alone(self) -> bool:
            return True

    class Source:
        open_count = 0

    def chunk(generation: int) -> ArtifactUpdate:
        return ArtifactUpdate("t", "c", Artifact("a", [TextPart("x")]), True, False, None,
                              generation)

    def follow() -> _Follow:
        f = _Follow(Source(), Scope(), "t", Sub(), 10)  # type: ignore[arg-type]
        f.take_stored()
        return f

    status = StatusUpdate("t", "c", TaskStatus(TaskState.WORKING), None, 6)
    whole = [StoredEvent(11, chunk(5)), StoredEvent(12, status), StoredEvent(13, chunk(7))]
    assert follow()._entries(whole) == whole
    # a batch that ends with a status: that one as an Entry, ending the stream
    # when it is final
    done = StatusUpdate("t", "c", TaskStatus(TaskState.COMPLETED), None, 8)
    f = follow()
    out = f._entries([*whole, StoredEvent(14, done)])
    assert out == [*whole, Entry(14, done)] and f.over
    # one that ends with a cancel queued after an interruption ends at the interruption
    asked = StatusUpdate("t", "c", TaskStatus(TaskState.INPUT_REQUIRED), None, 8)
    gone = StatusUpdate("t", "c", TaskStatus(TaskState.CANCELED), None, 9)
    out = follow()._entries([*whole, StoredEvent(14, asked), StoredEvent(15, gone)])
    assert out == [*(Entry(s.seq, s.event) for s in whole), Entry(14, asked)]
    # a reader that comes late reads the log from its creation: the task as an Entry
    from interlingua.core.model import TaskCreated
    task = Task("t", "c", TaskStatus(TaskState.SUBMITTED), generation=1)
    start = [StoredEvent(1, TaskCreated(task)), StoredEvent(2, chunk(2)), StoredEvent(3, chunk(3)),
             StoredEvent(4, StatusUpdate("t", "c", TaskStatus(TaskState.COMPLETED), None, 4))]
    f = follow()
    assert f._entries(start) == [Entry(1, task), *start[1:3], Entry(4, start[3].event)]
    assert f.over
    said = HistoryAppended(msg("more"))
    mixed = [StoredEvent(11, chunk(5)), StoredEvent(12, said), StoredEvent(13, chunk(6))]
    out = follow()._entries(mixed)
    assert out == [Entry(11, mixed[0].event), Entry(13, mixed[2].event)]
