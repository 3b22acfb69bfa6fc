"""The A2A-over-MQTT profile against its own SDK, the ``a2a-over-mqtt`` 0.1.0
package (in its venv, ``scripts/interop-setup py-a2a-over-mqtt-0.1.0``), on the
machine's Mosquitto, both ways: its requester to our agent, our client to its
responder. Each test has an org and unit of its own."""

from __future__ import annotations

import asyncio
import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from interlingua import Agent, Context, client_for
from interlingua.core.model import ArtifactUpdate, StatusUpdate, Task, TaskState
from interlingua.mesh.emqx.client import retained_card
from interlingua.mesh.emqx.topics import Space
from interlingua.mesh.topics import parse_mesh_url
from tests.interop.harness import ensure_env

from .helpers import BROKER, need_broker, on_emqx, org_unit

ENV = "py-a2a-over-mqtt-0.1.0"
PEER = Path(__file__).resolve().parent / "peers" / "a2a_over_mqtt_peer.py"

pytestmark = [pytest.mark.interop(envs=[ENV]), pytest.mark.timeout(60)]


@pytest.fixture
def python() -> str:
    need_broker()
    return str(ensure_env(ENV) / "bin" / "python")


async def echo(ctx: Context) -> None:
    if ctx.text == "book":
        await ctx.require_input("which day?")
        return
    if ctx.text.startswith("day "):
        await ctx.complete(f"booked for {ctx.text[4:]}")
        return
    await ctx.artifact(ctx.text)
    await ctx.complete()


ECHO = Agent("Echo", "Echoes.", echo, streaming=True)


def their_request(text: str, task_id: str, context_id: str, *,
                  method: str = "SendMessage") -> str:
    """What the package's ``A2ARequest.to_json`` writes (checked below), with
    ``method`` in place of ``SendMessage``."""
    return json.dumps({"jsonrpc": "2.0", "id": "req-" + uuid.uuid4().hex[:6], "method": method,
                       "params": {"message": {"messageId": uuid.uuid4().hex,
                                              "role": "ROLE_USER", "parts": [{"text": text}],
                                              "taskId": task_id, "contextId": context_id}}})


async def requester(python: str, org: str, unit: str, agent: str, payload: str) -> list[Any]:
    """The package's Requester.stream, in its venv: the (kind, content) it yields."""
    proc = await asyncio.create_subprocess_exec(
        python, str(PEER), "request", "1883", org, unit, agent, payload,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0, err.decode()
    return [tuple(json.loads(line)) for line in out.decode().splitlines()]


def test_the_package_writes_send_message_as_we_read_it(python: str) -> None:
    code = ("from a2a_over_mqtt import A2ARequest; import json;"
            "print(A2ARequest(text='hi', request_id='r1', task_id='t1', context_id='c1')"
            ".to_json())")
    doc = json.loads(subprocess.run([python, "-c", code], capture_output=True, text=True,
                                    check=True).stdout)
    ours = json.loads(their_request("hi", "t1", "c1"))
    assert doc["method"] == ours["method"] == "SendMessage"
    message = doc["params"]["message"]
    assert {k: v for k, v in message.items() if k != "messageId"} == \
        {k: v for k, v in ours["params"]["message"].items() if k != "messageId"}


async def test_their_requester_to_our_agent(python: str) -> None:
    org, unit = org_unit()
    async with on_emqx(ECHO, org, unit):
        sent = await requester(python, org, unit, "Echo",
                               their_request("hello", str(uuid.uuid4()), str(uuid.uuid4())))
        streamed = await requester(python, org, unit, "Echo", their_request(
            "streamed", str(uuid.uuid4()), str(uuid.uuid4()), method="SendStreamingMessage"))
    # SendMessage: one answer, the Task, which it reads as the end with its artifact's text
    assert sent == [("terminal", "hello")]
    # a stream: the task (submitted), the artifact, the final status
    assert streamed == [("submitted", streamed[0][1]), ("artifact", "streamed"),
                        ("terminal", "")]


async def test_their_requester_goes_on_with_an_input_required_task(python: str) -> None:
    org, unit = org_unit()
    task_id, context_id = str(uuid.uuid4()), str(uuid.uuid4())
    async with on_emqx(ECHO, org, unit):
        first = await requester(python, org, unit, "Echo",
                                their_request("book", task_id, context_id))
        second = await requester(python, org, unit, "Echo",
                                 their_request("day friday", task_id, context_id))
    assert first == [("input_required", "which day?")]
    assert second == [("terminal", "booked for friday")]


@pytest.fixture
def responder(python: str) -> Iterator[tuple[str, str, subprocess.Popen[bytes]]]:
    org, unit = org_unit()
    proc = subprocess.Popen([python, str(PEER), "respond", "1883", org, unit, "peer"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        yield org, unit, proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


async def _online(org: str, unit: str, proc: subprocess.Popen[bytes]) -> None:
    for _ in range(100):
        assert proc.poll() is None, "the package's responder ended"
        try:
            _, status = await retained_card(parse_mesh_url(BROKER), Space(org, unit), "peer",
                                            wait=0.2)
        except Exception:
            status = None
        if status == "online":
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the package's responder never said it was online")


async def test_our_client_to_their_responder(
        responder: tuple[str, str, subprocess.Popen[bytes]]) -> None:
    org, unit, proc = responder
    await _online(org, unit, proc)
    async with client_for(f"{BROKER}/{org}/{unit}/peer", timeout=10) as client:
        card = await client.get_card()
        assert card.name == "Peer Echo" and client.presence == "online"
        task = await client.send("hello")
        events = [e.item async for e in client.stream("streamed")]
        failed = await client.send("boom")
    # its answer is a stream of events: folded into the Task they make
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert [a.parts[0].text for a in task.artifacts] == ["echo: hello"]  # type: ignore[union-attr]
    assert [m.parts[0].text for m in task.history] == ["thinking"]  # type: ignore[union-attr]
    states = [e.status.state for e in events if isinstance(e, StatusUpdate)]
    assert states == [TaskState.SUBMITTED, TaskState.WORKING, TaskState.COMPLETED]
    assert [e.artifact.parts[0].text for e in events  # type: ignore[union-attr]
            if isinstance(e, ArtifactUpdate)] == ["echo: streamed"]
    assert isinstance(failed, Task) and failed.status.state is TaskState.FAILED


async def test_our_client_cancels_on_their_responder_and_sees_its_last_will(
        responder: tuple[str, str, subprocess.Popen[bytes]]) -> None:
    org, unit, proc = responder
    await _online(org, unit, proc)
    async with client_for(f"{BROKER}/{org}/{unit}/peer", timeout=10) as client:
        task = await client.send("slow", blocking=False)
        assert isinstance(task, Task) and task.status.state is TaskState.SUBMITTED
        canceled = await client.cancel(task.id)
    assert canceled.id == task.id and canceled.status.state is TaskState.CANCELED
    proc.kill()  # no DISCONNECT: the broker publishes its will
    proc.wait(10)
    for _ in range(50):
        _, status = await retained_card(parse_mesh_url(BROKER), Space(org, unit), "peer")
        if status == "offline":
            break
        await asyncio.sleep(0.1)
    assert status == "offline"


async def test_the_gateway_serves_their_responder_over_http(
        responder: tuple[str, str, subprocess.Popen[bytes]]) -> None:
    from interlingua.mesh.emqx.link import EmqxLink
    from interlingua.mesh.gateway import Gateway
    from tests.live import live_server

    org, unit, proc = responder
    await _online(org, unit, proc)
    url = parse_mesh_url(BROKER)
    app = Gateway(url, None, link=EmqxLink(url, org, unit, "gw"), warmup=0)
    with live_server(app) as base:
        for _ in range(50):
            async with client_for(base + "/agents/peer/", timeout=10) as client:
                try:
                    card = await client.get_card()
                    break
                except Exception:
                    await asyncio.sleep(0.1)
        async with client_for(base + "/agents/peer/", timeout=10) as client:
            task = await client.send("hello")
            events = [e.item async for e in client.stream("streamed")]
    assert card.name == "Peer Echo"
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert [a.parts[0].text for a in task.artifacts] == ["echo: hello"]  # type: ignore[union-attr]
    assert any(isinstance(e, ArtifactUpdate) for e in events)
    assert isinstance(events[-1], StatusUpdate)
    assert events[-1].status.state is TaskState.COMPLETED
