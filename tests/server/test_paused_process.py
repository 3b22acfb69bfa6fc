"""A process paused mid-turn past its lease timeout, on one SQLite file with another:
the other revokes its lease and ends the task failed; on waking, the paused one
stops its turn (docs/architecture.md, "Fencing"), and its blocking caller is
answered with the task as the store has it, failed, not with what the turn last
wrote (working). Two engines here; the pause is a heartbeat held (and the
executor waiting) until the other process has ended the task."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from interlingua.bus import LocalBus
from interlingua.core.calls import GetTask, SendMessage
from interlingua.core.model import Message, Role, Task, TaskState, TextPart
from interlingua.core.parts import new_id
from interlingua.server import Agent, Context, Engine, EngineConfig, RequestInfo
from interlingua.stores import open_store

pytestmark = pytest.mark.timeout(30)

REQ = RequestInfo(principal="p")
CONFIG = EngineConfig(lease_interval=0.1, lease_timeout=0.5)


class HeldHeartbeats:
    """A store whose heartbeats wait while ``beating`` is clear (the rest passes through)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.beating = asyncio.Event()
        self.beating.set()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def renew_lease(self, epoch: int, now: float) -> bool:
        await self.beating.wait()
        renewed: bool = await self._inner.renew_lease(epoch, now)
        return renewed


class Slow:
    """An executor that says it is working, then finishes once let go."""

    def __init__(self) -> None:
        self.working = asyncio.Event()
        self.go = asyncio.Event()

    async def __call__(self, ctx: Context) -> None:
        await ctx.update("working on it")
        self.working.set()
        await self.go.wait()
        await ctx.complete("done")


@pytest.fixture
async def pair(tmp_path: Path) -> AsyncIterator[tuple[Engine, Engine, HeldHeartbeats, Slow]]:
    url = f"sqlite:///{tmp_path}/tasks.db"
    slow = Slow()
    store = HeldHeartbeats(open_store(url))
    paused = Engine(Agent("t", "t", slow), store, LocalBus(), config=CONFIG)  # type: ignore[arg-type]
    other = Engine(Agent("t", "t", slow), open_store(url), LocalBus(), config=CONFIG)
    await paused.start()
    await other.start()
    try:
        yield paused, other, store, slow
    finally:
        store.beating.set()
        slow.go.set()
        await other.stop()
        await paused.stop()


async def failed_elsewhere(paused: Engine, other: Engine, store: HeldHeartbeats,
                           slow: Slow) -> tuple[asyncio.Task[Task | Message], Task]:
    """A blocking send to the paused process, its turn working; the task as the other
    process ended it, once its lease lapsed."""
    message = Message(message_id=new_id(), role=Role.USER, parts=[TextPart(text="go")])
    send = asyncio.create_task(paused.send(SendMessage(message=message), REQ))
    await slow.working.wait()
    store.beating.clear()  # paused: no more heartbeats
    (run,) = paused.runs.all()
    async with asyncio.timeout(10):
        while True:
            stored = await other.get_task(GetTask(id=run.task.id), REQ)
            if stored.status.state is TaskState.FAILED:
                break
            await asyncio.sleep(0.05)
    assert not send.done() and run.task.status.state is TaskState.WORKING
    return send, stored


async def test_woken_by_its_heartbeat_it_answers_with_the_task_failed(
        pair: tuple[Engine, Engine, HeldHeartbeats, Slow]) -> None:
    paused, other, store, slow = pair
    send, stored = await failed_elsewhere(paused, other, store, slow)
    store.beating.set()  # wakes: its heartbeat finds the lease revoked
    async with asyncio.timeout(10):
        answer = await send
    assert answer == stored
    assert await paused.get_task(GetTask(id=stored.id), REQ) == stored


async def test_woken_by_its_turns_write_it_answers_with_the_task_failed(
        pair: tuple[Engine, Engine, HeldHeartbeats, Slow]) -> None:
    paused, other, store, slow = pair
    send, stored = await failed_elsewhere(paused, other, store, slow)
    slow.go.set()  # wakes: the turn's next write is refused (its heartbeat still held)
    async with asyncio.timeout(10):
        answer = await send
    assert answer == stored
    assert await paused.get_task(GetTask(id=stored.id), REQ) == stored
