"""The gateway to an A2A-over-MQTT ``{org}/{unit}`` (``--mesh-profile emqx``):
agents registered by their retained cards, served over HTTP, through Mosquitto;
an agent that goes offline leaves the listing."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import msgspec
import pytest

from interlingua import Agent, Client, Context, client_for
from interlingua.core.calls import GetTask, SendMessage
from interlingua.core.dialects import get_codec
from interlingua.core.model import ArtifactUpdate, Task, TaskState
from interlingua.mesh.emqx.link import EmqxLink
from interlingua.mesh.emqx.wire import is_final
from interlingua.mesh.gateway import Gateway
from interlingua.mesh.topics import parse_mesh_url
from tests.live import live_server

from .helpers import (
    BROKER,
    EmqxPeer,
    decoded,
    held_agent,
    need_broker,
    on_emqx,
    org_unit,
    stray_updates,
)

pytestmark = pytest.mark.timeout(60)

CODEC = get_codec("1.0")


async def work(ctx: Context) -> None:
    if ctx.text == "book":
        await ctx.require_input("which day?")
        return
    if ctx.text == "slow":
        await ctx.update("working")
        await asyncio.sleep(30)
    await ctx.artifact(f"done: {ctx.text}")
    await ctx.complete()


WORKER = Agent("Worker", "Works.", work, streaming=True)


@contextlib.asynccontextmanager
async def gateway(org: str, unit: str) -> AsyncIterator[str]:
    url = parse_mesh_url(BROKER)
    app = Gateway(url, None, link=EmqxLink(url, org, unit, "gw1"), warmup=0)
    with live_server(app) as base:
        yield base


async def _listed(http: httpx.AsyncClient, base: str, want: bool) -> list[str]:
    for _ in range(100):
        names = [a["name"] for a in (await http.get(base + "/agents")).json()["agents"]]
        if bool(names) == want:
            return names
        await asyncio.sleep(0.1)
    return names


async def test_the_gateway_serves_the_registered_agents_over_http() -> None:
    need_broker()
    org, unit = org_unit()
    async with gateway(org, unit) as base, httpx.AsyncClient() as http:
        async with on_emqx(WORKER, org, unit, name="worker"):
            assert await _listed(http, base, True) == ["Worker"]
            rows = (await http.get(base + "/agents")).json()["agents"]
            assert rows[0]["url"].endswith("/agents/worker/")
            async with client_for(base + "/agents/worker/", timeout=10) as client:
                task = await client.send("hello")
                assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
                assert task.artifacts[0].parts[0].text == "done: hello"  # type: ignore[union-attr]
                events = [e.item async for e in client.stream("streamed")]
                assert any(isinstance(e, ArtifactUpdate) for e in events)
                asked = await client.send("book")
                assert asked.status.state is TaskState.INPUT_REQUIRED  # type: ignore[union-attr]
                # the next turn names the same task on the mesh, which goes on
                done = await client.send("friday", task_id=asked.id,  # type: ignore[union-attr]
                                         context_id=asked.context_id)  # type: ignore[union-attr]
                assert done.status.state is TaskState.COMPLETED  # type: ignore[union-attr]
                running = await client.send("slow", blocking=False)
                canceled = await client.cancel(running.id)  # type: ignore[union-attr]
                assert canceled.status.state is TaskState.CANCELED
            # and the task on the mesh (the same id) is canceled there too
            async with client_for(f"{BROKER}/{org}/{unit}/worker", timeout=10) as direct:
                for _ in range(50):
                    there = await direct.get_task(running.id)  # type: ignore[union-attr]
                    if there.status.state is TaskState.CANCELED:
                        break
                    await asyncio.sleep(0.1)
                assert there.status.state is TaskState.CANCELED
        # a clean stop says offline: the agent leaves the listing
        assert await _listed(http, base, False) == []


async def test_the_task_on_the_mesh_has_the_gateway_s_task_id() -> None:
    need_broker()
    org, unit = org_unit()
    async with gateway(org, unit) as base, httpx.AsyncClient() as http, \
            on_emqx(WORKER, org, unit, name="worker"):
        await _listed(http, base, True)
        async with client_for(base + "/agents/worker/", timeout=10) as client:
            task = await client.send("hello")
        async with client_for(f"{BROKER}/{org}/{unit}/worker", timeout=10) as direct:
            there = await direct.get_task(task.id)  # type: ignore[union-attr]
    assert there.id == task.id and there.status.state is TaskState.COMPLETED  # type: ignore[union-attr]


async def test_a_task_id_that_cannot_be_a_topic_level_is_refused_as_in_sams_layout() -> None:
    """The task id a v0.1 caller names is the task id on the mesh here too: one holding
    a wildcard is refused by the gateway (-32600), as in SAM's layout, no task made."""
    need_broker()
    org, unit = org_unit()
    async with gateway(org, unit) as base, httpx.AsyncClient(timeout=5) as http:
        async with on_emqx(WORKER, org, unit):
            assert await _listed(http, base, True) == ["Worker"]
            refused = (await http.post(base + "/agents/Worker/", json={
                "jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {
                    "id": "a+b", "message": {"role": "user",
                                             "parts": [{"type": "text", "text": "hi"}]}}})).json()
            assert refused["error"]["code"] == -32600, refused
            assert "'a+b' holds an MQTT wildcard" in refused["error"]["message"]


async def test_a_retained_card_that_cannot_be_read_as_a_card_is_not_listed(
        caplog: pytest.LogCaptureFixture) -> None:
    """A retained card that is JSON with a name but not a card (``capabilities`` a
    string): not listed, with a warning, as a card that is not JSON is; its URLs are
    404s, not 500s with an ``InvalidCard`` traceback."""
    need_broker()
    org, unit = org_unit()
    from interlingua.mesh.emqx.topics import Space

    from .helpers import EmqxPeer

    space = Space(org, unit)
    bad = msgspec.json.encode({"name": "Bad", "description": "d",
                               "url": f"{BROKER}/{org}/{unit}/bad", "capabilities": "oops"})
    async with EmqxPeer(org, unit) as peer:
        await peer.broker.publish(space.discovery("bad"), bad, {"a2a-status": "online"},
                                  retain=True)
        try:
            with caplog.at_level("WARNING"):
                async with gateway(org, unit) as base, httpx.AsyncClient(timeout=10) as http, \
                        on_emqx(WORKER, org, unit, name="worker"):
                    assert await _listed(http, base, True) == ["Worker"]
                    got = await http.get(base + "/agents/bad/.well-known/agent-card.json")
                    assert got.status_code == 404, got.text
        finally:
            await peer.broker.publish(space.discovery("bad"), b"", retain=True)
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("cannot be read" in w and "capabilities" in w for w in warned), warned
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


async def test_a_turn_whose_final_answer_is_lost_ends_as_the_agents_task_did() -> None:
    """The agent's final answer to a turn never reaches the gateway (a broker whose
    queue for the gateway was full drops it): after ``quiet_after`` s without a word
    the gateway reads the agent's task, ended there, and ends the turn alike, with
    its artifact, as it does in SAM's layout. The turn waited for ever."""
    need_broker()
    org, unit = org_unit()
    url = parse_mesh_url(BROKER)
    link = EmqxLink(url, org, unit, "gw1")
    link.quiet_after = 1.0  # (30 s by default)
    real, lost = link.requester.exchange, []

    async def lossy(agent: str, call: Any, **kwargs: Any) -> AsyncIterator[bytes]:
        async for raw in real(agent, call, **kwargs):
            if isinstance(call, SendMessage) and is_final(CODEC.decode_stream_item(raw)):
                lost.append(raw)  # the turn's final answer, dropped on the way
                continue
            yield raw

    link.requester.exchange = lossy  # type: ignore[method-assign,assignment]
    app = Gateway(url, None, link=link, warmup=0)
    with live_server(app) as base:
        async with httpx.AsyncClient() as http, on_emqx(WORKER, org, unit, name="worker"):
            await _listed(http, base, True)
            async with client_for(base + "/agents/worker/", timeout=30) as client:
                sent = await client.send("hello", blocking=False)
                assert isinstance(sent, Task)
                for _ in range(150):
                    task = await client.get_task(sent.id)
                    if task.status.state is TaskState.COMPLETED:
                        break
                    await asyncio.sleep(0.1)
    assert lost, "no final answer was dropped"
    assert task.status.state is TaskState.COMPLETED, task.status
    assert task.artifacts[0].parts[0].text == "done: hello"  # type: ignore[union-attr]


async def test_a_task_the_agent_does_not_answer_for_is_warned_of_with_the_wait(
        caplog: pytest.LogCaptureFixture) -> None:
    """A streamed turn ends and the gateway reads the agent's task for its artifacts;
    no answer comes (lost on the way): the warning says it waited for one, and how
    long. Its reason was empty ("could not be read from worker: ")."""
    need_broker()
    org, unit = org_unit()
    url = parse_mesh_url(BROKER)
    link = EmqxLink(url, org, unit, "gw1")
    link.reconcile_wait = 0.5  # (10 s by default)
    real = link.requester.exchange

    async def deaf(agent: str, call: Any, **kwargs: Any) -> AsyncIterator[bytes]:
        if isinstance(call, GetTask):
            await asyncio.Event().wait()  # its answer never comes
        async for raw in real(agent, call, **kwargs):
            yield raw

    link.requester.exchange = deaf  # type: ignore[method-assign,assignment]
    app = Gateway(url, None, link=link, warmup=0)
    with live_server(app) as base, caplog.at_level("WARNING", logger="interlingua.mesh"):
        async with httpx.AsyncClient() as http, on_emqx(WORKER, org, unit, name="worker"):
            await _listed(http, base, True)
            async with client_for(base + "/agents/worker/", timeout=30) as client:
                events = [e async for e in client.stream("hello")]
    assert events[-1].state is TaskState.COMPLETED
    warned = [r.getMessage() for r in caplog.records if "could not be read" in r.getMessage()]
    assert warned and all(w.endswith("from worker: no answer within 0.5 s") for w in warned), \
        warned


async def test_a_stray_message_on_the_reply_topic_leaves_the_task_going(
        caplog: pytest.LogCaptureFixture) -> None:
    """While a task works on the mesh, the gateway's reply topic gets, under the turn's
    Correlation Data (anyone who reads the request topic has it), what is no answer of
    the agent's (not JSON, the wrong shape, updates and a final task of another task):
    each is skipped with one warning, and the task ends as the agent ends it, with none
    of it. Before, the first malformed one failed the task, and another task's updates
    were written into it."""
    need_broker()
    org, unit = org_unit()
    release = asyncio.Event()
    async with gateway(org, unit) as base, httpx.AsyncClient() as http, \
            on_emqx(held_agent(release), org, unit), EmqxPeer(org, unit) as sniffer:
        await _listed(http, base, True)
        await sniffer.listen(sniffer.space.request("Held"))
        async with Client(base + "/agents/Held/", timeout=10) as client:
            stream = client.stream("go")
            task_id = (await anext(stream)).task_id
            request = await sniffer.next()
            strays = stray_updates(decoded(request)["id"], errors=False)
            with caplog.at_level("WARNING", logger="interlingua.mesh"):
                for payload in strays:
                    await sniffer.broker.publish(request.response_topic or "", payload,
                                                 correlation=request.correlation)
                await asyncio.sleep(1.0)  # heard by the gateway before the agent goes on
                release.set()
                rest = [e async for e in stream]
            task = await client.get_task(task_id or "")
    assert rest[-1].state is TaskState.COMPLETED
    assert "injected" not in msgspec.json.encode([e.item for e in rest]).decode()
    assert task.status.state is TaskState.COMPLETED
    assert [p.text for a in task.artifacts for p in a.parts] == ["real"]  # type: ignore[union-attr]
    assert "injected" not in msgspec.json.encode(task).decode()
    skipped = [r.getMessage() for r in caplog.records
               if r.levelname == "WARNING" and "skipped" in r.getMessage()]
    assert len(skipped) == len(strays), skipped
