"""What an executor does wrong ends its task, saying what, on every store, and the
server goes on serving (real HTTP on loopback): an executor that raises ``SystemExit``
or ``KeyboardInterrupt`` (argparse in an agent, say) stopped the whole server; one
whose exception's text fails, or holds a lone surrogate or megabytes, left its task
working for ever or unreadable; one that reported progress after asking for input set
its task working again with nothing running."""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from interlingua import Agent, Context
from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.core.parts import new_id
from tests.bindings.drivers import DRIVERS, Driver
from tests.live import live_agent
from tests.stores.conftest import store_url


class _Unsayable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text")


async def misbehaves(ctx: Context) -> None:
    what = ctx.text
    if what == "exit":
        raise SystemExit(2)
    if what == "interrupt":
        raise KeyboardInterrupt
    if what == "unsayable":
        raise _Unsayable
    if what == "surrogate":
        raise LookupError("no report named b\udcffd.txt")
    if what == "huge":
        raise ValueError("x" * 100_000)
    if what == "ask then report":
        await ctx.require_input("which one?")
        await ctx.update("still thinking")
        return
    await ctx.complete("fine")


@pytest.fixture(params=["memory", "sqlite-file", "postgres"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Driver]:
    with live_agent(Agent("Faulty", "Does wrong when told.", misbehaves),
                    store=store_url(request.param, tmp_path, request)) as base, \
            httpx.Client(timeout=30) as client:
        yield DRIVERS["jsonrpc-1.0"](client, base)


def send(driver: Driver, text: str) -> m.Task:
    task = driver.call(c.SendMessage(message=m.Message(
        message_id=new_id(), role=m.Role.USER, parts=[m.TextPart(text=text)])))
    assert isinstance(task, m.Task)
    return task


def said(task: m.Task) -> str:
    assert task.status.message is not None
    part = task.status.message.parts[0]
    assert isinstance(part, m.TextPart)
    return part.text


@pytest.mark.parametrize(("what", "text"), [
    ("exit", "The agent failed: SystemExit: 2"),
    ("interrupt", "The agent failed: KeyboardInterrupt"),
    ("unsayable", "The agent failed: _Unsayable: (its text could not be read)"),
    ("surrogate", "The agent failed: LookupError: no report named b\\udcffd.txt"),
], ids=["exit", "interrupt", "unsayable", "surrogate"])
def test_an_executor_that_fails_oddly_fails_its_task_and_the_server_goes_on(
        served: Driver, what: str, text: str, caplog: pytest.LogCaptureFixture) -> None:
    # (the failure's log line holds what the exception held: a lone surrogate, which
    # the test runner's workers cannot pass on; logging's own handlers escape it)
    caplog.set_level(logging.CRITICAL, logger="interlingua.engine")
    task = send(served, what)
    assert task.status.state is m.TaskState.FAILED, task.status
    assert said(task) == text
    read = served.call(c.GetTask(id=task.id))
    assert isinstance(read, m.Task) and said(read) == text
    listed = served.call(c.ListTasks())
    assert isinstance(listed, c.ListTasksResult) and task.id in [t.id for t in listed.tasks]
    assert send(served, "well").status.state is m.TaskState.COMPLETED  # still serving


def test_a_failure_of_megabytes_is_cut_to_what_a_task_keeps(served: Driver) -> None:
    task = send(served, "huge")
    assert task.status.state is m.TaskState.FAILED
    text = said(task)
    assert text.startswith("The agent failed: ValueError: xxx")
    assert text.endswith("more characters)") and len(text) < 4100
    listed = served.call(c.ListTasks())
    assert isinstance(listed, c.ListTasksResult) and task.id in [t.id for t in listed.tasks]


def test_progress_after_asking_for_input_is_refused_to_the_agent(served: Driver) -> None:
    """The agent is told (it did not catch it: its turn fails); the task was left
    working, with no executor running and the user's answer refused."""
    import time

    task = send(served, "ask then report")  # answered at input-required, or after
    deadline = time.monotonic() + 10
    while task.status.state is not m.TaskState.FAILED and time.monotonic() < deadline:
        time.sleep(0.05)
        read = served.call(c.GetTask(id=task.id))
        assert isinstance(read, m.Task)
        assert read.status.state is not m.TaskState.WORKING, read.status
        task = read
    assert task.status.state is m.TaskState.FAILED, task.status
    assert "this turn has ended (input-required)" in said(task)


# ------------------------------------------------- what an executor gives back


async def gives(ctx: Context, *, suffix: str = "") -> Any:
    what = ctx.text
    if what == "echo":
        return ctx.message  # the caller's own message, handed back
    if what == "foreign":
        return m.Message(message_id=new_id(), role=m.Role.USER, parts=[m.TextPart(text="hi")],
                         context_id="someone-elses-context", task_id="foreign-task")
    if what == "artifact":
        return m.Artifact(artifact_id="a", parts=[m.TextPart(text="x")])
    if what == "status foreign":
        await ctx.complete(m.Message(message_id=new_id(), role=m.Role.USER,
                                     parts=[m.TextPart(text="done")], context_id="elsewhere"))
        return None
    await ctx.complete("partial" + suffix)
    return None


async def yields_none(text: str) -> AsyncIterator[Any]:
    yield "first"
    yield None


@pytest.fixture(scope="module")
def giving() -> Iterator[Driver]:
    with live_agent(Agent("Gives", "Gives back odd things.", functools.partial(
            gives, suffix="!"), replies_with_messages=True)) as base, \
            httpx.Client(timeout=30) as client:
        yield DRIVERS["jsonrpc-1.0"](client, base)


def sent(driver: Driver, text: str) -> tuple[m.Message, m.Task | m.Message]:
    message = m.Message(message_id=new_id(), role=m.Role.USER, parts=[m.TextPart(text=text)],
                        context_id=new_id())
    answer = driver.call(c.SendMessage(message=message))
    assert isinstance(answer, m.Task | m.Message)
    return message, answer


def test_an_executor_taking_a_context_is_known_through_functools_partial(
        giving: Driver) -> None:
    """A partial's own signature is ``*args``: it was handed the message, not the
    context, and failed on ``.complete``."""
    _, answer = sent(giving, "plain")
    assert isinstance(answer, m.Task) and answer.status.state is m.TaskState.COMPLETED
    assert said(answer) == "partial!"


@pytest.mark.parametrize("what", ["echo", "foreign"])
def test_a_message_given_back_is_the_agents_in_this_task(giving: Driver, what: str) -> None:
    """Its role the agent's, its context the task's, no task of another's, and an id of
    its own when it is the caller's message handed back (it went out as given)."""
    message, answer = sent(giving, what)
    assert isinstance(answer, m.Message), answer
    assert answer.role is m.Role.AGENT
    assert answer.context_id == message.context_id and answer.task_id is None
    assert answer.message_id != message.message_id


def test_a_status_message_given_is_the_agents_in_this_task(giving: Driver) -> None:
    _, answer = sent(giving, "status foreign")
    assert isinstance(answer, m.Task) and answer.status.message is not None
    given = answer.status.message
    assert given.role is m.Role.AGENT
    assert (given.context_id, given.task_id) == (answer.context_id, answer.id)


def test_what_is_no_content_of_a_part_fails_the_task_saying_so() -> None:
    """An Artifact returned, None yielded: each went out as a data part (the struct's
    fields by their Python names, or null)."""
    with live_agent(Agent("Gives", "Gives back odd things.", gives)) as base, \
            live_agent(Agent("Yields", "Yields None.", yields_none)) as other, \
            httpx.Client(timeout=30) as client:
        for url, text, what in ((base, "artifact", "an Artifact"), (other, "go", "None")):
            task = send(DRIVERS["jsonrpc-1.0"](client, url), text)
            assert task.status.state is m.TaskState.FAILED, task.status
            assert said(task).startswith(
                f"The agent failed: InvalidOutput: {what} is no content of a part"), said(task)
