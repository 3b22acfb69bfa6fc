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
from tests.live import live_agent

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


def _grpc_answering_early(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The agent's v1.0 gRPC service, in this process, made to take every
    ``SendMessage`` as ``return_immediately``: the rpcs asked of it (filled as asked)."""
    pytest.importorskip("grpc")
    import msgspec

    from interlingua.bindings.grpc import server

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
    return asked


def test_an_early_answer_over_grpc_is_followed_by_subscribing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """gRPC: the agent's service answers early (and notes each rpc asked of it)."""
    from tests.live import live_grpc_agent

    asked = _grpc_answering_early(monkeypatch)
    with live_grpc_agent(agent) as (url, _):
        task, dialect = asyncio.run(_send(url, SLOW, binding="grpc", history_length=1))
    assert dialect == "1.0"
    assert task.status.state is TaskState.COMPLETED and len(task.history) == 1
    assert asked == ["SendMessage", "SubscribeToTask", "GetTask"]


# --------------------------------- a message answering input-required: its own turn's end

TURNS = "ask 0.5"  # tests/client/agents.py: input-required; the answer works 0.5 s, ends
#: the ways above, and A2A 1.1 (task generations) on each HTTP binding
TURN_WAYS = {**WAYS, "v1.1-jsonrpc": ({"1.1"}, "jsonrpc"), "v1.1-rest": ({"1.1"}, "rest")}


async def _answer(url: str, *, binding: str | None = None, blocking: bool = True,
                  dialect: str | None = None) -> tuple[Task, Client]:
    """The second turn of a two-turn task, as the client follows it: its task, and the
    client (closed) that spoke."""
    async with Client(url, binding=binding, dialect=dialect, timeout=10) as client:
        asked = await client.send(TURNS)
        assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
        answer = await client.send("yes", task_id=asked.id, blocking=blocking)
        assert isinstance(answer, Task)
        if not blocking:
            assert answer.status.state in (TaskState.SUBMITTED, TaskState.WORKING)
            answer = await client.settle(answer)
        return answer, client


def _its_own_end(task: Task) -> None:
    assert task.status.state is TaskState.COMPLETED, task.status
    assert task.status.message is not None and get_text(task.status.message) == "went on"
    assert [get_text(a) for a in task.artifacts] == ["answered yes"]


@pytest.mark.parametrize("way", list(TURN_WAYS))
def test_an_answer_to_input_required_is_followed_to_its_turns_end(way: str) -> None:
    """The task's log, subscribed to from its start, first replays the input-required
    the message answers: that is the turn before's end, not this one's."""
    versions, binding = TURN_WAYS[way]
    with early_agent(agent, versions=versions) as (url, early):
        task, client = asyncio.run(_answer(url, binding=binding))
    _its_own_end(task)
    assert client.endpoint is not None and client.endpoint.a2a_version == way[1:4]
    second = _asked(early.calls)[3:]  # (after the first turn's send, subscribe, get)
    assert second[0] == "send" and second[-1] == "get" and "subscribe" in second
    assert set(second[1:-1]) == {"subscribe"}  # followed by a stream, not by polling


@pytest.mark.parametrize("way", list(WAYS))
def test_an_answer_from_an_agent_without_timestamps_is_read_to_know_its_turn(
        way: str) -> None:
    """No status timestamps (they are optional): the replayed input-required cannot be
    placed, so the task is read, and is working; the stream is followed on."""
    versions, binding = WAYS[way]
    with early_agent(agent, versions=versions, untimed=True) as (url, early):
        task, _ = asyncio.run(_answer(url, binding=binding))
    _its_own_end(task)
    assert task.status.timestamp is None
    second = _asked(early.calls)[3:]
    # v0.3 ends the stream at the input-required: subscribed again after it
    again = ["subscribe"] if way.startswith("v0.3") else []
    assert second == ["send", "subscribe", "get", *again, "get"]


def test_an_answer_over_grpc_is_followed_to_its_turns_end(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.live import live_grpc_agent

    asked = _grpc_answering_early(monkeypatch)
    with live_grpc_agent(agent) as (url, _):
        task, _ = asyncio.run(_answer(url, binding="grpc"))
    _its_own_end(task)
    second = asked[asked.index("SendMessage", 1):]
    assert second[0] == "SendMessage" and second[-1] == "GetTask"
    assert set(second[1:-1]) == {"SubscribeToTask"}


def test_an_answer_sent_without_waiting_settles_at_its_turns_end() -> None:
    """``blocking=False``, then ``settle``, from an agent that blocks when asked."""
    with live_agent(agent) as url:
        task, _ = asyncio.run(_answer(url, blocking=False))
    _its_own_end(task)


@pytest.mark.parametrize("way", list(TURN_WAYS))
def test_a_polled_answer_takes_no_earlier_turns_end_from_a_lagging_store(way: str) -> None:
    """Subscriptions refused, the task is polled; the agent's first read after each send
    is the task as it stood before (a replica's store that lags): input-required, the
    turn before's end."""
    versions, binding = TURN_WAYS[way]
    with early_agent(agent, versions=versions, refuse_subscribe=True,
                     lagging_reads=1) as (url, early):
        task, _ = asyncio.run(_answer(url, binding=binding))
    _its_own_end(task)
    second = _asked(early.calls)
    second = second[second.index("send", 1):]
    assert second[:2] == ["send", "subscribe"] and second.count("get") >= 3


@pytest.mark.parametrize("dialect", ["1.1", "1.0", "0.3", None])
def test_an_answer_to_an_agent_that_does_not_stream_is_polled_past_a_lagging_store(
        dialect: str | None) -> None:
    """Its card says it does not stream, or no card is read (a dialect given)."""
    quiet = Agent(name="Quiet", description="Does not stream", executor=run, streaming=False)
    with early_agent(quiet, lagging_reads=2) as (url, early):
        task, _ = asyncio.run(_answer(url, dialect=dialect))
    _its_own_end(task)
    assert "subscribe" not in early.calls
