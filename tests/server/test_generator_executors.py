"""An executor that is a generator, of the text or of the context, plain or async: what
it yields is the answer's chunks, one artifact, and the task completes (real HTTP on
loopback). A plain generator failed its task ("Encoding objects of type generator is
unsupported") and an async generator of the context failed with a TypeError."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from interlingua import Agent, Context
from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.core.parts import new_id
from tests.bindings.drivers import DRIVERS
from tests.live import live_agent


def words(text: str) -> Iterator[str]:
    for word in text.split():
        yield word + "."


async def async_words(text: str) -> AsyncIterator[str]:
    for word in text.split():
        yield word + "."


def context_words(ctx: Context) -> Iterator[str]:
    yield from words(ctx.text)


async def async_context_words(ctx: Context) -> AsyncIterator[str]:
    for word in ctx.text.split():
        yield word + "."


async def ends_itself(ctx: Context) -> AsyncIterator[str]:
    yield "half"
    await ctx.fail("stopped after the first chunk")
    yield "never sent"


def answer(executor: object, text: str) -> m.Task:
    """The task of ``text`` sent to an agent of ``executor`` (real HTTP, v1.0)."""
    with live_agent(Agent("Words", "Says the words back.", executor)) as base, \
            httpx.Client(timeout=30) as client:
        task = DRIVERS["jsonrpc-1.0"](client, base).call(c.SendMessage(message=m.Message(
            message_id=new_id(), role=m.Role.USER, parts=[m.TextPart(text=text)])))
    assert isinstance(task, m.Task)
    return task


@pytest.mark.parametrize("executor", [words, async_words, context_words,
                                      async_context_words])
def test_what_a_generator_yields_is_one_artifact_and_the_task_completes(executor: object,
                                                                        ) -> None:
    task = answer(executor, "one two three")
    assert task.status.state is m.TaskState.COMPLETED, task.status
    assert len(task.artifacts) == 1
    assert [p.text for p in task.artifacts[0].parts if isinstance(p, m.TextPart)] \
        == ["one.", "two.", "three."]


def test_a_generator_that_ends_its_task_itself_is_not_completed_after() -> None:
    task = answer(ends_itself, "go")
    assert task.status.state is m.TaskState.FAILED, task.status
    assert [p.text for a in task.artifacts for p in a.parts if isinstance(p, m.TextPart)] \
        == ["half"]
