"""The gateway never loses what the agent produced: its stored task (``tasks/get``, a
resubscribe from its log) and its callers' streams end with every artifact chunk the
agent's own task has, across a broker restart and across a gateway restart, and when its final answer is lost on the way. A Mosquitto of the test's own
(``PrivateBroker``)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from interlingua import Agent, Client, Context, client_for, create_app
from interlingua.core.model import ArtifactUpdate, Task, TaskState
from interlingua.mesh import MeshSettings, attach
from interlingua.mesh.gateway import Gateway
from interlingua.mesh.topics import parse_mesh_url
from tests.live import live_server

from .helpers import need_broker, stop_child
from .test_broker_restart import ROOT, SCRIPT, PrivateBroker

pytestmark = pytest.mark.timeout(60)

NS = "whole"


@contextlib.contextmanager
def broker_of(broker: PrivateBroker) -> Iterator[PrivateBroker]:
    need_broker()  # the machine's Mosquitto: the program is there
    broker.start()
    try:
        yield broker
    finally:
        broker.stop(signal.SIGKILL)


@contextlib.asynccontextmanager
async def gateway(url: str, **kwargs: Any) -> AsyncIterator[str]:
    app = Gateway(parse_mesh_url(url), NS, warmup=0, gateway_id="gw1", **kwargs)
    with live_server(app) as base:
        async with httpx.AsyncClient() as http:
            for _ in range(150):
                if (await http.get(base + "/agents")).json()["agents"]:
                    break
                await asyncio.sleep(0.1)
        yield base


def _text(parts: list[Any]) -> str:
    return "".join(p.text for p in parts)


def _folded(events: list[Any]) -> dict[str, str]:
    """The artifacts a caller's stream made, its updates applied in order."""
    out: dict[str, list[Any]] = {}
    for e in events:
        if isinstance(e.item, Task):
            out.update({a.artifact_id: list(a.parts) for a in e.item.artifacts})
        elif isinstance(e.item, ArtifactUpdate):
            a = e.item.artifact
            if e.item.append:
                out.setdefault(a.artifact_id, []).extend(a.parts)
            else:
                out[a.artifact_id] = list(a.parts)
    return {k: _text(v) for k, v in out.items()}


# -------------------------------------------------------------------- restarts


async def _chunks(ctx: Context) -> None:
    """Ten chunks of one artifact, one every 0.3 s."""
    for i in range(10):
        await ctx.artifact(f"chunk{i} ", artifact_id="out", append=i > 0,
                           last_chunk=i == 9)
        await asyncio.sleep(0.3)
    await ctx.complete("all written")


CHUNKS = Agent("Chunks", "Writes ten chunks, one every 0.3 s.", _chunks, streaming=True)
ALL = "".join(f"chunk{i} " for i in range(10))


@contextlib.asynccontextmanager
async def chunks_on(url: str) -> AsyncIterator[None]:
    app = create_app(CHUNKS, store="memory://", freeze_gc=False)
    attach(app, MeshSettings(url=url, namespace=NS, card_interval=0.3, session_expiry=60,
                             http=False, reconnect_delay=1.0))
    async with app.router.lifespan_context(app):
        yield


async def _until_chunks(client: Client, task_id: str, at_least: int) -> None:
    for _ in range(100):
        task = await client.get_task(task_id)
        if task.artifacts and len(task.artifacts[0].parts) >= at_least:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the gateway's task has not {at_least} chunks")


async def _ended(client: Client, task_id: str, within: float = 30) -> Task:
    deadline = time.monotonic() + within
    while True:
        task = await client.get_task(task_id)
        if task.status.state not in (TaskState.SUBMITTED, TaskState.WORKING) \
                or time.monotonic() > deadline:
            return task
        await asyncio.sleep(0.2)


async def test_a_broker_restart_mid_stream_leaves_the_gateways_task_whole() -> None:
    """The broker restarts after the second chunk: the chunks the agent wrote while it
    was down reach the gateway's task (and the stream of its caller) before the task
    completes there. The gateway's task ended completed with chunk0 chunk1 chunk5… (the
    snapshot of its subscription taken again was sent without its artifacts)."""
    with broker_of(PrivateBroker()) as broker:
        async with chunks_on(broker.url), gateway(broker.url) as base, \
                Client(base + "/agents/Chunks/", timeout=60) as client, \
                client_for(f"{broker.url}/{NS}/Chunks") as direct:
            stream = client.stream("go")
            first = await anext(stream)
            task_id = first.task_id
            assert task_id is not None
            rest = asyncio.ensure_future(_all(stream))
            await _until_chunks(client, task_id, 2)
            broker.stop(signal.SIGKILL)
            await asyncio.sleep(1.2)  # chunks written meanwhile are lost on the way
            broker.start()
            events = [first, *await asyncio.wait_for(rest, 30)]
            task = await _ended(client, task_id)
            assert task.status.state is TaskState.COMPLETED, task.status
            assert _text(task.artifacts[0].parts) == ALL
            assert _folded(events) == {"out": ALL}
            theirs = await direct.get_task(task_id)
            assert _text(theirs.artifacts[0].parts) == ALL


async def _all(stream: AsyncIterator[Any]) -> list[Any]:
    return [e async for e in stream]


async def test_a_gateway_restart_mid_stream_leaves_its_task_whole(tmp_path: Path) -> None:
    """The gateway stops after the third chunk and starts again on its store while the
    agent writes on: the task it takes up ends with every chunk. It ended completed
    with chunk0…chunk2 (its rerun's answer, the agent's final Task of a streamed send,
    has no artifacts, and nothing read them from the agent)."""
    store = f"sqlite:///{tmp_path}/"
    with broker_of(PrivateBroker()) as broker:
        async with chunks_on(broker.url):
            async with gateway(broker.url, store=store) as base, \
                    Client(base + "/agents/Chunks/", timeout=60) as client:
                stream = client.stream("go")
                task_id = (await anext(stream)).task_id
                assert task_id is not None
                await _until_chunks(client, task_id, 3)
                await stream.aclose()
            await asyncio.sleep(1.0)  # the agent writes on meanwhile
            async with gateway(broker.url, store=store) as base, \
                    Client(base + "/agents/Chunks/", timeout=60) as client:
                task = await _ended(client, task_id)
                assert task.status.state is TaskState.COMPLETED, task.status
                assert _text(task.artifacts[0].parts) == ALL
                # a reader of its log from the start gets every chunk too
                replay = [e async for e in client.subscribe(task_id, last_event_id=0)]
                assert _folded(replay) == {"out": ALL}


# ------------------------------------------------------ a request lost with the broker


async def test_a_request_lost_with_the_broker_is_sent_again() -> None:
    """The agent is down (killed) when a send goes through the gateway; the broker, which
    held the request for the agent's session, restarts (keeping nothing); the agent
    comes back. The gateway, asking for the task again, hears the agent has none: it
    sends the request again, and the task completes. It failed ("The agent failed:
    TaskNotFound: Task not found")."""
    with broker_of(PrivateBroker()) as broker:
        def serve() -> subprocess.Popen[str]:
            proc = subprocess.Popen(
                [str(SCRIPT), "serve", "tests/mesh/slow_agent.py", "--store", "memory://",
                 "--json", "--log-level", "warning", "--mesh", broker.url, "--namespace", NS,
                 "--no-http", "--mesh-instance", "one", "--mesh-card-interval", "0.3",
                 "--mesh-session-expiry", "60"],
                cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            assert proc.stdout is not None and proc.stdout.readline()
            return proc

        agent = serve()
        try:
            async with gateway(broker.url) as base, \
                    Client(base + "/agents/Slow/", timeout=60) as client:
                agent.kill()
                agent.communicate()
                sent = await client.send("1", blocking=False)
                assert isinstance(sent, Task)
                await asyncio.sleep(1.0)
                broker.stop(signal.SIGKILL)
                await asyncio.sleep(0.5)
                broker.start()
                agent = serve()
                task = await _ended(client, sent.id, within=40)
                assert task.status.state is TaskState.COMPLETED, task.status
        finally:
            stop_child(agent)


# ------------------------------------------------------------ a final answer lost


async def test_a_turn_whose_final_answer_is_lost_ends_as_the_agents_task_did() -> None:
    """The agent's final answer to a turn never reaches the gateway (a broker whose
    queue for the gateway was full drops it): after ``quiet_after`` s without a word
    the gateway reads the agent's task, ended there, and ends the turn alike, with
    every chunk. The turn waited for ever."""
    with broker_of(PrivateBroker()) as broker:
        async with chunks_on(broker.url):
            app = Gateway(parse_mesh_url(broker.url), NS, warmup=0, gateway_id="gw1")
            link = app.link
            link.quiet_after = 1.0  # (30 s by default)
            real, lost = link.requester.next, []

            async def lossy(pending: Any, name: str) -> tuple[bool, bytes]:
                while True:
                    update, raw = await real(pending, name)
                    if update or lost:
                        return update, raw
                    lost.append(raw)  # the turn's final answer, dropped on the way

            link.requester.next = lossy  # type: ignore[method-assign]
            with live_server(app) as base:
                async with Client(base + "/agents/Chunks/", timeout=60) as client:
                    for _ in range(150):
                        try:
                            await client.card()
                            break
                        except Exception:
                            await asyncio.sleep(0.1)
                    sent = await client.send("go", blocking=False)
                    assert isinstance(sent, Task)
                    task = await _ended(client, sent.id, within=15)
                    assert lost, "no final answer was dropped"
                    assert task.status.state is TaskState.COMPLETED, task.status
                    assert _text(task.artifacts[0].parts) == ALL
