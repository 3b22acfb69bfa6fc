"""interlingua against crewai 1.15.30 (its ``a2a`` extra), both ways: a CrewAI agent
that delegates its task to a remote A2A agent (``A2AClientConfig``), and a CrewAI
agent served over A2A (``A2AServerConfig``, its ``execute`` / ``cancel`` on a2a-sdk
0.3.26's server), each agent's model a stub (a ``BaseLLM`` of ours, no model service).

The peer runs in its own venv (``scripts/interop-setup py-crewai-1.15.30``) as a real
process on loopback, with CrewAI's telemetry off. ``WILD`` in ``matrix.py`` holds these
cells; a peer limit is shown by the same behaviour seen from a2a-sdk 1.3.0's client.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from interlingua import Client
from interlingua.core.errors import InternalError
from interlingua.core.model import Task, TaskState
from interlingua.core.parts import get_text

from .harness import (
    PEERS_DIR,
    AgentProcess,
    Driver,
    InterlinguaProcess,
    PeerClient,
    PeerError,
    state_name,
)
from .test_peers_in_the_wild import _agent, _client, _our_task_with, _python, _stream, _with

CREWAI, SDK = "py-crewai-1.15.30", "py-a2a-1.3.0"
# a CrewAI process takes 10-20 s to import on a busy machine
pytestmark = [pytest.mark.interop(envs=[CREWAI, SDK]), pytest.mark.timeout(180)]

#: how long the CrewAI agent's stub model takes over a task that starts with "slow"
#: (``crewai_agent.py``'s default)
SLOW = 3.0


@pytest.fixture(scope="module")
def crewai_agent() -> Iterator[AgentProcess]:
    yield from _agent(CREWAI, "crewai_agent.py")


@pytest.fixture(scope="module")
def crewai_client() -> Iterator[PeerClient]:
    yield from _client(CREWAI, "crewai_client.py")


def _delegate(client: PeerClient, url: str, *texts: str, polling: bool = False) -> str:
    """What a CrewAI crew's task ends with when its agent delegates ``texts`` to ``url``
    (a crew of its own in ``client``'s process)."""
    args = ["--polling"] if polling else []
    return str(client.run(*args, url, *texts, timeout=120)[-1]["result"])


# ------------------------------------------------------ a CrewAI agent -> our agent


@pytest.mark.parametrize("server", ["ours", "ours_with_grpc"])
def test_crewai_delegates_to_our_agent(crewai_client: PeerClient, server: str,
                                       request: pytest.FixtureRequest) -> None:
    """CrewAI's A2A client (a2a-sdk 0.3.26 inside) reads our card, with gRPC on or off,
    streams the message (``message/stream``, its default) and takes our task's answer
    as its own task's result."""
    url = request.getfixturevalue(server).url
    text = f"echo from crewai to {server}"
    assert _delegate(crewai_client, url, text) == text
    task = _our_task_with(url, text)
    assert task.status.state is TaskState.COMPLETED
    assert get_text(task.artifacts[0]) == text


def test_crewai_delegation_answers_an_input_request(crewai_client: PeerClient,
                                                    ours: InterlinguaProcess) -> None:
    """Our agent asks for input; CrewAI's model answers and its next turn goes to the
    same task (task and context ids kept), which completes with both texts."""
    assert _delegate(crewai_client, ours.url, "book a trip", "Lisbon") == "book a trip -> Lisbon"
    task = _our_task_with(ours.url, "book a trip")
    assert task.status.state is TaskState.COMPLETED
    assert [get_text(m) for m in task.history] == ["book a trip", "Where to?", "Lisbon"]
    with pytest.raises(AssertionError, match="no task"):
        _our_task_with(ours.url, "Lisbon")  # no task of its own for the answer


def test_crewai_polling_delegation(crewai_client: PeerClient, ours: InterlinguaProcess) -> None:
    """With ``PollingConfig`` CrewAI sends without blocking and polls ``tasks/get``:
    both turns reach the task, which completes. CrewAI's own reading of the result joins
    the last agent message of the task's history ("Where to?") with the artifact."""
    result = _delegate(crewai_client, ours.url, "book a journey", "Porto", polling=True)
    assert result == "Where to? book a journey -> Porto"
    task = _our_task_with(ours.url, "book a journey")
    assert task.status.state is TaskState.COMPLETED
    assert [get_text(m) for m in task.history] == ["book a journey", "Where to?", "Porto"]


# ------------------------------------------------------ our client -> a CrewAI agent


def test_client_send_to_crewai(crewai_agent: AgentProcess) -> None:
    """Its card names JSON-RPC v0.3.0 at ``/a2a``: the client speaks v0.3 there. The
    answer is the model's text as an artifact, and in the history as an agent message."""
    async def work(client: Client) -> tuple[Any, Any]:
        return await client.resolve(), await client.send("hello")

    endpoint, task = asyncio.run(_with(crewai_agent.url, work))
    assert (endpoint.dialect, endpoint.binding) == ("0.3", "JSONRPC")
    assert endpoint.url == crewai_agent.url + "/a2a"
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert get_text(task.artifacts[0]) == "echo: hello"
    assert [get_text(m) for m in task.history] == ["hello", "echo: hello"]


def test_client_stream_from_crewai(crewai_agent: AgentProcess) -> None:
    """CrewAI's ``execute`` publishes the task once, done: the stream is that one task."""
    items = _stream(crewai_agent.url, "hello")
    assert [type(i) for i in items] == [Task]
    assert items[0].status.state is TaskState.COMPLETED
    assert get_text(items[0].artifacts[0]) == "echo: hello"


def test_client_get_from_crewai(crewai_agent: AgentProcess) -> None:
    async def work(client: Client) -> tuple[Task, Task]:
        sent = await client.send("hello")
        assert isinstance(sent, Task)
        return sent, await client.get_task(sent.id)

    sent, task = asyncio.run(_with(crewai_agent.url, work))
    assert task.id == sent.id and task.status.state is TaskState.COMPLETED
    assert get_text(task.artifacts[0]) == "echo: hello"


@contextmanager
def _sdk_clients(url: str, count: int = 1) -> Iterator[list[Driver]]:
    """``count`` a2a-sdk 1.3.0 clients of ``url``, each in its own process, started at
    once (their imports overlap the test's other work: ``wait_ready`` before use)."""
    drivers = [Driver(f"sdk-1.3.0-to-crewai-{n}",
                      [_python(SDK), str(PEERS_DIR / "py_client_v1.py"), url, "--dialect", "0.3"])
               for n in range(count)]
    try:
        yield drivers
    finally:
        for driver in drivers:
            driver.close()


def test_crewai_answers_a_non_blocking_send_only_when_done(crewai_agent: AgentProcess) -> None:
    """Peer bug: CrewAI's ``execute`` publishes no task until its work is done, so a
    send with ``blocking: false`` is answered only then, completed, and the client has
    no task id to read or cancel while the task runs (v0.3.0 ``MessageSendConfiguration
    .blocking``: "if false, the message will be non-blocking and the task will be
    returned immediately"). a2a-sdk 1.3.0's client waits the same way."""
    async def work(client: Client) -> Any:
        return await client.send("slow to answer", blocking=False)

    with _sdk_clients(crewai_agent.url) as [driver]:
        began = time.monotonic()
        task = asyncio.run(_with(crewai_agent.url, work))
        assert time.monotonic() - began >= SLOW * 0.9
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        driver.wait_ready()
        began = time.monotonic()
        reply = driver.call("send", text="slow for the SDK", returnImmediately=True)
        waited = time.monotonic() - began
    assert waited >= SLOW * 0.9
    assert state_name(reply.value()["state"]) == "completed"


def test_crewai_agent_runs_one_task_at_a_time(crewai_agent: AgentProcess) -> None:
    """Peer limit: one CrewAI ``Agent`` serves one task at a time; a request that
    arrives while another runs fails with -32603 "Executor is already running". No
    clause of the specification asks for concurrent tasks; a2a-sdk 1.3.0's client gets
    the same error."""
    async def work(client: Client) -> Any:
        slow = asyncio.create_task(client.send("slow first"))
        await asyncio.sleep(1)
        try:
            with pytest.raises(InternalError, match="Executor is already running"):
                await client.send("second meanwhile")
        finally:
            await slow

    # two SDK clients (a driver runs one command at a time): the first one's send is
    # left running, the second sends meanwhile
    with _sdk_clients(crewai_agent.url, 2) as [first, second]:
        asyncio.run(_with(crewai_agent.url, work))
        first.wait_ready()
        second.wait_ready()
        with pytest.raises(PeerError, match="no answer in"):
            first.call("send", timeout=1, text="slow, the SDK's first")
        reply = second.call("send", text="the SDK's second meanwhile")
    assert not reply.ok and "Executor is already running" in str(reply.error)


def test_peer_programs_exist() -> None:
    for name in ("crewai_agent.py", "crewai_client.py"):
        assert (PEERS_DIR / name).is_file(), name
