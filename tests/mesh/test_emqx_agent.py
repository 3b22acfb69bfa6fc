"""An agent in the A2A-over-MQTT profile (``--mesh-profile emqx``), through the
machine's Mosquitto: its retained card and last will, answers on the Response
Topic with the Correlation Data, the requester's task ids, retries, continuation,
cancel, and the refusals the profile asks for."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from interlingua import Agent, Context
from interlingua.core.errors import quoted

from .helpers import BROKER, EmqxPeer, decoded, need_broker, on_emqx, org_unit

pytestmark = pytest.mark.timeout(40)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).with_name("interlingua")


@pytest.fixture
def space() -> tuple[str, str]:
    need_broker()
    return org_unit()


RUNS: list[str] = []


async def echo(ctx: Context) -> None:
    RUNS.append(ctx.task.id)
    await ctx.complete(ctx.text)


ECHO = Agent("Echo", "Echoes.", echo)


async def story(ctx: Context) -> None:
    await ctx.update("starting")
    aid = None
    for i, chunk in enumerate(["a", "b", "c"]):
        aid = await ctx.artifact(chunk, artifact_id=aid, append=i > 0, last_chunk=i == 2)
    await ctx.complete("done")


STORY = Agent("Story", "Streams a story.", story, streaming=True)


async def ask(ctx: Context) -> None:
    if ctx.text == "book":
        await ctx.require_input("which day?")
    else:
        await ctx.complete(f"booked for {ctx.text}")


ASK = Agent("Ask", "Asks back.", ask)


async def slow(ctx: Context) -> None:
    await ctx.update("working")
    await asyncio.sleep(30)
    await ctx.complete("late")


SLOW = Agent("Slow", "Takes its time.", slow)


def send(text: str, task_id: str | None, *, method: str = "SendMessage",
         context_id: str | None = None, message_id: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"messageId": message_id or uuid.uuid4().hex, "role": "ROLE_USER",
                               "parts": [{"text": text}]}
    if task_id is not None:
        message["taskId"] = task_id
    if context_id is not None:
        message["contextId"] = context_id
    return {"jsonrpc": "2.0", "id": "r-" + uuid.uuid4().hex[:6], "method": method,
            "params": {"message": message}}


async def test_the_card_is_retained_online_and_offline_after_a_clean_stop(
        space: tuple[str, str]) -> None:
    org, unit = space
    async with EmqxPeer(org, unit) as peer:
        async with on_emqx(ECHO, org, unit):
            await peer.listen(peer.space.discovery_filter())
            card = await peer.next()
        assert card.topic == f"$a2a/v1/discovery/{org}/{unit}/Echo"
        assert card.properties == {"a2a-status": "online", "a2a-status-source": "agent"}
        doc = decoded(card)
        assert doc["name"] == "Echo"
        assert {"url": f"{BROKER}/{org}/{unit}/Echo", "protocolBinding": "MQTTv5+JSONRPCv2",
                "protocolVersion": "1.0"} in doc["supportedInterfaces"]
        gone = await peer.next()  # the clean stop says so itself
    assert gone.topic == card.topic
    assert gone.properties == {"a2a-status": "offline", "a2a-status-source": "agent"}
    async with EmqxPeer(org, unit) as late:  # and it stays retained
        await late.listen(late.space.discovery_filter())
        kept = await late.next()
    assert kept.properties["a2a-status"] == "offline"
    assert decoded(kept)["name"] == "Echo"


def test_an_abrupt_disconnect_leaves_the_offline_card_of_the_last_will(
        space: tuple[str, str]) -> None:
    org, unit = space
    proc = subprocess.Popen(
        [str(SCRIPT), "serve", "examples/echo.py", "--store", "memory://", "--json",
         "--log-level", "warning", "--no-http", "--mesh", BROKER, "--mesh-profile", "emqx",
         "--org", org, "--unit", unit],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert proc.stdout is not None
        banner = json.loads(proc.stdout.readline() or "{}")
        assert banner["mesh_url"] == f"{BROKER}/{org}/{unit}/Echo"
        assert banner["request_topic"] == f"$a2a/v1/request/{org}/{unit}/Echo"

        async def retained() -> Any:
            async with EmqxPeer(org, unit) as peer:
                await peer.listen(peer.space.discovery(banner["mesh_url"].rsplit("/", 1)[1]))
                return await peer.next(5)

        assert asyncio.run(retained()).properties["a2a-status"] == "online"
        proc.kill()  # no DISCONNECT: the broker publishes the will
        proc.wait(10)

        async def offline() -> Any:
            for _ in range(50):
                msg = await retained()
                if msg.properties.get("a2a-status") == "offline":
                    return msg
                await asyncio.sleep(0.1)
            return msg

        msg = asyncio.run(offline())
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert msg.properties == {"a2a-status": "offline", "a2a-status-source": "lwt"}
    assert decoded(msg)["name"] == "Echo"


async def test_a_send_is_answered_on_the_response_topic_with_the_correlation_and_its_task_id(
        space: tuple[str, str]) -> None:
    org, unit = space
    task_id, context_id = str(uuid.uuid4()), str(uuid.uuid4())
    async with on_emqx(ECHO, org, unit), EmqxPeer(org, unit) as peer:
        await peer.listen(peer.reply_topic)
        request = send("hello", task_id, context_id=context_id)
        await peer.request("Echo", request, correlation=b"\x00c1")
        msg = await peer.next()
    assert msg.topic == peer.reply_topic and msg.correlation == b"\x00c1"
    got = decoded(msg)
    assert got["id"] == request["id"]
    task = got["result"]["task"]
    assert task["id"] == task_id and task["contextId"] == context_id  # the requester's ids
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["status"]["message"]["parts"] == [{"text": "hello"}]


async def test_a_stream_is_one_event_per_publish_ending_with_the_final_status(
        space: tuple[str, str]) -> None:
    org, unit = space
    task_id = str(uuid.uuid4())
    async with on_emqx(STORY, org, unit), EmqxPeer(org, unit) as peer:
        await peer.listen(peer.reply_topic)
        await peer.request("Story", send("go", task_id, method="SendStreamingMessage"),
                           correlation=b"s1")
        events = []
        while True:
            msg = await peer.next()
            assert msg.correlation == b"s1"
            events.append(decoded(msg)["result"])
            update = events[-1].get("statusUpdate")
            if update and update["status"]["state"] == "TASK_STATE_COMPLETED":
                break
        assert not await peer.quiet(0.3)  # nothing after the final status
    assert "task" in events[0] and events[0]["task"]["id"] == task_id
    chunks = [e["artifactUpdate"]["artifact"]["parts"][0]["text"] for e in events
              if "artifactUpdate" in e]
    assert chunks == ["a", "b", "c"]
    assert all((e.get("statusUpdate") or e.get("artifactUpdate") or {"taskId": task_id})
               ["taskId"] == task_id for e in events)


async def test_a_retry_with_the_same_task_id_gets_the_task_and_runs_nothing_again(
        space: tuple[str, str]) -> None:
    """The same message published again (the profile's retry: new Correlation Data, the
    same payload) gets the task, and nothing runs again; a new message (id) for the
    finished task is refused as over HTTP (-32004: a finished task takes no more)."""
    org, unit = space
    task_id, message_id = str(uuid.uuid4()), uuid.uuid4().hex
    async with on_emqx(ECHO, org, unit), EmqxPeer(org, unit) as peer:
        await peer.listen(peer.reply_topic)
        await peer.request("Echo", send("once", task_id, message_id=message_id),
                           correlation=b"a1")
        first = decoded(await peer.next())["result"]["task"]
        # the same message again: the retry of a lost answer
        await peer.request("Echo", send("once", task_id, message_id=message_id),
                           correlation=b"a2")
        again = await peer.next()
        await peer.request("Echo", send("once", task_id, message_id=message_id,
                                        method="SendStreamingMessage"), correlation=b"a3")
        streamed = [decoded(m)["result"] for m in await peer.quiet(0.5)]
        await peer.request("Echo", send("twice", task_id), correlation=b"a4")
        refused = decoded(await peer.next())
    assert again.correlation == b"a2"
    assert decoded(again)["result"]["task"]["id"] == task_id
    assert decoded(again)["result"]["task"]["status"] == first["status"]
    # the stream of a finished task, as over HTTP: the task, which says how it ended
    assert [s["task"]["id"] for s in streamed] == [task_id]
    assert streamed[0]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert refused["error"]["code"] == -32004, refused
    assert "finished task takes no more messages" in refused["error"]["message"]
    assert RUNS.count(task_id) == 1


async def test_an_input_required_task_goes_on_with_the_same_task_id(
        space: tuple[str, str]) -> None:
    org, unit = space
    task_id, context_id = str(uuid.uuid4()), str(uuid.uuid4())
    async with on_emqx(ASK, org, unit), EmqxPeer(org, unit) as peer:
        await peer.listen(peer.reply_topic)
        await peer.request("Ask", send("book", task_id, context_id=context_id),
                           correlation=b"t1")
        first = decoded(await peer.next())["result"]["task"]
        await peer.request("Ask", send("friday", task_id, context_id=str(uuid.uuid4())),
                           correlation=b"t2")
        mismatch = decoded(await peer.next())
        await peer.request("Ask", send("friday", task_id, context_id=context_id),
                           correlation=b"t3")
        second = decoded(await peer.next())["result"]["task"]
    assert first["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert mismatch["error"]["code"] == -32602 and "context" in mismatch["error"]["message"]
    assert second["id"] == task_id and second["status"]["state"] == "TASK_STATE_COMPLETED"
    assert second["status"]["message"]["parts"] == [{"text": "booked for friday"}]


async def test_cancel_task_on_the_request_topic_cancels(space: tuple[str, str]) -> None:
    org, unit = space
    task_id = str(uuid.uuid4())
    async with on_emqx(SLOW, org, unit), EmqxPeer(org, unit) as peer:
        await peer.listen(peer.reply_topic)
        await peer.request("Slow", send("go", task_id, method="SendStreamingMessage"),
                           correlation=b"run")
        while "statusUpdate" not in decoded(msg := await peer.next())["result"]:
            pass
        await peer.request("Slow", {"jsonrpc": "2.0", "id": "c1", "method": "CancelTask",
                                    "params": {"id": task_id}}, correlation=b"cancel")
        answers = {}
        while len(answers) < 2:
            msg = await peer.next()
            body = decoded(msg)["result"]
            state = (body.get("statusUpdate") or body)["status"]["state"]
            if state == "TASK_STATE_CANCELED":
                answers[msg.correlation] = body
    assert answers[b"cancel"]["id"] == task_id  # the Task, as CancelTask answers
    assert answers[b"run"]["statusUpdate"]["taskId"] == task_id  # the stream's end


@pytest.mark.parametrize(("props", "payload", "code", "words"), [
    ({}, send("x", "t-1"), -32005, "Correlation Data"),
    ({"correlation": b"c"}, send("x", None), -32005, "Task.id"),
    ({"correlation": b"c"}, {"jsonrpc": "2.0", "id": "s", "method": "tasks/send",
                             "params": {}}, -32601, "tasks/send"),
    # a caller's method is quoted and cut (before: echoed whole)
    ({"correlation": b"c"}, {"jsonrpc": "2.0", "id": "s", "method": "x" * 20000,
                             "params": {}}, -32601, f"Method not found: {quoted('x' * 20000)}"),
    ({"correlation": b"c"}, b"{not json", -32700, ""),
])
async def test_what_the_profile_refuses(space: tuple[str, str], props: dict[str, Any],
                                        payload: Any, code: int, words: str) -> None:
    org, unit = space
    async with on_emqx(ECHO, org, unit), EmqxPeer(org, unit) as peer:
        await peer.listen(peer.reply_topic)
        await peer.request("Echo", payload, **props)
        msg = await peer.next()
    error = decoded(msg)["error"]
    assert error["code"] == code and words in error["message"]
    assert len(error["message"]) < 200
    if code == -32005:
        assert error["data"] == {"a2a_error": "transport_protocol_error"}
    assert msg.correlation == props.get("correlation")


async def test_a_request_without_a_response_topic_is_dropped(space: tuple[str, str]) -> None:
    org, unit = space
    async with on_emqx(ECHO, org, unit) as agent, EmqxPeer(org, unit) as peer:
        await peer.listen(f"$a2a/v1/reply/{org}/{unit}/#")
        await peer.broker.publish(peer.space.request("Echo"), b'{"jsonrpc":"2.0"}',
                                  correlation=b"c")
        assert not await peer.quiet(0.5)
        await peer.request("Echo", send("after", str(uuid.uuid4())), correlation=b"d")
        assert decoded(await peer.next())["result"]["task"]  # still serving
    assert agent.handled == 1


async def test_a2a_authorization_is_the_authorization_header(space: tuple[str, str]) -> None:
    from interlingua import create_app
    from interlingua.mesh import MeshSettings, attach
    from interlingua.server.auth import AuthConfig, BasicAuth, hash_secret

    org, unit = space
    app = create_app(ECHO, store="memory://", freeze_gc=False, auth=AuthConfig(
        schemes={"basic": BasicAuth({"alice": hash_secret("pw")})}))
    attach(app, MeshSettings(url=BROKER, namespace="", profile="emqx", org=org, unit=unit,
                             http=False, session_expiry=30))
    async with app.router.lifespan_context(app), EmqxPeer(org, unit) as peer:
        await peer.listen(peer.reply_topic)
        await peer.request("Echo", send("x", str(uuid.uuid4())), correlation=b"no")
        refused = decoded(await peer.next())
        await peer.request("Echo", send("x", str(uuid.uuid4())), correlation=b"yes",
                           **{"a2a-authorization": "Basic YWxpY2U6cHc="})  # alice:pw
        admitted = decoded(await peer.next())
    assert refused["error"]["code"] == -32600  # v1.0's authentication error
    assert admitted["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_with_http_the_card_names_the_http_and_the_mqtt_interfaces(
        space: tuple[str, str]) -> None:
    org, unit = space
    async with on_emqx(ECHO, org, unit, http=True), EmqxPeer(org, unit) as peer:
        await peer.listen(peer.space.discovery("Echo"))
        card = decoded(await peer.next())
    bindings = {i["protocolBinding"] for i in card["supportedInterfaces"]}
    assert "MQTTv5+JSONRPCv2" in bindings and "JSONRPC" in bindings


def test_a_second_process_for_the_same_agent_is_refused(space: tuple[str, str]) -> None:
    org, unit = space
    argv = [str(SCRIPT), "serve", "examples/echo.py", "--store", "memory://", "--json",
            "--no-http", "--mesh", BROKER, "--mesh-profile", "emqx", "--org", org,
            "--unit", unit]
    first = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        assert first.stdout is not None and first.stdout.readline()
        second = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=30)
    finally:
        first.terminate()
        first.communicate(timeout=15)
    assert second.returncode == 2
    assert f"{org}/{unit}/Echo is already served" in second.stderr


async def _last_item(stream: AsyncIterator[Any]) -> Any:
    """The item of a stream's last event (read to its end)."""
    return [event.item async for event in stream][-1]


def _serve_slow(org: str, unit: str, *, http: bool = False) -> subprocess.Popen[str]:
    """The slow agent of the instance tests in the profile; returned once it is on the
    mesh. ``http``: served over HTTP as well, with the default drain; returned once it
    holds the agent's client id, before it connects to the broker."""
    layout = ("--port", "0") if http else ("--drain-seconds", "0", "--no-http")
    proc = subprocess.Popen(
        [str(SCRIPT), "serve", "tests/mesh/slow_agent.py", "--store", "memory://", "--json",
         "--log-level", "warning", *layout, "--mesh", BROKER,
         "--mesh-profile", "emqx", "--org", org, "--unit", unit,
         "--mesh-session-expiry", "60"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, proc.communicate()
    assert "request_topic" in json.loads(line), line
    return proc


async def test_a_process_started_while_the_last_one_stops_waits_for_it_and_serves(
        space: tuple[str, str]) -> None:
    """A supervisor starts the new process before the old one has finished its stop (a
    slow turn keeps it busy): the new one waits for the agent's client id, resumes its
    session and answers the requests sent while the old one stopped. It was refused
    as a second process of the agent."""
    from interlingua.core.model import Task, TaskState
    from interlingua.mesh.emqx.client import EmqxClient

    from .helpers import stop_child

    org, unit = space
    proc = _serve_slow(org, unit)
    try:
        async with EmqxClient(f"{BROKER}/{org}/{unit}/Slow", timeout=40) as client, \
                EmqxPeer(org, unit) as peer:
            await peer.listen(peer.space.discovery("Slow"))
            assert (await peer.next()).properties["a2a-status"] == "online"
            stream = client.stream("3")
            await anext(stream)  # the slow turn keeps the stop busy for 3 s

            rest = asyncio.create_task(_last_item(stream))
            proc.send_signal(signal.SIGTERM)
            # its offline card: the stop has begun
            assert (await peer.next()).properties["a2a-status"] == "offline"
            left = [asyncio.create_task(client.send("0")) for _ in range(3)]
            await asyncio.sleep(0.3)  # published while it stops
            old, proc = proc, await asyncio.to_thread(_serve_slow, org, unit)
            assert old.wait(20) == 0
            old.communicate()
            done = await asyncio.gather(*left)
            assert all(isinstance(t, Task) and t.status.state is TaskState.COMPLETED
                       for t in done), done
            assert (await rest).status.state is TaskState.COMPLETED
    finally:
        stop_child(proc)


async def test_one_served_with_http_started_while_the_last_one_drains_waits_for_it_and_serves(
        space: tuple[str, str]) -> None:
    """Served over HTTP too, a process begins its stop with the HTTP drain (a slow turn
    keeps it busy) and a new one is started at once: the new one waits for the client
    id and answers the requests sent while it waited. It was refused as a second
    process of the agent, the old one saying it stopped only after the drain."""
    from interlingua.core.model import Task, TaskState
    from interlingua.mesh.emqx.client import EmqxClient

    from .helpers import stop_children

    org, unit = space
    async with EmqxPeer(org, unit) as peer:
        await peer.listen(peer.space.discovery("Slow"))
        proc = _serve_slow(org, unit, http=True)
        starting: asyncio.Task[subprocess.Popen[str]] | None = None
        try:
            assert (await peer.next()).properties["a2a-status"] == "online"
            async with EmqxClient(f"{BROKER}/{org}/{unit}/Slow", timeout=40) as client:
                stream = client.stream("3")
                await anext(stream)  # the slow turn keeps the drain busy for 3 s

                rest = asyncio.create_task(_last_item(stream))
                proc.send_signal(signal.SIGTERM)
                starting = asyncio.create_task(
                    asyncio.to_thread(_serve_slow, org, unit, http=True))
                # its offline card: the stop has begun
                assert (await peer.next()).properties["a2a-status"] == "offline"
                await asyncio.sleep(0.2)
                left = [asyncio.create_task(client.send("0")) for _ in range(3)]
                await asyncio.sleep(0.3)  # published while the new one waits
                drained = not rest.done()  # and while the old one drains: the turn runs
                # (uvicorn raises the signal again once it has stopped)
                assert await asyncio.to_thread(proc.wait, 30) in (0, -signal.SIGTERM)
                proc.communicate()
                proc, starting = await starting, None
                done = await asyncio.gather(*left)
                assert all(isinstance(t, Task) and t.status.state is TaskState.COMPLETED
                           for t in done), done
                assert (await rest).status.state is TaskState.COMPLETED
                assert drained
        finally:
            await stop_children(proc, starting)


async def test_mesh_agents_lists_the_retained_cards_with_their_status(
        space: tuple[str, str]) -> None:
    org, unit = space

    async def listed() -> list[dict[str, Any]]:
        proc = await asyncio.create_subprocess_exec(
            str(SCRIPT), "mesh", "agents", "--mesh", BROKER, "--mesh-profile", "emqx",
            "--org", org, "--unit", unit, "--json", cwd=ROOT, stdout=subprocess.PIPE)
        out, _ = await proc.communicate()
        assert proc.returncode == 0
        rows: list[dict[str, Any]] = json.loads(out)
        return rows

    async with on_emqx(ECHO, org, unit):
        online = await listed()
    offline = await listed()
    assert online == [{"name": "Echo", "agent": "Echo", "url": f"{BROKER}/{org}/{unit}/Echo",
                       "request_topic": f"$a2a/v1/request/{org}/{unit}/Echo",
                       "status": "online", "description": "Echoes."}]
    assert [r["status"] for r in offline] == ["offline"]
