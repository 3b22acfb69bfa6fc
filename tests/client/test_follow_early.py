"""A blocking send the agent answered before its task settled is followed to the end:
by subscribing when the card says the agent streams, by polling otherwise or when
the subscription is refused; ``TaskNotSettled`` at the client's timeout.

The agent is interlingua's own, on real HTTP, made to answer early by ``AnswersEarly``
(tests/client/early.py), which also records the operations asked of it; over gRPC, by
its v1.0 service's request decoding patched in this process.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from interlingua import Agent, Client, Context, Task, TaskState, get_text
from interlingua.client import TaskNotSettled

from .agents import agent, run
from .early import early_agent

SLOW = "sleep 0.6"  # tests/client/agents.py: working, 0.6 s, completed "slept"

#: (card versions kept, binding) -> the dialect and binding the client speaks
WAYS = {
    "v1.0-jsonrpc": (None, "jsonrpc"),
    "v1.0-rest": (None, "rest"),
    "v0.3-jsonrpc": ({"0.3"}, "jsonrpc"),
    "v0.3-rest": ({"0.3"}, "rest"),
}


async def _send(url: str, text: str, *, binding: str | None = None,
                timeout: float = 10, history_length: int | None = None) -> tuple[Task, str]:
    async with Client(url, binding=binding, timeout=timeout) as client:
        task = await client.send(text, history_length=history_length)
        assert isinstance(task, Task)
        assert client.endpoint is not None
        return task, client.endpoint.dialect


def _asked(calls: list[str]) -> list[str]:
    return [c for c in calls if c != "card"]


@pytest.mark.parametrize("way", list(WAYS))
def test_an_early_answer_is_followed_by_subscribing(way: str) -> None:
    """One subscription until the task ends, then the task read once (with the
    history asked for): no polling."""
    versions, binding = WAYS[way]
    with early_agent(agent, versions=versions) as (url, early):
        task, dialect = asyncio.run(_send(url, SLOW, binding=binding, history_length=1))
    assert dialect == way[1:4]
    assert task.status.state is TaskState.COMPLETED
    assert task.status.message is not None and get_text(task.status.message) == "slept"
    assert len(task.history) == 1
    assert _asked(early.calls) == ["send", "subscribe", "get"]


async def _two_artifacts(ctx: Context) -> None:
    await ctx.artifact("first", name="first")
    await asyncio.sleep(0.5)
    await ctx.complete(artifact="second", name="second")


def test_the_stream_way_reads_the_whole_task_at_the_end() -> None:
    """The task returned is the agent's own, artifacts and all (as GetTask gives it)."""
    two = Agent(name="Two", description="Two artifacts", executor=_two_artifacts)
    with early_agent(two) as (url, early):
        task, _ = asyncio.run(_send(url, "go"))
    assert task.status.state is TaskState.COMPLETED
    assert [a.name for a in task.artifacts] == ["first", "second"]
    assert _asked(early.calls) == ["send", "subscribe", "get"]


@pytest.mark.parametrize("way", ["v1.0-jsonrpc", "v0.3-jsonrpc"])
def test_a_task_that_settled_before_the_subscription(way: str) -> None:
    """Finished between the answer and the subscription: the subscription, from the
    log's start, brings its events (a fresh one a v1.0 agent would refuse); then one
    GetTask reads it."""
    versions, binding = WAYS[way]
    with early_agent(agent, versions=versions) as (url, early):
        task, _ = asyncio.run(_send(url, "hello", binding=binding))
    assert task.status.state is TaskState.COMPLETED
    assert get_text(task.artifacts[0]) == "hello"
    assert _asked(early.calls) == ["send", "subscribe", "get"]


def test_an_agent_that_does_not_stream_is_polled() -> None:
    quiet = Agent(name="Quiet", description="Does not stream", executor=run, streaming=False)
    with early_agent(quiet) as (url, early):
        task, _ = asyncio.run(_send(url, SLOW))
    assert task.status.state is TaskState.COMPLETED
    asked = _asked(early.calls)
    assert asked[0] == "send" and "subscribe" not in asked
    assert asked.count("get") >= 2 and set(asked[1:]) == {"get"}


@pytest.mark.parametrize("way", list(WAYS))
def test_a_refused_subscription_falls_back_to_polling(way: str) -> None:
    versions, binding = WAYS[way]
    with early_agent(agent, versions=versions, refuse_subscribe=True) as (url, early):
        task, _ = asyncio.run(_send(url, SLOW, binding=binding))
    assert task.status.state is TaskState.COMPLETED
    asked = _asked(early.calls)
    assert asked[:2] == ["send", "subscribe"]
    assert asked.count("get") >= 2 and set(asked[2:]) == {"get"}


@pytest.mark.parametrize("refuse", [False, True], ids=["subscribed", "polled"])
def test_a_task_that_does_not_settle_in_time_is_task_not_settled(refuse: bool) -> None:
    """At the timeout, ``TaskNotSettled`` with the task as last heard of (working);
    the message is sent once."""
    with early_agent(agent, refuse_subscribe=refuse) as (url, early), \
            pytest.raises(TaskNotSettled) as info:
        asyncio.run(_send(url, "sleep 30", timeout=1.0))
    task = info.value.task
    assert isinstance(task, Task) and task.id in str(info.value)
    assert task.status.state is TaskState.WORKING
    asked = _asked(early.calls)
    assert asked.count("send") == 1
    if not refuse:
        # the subscription heard the task was working: no GetTask was needed
        assert asked == ["send", "subscribe"]


def test_an_early_answer_over_grpc_is_followed_by_subscribing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """gRPC: the agent's v1.0 service, in this process, made to take every
    ``SendMessage`` as ``return_immediately`` (and to note each rpc asked of it)."""
    pytest.importorskip("grpc")
    import msgspec

    from interlingua.bindings.grpc import server
    from tests.live import live_grpc_agent

    asked: list[str] = []
    decode = server._V1.call_of

    def early(self: Any, rpc: Any, request: Any) -> Any:
        asked.append(rpc.name)
        call = decode(self, rpc, request)
        if rpc.name == "SendMessage":
            call = msgspec.structs.replace(
                call, config=msgspec.structs.replace(call.config, blocking=False))
        return call

    monkeypatch.setattr(server._V1, "call_of", early)
    with live_grpc_agent(agent) as (url, _):
        task, dialect = asyncio.run(_send(url, SLOW, binding="grpc", history_length=1))
    assert dialect == "1.0"
    assert task.status.state is TaskState.COMPLETED and len(task.history) == 1
    assert asked == ["SendMessage", "SubscribeToTask", "GetTask"]
