"""A turn whose write loses to another writer's (another process's: a message for
the turn, a cancel) reads its task again and goes on, over real HTTP.

The other writer is played by the store itself: just before the turn's artifact
write, it appends what another process would have (at the task's version then),
so that the turn's write, checked against the version it read, loses."""

from __future__ import annotations

import asyncio
import collections
import threading
from typing import Any

from interlingua import Agent, Client, Context, TaskState, get_text, user_message
from interlingua.core.model import (
    ArtifactUpdate,
    Event,
    HistoryAppended,
    StatusUpdate,
    TaskStatus,
)
from interlingua.server.idempotency import message_digest
from interlingua.stores.base import Scope
from interlingua.stores.memory import MemoryStore
from tests.e2e.streaming_listener import stream_and_listen
from tests.live import live_agent, working


class _Intruded(MemoryStore):
    """Before each of the turn's next artifact writes, one of ``ahead`` is written
    first, as another process would."""

    def __init__(self) -> None:
        super().__init__()
        self.ahead: list[str] = []  # "cancel", or a message's text

    async def append(self, scope: Scope, task_id: str, expected_version: int,
                     events: Any, **kwargs: Any) -> int:
        if self.ahead and any(isinstance(e, ArtifactUpdate) for e in events):
            await self._intrude(scope, task_id, self.ahead.pop(0))
        return await super().append(scope, task_id, expected_version, events, **kwargs)

    async def _intrude(self, scope: Scope, task_id: str, what: str) -> None:
        rec = await self.get_task(scope, task_id)
        assert rec is not None
        task = rec.task
        event: Event
        message = None
        if what == "cancel":
            event = StatusUpdate(task.id, task.context_id, TaskStatus(TaskState.CANCELED),
                                 generation=task.generation + 1)
        else:
            sent = user_message(what, task_id=task.id, context_id=task.context_id)
            event = HistoryAppended(message=sent)
            message = (sent.message_id, message_digest(sent))
        await super().append(scope, task_id, rec.version, [event], now="2026-01-01T00:00:00Z",
                             message=message)


async def collect(ctx: Context) -> None:
    await ctx.update("Listening")
    got: list[str] = []
    async for message in ctx.incoming():
        got.append(get_text(message))
        await ctx.artifact(get_text(message).upper(), name=get_text(message))
        if len(got) == 3:
            break
    await ctx.complete(" + ".join(got))


async def test_a_write_that_loses_twice_in_a_row_goes_on() -> None:
    store = _Intruded()
    with live_agent(Agent("Collector", "Collects.", collect,
                          accepts_messages_while_working=True), store=store) as url:
        async with Client(url) as c:
            task = await working(c, "start")
            # the artifact write for "one" loses to two messages, one after the other
            store.ahead = ["two", "three"]
            await c.send("one", task_id=task.id, blocking=False)
            for _ in range(300):
                got = await c.get_task(task.id)
                if got.status.state is not TaskState.WORKING:
                    break
                await asyncio.sleep(0.01)
    assert got.status.state is TaskState.COMPLETED, got.status
    assert get_text(got.status.message) == "one + two + three"
    assert [get_text(m) for m in got.history if m.role.value == "user"] == [
        "start", "one", "two", "three"]


#: by task id: set once its turn ended (the server runs on a thread of its own)
ended: collections.defaultdict[str, threading.Event] = collections.defaultdict(threading.Event)


async def streams_and_listens(ctx: Context) -> None:
    """``stream_and_listen``, which only a stopped turn ends short of a message: its
    end told to the test."""
    try:
        await stream_and_listen(ctx)
    finally:
        ended[ctx.task_id].set()


async def test_a_cancel_its_own_write_finds_stops_the_turn() -> None:
    # as a process without a shared bus finds a cancel served by another one
    store = _Intruded()
    with live_agent(Agent("Streamer", "Streams.", streams_and_listens,
                          accepts_messages_while_working=True), store=store) as url:
        async with Client(url) as c:
            first = await working(c, "start")
            store.ahead = ["cancel"]
            # the turn's task ends (the wait for its end is on this process's loop)
            for _ in range(300):
                if ended[first.id].is_set():
                    break
                await asyncio.sleep(0.01)
            stopped = ended[first.id].is_set()  # (the server's stop would end it too)
            got = await c.get_task(first.id)
    assert got.status.state is TaskState.CANCELED
    assert stopped, "the turn still runs"
