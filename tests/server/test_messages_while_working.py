"""Agents that take messages while they work (ctx.incoming / ctx.next_message), over real HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from interlingua import Agent, Client, Context, Task, TaskState, get_text, user_message
from interlingua.core.errors import A2AError, UnsupportedOperation
from interlingua.core.lifecycle import TERMINAL_STATES
from interlingua.core.model import ArtifactUpdate, StatusUpdate
from interlingua.stores.memory import MemoryStore
from tests.live import live_agent, working

seen: list[str] = []


async def listener(ctx: Context) -> None:
    await ctx.update("Listening")
    async for message in ctx.incoming():
        seen.append(message.message_id)
        if get_text(message) == "done":
            break
        await ctx.artifact(get_text(message).upper(), name=get_text(message))
    await ctx.complete("Bye")


async def waiter(ctx: Context) -> None:
    message = await ctx.next_message(timeout=0.2)
    await ctx.complete("nothing came" if message is None else get_text(message))


@pytest.fixture(params=["memory", "sqlite"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    store = "memory://" if request.param == "memory" else f"sqlite:///{tmp_path}/t.db"
    agent = Agent("Listener", "Listens while it works.", listener,
                  accepts_messages_while_working=True)
    with live_agent(agent, store=store) as u:
        yield u


async def test_messages_reach_the_running_executor(url: str) -> None:
    async with Client(url) as c:
        task = await working(c, "start")
        # a non-blocking send returns the task at once
        got = await c.send("one", task_id=task.id, blocking=False)
        assert isinstance(got, Task) and got.id == task.id
        assert got.status.state is TaskState.WORKING
        # a streaming send follows the task from that point
        events = []
        async for e in c.stream("two", task_id=task.id):
            events.append(e)
            if isinstance(e.item, ArtifactUpdate) and e.item.artifact.name == "two":
                break
        # a blocking send waits for the task to end
        done = await c.send("done", task_id=task.id, context_id=task.context_id)
    assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
    assert [get_text(a) for a in done.artifacts] == ["ONE", "TWO"]
    assert [get_text(m) for m in done.history if m.role.value == "user"] == [
        "start", "one", "two", "done"]
    assert not any(isinstance(e.item, StatusUpdate) and e.item.status.state
                   is TaskState.COMPLETED for e in events)


async def test_a_repeated_message_is_delivered_once(url: str) -> None:
    async with Client(url) as c:
        task = await working(c, "start")
        once = user_message("twice", task_id=task.id)
        seen.clear()
        for _ in range(2):
            got = await c.send(once, blocking=False)
            assert isinstance(got, Task) and got.id == task.id
        # the id with other content: another message, delivered once too
        changed = user_message("other", task_id=task.id)
        changed.message_id = once.message_id
        for _ in range(2):
            got = await c.send(changed, blocking=False)
            assert isinstance(got, Task) and got.id == task.id
        await c.send("done", task_id=task.id)
    assert seen.count(once.message_id) == 2


class _SlowWrites(MemoryStore):
    """Writes of the executor's own events (no message id) take a while: a message
    that arrives meanwhile waits for that write to end before its own."""

    async def append(self, *args: Any, **kwargs: Any) -> int:
        if kwargs.get("message") is None:
            await asyncio.sleep(0.3)
        return await super().append(*args, **kwargs)


async def test_a_message_sent_during_the_executors_write_keeps_its_id() -> None:
    agent = Agent("Listener", "Listens while it works.", listener,
                  accepts_messages_while_working=True)
    with live_agent(agent, store=_SlowWrites()) as url:
        async with Client(url) as c:
            task = await working(c, "start")
            seen.clear()
            # its artifact's write is under way when the next message arrives
            await c.send("first", task_id=task.id, blocking=False)
            await asyncio.sleep(0.05)
            second = user_message("second", task_id=task.id)
            for _ in range(2):
                got = await c.send(second, blocking=False)
                assert isinstance(got, Task) and got.id == task.id
            done = await c.send("done", task_id=task.id)
    assert seen.count(second.message_id) == 1
    assert isinstance(done, Task)
    assert [get_text(m) for m in done.history if m.role.value == "user"] == [
        "start", "first", "second", "done"]


class _LosesTwo(_SlowWrites):
    """The write of the executor's artifact "two" fails."""

    async def append(self, *args: Any, **kwargs: Any) -> int:
        events = args[3]
        if any(isinstance(e, ArtifactUpdate) and e.artifact.name == "two" for e in events):
            raise RuntimeError("the disk is full")
        return await super().append(*args, **kwargs)


async def three_artifacts(ctx: Context) -> None:
    await ctx.update("Listening")
    await ctx.next_message(timeout=5)
    ctx.artifact("1", name="one")  # its write under way (slow)...
    await asyncio.sleep(0.1)
    ctx.artifact("2", name="two")  # ...while this one waits in the queue
    await asyncio.sleep(0.6)
    await ctx.artifact("3", name="three")
    await ctx.complete("Bye")


async def test_a_failed_write_of_the_executors_events_reaches_the_executor() -> None:
    # A message's write takes what the executor queued before it, and writes that
    # first: when that fails, the executor hears of it, as it would from its own flush.
    agent = Agent("Listener", "Listens while it works.", three_artifacts,
                  accepts_messages_while_working=True)
    with live_agent(agent, store=_LosesTwo()) as url:
        async with Client(url) as c:
            task = await working(c, "start")
            await c.send("go", task_id=task.id, blocking=False)
            await asyncio.sleep(0.15)
            with pytest.raises(A2AError) as refused:
                await c.send("meanwhile", task_id=task.id, blocking=False)
            assert refused.value.code == -32603
            for _ in range(300):
                got = await c.get_task(task.id)
                if got.status.state in TERMINAL_STATES:
                    break
                await asyncio.sleep(0.01)
    # the executor's next write raised the failure: the task did not go on without "two"
    assert got.status.state is TaskState.FAILED, [a.name for a in got.artifacts]
    assert [a.name for a in got.artifacts] == ["one"]


async def test_without_the_flag_a_working_task_refuses_messages() -> None:
    async def slow(ctx: Context) -> None:
        await ctx.update("Working")
        await asyncio.sleep(30)

    with live_agent(Agent("Busy", "Busy.", slow)) as u:
        async with Client(u) as c:
            task = await working(c, "start")
            with pytest.raises(UnsupportedOperation) as err:
                await c.send("hello?", task_id=task.id)
            assert err.value.code == -32004
            await c.cancel(task.id)


async def test_next_message_with_a_timeout_and_without_the_flag() -> None:
    with live_agent(Agent("Waiter", "Waits.", waiter,
                          accepts_messages_while_working=True)) as u:
        async with Client(u) as c:
            quiet = await c.send("hi")
    assert isinstance(quiet, Task) and get_text(quiet.status.message) == "nothing came"  # type: ignore[arg-type]
    with live_agent(Agent("Waiter", "Waits.", waiter)) as u:
        async with Client(u) as c:
            refused = await c.send("hi")
    assert isinstance(refused, Task) and refused.status.state is TaskState.FAILED
    assert "accepts_messages_while_working=True" in get_text(refused.status.message)  # type: ignore[arg-type]


@pytest.fixture(params=["memory", "sqlite"])
def asking_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    from tests.e2e.asking_listener_agent import agent

    store = "memory://" if request.param == "memory" else f"sqlite:///{tmp_path}/t.db"
    with live_agent(agent, store=store) as u:
        yield u


async def _ended(c: Client, task_id: str) -> Task:
    for _ in range(500):
        got = await c.get_task(task_id)
        if got.status.state in TERMINAL_STATES:
            return got
        await asyncio.sleep(0.01)
    return got


@pytest.mark.parametrize("answers", [["blue"], ["blue", "green"]])
async def test_messages_a_turn_asked_for_input_without_reading_continue_it(
        asking_url: str, tmp_path: Path, answers: list[str]) -> None:
    # The turn asks for input with messages sent to it meanwhile unread: they answer
    # it, as if sent after it asked; the task does not wait for an answer it has.
    signal = tmp_path / "ask"
    async with Client(asking_url) as c:
        task = await working(c, f"ask {signal}")
        for text in answers:
            sent = await c.send(text, task_id=task.id, blocking=False)
            assert isinstance(sent, Task) and sent.status.state is TaskState.WORKING
        signal.touch()
        done = await _ended(c, task.id)
    assert done.status.state is TaskState.COMPLETED, done.status
    assert get_text(done.status.message) == "answered: " + " + ".join(answers)  # type: ignore[arg-type]
    assert [get_text(m) for m in done.history if m.role.value == "user"] == [
        f"ask {signal}", *answers]
    # the question was asked (and then answered): it is in the history
    assert "what next?" in [get_text(m) for m in done.history if m.role.value == "agent"]


async def test_a_turn_with_nothing_unread_still_waits_for_input(
        asking_url: str, tmp_path: Path) -> None:
    # nothing unread: the task waits for its answer, as before
    async with Client(asking_url) as c:
        task = await working(c, f"ask {tmp_path / 'ask'}")
        (tmp_path / "ask").touch()
        for _ in range(300):
            got = await c.get_task(task.id)
            if got.status.state is TaskState.INPUT_REQUIRED:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)
        assert (await c.get_task(task.id)).status.state is TaskState.INPUT_REQUIRED
        done = await c.send("red", task_id=task.id)
    assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
    assert get_text(done.status.message) == "answered: red"  # type: ignore[arg-type]


async def test_the_turns_callers_are_answered_with_its_question(
        asking_url: str, tmp_path: Path) -> None:
    # the blocking send that began the turn is answered as the turn ended: asking
    # (not with the task as the new turn has it since); the blocking send of the
    # message it left unread, with the task once the new turn that took it ends
    signal = tmp_path / "ask"
    async with Client(asking_url) as c:
        first = asyncio.ensure_future(c.send(f"ask {signal}"))
        for _ in range(300):
            listed = (await c.list_tasks()).tasks
            if listed and listed[0].status.state is TaskState.WORKING:
                break
            await asyncio.sleep(0.01)
        task_id = listed[0].id
        second = asyncio.ensure_future(c.send("blue", task_id=task_id))
        await asyncio.sleep(0.2)
        signal.touch()
        asked, answered = await asyncio.gather(first, second)
    assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
    assert get_text(asked.status.message) == "what next?"  # type: ignore[arg-type]
    assert isinstance(answered, Task) and answered.status.state is TaskState.COMPLETED
    assert get_text(answered.status.message) == "answered: blue"  # type: ignore[arg-type]
