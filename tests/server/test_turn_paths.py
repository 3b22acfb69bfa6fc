"""Paths of a turn that need a store to misbehave or a process to be gone: a
failed background write reaches the executor at its next emit, and the
"rerun" restart policy runs an orphaned task's turn again."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from interlingua.bus import LocalBus
from interlingua.core.calls import GetTask, SendConfig, SendMessage
from interlingua.core.model import Event, Message, Role, TaskState, TextPart
from interlingua.core.parts import new_id
from interlingua.server import Agent, Context, Engine, EngineConfig, RequestInfo
from interlingua.stores import Scope, open_store
from tests.stores.builders import created, status, ts, user

pytestmark = pytest.mark.timeout(30)

REQ = RequestInfo(principal="p")


def _message(text: str) -> Message:
    return Message(message_id=new_id(), role=Role.USER, parts=[TextPart(text=text)])


class FailingAppends:
    """A store whose next ``append`` raises (the rest passes through)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.fail_next = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def append(self, scope: Scope, task_id: str, expected_version: int,
                     events: Sequence[Event], **kw: Any) -> int:
        if self.fail_next:
            self.fail_next = False
            raise OSError("disk full")
        result: int = await self._inner.append(scope, task_id, expected_version, events, **kw)
        return result


async def test_a_failed_background_write_is_raised_at_the_next_emit() -> None:
    store = FailingAppends(open_store("memory://"))
    seen: list[str] = []
    written = asyncio.Event()

    async def chunks(ctx: Context) -> None:
        await ctx.update("working")
        store.fail_next = True
        # progress is queued and written behind the executor...
        await ctx.artifact("one", name="a.txt")
        await asyncio.sleep(0.05)  # ...while it awaits something else
        written.set()
        try:
            await ctx.artifact("two", name="b.txt")
        except OSError as exc:
            seen.append(str(exc))
            raise

    engine = Engine(Agent("t", "t", chunks), store, LocalBus())  # type: ignore[arg-type]
    await engine.start()
    try:
        task = await engine.send(SendMessage(message=_message("go")), REQ)
        assert seen == ["disk full"]
        assert task.status.state is TaskState.FAILED  # type: ignore[union-attr]
        stored = await engine.get_task(GetTask(id=task.id), REQ)  # type: ignore[union-attr]
        # neither chunk was stored: the failed batch is lost, and what followed was refused
        assert stored.artifacts == []
    finally:
        await engine.stop()


async def test_the_rerun_policy_runs_an_orphaned_turn_again(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/tasks.db"
    store = open_store(url)
    await store.open()
    # a task some process left working, with no lease (that process is gone)
    scope = Scope(owner="p")
    await store.create_task(scope, [created("t-1", history=[user("m-1", "again please")]),
                                    status("t-1", TaskState.WORKING, ts(1))],
                            dialect="1.0", now=ts(1))
    await store.close()
    texts: list[str] = []

    async def again(ctx: Context) -> None:
        texts.append(ctx.text)
        await ctx.complete("done again")

    engine = Engine(Agent("t", "t", again), open_store(url), LocalBus(),
                    config=EngineConfig(restart_policy="rerun"))
    await engine.start()
    try:
        for _ in range(200):
            task = await engine.get_task(GetTask(id="t-1"), REQ)
            if task.status.state is TaskState.COMPLETED:
                break
            await asyncio.sleep(0.01)
        assert task.status.state is TaskState.COMPLETED
        assert texts == ["again please"]  # the user's last message, run again
    finally:
        await engine.stop()


async def test_a_graceful_stop_leaves_a_running_turn_to_rerun(tmp_path: Path) -> None:
    """With the policy "rerun" a stop leaves a turn still running unfinished, and the
    next start runs it again (it was ended failed at the stop, then not rerun)."""
    url = f"sqlite:///{tmp_path}/tasks.db"
    runs: list[str] = []

    async def slow_then_quick(ctx: Context) -> None:
        runs.append(ctx.text)
        await ctx.update("working")
        if len(runs) == 1:
            await asyncio.sleep(30)  # cut by the stop
        await ctx.complete("done")

    config = EngineConfig(restart_policy="rerun", stop_timeout=1.0)
    engine = Engine(Agent("t", "t", slow_then_quick), open_store(url), LocalBus(),
                    config=config)
    await engine.start()
    task = await engine.send(SendMessage(message=_message("go"),
                                         config=SendConfig(blocking=False)), REQ)
    for _ in range(200):
        if runs:
            break
        await asyncio.sleep(0.01)
    await engine.stop()
    again = Engine(Agent("t", "t", slow_then_quick), open_store(url), LocalBus(),
                   config=config)
    await again.start()
    try:
        for _ in range(300):
            got = await again.get_task(GetTask(id=task.id), REQ)  # type: ignore[union-attr]
            if got.status.state is TaskState.COMPLETED:
                break
            await asyncio.sleep(0.01)
        assert got.status.state is TaskState.COMPLETED, got.status
        assert runs == ["go", "go"]
    finally:
        await again.stop()


async def test_a_commit_listener_sees_every_batch_in_order() -> None:
    async def chunks(ctx: Context) -> None:
        await ctx.update("writing")
        for i in range(300):  # more than one batch's worth, written behind the executor
            await ctx.artifact(f"{i};", artifact_id="a", append=i > 0, last_chunk=i == 299)
            if i % 50 == 0:
                await asyncio.sleep(0)
        await ctx.complete("done")

    engine = Engine(Agent("t", "t", chunks), open_store("memory://"), LocalBus())
    batches: list[tuple[str, list[int]]] = []
    engine.on_commit(lambda run, stored: batches.append((run.task.id, [e.seq for e in stored])))
    await engine.start()
    try:
        task = await engine.send(SendMessage(message=_message("go"),
                                             config=SendConfig(blocking=True)), REQ)
        seqs = [seq for task_id, batch in batches if task_id == task.id for seq in batch]
        logged = await engine.store.read_events(REQ.scope, task.id)
        assert seqs == [e.seq for e in logged] == list(range(1, len(logged) + 1))
        assert len(batches) > 1
    finally:
        await engine.stop()


class _BusThatFailsAfterDelivering(LocalBus):
    """Hands events to the readers here, then fails to tell other processes, as a
    shared bus does when its server is out of reach."""

    async def publish(self, key: str, events: Sequence[Any], *, created: bool = False) -> None:
        await super().publish(key, events)
        raise ConnectionError("bus server out of reach")


async def test_a_committed_write_stands_when_the_bus_fails() -> None:
    async def chunks(ctx: Context) -> None:
        await ctx.artifact("one", artifact_id="a")
        await ctx.artifact("two", artifact_id="a", append=True, last_chunk=True)
        await ctx.complete("done")

    engine = Engine(Agent("t", "t", chunks), open_store("memory://"),
                    _BusThatFailsAfterDelivering())
    batches: list[list[int]] = []
    engine.on_commit(lambda run, stored: batches.append([e.seq for e in stored]))
    await engine.start()
    try:
        task = await engine.send(SendMessage(message=_message("go"),
                                             config=SendConfig(blocking=True)), REQ)
        assert task.status.state is TaskState.COMPLETED  # type: ignore[union-attr]
        logged = await engine.store.read_events(REQ.scope, task.id)  # type: ignore[union-attr]
        # every committed batch reached the commit listeners (push) as well
        assert [seq for batch in batches for seq in batch] == [e.seq for e in logged]
    finally:
        await engine.stop()


async def test_a_turn_that_swallows_its_cancellation_does_not_hold_the_stop() -> None:
    store = open_store("memory://")
    working, released = asyncio.Event(), asyncio.Event()

    async def stubborn(ctx: Context) -> None:
        await ctx.update("working")
        working.set()
        while not released.is_set():
            try:
                await released.wait()
            except asyncio.CancelledError:
                continue  # the executor refuses to stop

    config = EngineConfig(stop_timeout=0.2)
    engine = Engine(Agent("t", "t", stubborn), store, LocalBus(), config=config)
    await engine.start()
    try:
        task = await engine.send(
            SendMessage(message=_message("go"), config=SendConfig(blocking=False)), REQ)
        await working.wait()
        stopping = asyncio.ensure_future(engine.stop())
        done, _ = await asyncio.wait([stopping], timeout=5)
        assert done, "the engine's stop waited on a turn that would not end"
        await store.open()
        stored = await store.get_task(Scope(owner="p"), task.id)  # type: ignore[union-attr]
        assert stored is not None and stored.task.status.state is TaskState.FAILED
    finally:
        released.set()
        await asyncio.sleep(0)
