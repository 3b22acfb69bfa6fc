"""What an executor does wrong ends its task, saying what, on every store, and the
server goes on serving (real HTTP on loopback): an executor that raises ``SystemExit``
or ``KeyboardInterrupt`` (argparse in an agent, say) stopped the whole server; one
whose exception's text fails, or holds a lone surrogate or megabytes, left its task
working for ever or unreadable; one that reported progress after asking for input set
its task working again with nothing running."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

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
