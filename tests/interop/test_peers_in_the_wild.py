"""interlingua against A2A implementations beyond the official SDKs, both ways where
the peer has both: fasta2a 2.1.1 (with pydantic-ai, a stub ``FunctionModel``),
python-a2a 0.5.10 and langgraph-api 0.16.7 (agent only: it has no A2A client).

Each peer runs in its own venv (``scripts/interop-setup``, ``.interop/py-*``) as a
real process on loopback. A cell either passes or shows a peer bug, and a peer
bug is shown by the same failure against a2a-sdk 1.3.0 (its agent, or its client)
with the spec clause it breaks. ``WILD`` in ``matrix.py`` is the table these cells
fill in ``docs/interop.md``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from interlingua import Client
from interlingua.core.model import ArtifactUpdate, StatusUpdate, Task, TaskState
from interlingua.core.parts import get_text
from tests.e2e.procs import free_port

from .harness import (
    PEERS_DIR,
    AgentProcess,
    Driver,
    InterlinguaProcess,
    PeerClient,
    PeerError,
    _log_file,
    _stop,
    _tail,
    ensure_env,
    running,
)

FASTA2A, PYA2A, LANGGRAPH, SDK = ("py-fasta2a-2.1.1", "py-python-a2a-0.5.10",
                                  "py-langgraph-api-0.16.7", "py-a2a-1.3.0")
pytestmark = pytest.mark.interop(envs=[FASTA2A, PYA2A, LANGGRAPH, SDK])


def _python(env: str) -> str:
    return str(ensure_env(env) / "bin" / "python")


def _client(env: str, script: str) -> Iterator[PeerClient]:
    """A peer's client script (``peers/*_client.py``) in one process for a module's
    runs: each run as by hand, with client objects of its own. Tests name it first
    among their fixtures: its process starts before the agents' fixtures wait for
    theirs, so the imports overlap."""
    client = PeerClient(script, [_python(env), str(PEERS_DIR / script)])
    try:
        yield client
    finally:
        client.close()


def _agent(env: str, script: str) -> Iterator[AgentProcess]:
    port = free_port()
    with running(AgentProcess(script, [_python(env), str(PEERS_DIR / script), "--port",
                                       str(port)], port)) as agent:
        yield agent


@pytest.fixture(scope="module")
def ours() -> Iterator[InterlinguaProcess]:
    with running(InterlinguaProcess("tests/interop/agent.py:agent", free_port())) as proc:
        yield proc


@pytest.fixture(scope="module")
def fasta2a_client() -> Iterator[PeerClient]:
    yield from _client(FASTA2A, "fasta2a_client.py")


@pytest.fixture(scope="module")
def python_a2a_client() -> Iterator[PeerClient]:
    yield from _client(PYA2A, "python_a2a_client.py")


@pytest.fixture(scope="module")
def fasta2a_agent() -> Iterator[AgentProcess]:
    yield from _agent(FASTA2A, "fasta2a_agent.py")


@pytest.fixture(scope="module")
def python_a2a_agent() -> Iterator[AgentProcess]:
    yield from _agent(PYA2A, "python_a2a_agent.py")


class _LangGraph:
    """langgraph-api serving ``peers/langgraph_agent.py``, in a folder of its own (it
    keeps its in-memory runtime's files in the working directory)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.dir = tempfile.TemporaryDirectory(prefix="langgraph-")
        self.log = _log_file("agent-langgraph")
        with self.log.open("w") as out:
            self.proc = subprocess.Popen(
                [_python(LANGGRAPH), str(PEERS_DIR / "langgraph_agent.py"), "--port",
                 str(self.port)], cwd=self.dir.name, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT,
                env={"PATH": "/usr/bin:/bin", "PYTHONUNBUFFERED": "1", "HOME": self.dir.name,
                     "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGSMITH_TRACING": "false"})
        self.url = ""

    def wait_ready(self, timeout: float = 90) -> None:
        base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise PeerError(f"langgraph-api exited ({self.proc.returncode})\n"
                                f"{_tail(self.log)}")
            try:
                found = httpx.post(base + "/assistants/search", json={}, timeout=2).json()
                if found:
                    # one agent per assistant, at /a2a/{assistant_id}
                    self.url = f"{base}/a2a/{found[0]['assistant_id']}"
                    return
            except (httpx.HTTPError, ValueError):
                pass
            time.sleep(0.2)
        raise PeerError(f"langgraph-api did not start in {timeout} s\n{_tail(self.log)}")

    def stop(self) -> None:
        _stop(self.proc)
        self.dir.cleanup()


@pytest.fixture(scope="module")
def langgraph_agent() -> Iterator[_LangGraph]:
    with running(_LangGraph()) as agent:
        yield agent


async def _with(url: str, work: Any, **client_options: Any) -> Any:
    async with Client(url, **client_options) as client:
        return await work(client)


def _send(url: str, text: str, **options: Any) -> Any:
    return asyncio.run(_with(url, lambda c: c.send(text), **options))


def _send_echoed(url: str, **options: Any) -> None:
    """``hello`` sent to ``url`` ends in a completed task whose artifact is its echo."""
    _check_echoed(_send(url, "hello", **options))


def _check_echoed(task: Any) -> None:
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert get_text(task.artifacts[0]) == "echo: hello"


def _stream(url: str, text: str, **options: Any) -> list[Any]:
    async def work(client: Client) -> list[Any]:
        return [ev.item async for ev in client.stream(text)]

    items: list[Any] = asyncio.run(_with(url, work, **options))
    return items


def _our_task_with(url: str, text: str) -> Task:
    """The task of our agent whose first message reads ``text`` (v1.0 ListTasks)."""
    async def work(client: Client) -> list[Task]:
        return (await client.list_tasks(history_length=5, include_artifacts=True)).tasks

    for task in asyncio.run(_with(url, work)):
        if task.history and get_text(task.history[0]) == text:
            return task
    raise AssertionError(f"no task for {text!r}")


# ------------------------------------------------------------------------ fasta2a


def test_fasta2a_client_send(fasta2a_client: PeerClient, ours: InterlinguaProcess,
                             sdk_agent: AgentProcess) -> None:
    """fasta2a's client sends ``message/send`` with kind-less parts: read as v0.3, the
    task runs and completes. Its client then reads our v0.3 answer as ``{}``: it
    expects v1.0's ``{"task": …}`` under a v0.3 method name (the v0.3.0 schema's
    ``SendMessageSuccessResponse.result`` is a bare ``Task`` or ``Message``). a2a-sdk 1.3.0's agent gets ``{}`` too."""
    [out] = fasta2a_client.run(ours.url, "send", "echo wild send")
    task = _our_task_with(ours.url, "echo wild send")
    assert task.status.state is TaskState.COMPLETED
    assert get_text(task.artifacts[0]) == "echo wild send"
    assert out["result"] == {}  # the peer's reading
    [ref] = fasta2a_client.run(sdk_agent.url, "send", "echo x")
    assert ref["result"] == {}


def test_fasta2a_client_stream(fasta2a_client: PeerClient, ours: InterlinguaProcess,
                               sdk_agent: AgentProcess) -> None:
    lines = fasta2a_client.run(ours.url, "stream", "stream 2")
    # task, working, two chunks, done: every event arrived, each read by the peer as {}
    assert len(lines) == 5
    assert all(line["result"] == {} for line in lines)
    ref = fasta2a_client.run(sdk_agent.url, "stream", "stream 2")
    assert ref and all(line["result"] == {} for line in ref)


@pytest.mark.parametrize("dialect", [None, "0.3"], ids=["card-v1.0", "v0.3"])
def test_client_send_to_fasta2a(fasta2a_agent: AgentProcess, dialect: str | None) -> None:
    """fasta2a answers ``submitted`` at once (it never blocks; in v0.3 as
    ``{"task": …}`` without ``kind``): the blocking send follows the task to its end,
    by subscribing where its card (which says it streams) was read, else by polling."""
    methods: list[str] = []

    async def note(request: httpx.Request) -> None:
        if request.method == "POST":
            methods.append(json.loads(request.content)["method"])

    async def work() -> None:
        async with httpx.AsyncClient(event_hooks={"request": [note]}, timeout=10) as http, \
                Client(fasta2a_agent.url, dialect=dialect, httpx_client=http) as client:
            _check_echoed(await client.send("hello"))

    asyncio.run(work())
    if dialect is None:
        assert methods == ["SendMessage", "SubscribeToTask", "GetTask"]
    else:
        assert methods[0] == "message/send" and set(methods[1:]) == {"tasks/get"}


@pytest.mark.parametrize("dialect", [None, "0.3"], ids=["card-v1.0", "v0.3"])
def test_client_stream_from_fasta2a(fasta2a_agent: AgentProcess, dialect: str | None) -> None:
    items = _stream(fasta2a_agent.url, "hello", dialect=dialect)
    assert [type(i) for i in items] == [Task, StatusUpdate, ArtifactUpdate, StatusUpdate]
    assert get_text(items[2].artifact) == "echo: hello"
    assert items[-1].status.state is TaskState.COMPLETED


def test_client_get_from_fasta2a(fasta2a_agent: AgentProcess) -> None:
    async def work(client: Client) -> tuple[Task, Task]:
        sent = await client.send("hello")
        assert isinstance(sent, Task)
        return sent, await client.get_task(sent.id)

    sent, task = asyncio.run(_with(fasta2a_agent.url, work, dialect="0.3"))
    assert task.id == sent.id and task.status.state is TaskState.COMPLETED
    assert get_text(task.artifacts[0]) == "echo: hello"


def test_cancel_on_fasta2a_never_returns(fasta2a_agent: AgentProcess) -> None:
    """Peer bug: fasta2a's ``tasks/cancel`` / ``CancelTask`` of a working task never
    answers (v1.0 specification §3.1.5: the answer is the task, or an error): our
    client gives up at its timeout. a2a-sdk 1.3.0's client waits the same way."""
    from interlingua.client import AgentTimeout

    async def work(client: Client) -> None:
        sent = await client.send("slow to cancel", blocking=False)
        assert isinstance(sent, Task)
        await client.cancel(sent.id)

    # an agent of its own for the SDK's client (the hung cancel holds up the first
    # one's later calls), started now so that it comes up while ours waits
    port = free_port()
    other = AgentProcess("fasta2a_agent.py-for-the-sdk",
                         [_python(FASTA2A), str(PEERS_DIR / "fasta2a_agent.py"), "--port",
                          str(port)], port)
    try:
        with pytest.raises(AgentTimeout):
            asyncio.run(_with(fasta2a_agent.url, work, timeout=3))
        other.wait_ready()
        _cancel_by_the_sdk_never_returns(other.url)
    finally:
        other.stop()


def _cancel_by_the_sdk_never_returns(url: str) -> None:
    """a2a-sdk 1.3.0's client cancels a working task of fasta2a's agent at ``url``: no
    answer comes."""
    driver = Driver("sdk-1.3.0-to-fasta2a", [_python(SDK), str(PEERS_DIR / "py_client_v1.py"), url])
    try:
        driver.wait_ready()
        # the task made without the SDK: its client cannot read fasta2a's answer to a
        # send (a timestamp without an offset, which ProtoJSON requires)
        made = httpx.post(url, timeout=10, json={
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
                "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "slow for the SDK"}]}}})
        task_id = made.json()["result"]["task"]["id"]
        with pytest.raises(PeerError, match="no answer in"):
            driver.call("cancel", timeout=3, taskId=task_id)
    finally:
        driver.close()


# --------------------------------------------------------------------- python-a2a


def test_python_a2a_client_ask(python_a2a_client: PeerClient, ours: InterlinguaProcess) -> None:
    """python-a2a's client posts v0.1 ``tasks/send`` to ``{url}/tasks/send`` with its
    message's part under ``content``: answered in v0.1, its client reads the text.
    (a2a-sdk 1.3.0's agent serves no such path: the client ends with an error.)"""
    assert python_a2a_client.run(ours.url, "ask", "echo from python-a2a") == [
        {"text": "echo from python-a2a"}]


def test_client_send_to_python_a2a(python_a2a_agent: AgentProcess) -> None:
    """Its JSON-RPC endpoint for ``tasks/send`` is ``/tasks/send``."""
    _send_echoed(python_a2a_agent.url + "/tasks/send", dialect="0.1")


def test_client_stream_from_python_a2a(python_a2a_agent: AgentProcess) -> None:
    """``tasks/sendSubscribe`` at ``/tasks/stream``: bare task objects as events."""
    items = _stream(python_a2a_agent.url + "/tasks/stream", "hello", dialect="0.1")
    assert [type(i) for i in items] == [Task, Task]
    assert items[-1].status.state is TaskState.COMPLETED
    assert get_text(items[-1].artifacts[0]) == "echo: hello"


def test_python_a2a_card_names_no_json_rpc_endpoint(python_a2a_agent: AgentProcess) -> None:
    """Peer bug: its card says JSON-RPC v0.3.0 at ``/``, where a JSON-RPC request is
    answered HTTP 500 with a python-a2a message (v0.3.0 schema, ``AgentCard.url``:
    it MUST support the transport ``preferredTransport`` names).
    a2a-sdk 1.3.0's client fails the same way."""
    from interlingua.client import BadResponse

    with pytest.raises(BadResponse, match="HTTP 500"):
        _send(python_a2a_agent.url, "hello")
    driver = Driver("sdk-1.3.0-to-python-a2a",
                    [_python(SDK), str(PEERS_DIR / "py_client_v1.py"), python_a2a_agent.url,
                     "--dialect", "0.3"])
    try:
        driver.wait_ready()
        reply = driver.call("send", text="hello")
    finally:
        driver.close()
    assert not reply.ok


# ------------------------------------------------------------------ langgraph-api


@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
def test_client_send_to_langgraph(langgraph_agent: _LangGraph, dialect: str) -> None:
    _send_echoed(langgraph_agent.url, dialect=dialect)


@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
def test_client_stream_from_langgraph(langgraph_agent: _LangGraph, dialect: str) -> None:
    """Its v1.0 stream sends ``{"task": …}`` first, then bare v0.3-shaped
    ``kind: "status-update"`` events: read all the same."""
    items = _stream(langgraph_agent.url, "hello", dialect=dialect)
    assert [type(i) for i in items] == [Task, StatusUpdate, ArtifactUpdate, StatusUpdate]
    assert get_text(items[2].artifact) == "echo: hello"
    assert items[-1].status.state is TaskState.COMPLETED


def test_peer_programs_exist() -> None:
    # the programs docs/interop.md names
    for name in ("fasta2a_agent.py", "fasta2a_client.py", "python_a2a_agent.py",
                 "python_a2a_client.py", "langgraph_agent.py", "record.py"):
        assert (PEERS_DIR / name).is_file(), name
    assert Path(__file__).is_file()
