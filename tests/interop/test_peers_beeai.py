"""interlingua against beeai-framework 0.1.85 (its ``a2a`` extra), both ways: BeeAI's
``A2AServer`` serving a ``RequirementAgent`` and BeeAI's ``A2AAgent`` client, the
agent's model a stub (no model service). Both carry a2a-sdk 0.3.26 inside and speak v0.3.

Each peer runs in its own venv (``scripts/interop-setup``, ``.interop/py-*``) as a
real process on loopback. ``WILD`` in ``matrix.py`` holds these cells; a peer bug is
shown by the same failure with a2a-sdk 1.3.0 in our place.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest

from interlingua import Client
from interlingua.core.errors import TaskNotCancelable
from interlingua.core.model import StatusUpdate, Task, TaskState
from interlingua.core.parts import get_text
from tests.e2e.procs import free_port

from .harness import PEERS_DIR, AgentProcess, Driver, InterlinguaProcess, PeerClient, running
from .test_peers_in_the_wild import _client, _our_task_with, _python, _stream, _with

BEEAI, SDK = "py-beeai-framework-0.1.85", "py-a2a-1.3.0"
pytestmark = pytest.mark.interop(envs=[BEEAI, SDK])

#: BeeAI's server speaks the binding it is started with, one at a time
PROTOCOLS = {"JSONRPC": "jsonrpc", "HTTP+JSON": "http_json", "GRPC": "grpc"}


class _Served(NamedTuple):
    url: str
    #: the binding its card names (its ``preferredTransport``)
    binding: str


def _beeai_process(protocol: str = "jsonrpc", tag: str = "") -> AgentProcess:
    """BeeAI's server, started (not yet ready); with gRPC its card is served over HTTP
    at the agent's port and names gRPC at a port of its own (``127.0.0.1:PORT``)."""
    port = free_port()
    argv = [_python(BEEAI), str(PEERS_DIR / "beeai_agent.py"), "--port", str(port),
            "--protocol", protocol]
    if protocol == "grpc":
        argv += ["--grpc-port", str(free_port())]
    return AgentProcess(f"beeai_agent.py-{protocol}{tag}", argv, port)


def _beeai(protocol: str = "jsonrpc") -> Iterator[AgentProcess]:
    with running(_beeai_process(protocol)) as agent:
        yield agent


@pytest.fixture(scope="module", params=list(PROTOCOLS))
def beeai_agent(request: pytest.FixtureRequest) -> Iterator[_Served]:
    for agent in _beeai(PROTOCOLS[request.param]):
        yield _Served(agent.url, request.param)


@pytest.fixture(scope="module")
def beeai_client() -> Iterator[PeerClient]:
    yield from _client(BEEAI, "beeai_client.py")


def _beeai_turns(client: PeerClient, url: str, *texts: str) -> list[dict[str, Any]]:
    """One ``A2AAgent.run`` per text on one agent object (made for this run in
    ``client``'s process): what each returned."""
    turns: list[dict[str, Any]] = client.run(url, *texts)
    return turns


def _answer(task: Task) -> str:
    """BeeAI's agent answers in the final status's message, with no artifact."""
    assert task.status.message is not None
    return get_text(task.status.message)


# ------------------------------------------------------ BeeAI's A2AAgent -> interlingua


def test_beeai_a2a_agent_send(beeai_client: PeerClient, ours: InterlinguaProcess,
                              ours_with_grpc: InterlinguaProcess) -> None:
    """``A2AAgent`` reads our card, with gRPC off or on, and picks JSON-RPC v0.3 from it;
    it reads the answer from the task's artifact; our task completes."""
    for server, text in ((ours, "echo from beeai"), (ours_with_grpc, "echo beeai grpc")):
        [turn] = _beeai_turns(beeai_client, server.url, text)
        assert turn.get("error") is None, turn
        assert (turn["text"], turn["state"]) == (text, "completed")
        task = _our_task_with(server.url, text)
        assert task.id == turn["task_id"] and task.status.state is TaskState.COMPLETED
        assert get_text(task.artifacts[0]) == text


def test_beeai_a2a_agent_streams(beeai_client: PeerClient, ours: InterlinguaProcess) -> None:
    """Our card says ``streaming``, so ``A2AAgent`` streams: the three appended chunks
    of the artifact arrive as one text."""
    [turn] = _beeai_turns(beeai_client, ours.url, "stream 3")
    assert (turn["text"], turn["state"]) == ("chunk 0;chunk 1;chunk 2;", "completed")


def test_beeai_a2a_agent_answers_an_input_request(beeai_client: PeerClient,
                                                  ours: InterlinguaProcess) -> None:
    """Two calls on one ``A2AAgent``: our agent asks for input, and the next call goes
    to the same task (its id and context id kept), which completes with both texts."""
    turns = _beeai_turns(beeai_client, ours.url, "book a trip", "Lisbon")
    assert [(t["text"], t["state"]) for t in turns] == [
        ("Where to?", "input-required"), ("book a trip -> Lisbon", "completed")]
    task = _our_task_with(ours.url, "book a trip")
    assert {t["task_id"] for t in turns} == {task.id}
    assert task.status.state is TaskState.COMPLETED
    assert [get_text(m) for m in task.history] == ["book a trip", "Where to?", "Lisbon"]


def test_beeai_a2a_agent_keeps_the_context(beeai_client: PeerClient,
                                           ours: InterlinguaProcess) -> None:
    """After a completed task the next call starts a new task in the same context,
    naming the first in ``referenceTaskIds``."""
    turns = _beeai_turns(beeai_client, ours.url, "echo first turn", "echo second turn")
    assert [t["text"] for t in turns] == ["echo first turn", "echo second turn"]
    first, second = (_our_task_with(ours.url, t) for t in ("echo first turn",
                                                           "echo second turn"))
    assert second.id != first.id and second.context_id == first.context_id
    assert second.history[0].reference_task_ids == [first.id]


def test_beeai_a2a_agent_reads_a_message_reply(beeai_client: PeerClient,
                                               ours: InterlinguaProcess) -> None:
    [turn] = _beeai_turns(beeai_client, ours.url, "reply hi")
    assert (turn["text"], turn["task_id"], turn["state"]) == ("re: reply hi", None, None)


# ---------------------------------------------------- interlingua -> BeeAI's A2AServer


def test_client_send_to_beeai(beeai_agent: _Served) -> None:
    """Its card names v0.3 and the server's one binding: the client speaks it (gRPC at
    the card's bare ``host:port``)."""
    async def work(client: Client) -> tuple[Any, Any]:
        return await client.send("hello"), client.endpoint

    task, endpoint = asyncio.run(_with(beeai_agent.url, work))
    assert (endpoint.binding, endpoint.dialect) == (beeai_agent.binding, "0.3")
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert _answer(task) == "echo: hello" and task.artifacts == []
    assert [get_text(m) for m in task.history] == ["hello"]


def test_client_stream_from_beeai(beeai_agent: _Served) -> None:
    """Its stream is three status updates, with no task event before them."""
    items = _stream(beeai_agent.url, "hello")
    assert [type(i) for i in items] == [StatusUpdate] * 3
    assert [i.status.state for i in items] == [TaskState.SUBMITTED, TaskState.WORKING,
                                               TaskState.COMPLETED]
    assert len({i.task_id for i in items}) == 1
    assert items[-1].status.message is not None
    assert get_text(items[-1].status.message) == "echo: hello"


def test_client_get_from_beeai(beeai_agent: _Served) -> None:
    async def work(client: Client) -> tuple[Task, Task]:
        sent = await client.send("hello")
        assert isinstance(sent, Task)
        return sent, await client.get_task(sent.id, history_length=5)

    sent, task = asyncio.run(_with(beeai_agent.url, work))
    assert task.id == sent.id and task.status.state is TaskState.COMPLETED
    assert _answer(task) == "echo: hello"


def test_client_multi_turn_with_beeai(beeai_agent: _Served) -> None:
    """A second message in the first one's context: BeeAI's agent runs it with the
    context's memory, so the stub model sees both turns."""
    async def work(client: Client) -> tuple[Task, Task]:
        first = await client.send("hello")
        assert isinstance(first, Task)
        second = await client.send("again", context_id=first.context_id)
        assert isinstance(second, Task)
        return first, second

    first, second = asyncio.run(_with(beeai_agent.url, work))
    assert second.id != first.id and second.context_id == first.context_id
    assert _answer(second) == "echo: hello | again"


def test_cancel_on_beeai_aborts_every_later_task() -> None:
    """Peer bug: BeeAI's server refuses to cancel a working task (``TaskNotCancelable``,
    "current state: working": its executor never says ``canceled``), and the abort it
    did signal is its server's one abort signal, shared by every task, so the tasks that
    follow fail at once ("Action has been aborted"). v1.0 §3.1.5: cancel "attempts to
    cancel the specified task", one task. a2a-sdk 1.3.0's client sees the same."""
    async def work(client: Client) -> list[Task]:
        slow = await client.send("slow to cancel", blocking=False)
        assert isinstance(slow, Task)
        await asyncio.sleep(1)
        with pytest.raises(TaskNotCancelable, match=r"current state: TaskState\.working"):
            await client.cancel(slow.id)
        assert (await client.get_task(slow.id)).status.state is TaskState.WORKING
        later = [await client.send(text) for text in ("hello", "hello again")]
        assert all(isinstance(t, Task) for t in later)
        return later

    # two fresh agents, one for each client, both started now (their imports overlap)
    ours_to, sdk_to = _beeai_process(tag="-ours"), _beeai_process(tag="-sdk")
    try:
        with running(ours_to) as agent:
            later = asyncio.run(_with(agent.url, work))
        assert [t.status.state for t in later] == [TaskState.FAILED] * 2
        assert [_answer(t) for t in later] == ["Action has been aborted"] * 2
        # a2a-sdk 1.3.0's client (its v0.3 transport: the card is v0.3)
        with running(sdk_to) as agent:
            driver = Driver("sdk-1.3.0-to-beeai", [_python(SDK),
                                                   str(PEERS_DIR / "py_client_v1.py"),
                                                   agent.url, "--dialect", "0.3"])
            try:
                driver.wait_ready()
                slow = driver.call("send", text="slow to cancel", returnImmediately=True)
                time.sleep(1)
                refused = driver.call("cancel", taskId=slow.result["id"])
                later_sdk = driver.call("send", text="hello")
            finally:
                driver.close()
    finally:
        ours_to.stop()
        sdk_to.stop()
    assert not refused.ok and refused.error is not None
    assert refused.error["type"] == "TaskNotCancelableError"
    assert later_sdk.result["state"] == "TASK_STATE_FAILED"
    assert later_sdk.result["statusMessage"] == [{"text": "Action has been aborted"}]


def test_peer_programs_exist() -> None:
    for name in ("beeai_agent.py", "beeai_client.py"):
        assert (PEERS_DIR / name).is_file(), name
