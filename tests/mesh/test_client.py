"""``client_for("mqtt://…/NS/agent")``: the HTTP client's API over the mesh, and the
CLI's client commands with such URLs (real Mosquitto)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from interlingua import Agent, Context, client_for
from interlingua.client import ArtifactAssembler, make_message
from interlingua.client.errors import AgentTimeout, AgentUnreachable
from interlingua.core.errors import InvalidParams, TaskNotFound
from interlingua.core.model import ArtifactUpdate, Message, StatusUpdate, Task, TaskState
from interlingua.mesh.client import MeshClient, task_level

from .helpers import (
    BROKER,
    Peer,
    held_agent,
    in_layout,
    need_broker,
    on_mesh,
    org_unit,
    stray_updates,
)

pytestmark = pytest.mark.timeout(30)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).with_name("interlingua")


async def work(ctx: Context) -> None:
    text = ctx.text
    if text == "slow":
        await ctx.update("thinking")
        await asyncio.sleep(30)
    if text == "hi":
        await ctx.reply("hello there")
        return
    if text == "ask":
        await ctx.require_input("which one?")
        return
    await ctx.update("writing")
    aid = None
    for i, chunk in enumerate(["one ", "two ", "three"]):
        aid = await ctx.artifact(chunk, artifact_id=aid, name="out.txt", append=i > 0,
                                 last_chunk=i == 2)
    await ctx.complete("done: " + text)


WORKER = Agent("Worker", "Writes things.", work, streaming=True)


async def test_send_get_and_errors_through_topics(ns: str) -> None:
    async with on_mesh(WORKER, ns), client_for(f"{BROKER}/{ns}/Worker") as client:
        assert isinstance(client, MeshClient)
        task = await client.send("report")
        assert isinstance(task, Task)
        assert task.status.state is TaskState.COMPLETED
        text = "".join(p.text for p in task.artifacts[0].parts)  # type: ignore[union-attr]
        assert text == "one two three"
        again = await client.get_task(task.id)
        assert again.id == task.id and again.status.state is TaskState.COMPLETED
        reply = await client.send("hi")
        assert isinstance(reply, Message)
        with pytest.raises(TaskNotFound):
            await client.get_task("no-such-task")


async def test_stream_yields_updates_and_artifacts(ns: str) -> None:
    async with on_mesh(WORKER, ns), client_for(f"{BROKER}/{ns}/Worker") as client:
        events = [e async for e in client.stream("story")]
    items = [e.item for e in events]
    assert isinstance(items[0], StatusUpdate)
    assert items[-1].status.state is TaskState.COMPLETED  # type: ignore[union-attr]
    assembler = ArtifactAssembler()
    for e in events:
        assembler.feed(e)
    assert assembler.text("out.txt") == "one two three"
    assert sum(isinstance(i, ArtifactUpdate) for i in items) == 3


@pytest.mark.parametrize("layout", ["sam", "emqx"])
async def test_a_session_continues_the_task_that_asked(layout: str) -> None:
    # (the mesh client had no session(); a session's stream learned no task from a
    # mesh stream, which opens with a status update)
    need_broker()
    async with in_layout(WORKER, layout, BROKER, *org_unit()) as url, \
            client_for(url) as client:
        chat = client.session()
        asked = [e async for e in chat.stream("ask")]
        assert asked[-1].state is TaskState.INPUT_REQUIRED
        assert chat.waiting and chat.task is not None
        assert chat.task.id == asked[-1].task_id and chat.context_id
        answered = [e async for e in chat.stream("this one")]
        assert answered[-1].task_id == asked[-1].task_id
        assert answered[-1].state is TaskState.COMPLETED
        chat = client.session()
        first = await chat.send("ask")
        second = await chat.send("that one")
        assert isinstance(first, Task) and isinstance(second, Task)
        assert second.id == first.id and second.status.state is TaskState.COMPLETED


@pytest.mark.parametrize("layout", ["sam", "emqx"])
async def test_a_message_naming_a_waiting_task_continues_it(layout: str) -> None:
    """A ready-made ``Message`` with a ``taskId`` (what ``interlingua send --task-id``
    sends) continues that task, by ``send`` and by ``stream``, as over HTTP. The
    profile's client gave such a message a fresh task id: a new task ran, and the
    one waiting for input stayed so."""
    need_broker()
    async with in_layout(WORKER, layout, BROKER, *org_unit()) as url, \
            client_for(url, timeout=10) as client:
        for how in ("send", "stream"):
            asked = await client.send("ask")
            assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
            answer = make_message("that one", task_id=asked.id, context_id=asked.context_id)
            if how == "send":
                done = await client.send(answer)
                assert isinstance(done, Task) and done.id == asked.id, how
            else:
                events = [e async for e in client.stream(answer)]
                assert {e.task_id for e in events} == {asked.id}, how
            after = await client.get_task(asked.id)
            assert after.status.state is TaskState.COMPLETED, how
        asked = await client.send("ask")
        assert isinstance(asked, Task)
        sent = await asyncio.to_thread(_cli, "send", url, "that one", "--task-id", asked.id,
                                       "--json")
        assert sent.returncode == 0, sent.stderr
        printed = json.loads(sent.stdout)  # the agent's answer: v1.0's wraps the task
        assert printed.get("task", printed)["id"] == asked.id
        after = await client.get_task(asked.id)
        assert after.status.state is TaskState.COMPLETED


async def test_cancel_and_subscribe(ns: str) -> None:
    async with on_mesh(WORKER, ns), client_for(f"{BROKER}/{ns}/Worker") as client:
        stream = client.stream("slow")
        first = await anext(stream)
        task_id = first.task_id
        assert task_id is not None
        watched = client.subscribe(task_id)
        now = await anext(watched)
        assert now.state in (TaskState.SUBMITTED, TaskState.WORKING)
        canceled = await client.cancel(task_id)
        assert canceled.status.state is TaskState.CANCELED
        rest = [e async for e in stream]
        assert rest[-1].state is TaskState.CANCELED
        seen = [e async for e in watched]
        assert seen[-1].state is TaskState.CANCELED


async def test_the_card_comes_from_the_discovery_topic(ns: str) -> None:
    async with on_mesh(WORKER, ns), client_for(f"{BROKER}/{ns}/Worker") as client:
        card = await client.get_card()
    assert card.name == "Worker"
    assert card.capabilities.streaming


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.timeout(90)  # four CLI processes, each loading the package
async def test_cli_client_commands_take_mesh_urls(ns: str) -> None:
    url = f"{BROKER}/{ns}/Worker"
    async with on_mesh(WORKER, ns):
        sent = await asyncio.to_thread(_cli, "send", url, "report", "--json")
        assert sent.returncode == 0, sent.stderr
        assert '"kind": "task"' in sent.stdout or '"kind":"task"' in sent.stdout
        streamed = await asyncio.to_thread(_cli, "stream", url, "story")
        assert streamed.returncode == 0, streamed.stderr
        assert "one two three" in streamed.stdout or "three" in streamed.stdout
        missing = await asyncio.to_thread(_cli, "get", url, "no-such-task")
        assert missing.returncode != 0
        assert "TaskNotFound" in missing.stderr
    bad = await asyncio.to_thread(_cli, "send", f"{BROKER}/{ns}", "x")
    assert bad.returncode == 2


@pytest.mark.parametrize("layout", ["sam", "emqx"])
@pytest.mark.parametrize("task_id", ["a/+", "a#", "x\x00y"])
async def test_a_task_id_that_cannot_be_a_topic_level_is_a_task_not_found(
        layout: str, task_id: str) -> None:
    """``get_task``, ``cancel`` (and in SAM's layout a follow-up and a subscription)
    naming a task id that holds an MQTT wildcard or a NUL: no such task, TaskNotFound
    at once, as over HTTP (where a message's ``taskId`` holding a NUL is invalid params). The SAM client named its reply topic by the raw id: the
    agent refused the wildcard (-32600), and a NUL made the broker drop the client's
    connection (a 10 s wait, then AgentUnreachable)."""
    need_broker()
    org, unit = org_unit()
    async with in_layout(WORKER, layout, BROKER, org, unit) as url, \
            client_for(url, timeout=5) as client:
        loop = asyncio.get_running_loop()
        began = loop.time()
        with pytest.raises(TaskNotFound):
            await client.get_task(task_id)
        with pytest.raises(TaskNotFound):
            await client.cancel(task_id)
        if layout == "sam":  # (the profile's requester names a new task by its id)
            with pytest.raises(InvalidParams if "\x00" in task_id else TaskNotFound):
                await client.send("more", task_id=task_id)
            with pytest.raises(TaskNotFound):
                _ = [e async for e in client.subscribe(task_id)]
        assert loop.time() - began < 3
        # and the connection is still good
        done = await client.send("report")
        assert done.status.state is TaskState.COMPLETED  # type: ignore[union-attr]


async def test_a_stray_message_on_the_status_topic_leaves_the_stream_going(
        ns: str, caplog: pytest.LogCaptureFixture) -> None:
    """While a streamed task works, its status topic gets what is no update of it (not
    JSON, the wrong shape, an error, updates of another task under its request id):
    each is skipped with one warning, and the stream goes on to the task's end with
    none of it. Before, the first malformed one ended the stream with an error, and
    another task's updates were yielded as this one's."""
    release = asyncio.Event()
    async with on_mesh(held_agent(release), ns), Peer(ns) as peer, \
            client_for(f"{BROKER}/{ns}/Held") as client:
        assert isinstance(client, MeshClient)
        stream = client.stream("go")
        first = await anext(stream)
        task_id = first.task_id
        assert task_id is not None
        topic = peer.topics.client_status(client.client_id, task_level(task_id))
        with caplog.at_level("WARNING", logger="interlingua.mesh"):
            for payload in stray_updates(task_id):
                await peer.broker.publish(topic, payload)
            await asyncio.sleep(1.0)  # heard by the client before the agent goes on
            release.set()
            rest = [e async for e in stream]
    assert rest[-1].state is TaskState.COMPLETED
    assert {e.task_id for e in rest} == {task_id}
    assert not [e for e in rest if b"injected" in (e.raw or b"")]
    chunks = [e.item.artifact for e in rest if isinstance(e.item, ArtifactUpdate)]
    assert [p.text for a in chunks for p in a.parts] == ["real"]  # type: ignore[union-attr]
    skipped = [r.getMessage() for r in caplog.records
               if r.levelname == "WARNING" and "skipped" in r.getMessage()]
    assert len(skipped) == len(stray_updates(task_id)), skipped


@pytest.mark.parametrize("layout", ["sam", "emqx"])
async def test_get_card_waits_no_longer_than_the_timeout(layout: str) -> None:
    """No card of the agent on the mesh: ``get_card`` fails within the client's
    ``timeout``. SAM's layout waited at least 12 s, the A2A-over-MQTT one 3 s."""
    need_broker()
    org, unit = org_unit()
    url = f"{BROKER}/{org}/Nobody" if layout == "sam" else f"{BROKER}/{org}/{unit}/Nobody"
    async with client_for(url, timeout=0.5) as client:
        started = time.monotonic()
        with pytest.raises((AgentTimeout, AgentUnreachable)):
            await client.get_card()
        took = time.monotonic() - started
    assert took < 0.5 + 1.0, took
