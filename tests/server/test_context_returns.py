"""A context executor that returns a value without finishing its task answers with it,
as a plain function does: text, data or parts become the task's last artifact, a
``Message`` the reply. Before, the value was dropped and the task completed with
nothing, silently. Real HTTP on loopback, with the turn awaited directly and in the
executor gate (a run timeout set)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from interlingua import Agent, Context
from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.core.parts import agent_message, new_id
from interlingua.server.auth.limits import Limits
from tests.bindings.drivers import DRIVERS
from tests.live import live_agent

pytestmark = pytest.mark.timeout(60)


async def returns(ctx: Context) -> Any:
    what = ctx.text
    if what == "text":
        return "the answer"
    if what == "data":
        return {"answer": 42}
    if what == "message":
        return agent_message("a bare reply")
    if what == "after-an-artifact":
        await ctx.artifact("first")
        return "second"
    if what == "after-completing":
        await ctx.complete("done")
        return "dropped: the task had ended"
    if what == "after-asking":
        await ctx.require_input("which one?")
        return "dropped: the task waits for input"
    return None


@pytest.fixture(params=["direct", "gated"])
def url(request: pytest.FixtureRequest) -> Iterator[str]:
    limits = Limits(run_timeout=30) if request.param == "gated" else None
    with live_agent(Agent("Returns", "Returns its answers.", returns), limits=limits) as base:
        yield base


def ask(url: str, text: str) -> m.Task | m.Message:
    with httpx.Client(timeout=30) as client:
        result = DRIVERS["jsonrpc-1.0"](client, url).call(c.SendMessage(message=m.Message(
            message_id=new_id(), role=m.Role.USER, parts=[m.TextPart(text=text)])))
    assert isinstance(result, m.Task | m.Message)
    return result


def artifacts(task: m.Task | m.Message) -> list[Any]:
    assert isinstance(task, m.Task)
    return [p.text if isinstance(p, m.TextPart) else p.data  # type: ignore[union-attr]
            for a in task.artifacts for p in a.parts]


def test_a_returned_value_is_the_answer(url: str) -> None:
    text = ask(url, "text")
    assert isinstance(text, m.Task) and text.status.state == m.TaskState.COMPLETED
    assert artifacts(text) == ["the answer"]
    assert artifacts(ask(url, "data")) == [{"answer": 42}]
    assert artifacts(ask(url, "after-an-artifact")) == ["first", "second"]
    reply = ask(url, "message")
    assert isinstance(reply, m.Message)
    assert [p.text for p in reply.parts if isinstance(p, m.TextPart)] == ["a bare reply"]


def test_a_value_returned_after_the_final_word_is_not_an_answer(url: str) -> None:
    nothing = ask(url, "nothing")
    assert isinstance(nothing, m.Task) and nothing.status.state == m.TaskState.COMPLETED
    assert artifacts(nothing) == []
    ended = ask(url, "after-completing")
    assert isinstance(ended, m.Task) and ended.status.state == m.TaskState.COMPLETED
    assert artifacts(ended) == []
    waiting = ask(url, "after-asking")
    assert isinstance(waiting, m.Task)
    assert waiting.status.state == m.TaskState.INPUT_REQUIRED and artifacts(waiting) == []
