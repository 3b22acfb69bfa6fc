"""One follow-up message sent at once to two processes on one store (two engines on
one SQLite file or PostgreSQL schema here): the exact retry gets the task on both, however the race
between the two writes goes (docs/lifecycle.md, "Message ids"); in strict mode
other content under the id is refused as reused, never as a task that moved on."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from interlingua.bus import LocalBus
from interlingua.core.calls import SendConfig, SendMessage
from interlingua.core.errors import (
    InvalidParams,
    InvalidTaskState,
    StoreDown,
    TaskGenerationMismatch,
)
from interlingua.core.model import Message, Role, Task, TaskState, TextPart
from interlingua.core.parts import new_id
from interlingua.server import Agent, Context, Engine, EngineConfig, RequestInfo
from interlingua.stores import MessageRecord, Scope, open_store
from interlingua.stores.base import StoreUnavailable

pytestmark = pytest.mark.timeout(60)

REQ = RequestInfo(principal="p")
ROUNDS = 20


async def ask_then_answer(ctx: Context) -> None:
    if ctx.text == "ask":
        await ctx.require_input("and then?")
    else:
        await ctx.complete("got " + ctx.text)


class LateLookups:
    """A store whose first look-up of a held message id answers what it found only
    once ``go`` is set: the answer of a look made before another process's write,
    arriving after it (the rest passes through)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.held: str | None = None
        self.go = asyncio.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def find_message(self, scope: Scope, message_id: str,
                           digest: bytes = b"") -> MessageRecord | None:
        found: MessageRecord | None = await self._inner.find_message(scope, message_id, digest)
        if message_id == self.held:
            self.held = None
            await self.go.wait()
        return found


@pytest.fixture(params=["content", "strict"])
async def engines(request: pytest.FixtureRequest, shared_store_url: str
                  ) -> AsyncIterator[tuple[Engine, Engine]]:
    """Two engines on one store, as two processes serving it have them."""
    config = EngineConfig(message_ids=request.param)
    # one bus, as processes that share Redis have: a caller waiting on the other
    # process's turn hears of its end at once, not at its next look a second later
    bus = LocalBus()
    one = Engine(Agent("t", "t", ask_then_answer), open_store(shared_store_url), bus, config=config)
    await one.start()
    other = Engine(Agent("t", "t", ask_then_answer), LateLookups(open_store(shared_store_url)),  # type: ignore[arg-type]
                   bus, config=config)
    await other.start()
    try:
        yield one, other
    finally:
        await other.stop()
        await one.stop()


def message(text: str, task_id: str | None = None, message_id: str | None = None) -> Message:
    return Message(message_id=message_id or new_id(), role=Role.USER,
                   parts=[TextPart(text=text)], task_id=task_id)


async def waiting(engine: Engine) -> Task:
    task = await engine.send(SendMessage(message=message("ask")), REQ)
    assert isinstance(task, Task) and task.status.state is TaskState.INPUT_REQUIRED
    return task


@pytest.mark.parametrize("if_generation_match", [False, True])
async def test_a_followup_sent_to_two_processes_at_once_gets_the_task_on_both(
        engines: tuple[Engine, Engine], if_generation_match: bool) -> None:
    refused = []
    for _ in range(ROUNDS):
        task = await waiting(engines[0])
        follow = message("hi", task.id)
        config = SendConfig(if_generation_match=task.generation if if_generation_match
                            else None)
        answers = await asyncio.gather(
            *(e.send(SendMessage(message=follow, config=config), REQ) for e in engines),
            return_exceptions=True)
        refused += [a for a in answers if not isinstance(a, Task)]
        for a in answers:
            if isinstance(a, Task):
                assert a.id == task.id and a.status.state is TaskState.COMPLETED
    assert refused == []


@pytest.mark.parametrize("engines", ["strict"], indirect=True)
async def test_other_content_under_a_followups_id_is_refused_as_reused(
        engines: tuple[Engine, Engine]) -> None:
    one, other = engines
    for _ in range(ROUNDS):
        task = await waiting(one)
        mid = new_id()
        answers = await asyncio.gather(
            one.send(SendMessage(message=message("hi", task.id, mid)), REQ),
            other.send(SendMessage(message=message("ho", task.id, mid)), REQ),
            return_exceptions=True)
        tasks = [a for a in answers if isinstance(a, Task)]
        assert len(tasks) == 1 and tasks[0].status.state is TaskState.COMPLETED
        refusal = next(a for a in answers if not isinstance(a, Task))
        assert isinstance(refusal, InvalidParams), refusal


@pytest.mark.parametrize("if_generation_match", [False, True])
async def test_a_followup_whose_look_up_came_before_the_other_processes_write_gets_the_task(
        engines: tuple[Engine, Engine], if_generation_match: bool) -> None:
    """The second process looked the id up before the first wrote it, and finds the task
    moved on (here finished) by that very message: the task, not a refusal."""
    one, other = engines
    for text in ("hi", "ho"):  # the same content, then (strict mode: refused) other content
        task = await waiting(one)
        follow = message("hi", task.id)
        late = other.store
        assert isinstance(late, LateLookups)
        late.held, late.go = follow.message_id, asyncio.Event()
        config = SendConfig(if_generation_match=task.generation if if_generation_match
                            else None)
        retry = asyncio.create_task(other.send(SendMessage(message=message(
            text, task.id, follow.message_id), config=config), REQ))
        await asyncio.sleep(0.05)  # (its look-up is held)
        first = await one.send(SendMessage(message=follow, config=config), REQ)
        assert isinstance(first, Task) and first.status.state is TaskState.COMPLETED
        late.go.set()
        if text == "hi":
            assert await retry == first
        elif one.config.message_ids == "strict":
            with pytest.raises(InvalidParams):
                await retry
        else:  # another message, to a task that moved on
            with pytest.raises(TaskGenerationMismatch if if_generation_match
                               else InvalidTaskState):
                await retry


class HeldWrites:
    """A store whose write of a held follow-up message waits for ``go`` (then is
    made, or fails with ``failure``): a write that reaches the store after another
    process's write of the same message, with a repeat joined to it meanwhile."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.held: str | None = None
        self.reached = asyncio.Event()
        self.go = asyncio.Event()
        self.failure: BaseException | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def append(self, scope: Scope, task_id: str, expected_version: int,
                     events: Any, **kw: Any) -> int:
        message = kw.get("message")
        if message is not None and message[0] == self.held:
            self.held = None
            self.reached.set()
            await self.go.wait()
            if self.failure is not None:
                raise self.failure
        version: int = await self._inner.append(scope, task_id, expected_version, events, **kw)
        return version


@pytest.mark.parametrize("blocking", [True, False])
async def test_a_repeat_that_joined_a_followup_taken_by_another_process_gets_the_task(
        shared_store_url: str, blocking: bool) -> None:
    """A follow-up sent twice to one process and once to another at once: the first
    copy here is written after the other process's, so the store refuses it; the
    repeat that joined its run meanwhile gets the task too, not a wait for ever."""
    bus = LocalBus()
    one = Engine(Agent("t", "t", ask_then_answer), open_store(shared_store_url), bus)
    held = HeldWrites(open_store(shared_store_url))
    other = Engine(Agent("t", "t", ask_then_answer), held, bus)  # type: ignore[arg-type]
    await one.start()
    await other.start()
    try:
        for _ in range(2):
            task = await waiting(one)
            follow = SendMessage(message=message("hi", task.id),
                                 config=SendConfig(blocking=blocking))
            held.held, held.reached, held.go = follow.message.message_id, \
                asyncio.Event(), asyncio.Event()
            first = asyncio.create_task(other.send(follow, REQ))
            await asyncio.wait_for(held.reached.wait(), 5)
            joined = asyncio.create_task(other.send(follow, REQ))
            await asyncio.sleep(0.05)  # (it follows the first copy's run)
            taken = await one.send(follow, REQ)
            assert isinstance(taken, Task)
            held.go.set()
            answers = await asyncio.wait_for(asyncio.gather(first, joined), 5)
            for answer in answers:
                assert isinstance(answer, Task) and answer.id == task.id
                if blocking:
                    assert answer.status.state is TaskState.COMPLETED
    finally:
        await other.stop()
        await one.stop()


async def test_a_repeat_that_joined_a_followup_whose_write_failed_gets_that_failure(
        shared_store_url: str) -> None:
    """The first copy's write fails (the store is down): the repeat that joined its
    run is told so as well, instead of waiting for a turn that never begins."""
    held = HeldWrites(open_store(shared_store_url))
    engine = Engine(Agent("t", "t", ask_then_answer), held, LocalBus())  # type: ignore[arg-type]
    await engine.start()
    try:
        task = await waiting(engine)
        follow = SendMessage(message=message("hi", task.id))
        held.held, held.failure = follow.message.message_id, StoreUnavailable("down")
        first = asyncio.create_task(engine.send(follow, REQ))
        await asyncio.wait_for(held.reached.wait(), 5)
        joined = asyncio.create_task(engine.send(follow, REQ))
        await asyncio.sleep(0.05)
        held.go.set()
        answers = await asyncio.wait_for(asyncio.gather(first, joined, return_exceptions=True),
                                         5)
        assert isinstance(answers[0], StoreUnavailable)
        assert isinstance(answers[1], StoreDown), answers[1]
        # and the message, sent again once the store is back, continues the task
        again = await engine.send(follow, REQ)
        assert isinstance(again, Task) and again.status.state is TaskState.COMPLETED
    finally:
        await engine.stop()
