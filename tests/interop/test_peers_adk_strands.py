"""interlingua against google-adk 2.13 and strands-agents 1.62, both ways: ADK's
``to_a2a`` server and ``RemoteA2aAgent`` client, strands' ``A2AServer`` and
``A2AAgent`` client, each agent's model a stub (no model service).

Each peer runs in its own venv (``scripts/interop-setup``, ``.interop/py-*``) as a
real process on loopback. ``WILD`` in ``matrix.py`` holds these cells too; a peer
limit is shown by the same failure against a2a-sdk 1.3.0's agent.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from interlingua.core.model import ArtifactUpdate, StatusUpdate, Task, TaskState
from interlingua.core.parts import get_text

from .harness import PEERS_DIR, AgentProcess, InterlinguaProcess, PeerClient
from .test_peers_in_the_wild import (
    _agent,
    _client,
    _our_task_with,
    _send,
    _send_echoed,
    _stream,
)

ADK, STRANDS, SDK = "py-google-adk-2.13.0", "py-strands-agents-1.62.0", "py-a2a-1.3.0"
pytestmark = pytest.mark.interop(envs=[ADK, STRANDS, SDK])


@pytest.fixture(scope="module")
def adk_agent() -> Iterator[AgentProcess]:
    yield from _agent(ADK, "adk_agent.py")


@pytest.fixture(scope="module")
def strands_agent() -> Iterator[AgentProcess]:
    yield from _agent(STRANDS, "strands_agent.py")


@pytest.fixture(scope="module")
def adk_client() -> Iterator[PeerClient]:
    yield from _client(ADK, "adk_client.py")


@pytest.fixture(scope="module")
def strands_client() -> Iterator[PeerClient]:
    yield from _client(STRANDS, "strands_client.py")


def _adk_events(client: PeerClient, url: str, *texts: str) -> list[dict[str, str | None]]:
    """One run of ADK's client (a runner and session of its own): the events it gave."""
    events: list[dict[str, str | None]] = client.run(url, *texts)
    return events


# ------------------------------------------------------------------------ google-adk


def test_adk_remote_agent_send(adk_client: PeerClient, ours: InterlinguaProcess) -> None:
    """ADK's ``RemoteA2aAgent`` reads our card (v1.0 JSON-RPC on the card's origin),
    sends the message and reads the answer; our task completes."""
    events = _adk_events(adk_client, ours.url, "echo from adk")
    assert all(e["error"] is None for e in events), events
    assert "echo from adk" in [e["text"] for e in events]
    task = _our_task_with(ours.url, "echo from adk")
    assert task.status.state is TaskState.COMPLETED
    assert get_text(task.artifacts[0]) == "echo from adk"


def test_adk_remote_agent_answers_an_input_request(adk_client: PeerClient,
                                                   ours: InterlinguaProcess) -> None:
    """Two turns in one ADK session: our agent asks for input, ADK's next turn goes to
    the same task (its id and context id kept), which completes with both texts."""
    events = _adk_events(adk_client, ours.url, "book a trip", "Lisbon")
    assert all(e["error"] is None for e in events), events
    said = [e["text"] for e in events if e["text"]]
    assert said == ["Where to?", "book a trip -> Lisbon"]
    task = _our_task_with(ours.url, "book a trip")
    assert {e["task_id"] for e in events} == {task.id}
    assert task.status.state is TaskState.COMPLETED
    assert [get_text(m) for m in task.history] == ["book a trip", "Where to?", "Lisbon"]


def test_adk_refuses_a_card_with_grpc(adk_client: PeerClient, ours_with_grpc: InterlinguaProcess,
                                      sdk_agent_with_grpc: AgentProcess) -> None:
    """ADK accepts only ``https://`` interface URLs, or ``http://`` on loopback, on the
    card's origin: a gRPC interface (``dns:///host:port``, a port of its own) is
    refused, and with it the whole card. The A2A specification sets no such rule
    (v1.0 §4.4.6 ``AgentInterface.url``: an absolute URL). a2a-sdk 1.3.0's card with
    gRPC (``127.0.0.1:PORT``) is refused the same way; docs/grpc.md says to serve
    without gRPC for ADK."""
    events = _adk_events(adk_client, ours_with_grpc.url, "echo refused")
    assert "must use https, or http on a loopback host" in (events[-1]["error"] or "")
    # a2a-sdk 1.3.0's agent with its gRPC port on the card
    ref = _adk_events(adk_client, sdk_agent_with_grpc.url, "echo refused")
    assert "must use https, or http on a loopback host" in (ref[-1]["error"] or "")


@pytest.mark.parametrize("dialect", [None, "0.3"], ids=["card-v1.0", "v0.3"])
def test_client_send_to_adk(adk_agent: AgentProcess, dialect: str | None) -> None:
    _send_echoed(adk_agent.url, dialect=dialect)


@pytest.mark.parametrize("dialect", [None, "0.3"], ids=["card-v1.0", "v0.3"])
def test_client_stream_from_adk(adk_agent: AgentProcess, dialect: str | None) -> None:
    items = _stream(adk_agent.url, "hello", dialect=dialect)
    assert isinstance(items[0], Task)
    artifacts = [i for i in items if isinstance(i, ArtifactUpdate)]
    assert [get_text(a.artifact) for a in artifacts] == ["echo: hello"]
    assert isinstance(items[-1], StatusUpdate)
    assert items[-1].status.state is TaskState.COMPLETED


# ------------------------------------------------------------------- strands-agents


def test_strands_a2a_agent_send(strands_client: PeerClient, ours: InterlinguaProcess,
                                ours_with_grpc: InterlinguaProcess) -> None:
    """strands' ``A2AAgent`` (a2a-sdk 0.3.26 inside) reads our card, with gRPC on or
    off, and gets the answer."""
    for server, text in ((ours, "echo from strands"), (ours_with_grpc, "echo strands grpc")):
        out = strands_client.run(server.url, text)
        assert out == [{"text": text, "stop_reason": "end_turn"}]
        assert _our_task_with(server.url, text).status.state is TaskState.COMPLETED


def test_strands_a2a_agent_starts_a_new_task_for_an_answer(strands_client: PeerClient,
                                                           ours: InterlinguaProcess,
                                                           sdk_agent: AgentProcess) -> None:
    """Peer limit: ``A2AAgent`` keeps no task or context between calls, so the answer to
    an input request goes out without the task's id and starts a new task (v1.0
    §3.4.3: "the client continues the interaction by sending a new message with the
    same ``taskId`` and ``contextId``"); the asking task stays ``input-required``.
    a2a-sdk 1.3.0's agent sees the same."""
    def turns(url: str) -> list[dict[str, str]]:
        # one agent object for both calls (one run)
        out: list[dict[str, str]] = strands_client.run(url, "book a trip", "Lisbon")
        return out

    expected = [{"text": "Where to?", "stop_reason": "interrupt"},
                {"text": "Lisbon", "stop_reason": "end_turn"}]
    assert turns(ours.url) == expected
    asking = _our_task_with(ours.url, "book a trip")
    assert asking.status.state is TaskState.INPUT_REQUIRED
    assert [get_text(m) for m in asking.history] == ["book a trip", "Where to?"]
    answer = _our_task_with(ours.url, "Lisbon")
    assert answer.id != asking.id and answer.context_id != asking.context_id
    assert turns(sdk_agent.url) == expected


def test_client_send_to_strands(strands_agent: AgentProcess) -> None:
    """Its card names v0.3.0 JSON-RPC: the client speaks v0.3 from the card."""
    task = _send(strands_agent.url, "hello")
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    # strands ends the model's text with a newline of its own
    assert get_text(task.artifacts[0]).rstrip("\n") == "echo: hello"


def test_client_stream_from_strands(strands_agent: AgentProcess) -> None:
    items = _stream(strands_agent.url, "hello")
    assert [type(i) for i in items] == [Task, StatusUpdate, ArtifactUpdate, StatusUpdate]
    assert get_text(items[2].artifact).rstrip("\n") == "echo: hello"
    assert items[-1].status.state is TaskState.COMPLETED


def test_client_get_from_strands(strands_agent: AgentProcess) -> None:
    import asyncio

    from interlingua import Client

    async def work() -> tuple[Task, Task]:
        async with Client(strands_agent.url) as client:
            sent = await client.send("hello")
            assert isinstance(sent, Task)
            return sent, await client.get_task(sent.id)

    sent, task = asyncio.run(work())
    assert task.id == sent.id and task.status.state is TaskState.COMPLETED


def test_peer_programs_exist() -> None:
    for name in ("adk_agent.py", "adk_client.py", "strands_agent.py", "strands_client.py"):
        assert (PEERS_DIR / name).is_file(), name
