"""interlingua's client over gRPC against the official Python SDK's gRPC agents:
``a2a-sdk`` 1.3.0 (``lf.a2a.v1.A2AService``, v1.0) and ``a2a-sdk`` 0.3.26
(``a2a.v1.A2AService``, v0.3).

Each agent (``peers/py_grpc_agent_*.py``) is the agent of ``peers/py_agent_*.py``
(it behaves as ``agent.py`` describes) served by the SDK's ``GrpcHandler`` in its
own process on loopback, with its card over HTTP naming the gRPC address. The
client finds gRPC in the card (``binding="grpc"``) or is given the address.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import pytest

from interlingua import Client
from interlingua.client import StreamEvent
from interlingua.core.errors import TaskNotCancelable, TaskNotFound
from interlingua.core.model import ArtifactUpdate, Message, Task, TaskState, TextPart
from interlingua.core.parts import get_text
from tests.e2e.procs import free_port

from .harness import PEERS_DIR, AgentProcess, ensure_env

pytestmark = pytest.mark.interop(envs=["py-a2a-1.3.0", "py-a2a-0.3.26"])

# (peer environment, script, the dialect it speaks)
PEERS = [("py-a2a-1.3.0", "py_grpc_agent_v1.py", "1.0"),
         ("py-a2a-0.3.26", "py_grpc_agent_v03.py", "0.3")]


class GrpcAgent:
    def __init__(self, env: str, script: str, dialect: str) -> None:
        self.dialect = dialect
        self.grpc_port = free_port()
        port = free_port()
        python = str(ensure_env(env) / "bin" / "python")
        self.process = AgentProcess(f"{env}-grpc", [python, str(PEERS_DIR / script), "--port",
                                                     str(port), "--grpc-port",
                                                     str(self.grpc_port)], port)
        self.url = self.process.url
        self.address = f"grpc://127.0.0.1:{self.grpc_port}"


@pytest.fixture(scope="module", params=PEERS, ids=[p[0] for p in PEERS])
def agent(request: pytest.FixtureRequest) -> Iterator[GrpcAgent]:
    found = GrpcAgent(*request.param)
    try:
        found.process.wait_ready()
        yield found
    finally:
        found.process.stop()


@pytest.fixture(params=["card", "address"])
async def client(request: pytest.FixtureRequest, agent: GrpcAgent) -> AsyncIterator[Client]:
    if request.param == "card":
        made = Client(agent.url, binding="grpc", timeout=20)
    else:
        made = Client(agent.address, dialect=agent.dialect, timeout=20)
    async with made:
        yield made
        if made.endpoint is not None:  # every call went over gRPC, in the agent's dialect
            assert (made.endpoint.binding, made.endpoint.dialect) == ("GRPC", agent.dialect)


async def collect(events: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    async with asyncio.timeout(30):
        return [e async for e in events]


async def test_send(client: Client) -> None:
    task = await client.send("echo over grpc")
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    [artifact] = task.artifacts
    assert artifact.name == "echo"
    assert [p.text for p in artifact.parts if isinstance(p, TextPart)] == ["echo over grpc"]


async def test_a_bare_reply(client: Client) -> None:
    answer = await client.send("reply hi")
    assert isinstance(answer, Message) and get_text(answer) == "re: reply hi"


async def test_stream(client: Client) -> None:
    events = await collect(client.stream("stream 4"))
    assert isinstance(events[0].item, Task)
    chunks = [get_text(e.item.artifact) for e in events if isinstance(e.item, ArtifactUpdate)]
    assert "".join(chunks) == "chunk 0;chunk 1;chunk 2;chunk 3;"
    assert events[-1].state is TaskState.COMPLETED
    # an SDK agent numbers no events: there is nothing to resume from but the task
    assert {e.seq for e in events} == {None}


async def test_get(client: Client) -> None:
    task = await client.send("echo kept")
    assert isinstance(task, Task)
    got = await client.get_task(task.id)
    assert got.id == task.id and got.status.state is TaskState.COMPLETED
    assert get_text(got.artifacts[0]) == "echo kept"
    with pytest.raises(TaskNotFound):
        await client.get_task("no-such-task")


async def test_cancel(client: Client) -> None:
    task = await client.send("slow", blocking=False)
    assert isinstance(task, Task)
    canceled = await client.cancel(task.id)
    assert canceled.status.state is TaskState.CANCELED
    with pytest.raises(TaskNotCancelable):
        await client.cancel(task.id)


async def test_input_required_then_the_answer(client: Client) -> None:
    asked = await client.send("book a table")
    assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
    done = await client.send("Lisbon", task_id=asked.id, context_id=asked.context_id)
    assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
    assert get_text(done.artifacts[-1]) == "book a table -> Lisbon"


async def test_list(client: Client, agent: GrpcAgent) -> None:
    if agent.dialect != "1.0":
        pytest.skip("A2A 0.3 has no task listing")
    task = await client.send("echo listed")
    assert isinstance(task, Task)
    page = await client.list_tasks(context_id=task.context_id)
    assert [t.id for t in page.tasks] == [task.id]
