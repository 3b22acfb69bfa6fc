"""``client.session()``: a conversation that keeps its context id and open task between
calls, continues a task that waits for input, and runs a turn in the background to
poll. Against the test assistant (tests/client/agents.py) over real HTTP and gRPC."""

from __future__ import annotations

import pytest

from interlingua import Client
from interlingua.client import ClientError, Session
from interlingua.core.model import Message, Task, TaskState


def _text(task: Task | Message) -> str:
    assert isinstance(task, Task)
    return "".join(p.text for a in task.artifacts for p in a.parts)  # type: ignore[union-attr]


@pytest.mark.parametrize("binding", ["jsonrpc", "rest", "grpc"])
async def test_a_session_continues_the_task_that_asked(agent_url: str, binding: str) -> None:
    async with Client(agent_url, binding=binding) as client:
        chat = client.session()
        assert isinstance(chat, Session) and chat.context_id is None
        asked = await chat.send("greet")
        assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
        assert chat.waiting and chat.task is asked and chat.context_id == asked.context_id
        answered = await chat.send("Ada")  # no task id given: the session knows it
        assert isinstance(answered, Task)
        assert answered.id == asked.id and answered.status.state is TaskState.COMPLETED
        assert _text(answered) == "Hello, Ada!"
        assert not chat.waiting
        # the task ended: the next message starts another, in the same context
        again = await chat.send("echo this")
        assert isinstance(again, Task)
        assert again.id != asked.id and again.context_id == asked.context_id
        assert _text(again) == "echo this"


async def test_a_bare_reply_keeps_the_context(agent_url: str) -> None:
    async with Client(agent_url) as client:
        chat = client.session()
        reply = await chat.send("reply hi there")
        assert isinstance(reply, Message) and chat.task is None
        assert chat.context_id == reply.context_id
        task = await chat.send("more")
        assert isinstance(task, Task) and task.context_id == reply.context_id


async def test_a_session_taken_up_from_a_task(agent_url: str) -> None:
    async with Client(agent_url) as client:
        asked = await client.send("greet")
        assert isinstance(asked, Task)
        chat = client.session(task=asked)
        assert chat.context_id == asked.context_id and chat.waiting
        answered = await chat.send("Grace")
        assert answered.id == asked.id if isinstance(answered, Task) else False
        assert _text(answered) == "Hello, Grace!"


async def test_a_background_run_is_polled_until_it_returns(agent_url: str) -> None:
    async with Client(agent_url) as client:
        chat = client.session()
        run = await chat.start("sleep 0.5", poll_interval=0.05)
        assert not run.done
        assert isinstance(run.answer, Task)
        assert run.answer.status.state in (TaskState.SUBMITTED, TaskState.WORKING)
        polled = await run.poll()
        assert isinstance(polled, Task) and polled.id == run.task_id
        assert polled.status.state in (TaskState.SUBMITTED, TaskState.WORKING)
        # still running: the session will not send over it
        with pytest.raises(ClientError, match="still"):
            await chat.send("anything")
        finished = await run  # awaiting polls
        assert isinstance(finished, Task) and finished.status.state is TaskState.COMPLETED
        assert run.done and chat.task is not None and chat.task.id == finished.id
        assert chat.task.status.state is TaskState.COMPLETED
        assert chat.context_id == finished.context_id
        # and the conversation goes on in the same context
        nxt = await chat.send("after")
        assert isinstance(nxt, Task) and nxt.context_id == finished.context_id


async def test_a_background_run_that_asks_is_continued(agent_url: str) -> None:
    async with Client(agent_url) as client:
        chat = client.session()
        run = await chat.start("greet", poll_interval=0.05)
        asked = await run.wait(timeout=10)
        assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
        assert chat.waiting
        answered = await chat.send("Lin")
        assert isinstance(answered, Task) and answered.id == asked.id
        assert _text(answered) == "Hello, Lin!"


async def test_waiting_gives_up_at_its_timeout_and_cancel_ends_the_task(agent_url: str) -> None:
    async with Client(agent_url) as client:
        chat = client.session()
        run = await chat.start("sleep 30", poll_interval=0.05)
        with pytest.raises(TimeoutError):
            await run.wait(timeout=0.3)
        canceled = await chat.cancel()
        assert canceled is not None and canceled.status.state is TaskState.CANCELED
        assert await chat.cancel() is None  # nothing open any more


@pytest.mark.parametrize("dialect", ["1.0", "0.3", "0.1"])
async def test_a_streamed_turn_keeps_the_task_too(agent_url: str, dialect: str) -> None:
    # (a v0.1 stream opens with a status update, no task: the session learned
    # none, and the next message started another task in another context)
    async with Client(agent_url, dialect=dialect) as client:
        chat = client.session()
        events = [e async for e in chat.stream("greet")]
        assert events
        assert chat.waiting and chat.task is not None
        asked_id = chat.task.id
        assert asked_id == events[-1].task_id
        streamed = [e async for e in chat.stream("Kay")]
        assert streamed[-1].task_id == asked_id
        assert streamed[-1].state is TaskState.COMPLETED and not chat.waiting
        chat = client.session()
        [e async for e in chat.stream("greet")]
        answered = await chat.send("Kay")
        assert isinstance(answered, Task) and answered.id == chat.task.id
        assert _text(answered) == "Hello, Kay!"
