"""A new task whose id the client chose (v0.1 ``tasks/send`` with ``params.id``), its
message sent at once to two processes on one store (two engines on one SQLite file
or PostgreSQL schema here): both find no task, both write it, and the store refuses
the second task of that id. An exact retry gets the task on both (docs/lifecycle.md,
"Message ids"); another message for that task id is still refused as a task that
exists."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from interlingua.bus import LocalBus
from interlingua.core.calls import SendMessage
from interlingua.core.errors import InvalidParams, InvalidTaskState
from interlingua.core.model import Message, Role, Task, TaskState, TextPart
from interlingua.core.parts import new_id
from interlingua.server import Agent, Context, Engine, EngineConfig, RequestInfo
from interlingua.stores import Scope, open_store

pytestmark = pytest.mark.timeout(60)

REQ = RequestInfo(principal="p")
ROUNDS = 5


class Runs:
    """The executor: counts its turns by message text."""

    def __init__(self) -> None:
        self.ran: dict[str, int] = {}

    async def __call__(self, ctx: Context) -> None:
        self.ran[ctx.text] = self.ran.get(ctx.text, 0) + 1
        await asyncio.sleep(0.01)
        await ctx.complete("got " + ctx.text)


class MissedTogether:
    """A store whose reads of a held task wait until every process has read it: each
    finds no task, and writes its own."""

    def __init__(self, inner: Any, meeting: dict[str, asyncio.Barrier]) -> None:
        self._inner = inner
        self.meeting = meeting

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def get_task(self, scope: Scope, task_id: str, **kw: Any) -> Any:
        found = await self._inner.get_task(scope, task_id, **kw)
        barrier = self.meeting.pop(task_id, None)
        if barrier is not None:
            await barrier.wait()
        return found


@pytest.fixture(params=["content", "strict"])
def mode(request: pytest.FixtureRequest) -> str:
    mode: str = request.param
    return mode


@pytest.fixture(params=["known", "unknown"])
async def engines(request: pytest.FixtureRequest, shared_store_url: str, mode: str
                  ) -> AsyncIterator[tuple[Runs, list[Engine], list[dict[str, asyncio.Barrier]]]]:
    """Two engines on one store, as two processes serving it have them; ``known``:
    each has seen the other's lease (a new task is written before its executor
    runs), else the first has not yet (its new task is written with its first event)."""
    runs = Runs()
    bus = LocalBus()
    meetings: list[dict[str, asyncio.Barrier]] = [{}, {}]
    engines = [Engine(Agent("t", "t", runs), MissedTogether(open_store(shared_store_url), m),  # type: ignore[arg-type]
                      bus, config=EngineConfig(message_ids=mode))  # type: ignore[arg-type]
               for m in meetings]
    for engine in engines:
        await engine.start()
    if request.param == "known":
        for engine in engines:
            await engine.leases.revoke_dead()
            assert engine.leases.shared
    try:
        yield runs, engines, meetings
    finally:
        for engine in reversed(engines):
            await engine.stop()


def message(text: str, message_id: str | None = None) -> Message:
    return Message(message_id=message_id or new_id(), role=Role.USER,
                   parts=[TextPart(text=text)])


def meet(meetings: list[dict[str, asyncio.Barrier]], task_id: str) -> None:
    barrier = asyncio.Barrier(len(meetings))
    for meeting in meetings:
        meeting[task_id] = barrier


async def test_a_new_task_of_a_client_task_id_sent_to_two_processes_at_once_is_answered_on_both(
        engines: tuple[Runs, list[Engine], list[dict[str, asyncio.Barrier]]]) -> None:
    runs, both, meetings = engines
    for n in range(ROUNDS):
        tid, text = new_id(), f"hello {n}"
        call = SendMessage(message=message(text), client_task_id=tid)
        meet(meetings, tid)
        answers = await asyncio.wait_for(asyncio.gather(
            *(e.send(call, REQ) for e in both), return_exceptions=True), 10)
        for answer in answers:
            assert isinstance(answer, Task), answer
            assert answer.id == tid and answer.status.state is TaskState.COMPLETED
        if both[0].leases.shared:  # (else the first process runs it before it writes it)
            assert runs.ran[text] == 1


async def test_another_message_for_a_client_task_id_taken_at_once_is_refused(
        engines: tuple[Runs, list[Engine], list[dict[str, asyncio.Barrier]]]) -> None:
    _, both, meetings = engines
    for n in range(ROUNDS):
        tid = new_id()
        meet(meetings, tid)
        answers = await asyncio.wait_for(asyncio.gather(
            *(e.send(SendMessage(message=message(f"hello {n}.{i}"), client_task_id=tid), REQ)
              for i, e in enumerate(both)), return_exceptions=True), 10)
        tasks = [a for a in answers if isinstance(a, Task)]
        assert len(tasks) == 1 and tasks[0].id == tid
        refusal = next(a for a in answers if not isinstance(a, Task))
        assert isinstance(refusal, InvalidTaskState), refusal
        assert f"Task {tid} already exists" in str(refusal)


async def test_other_content_under_the_message_id_of_a_client_task_id_taken_at_once(
        engines: tuple[Runs, list[Engine], list[dict[str, asyncio.Barrier]]], mode: str) -> None:
    """The same message id with other content, at once: a message of its own, refused
    as a task that exists (``content``), or refused as a reused id (``strict``)."""
    _, both, meetings = engines
    for n in range(ROUNDS):
        tid, mid = new_id(), new_id()
        meet(meetings, tid)
        answers = await asyncio.wait_for(asyncio.gather(
            *(e.send(SendMessage(message=message(f"hello {n}.{i}", mid), client_task_id=tid),
                     REQ) for i, e in enumerate(both)), return_exceptions=True), 10)
        tasks = [a for a in answers if isinstance(a, Task)]
        assert len(tasks) == 1 and tasks[0].id == tid
        refusal = next(a for a in answers if not isinstance(a, Task))
        assert isinstance(refusal, InvalidParams if mode == "strict" else InvalidTaskState), \
            refusal
