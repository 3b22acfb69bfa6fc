"""interlingua against Microsoft Agent Framework's A2A package
(agent-framework-a2a 1.0.0b261022, agent-framework-core 1.23.0), both ways: its
``A2AAgent`` client (sessions, background runs with polling) and an agent hosted by
its ``A2AExecutor``, the agent's chat client a stub (no model service).

Each side runs in the package's own venv (``scripts/interop-setup``,
``.interop/py-agent-framework-a2a-1.0.0b261022``) as a real process on loopback.
``WILD`` in ``matrix.py`` holds these cells; a peer limit is shown by the same
behaviour against a2a-sdk 1.3.0's agent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from interlingua import Client
from interlingua.core.errors import TaskNotCancelable
from interlingua.core.model import ArtifactUpdate, StatusUpdate, Task, TaskState
from interlingua.core.parts import get_text
from tests.e2e.procs import free_port

from .harness import PEERS_DIR, AgentProcess, InterlinguaProcess, PeerClient, running
from .test_peers_in_the_wild import (
    _client,
    _our_task_with,
    _python,
    _send,
    _stream,
    _with,
)

MAF, SDK = "py-agent-framework-a2a-1.0.0b261022", "py-a2a-1.3.0"
pytestmark = pytest.mark.interop(envs=[MAF, SDK])


def _maf_agent(*extra: str) -> Iterator[AgentProcess]:
    port = free_port()
    argv = [_python(MAF), str(PEERS_DIR / "maf_agent.py"), "--port", str(port), *extra]
    with running(AgentProcess("maf_agent.py" + "".join(extra), argv, port)) as agent:
        yield agent


@pytest.fixture(scope="module")
def maf_agent() -> Iterator[AgentProcess]:
    """``A2AExecutor(agent, stream=True)``: the answer as an artifact."""
    yield from _maf_agent()


@pytest.fixture(scope="module")
def maf_agent_not_streaming() -> Iterator[AgentProcess]:
    """``A2AExecutor(agent)``, its default: the answer as a ``working`` status message."""
    yield from _maf_agent("--no-stream")


@pytest.fixture(scope="module")
def maf_client() -> Iterator[PeerClient]:
    yield from _client(MAF, "maf_client.py")


def _turns(client: PeerClient, target: str, mode: str, *texts: str,
           binding: str = "JSONRPC") -> list[dict[str, Any]]:
    """One run of ``maf_client.py`` (an agent and session of its own): each text's turn."""
    turns: list[dict[str, Any]] = client.run("--binding", binding, target, mode, *texts)
    return turns


# ------------------------------------------------- A2AAgent -> an interlingua agent


def test_maf_a2a_agent_run(maf_client: PeerClient, ours: InterlinguaProcess,
                           ours_with_grpc: InterlinguaProcess) -> None:
    """``A2AAgent`` made from our card (gRPC off and on) or from the URL alone sends
    over v1.0 JSON-RPC and reads the answer; our task completes."""
    for target, text in ((ours.url, "echo from maf"), (ours_with_grpc.url, "echo maf grpc"),
                         ("url:" + ours.url, "echo maf by url")):
        [turn] = _turns(maf_client, target, "run", text)
        assert turn["text"] == text and turn["task_state"] == "TASK_STATE_COMPLETED", turn
        url = target.removeprefix("url:")
        task = _our_task_with(url, text)
        assert task.status.state is TaskState.COMPLETED
        assert (turn["task_id"], turn["context_id"]) == (task.id, task.context_id)


def test_maf_a2a_agent_stream(maf_client: PeerClient, ours: InterlinguaProcess) -> None:
    [turn] = _turns(maf_client, ours.url, "stream", "stream 3")
    # the artifact's three appended chunks, then the final status message
    assert turn["text"] == "chunk 0;chunk 1;chunk 2; done", turn
    assert turn["task_state"] == "TASK_STATE_COMPLETED"
    assert _our_task_with(ours.url, "stream 3").status.state is TaskState.COMPLETED


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
@pytest.mark.parametrize("mode", ["run", "stream"])
def test_maf_a2a_agent_answers_an_input_request(maf_client: PeerClient, ours: InterlinguaProcess,
                                                mode: str, binding: str) -> None:
    """Two runs in one session: our agent asks for input, the session keeps the task
    and context, and the next run's message continues that task, which completes.
    Over JSON-RPC (its default) and over HTTP+JSON, each picked from our card."""
    first = f"book a trip ({mode}, {binding})"
    asked, answered = _turns(maf_client, ours.url, mode, first, "Lisbon", binding=binding)
    assert asked["input_requested"] and asked["text"] == "Where to?", asked
    assert asked["task_state"] == "TASK_STATE_INPUT_REQUIRED"
    assert answered["text"] == f"{first} -> Lisbon", answered
    task = _our_task_with(ours.url, first)
    assert asked["task_id"] == answered["task_id"] == task.id
    assert task.status.state is TaskState.COMPLETED
    assert [get_text(m) for m in task.history] == [first, "Where to?", "Lisbon"]


def test_maf_a2a_agent_background_run_polls(maf_client: PeerClient,
                                            ours: InterlinguaProcess) -> None:
    """``run(background=True)`` sends ``returnImmediately``: our agent answers with the
    task before it ran, and ``poll_task`` (``GetTask``) follows it to its end."""
    [turn] = _turns(maf_client, ours.url, "background", "stream 2")
    # the session keeps the state of the first answer; the polls read the rest
    assert turn["task_state"] == "TASK_STATE_SUBMITTED" and turn["polls"] >= 1, turn
    # poll_task reads a finished task's artifacts (not its status message)
    assert turn["text"] == "chunk 0;chunk 1;"
    task = _our_task_with(ours.url, "stream 2")
    assert task.id == turn["task_id"] and task.status.state is TaskState.COMPLETED


def test_maf_a2a_agent_cannot_pick_grpc(maf_client: PeerClient, ours_with_grpc: InterlinguaProcess,
                                        sdk_agent_with_grpc: AgentProcess) -> None:
    """Peer limit: ``A2AAgent(supported_protocol_bindings=["GRPC"])`` fails before any
    request: it gives a2a-sdk's ``ClientConfig`` no ``grpc_channel_factory``. The same
    with a2a-sdk 1.3.0's agent and its gRPC card (no specification clause involved:
    the package's own setup; a ready a2a-sdk ``Client`` can be given as ``client=``)."""
    def refused(url: str) -> str:
        reply = maf_client.call("--binding", "GRPC", url, "run", "echo over grpc")
        assert not reply.ok
        return str(reply.error)

    assert "grpc_channel_factory is required" in refused(ours_with_grpc.url)
    assert "grpc_channel_factory is required" in refused(sdk_agent_with_grpc.url)


def test_maf_background_answer_starts_a_new_task(maf_client: PeerClient, ours: InterlinguaProcess,
                                                 sdk_agent: AgentProcess) -> None:
    """Peer limit: ``poll_task`` does not write what it read into the session, which
    still says ``submitted``; so the answer to an input request seen by polling goes
    out as a new task of the same context (``referenceTaskIds``), not to the asking
    task (v1.0 §3.4.3: "the client continues the interaction by sending a new message
    with the same ``taskId`` and ``contextId``"). a2a-sdk 1.3.0's agent sees the same."""
    def check(url: str, first: str) -> None:
        asked, answered = _turns(maf_client, url, "background", first, "Lisbon")
        assert asked["input_requested"] and asked["text"] == "Where to?", asked
        assert answered["task_id"] != asked["task_id"], answered
        assert answered["context_id"] == asked["context_id"]
        assert answered["text"] == "Lisbon"  # the echo of a first message

    check(ours.url, "book a trip (background)")
    asking = _our_task_with(ours.url, "book a trip (background)")
    assert asking.status.state is TaskState.INPUT_REQUIRED
    check(sdk_agent.url, "book a trip (background)")


# ------------------------------------------ interlingua's client -> A2AExecutor agent


def test_client_send_to_maf(maf_agent: AgentProcess,
                            maf_agent_not_streaming: AgentProcess) -> None:
    """Its card names v1.0 JSON-RPC. Streaming executor: the answer is an artifact;
    the default one: a ``working`` status message, kept in the task's history."""
    task = _send(maf_agent.url, "hello")
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert get_text(task.artifacts[0]) == "echo: hello"
    task = _send(maf_agent_not_streaming.url, "hello")
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert not task.artifacts
    assert [get_text(m) for m in task.history] == ["hello", "echo: hello"]


def test_client_stream_from_maf(maf_agent: AgentProcess) -> None:
    items = _stream(maf_agent.url, "hello")
    assert [type(i) for i in items] == [Task, StatusUpdate, StatusUpdate, ArtifactUpdate,
                                        StatusUpdate]
    assert get_text(items[3].artifact) == "echo: hello"
    assert items[-1].status.state is TaskState.COMPLETED


def test_client_get_and_cancel_on_maf(maf_agent: AgentProcess) -> None:
    """A task read back by id; a slow one (the stub waits 30 s on ``slow``) canceled:
    the answer and a later get say ``canceled``, a second cancel is refused."""
    async def work(client: Client) -> tuple[Task, Task, Task, Task]:
        sent = await client.send("hello")
        assert isinstance(sent, Task)
        slow = await client.send("slow to cancel", blocking=False)
        assert isinstance(slow, Task)
        canceled = await client.cancel(slow.id)
        with pytest.raises(TaskNotCancelable):
            await client.cancel(slow.id)
        return sent, await client.get_task(sent.id), canceled, await client.get_task(slow.id)

    sent, got, canceled, later = asyncio.run(_with(maf_agent.url, work))
    assert got.id == sent.id and got.status.state is TaskState.COMPLETED
    assert get_text(got.artifacts[0]) == "echo: hello"
    assert canceled.status.state is TaskState.CANCELED
    assert later.status.state is TaskState.CANCELED


def test_peer_programs_exist() -> None:
    for name in ("maf_agent.py", "maf_client.py"):
        assert (PEERS_DIR / name).is_file(), name
