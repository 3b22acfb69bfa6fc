"""A send answered with a bare message (no task) is idempotent on every binding: its
exact retry gets that message again without running the agent, and in strict mode
other content under its message id is refused (docs/lifecycle.md, "Message ids")."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import httpx
import msgspec
import pytest

from interlingua import Agent, Context
from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.core.parts import new_id
from tests.live import live_grpc_agent

from .drivers import Driver, Refused

#: one number per run of the executor: a second run answers with another
_RUNS = itertools.count(1)


async def _reply(ctx: Context) -> None:
    await ctx.reply(f"{ctx.text} #{next(_RUNS)}")


AGENT = Agent("Replier", "Answers with a message.", _reply)


@pytest.fixture(scope="module")
def content() -> Iterator[str]:
    with live_grpc_agent(AGENT) as (url, _):
        yield url


@pytest.fixture(scope="module")
def strict() -> Iterator[str]:
    with live_grpc_agent(AGENT, message_ids="strict") as (url, _):
        yield url


def _send(text: str, message_id: str, *, blocking: bool = True) -> c.SendMessage:
    return c.SendMessage(message=m.Message(message_id=message_id, role=m.Role.USER,
                                           parts=[m.TextPart(text=text)]),
                         config=c.SendConfig(blocking=blocking))


def _text(reply: c.Result) -> str:
    assert isinstance(reply, m.Message), reply
    (part,) = reply.parts
    assert isinstance(part, m.TextPart)
    return part.text


def test_an_exact_retry_of_a_replied_message_gets_the_reply(
        kind: type[Driver], content: str, client: httpx.Client) -> None:
    d = kind(client, content)
    mid = new_id()
    first = d.call(_send("hello", mid))
    assert isinstance(first, m.Message)
    for blocking in (True, False):
        again = d.call(_send("hello", mid, blocking=blocking))
        assert isinstance(again, m.Message)
        assert (again.message_id, again.context_id, _text(again)) == \
            (first.message_id, first.context_id, _text(first))
    # other content under the id is a new message (content mode): run, and answered
    other = d.call(_send("other", mid))
    assert _text(other).startswith("other #")


def test_strict_ids_refuse_other_content_under_a_replied_message_id(
        kind: type[Driver], strict: str, client: httpx.Client) -> None:
    d = kind(client, strict)
    mid = new_id()
    first = d.call(_send("hello", mid))
    with pytest.raises(Refused) as refused:
        d.call(_send("other", mid))
    status = {"jsonrpc-1.0": (200, "-32602"), "jsonrpc-0.3": (200, "-32602"),
              "rest-1.0": 400, "rest-0.3": 422, "grpc-1.0": "INVALID_ARGUMENT",
              "grpc-0.3": "INVALID_ARGUMENT"}[kind.name]
    got = (refused.value.status, refused.value.reason) if isinstance(status, tuple) \
        else refused.value.status
    assert got == status, refused.value
    assert "already used for a different message" in refused.value.message
    again = d.call(_send("hello", mid))
    assert msgspec.to_builtins(again) == msgspec.to_builtins(first)
