"""The gateway: mesh agents served over HTTP as ordinary A2A agents (real Mosquitto).
The HTTP side is spoken by interlingua's own client and by raw JSON-RPC."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import msgspec
import pytest

from interlingua import Client, Context, client_for
from interlingua.core.calls import GetTask
from interlingua.core.errors import TaskNotCancelable
from interlingua.core.model import ArtifactUpdate, Message, Task, TaskState
from interlingua.mesh.emqx.link import EmqxLink
from interlingua.mesh.gateway import Gateway
from interlingua.mesh.topics import parse_mesh_url
from tests.live import live_server

from .helpers import (
    BROKER,
    Peer,
    held_agent,
    namespace,
    need_broker,
    on_emqx,
    on_mesh,
    org_unit,
    stray_updates,
)
from .test_client import WORKER

pytestmark = pytest.mark.timeout(60)


@contextlib.asynccontextmanager
async def gateway(ns: str, **kwargs: object) -> AsyncIterator[str]:
    app = Gateway(parse_mesh_url(BROKER), ns, **kwargs)  # type: ignore[arg-type]
    with live_server(app) as url:
        await _heard(url)
        yield url


async def _heard(url: str) -> None:
    """Until the gateway at ``url`` has heard the agents' cards."""
    async with httpx.AsyncClient() as http:
        for _ in range(100):
            if (await http.get(url + "/agents")).json()["agents"]:
                break
            await asyncio.sleep(0.1)


async def test_the_gateway_lists_and_serves_the_mesh_agents(ns: str) -> None:
    # no warm-up: an agent not heard is not there (404) at once
    async with on_mesh(WORKER, ns), gateway(ns, warmup=0) as url:
        async with httpx.AsyncClient() as http:
            listed = (await http.get(url + "/agents")).json()["agents"]
            assert [a["name"] for a in listed] == ["Worker"]
            assert listed[0]["url"] == url + "/agents/Worker/"
            card = (await http.get(url + "/agents/Worker/.well-known/agent-card.json")).json()
            assert card["name"] == "Worker" and card["url"] == url + "/agents/Worker/"
            missing = await http.get(url + "/agents/Nobody/.well-known/agent-card.json")
            assert missing.status_code == 404
        async with Client(url + "/agents/Worker/") as client:
            task = await client.send("report")
            assert isinstance(task, Task)
            assert task.status.state is TaskState.COMPLETED
            assert task.status.message.parts[0].text == "done: report"  # type: ignore[union-attr]
            assert "".join(p.text for p in task.artifacts[0].parts) == "one two three"  # type: ignore[union-attr]
            again = await client.get_task(task.id)
            assert again.status.state is TaskState.COMPLETED
            reply = await client.send("hi")
            assert isinstance(reply, Message)
            assert reply.parts[0].text == "hello there"  # type: ignore[union-attr]


async def test_streams_and_resubscribe_replay_from_the_gateway_log(ns: str) -> None:
    async with on_mesh(WORKER, ns), gateway(ns) as url, \
            Client(url + "/agents/Worker/") as client:
        events = [e async for e in client.stream("story")]
        assert events[-1].state is TaskState.COMPLETED
        chunks = [e.item for e in events if isinstance(e.item, ArtifactUpdate)]
        assert [c.artifact.parts[0].text for c in chunks] == ["one ", "two ", "three"]  # type: ignore[union-attr]
        task_id = events[0].task_id
        assert task_id is not None
        # everything after the second event, replayed from the gateway's store
        second = events[1].seq
        assert second is not None
        replay = [e async for e in client.subscribe(task_id, last_event_id=second)]
        assert [e.seq for e in replay] == [e.seq for e in events[2:]]


async def _working(stream: AsyncIterator[Any]) -> Any:
    """The first event of a streamed task (it names the task), once the task works
    on the mesh."""
    first = await anext(stream)
    assert first.task_id is not None
    async for event in stream:
        if event.state is TaskState.WORKING:
            break
    return first


@contextlib.asynccontextmanager
async def _behind_a_gateway(layout: str, agent: contextlib.AsyncExitStack,
                            ) -> AsyncIterator[tuple[str, str]]:
    """``WORKER`` on the mesh in ``layout`` (SAM's, or A2A over MQTT), served in the
    ``agent`` stack (closing it, the agent leaves), behind a gateway: the agent's URL at
    the gateway and on the mesh."""
    need_broker()
    mesh = parse_mesh_url(BROKER)
    if layout == "sam":
        ns = namespace()
        app = Gateway(mesh, ns)
        await agent.enter_async_context(on_mesh(WORKER, ns))
        there = f"{BROKER}/{ns}/Worker"
    else:
        org, unit = org_unit()
        app = Gateway(mesh, None, link=EmqxLink(mesh, org, unit, "gw"), warmup=0)
        await agent.enter_async_context(on_emqx(WORKER, org, unit, name="Worker"))
        there = f"{BROKER}/{org}/{unit}/Worker"
    with live_server(app) as url:
        await _heard(url)
        yield url + "/agents/Worker/", there


async def _state_there(direct: Any, task_id: str, want: TaskState) -> TaskState:
    """The state of the agent's own task once it is ``want`` (or after 5 s)."""
    for _ in range(50):
        state: TaskState = (await direct.get_task(task_id)).status.state
        if state is want:
            break
        await asyncio.sleep(0.1)
    return state


@pytest.mark.parametrize("state", ["running", "input-required"])
@pytest.mark.parametrize("layout", ["sam", "emqx"])
async def test_cancel_passes_through_to_the_mesh(layout: str, state: str) -> None:
    """An input-required task has no turn running at the gateway: its cancel was
    answered canceled there, and the agent's task stayed input-required for good."""
    async with contextlib.AsyncExitStack() as agent, \
            _behind_a_gateway(layout, agent) as (url, there), \
            Client(url) as client, client_for(there, timeout=10) as direct:
        if state == "running":
            stream = client.stream("slow")
            task_id = (await _working(stream)).task_id
        else:
            asked = await client.send("ask")
            assert asked.status.state is TaskState.INPUT_REQUIRED  # type: ignore[union-attr]
            task_id = asked.id  # type: ignore[union-attr]
        canceled = await client.cancel(task_id)
        assert canceled.status.state is TaskState.CANCELED
        # the same task id on the mesh, canceled there too
        assert await _state_there(direct, task_id, TaskState.CANCELED) is TaskState.CANCELED


@pytest.mark.parametrize("layout", ["sam", "emqx"])
async def test_a_cancel_the_agent_refuses_or_cannot_hear_is_refused_at_the_gateway(
        layout: str) -> None:
    """A cancel of an input-required task is the agent's to make: one it refuses (its
    task has ended there) or cannot be told of (it has left) is refused at the
    gateway saying so, and the gateway's task is left as the agent's is."""
    async with contextlib.AsyncExitStack() as agent, \
            _behind_a_gateway(layout, agent) as (url, there), Client(url) as client:
        first, second = await client.send("ask"), await client.send("ask")
        async with client_for(there, timeout=10) as direct:
            await direct.cancel(first.id)  # type: ignore[union-attr]  # on the mesh
        with pytest.raises(TaskNotCancelable, match="Worker refused"):
            await client.cancel(first.id)  # type: ignore[union-attr]
        await agent.aclose()  # the agent leaves the mesh
        with pytest.raises(TaskNotCancelable, match="Worker could not be told"):
            await client.cancel(second.id)  # type: ignore[union-attr]
        kept = await client.get_task(second.id)  # type: ignore[union-attr]
        assert kept.status.state is TaskState.INPUT_REQUIRED


async def test_the_gateway_command_serves_a_mesh_only_agent(ns: str) -> None:
    import json
    import os
    import signal
    import subprocess

    from .test_serve_cli import ROOT, SCRIPT, _serve

    # the gateway learns of the agent from its card, published every 0.3 s, not 10 s
    agent, _ = _serve(ns, "--no-http", "--mesh-card-interval", "0.3")
    gw = subprocess.Popen([str(SCRIPT), "gateway", "--mesh", BROKER, "--namespace", ns,
                           "--port", "0", "--json", "--log-level", "warning"],
                          cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert gw.stdout is not None
        info = json.loads(gw.stdout.readline())
        async with httpx.AsyncClient() as http:
            for _ in range(150):
                if (await http.get(info["agents"])).json()["agents"]:
                    break
                await asyncio.sleep(0.1)
        done = await asyncio.to_thread(
            subprocess.run, [str(SCRIPT), "send", info["listen"] + "/agents/Echo/", "hello",
                             "--json"], cwd=ROOT, capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        assert "hello" in done.stdout
    finally:
        for proc in (gw, agent):
            proc.send_signal(signal.SIGTERM)
        for proc in (gw, agent):
            try:
                proc.wait(15)
            finally:
                proc.kill()
                proc.communicate()


async def test_a_task_canceled_on_the_mesh_ends_canceled_at_the_gateway(ns: str) -> None:
    async with on_mesh(WORKER, ns), gateway(ns) as url, \
            Client(url + "/agents/Worker/") as client, \
            client_for(f"{BROKER}/{ns}/Worker") as direct:
        stream = client.stream("slow")
        task_id = (await _working(stream)).task_id
        await direct.cancel(task_id)  # on the mesh, not through the gateway
        rest = [e async for e in stream]
        assert rest[-1].state is TaskState.CANCELED
        assert (await client.get_task(task_id)).status.state is TaskState.CANCELED


async def test_the_rest_binding_through_the_gateway(ns: str) -> None:
    async with on_mesh(WORKER, ns), gateway(ns) as url:
        base = url + "/agents/Worker"
        async with httpx.AsyncClient() as http:
            card = (await http.get(base + "/.well-known/agent-card.json")).json()
            rest = [(i["url"], i["protocolVersion"]) for i in card["supportedInterfaces"]
                    if i["protocolBinding"] == "HTTP+JSON"]
            assert rest == [(base, "1.0"), (base, "0.3")]
            # v1.0 and v0.3 routes, by hand
            sent = await http.post(base + "/message:send", json={"message": {
                "messageId": "m-rest-1", "role": "ROLE_USER", "parts": [{"text": "report"}]}})
            assert sent.status_code == 200, sent.text
            task = sent.json()["task"]
            assert task["status"]["state"] == "TASK_STATE_COMPLETED"
            got = await http.get(f"{base}/tasks/{task['id']}")
            assert got.json()["status"]["state"] == "TASK_STATE_COMPLETED"
            old = await http.post(base + "/v1/message:send", json={"message": {
                "messageId": "m-rest-2", "role": "ROLE_USER", "content": [{"text": "report"}]}})
            assert old.status_code == 200, old.text
            assert old.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            missing = await http.get(base + "/tasks/no-such-task")
            assert missing.status_code == 404
        async with Client(base + "/", binding="rest") as client:
            task2 = await client.send("report")
            assert client.endpoint is not None and client.endpoint.binding == "HTTP+JSON"
            assert isinstance(task2, Task) and task2.status.state is TaskState.COMPLETED
            assert "".join(p.text for p in task2.artifacts[0].parts) == "one two three"  # type: ignore[union-attr]
            events = [e async for e in client.stream("story")]
            chunks = [e.item for e in events if isinstance(e.item, ArtifactUpdate)]
            assert [c.artifact.parts[0].text for c in chunks] == ["one ", "two ", "three"]  # type: ignore[union-attr]
            assert events[-1].state is TaskState.COMPLETED
            stream = client.stream("slow")
            first = await _working(stream)
            task_id = first.task_id
            canceled = await client.cancel(task_id)
            assert canceled.status.state is TaskState.CANCELED
            resumed = [e async for e in client.subscribe(task_id, last_event_id=first.seq)]
            assert resumed[-1].state is TaskState.CANCELED


async def test_the_gateway_refuses_a_page_of_another_origin_but_the_ones_allowed(
        ns: str) -> None:
    """The agents behind the gateway hold web pages to the rule every HTTP binding holds
    them to (core/origins.py), with the gateway's own ``allowed_origins``
    (``interlingua gateway --allow-origin``)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {
        "kind": "message", "messageId": "m-origin", "role": "user",
        "parts": [{"kind": "text", "text": "report"}]}}}
    async with on_mesh(WORKER, ns), \
            gateway(ns, warmup=0, allowed_origins=["https://app.example"]) as url:
        async with httpx.AsyncClient(timeout=30) as http:
            agent = url + "/agents/Worker/"
            refused = await http.post(agent, json=body,
                                      headers={"Origin": "https://evil.example"})
            assert refused.status_code == 403
            assert refused.json()["error"]["message"].startswith(
                "Forbidden: a browser's request from a page of another origin")
            taken = await http.post(agent, json=body,
                                    headers={"Origin": "https://app.example"})
            assert taken.status_code == 200 and "result" in taken.json(), taken.text
            # the page reads the answer, and the listing: CORS's header, once
            assert taken.headers.get_list("access-control-allow-origin") == [
                "https://app.example"]
            listing = await http.get(url + "/agents", headers={"Origin": "https://app.example"})
            assert listing.headers.get_list("access-control-allow-origin") == [
                "https://app.example"]


async def test_a_task_the_agent_does_not_answer_for_is_warned_of_with_the_wait(
        ns: str, caplog: pytest.LogCaptureFixture) -> None:
    """A streamed turn ends and the gateway reads the agent's task to check its copy;
    no answer comes (lost on the way): the warning says it waited for one, and how
    long. Its reason was empty ("... to check the gateway's copy: ")."""
    app = Gateway(parse_mesh_url(BROKER), ns, warmup=0)
    link = app.link
    link.reconcile_wait = 0.5  # type: ignore[attr-defined]  # (10 s by default)
    requester = link.requester  # type: ignore[attr-defined]
    publish, real_next, unanswered = requester.publish, requester.next, []

    async def deaf_publish(name: str, rid: str, call: Any, *args: Any, **kwargs: Any) -> Any:
        pending = await publish(name, rid, call, *args, **kwargs)
        if isinstance(call, GetTask):
            unanswered.append(pending)  # its answer never comes
        return pending

    async def deaf_next(pending: Any, name: str) -> Any:
        if any(p is pending for p in unanswered):
            await asyncio.Event().wait()
        return await real_next(pending, name)

    requester.publish, requester.next = deaf_publish, deaf_next
    async with on_mesh(WORKER, ns):
        with live_server(app) as url, caplog.at_level("WARNING", logger="interlingua.mesh"):
            await _heard(url)
            async with Client(url + "/agents/Worker/") as client:
                events = [e async for e in client.stream("report")]
    assert events[-1].state is TaskState.COMPLETED
    assert unanswered
    warned = [r.getMessage() for r in caplog.records if "could not be read" in r.getMessage()]
    assert warned and all(w.endswith("copy: no answer within 0.5 s") for w in warned), warned


async def test_a_peers_card_without_a_name_is_dropped_at_discovery(
        ns: str, caplog: pytest.LogCaptureFixture) -> None:
    """A card heard on the mesh whose name is empty or blank: dropped with one warning
    each, as docs/mesh.md says of a card with no name, and never listed or served.
    Before, it was listed as "agent" (the path every unnameable name becomes) and
    served there under a name the peer never had."""
    def card(name: str, level: str) -> bytes:
        return msgspec.json.encode({
            "name": name, "description": "A peer with no name.", "version": "1.0.0",
            "url": f"{BROKER}/{ns}/{level}", "capabilities": {"streaming": False},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": []})

    app = Gateway(parse_mesh_url(BROKER), ns, warmup=0)
    async with Peer(ns) as peer, httpx.AsyncClient(timeout=10) as http:
        with live_server(app) as url, caplog.at_level("WARNING"):
            await peer.broker.publish(peer.topics.discovery(), card("", "Empty"))
            await peer.broker.publish(peer.topics.discovery(), card(" \t ", "Blank"))
            # one publisher's messages arrive in order: once Marker is listed, the
            # nameless cards have been heard
            await peer.broker.publish(peer.topics.discovery(), card("Marker", "Marker"))
            for _ in range(100):
                listed = [a["name"] for a in (await http.get(url + "/agents")).json()["agents"]]
                if "Marker" in listed:
                    break
                await asyncio.sleep(0.1)
            assert listed == ["Marker"]
            for path in ("Empty", "Blank", "agent"):
                got = await http.get(f"{url}/agents/{path}/.well-known/agent-card.json")
                assert got.status_code == 404, (path, got.text)
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert sum("cannot be read" in w and "no name" in w for w in warned) == 2, warned


async def test_an_agent_that_left_the_mesh_is_not_served_as_if_it_were_there(ns: str) -> None:
    """Once an agent has withdrawn, its health is a 404 naming it as not live, as for
    one never heard, and a send is refused at once saying so: its health said ok, and a
    send waited for an answer that never came. Its card is still served: the gateway's
    tasks of the agent are read and canceled through it (test_gateway_agent_gone.py)."""
    agent = contextlib.AsyncExitStack()
    await agent.enter_async_context(on_mesh(WORKER, ns))
    try:
        async with gateway(ns, warmup=0) as url, httpx.AsyncClient(timeout=10) as http:
            card = url + "/agents/Worker/.well-known/agent-card.json"
            assert (await http.get(card)).status_code == 200
            await agent.aclose()  # the agent withdraws
            for _ in range(100):
                if not (await http.get(url + "/agents")).json()["agents"]:
                    break
                await asyncio.sleep(0.05)
            gone = await http.get(url + "/agents/Worker/healthz")
            assert gone.status_code == 404, gone.text
            assert "no agent 'Worker' is live on the mesh" in gone.text
            assert (await http.get(card)).status_code == 200
            sent = await http.post(url + "/agents/Worker/", json={
                "jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {
                    "kind": "message", "messageId": "m-gone", "role": "user",
                    "parts": [{"kind": "text", "text": "hi"}]}}})
            assert "no agent 'Worker' is live on the mesh" in sent.json()["error"]["message"]
            listed = await http.post(url + "/agents/Worker/", json={
                "jsonrpc": "2.0", "id": 2, "method": "ListTasks", "params": {}},
                headers={"A2A-Version": "1.0"})
            assert listed.json()["result"]["tasks"] == [], listed.text
    finally:
        await agent.aclose()


async def _says_extensions(ctx: Context) -> None:
    await ctx.complete(",".join(ctx.extensions) or "none")


async def test_the_extensions_a_caller_asks_for_reach_the_agent_through_the_gateway(
        ns: str) -> None:
    """``A2A-Extensions`` over HTTP to the gateway: the agent on the mesh sees them, as
    it would served directly (the gateway forwarded none)."""
    from interlingua import Agent

    teller = Agent("Teller", "Says the extensions asked for.", _says_extensions)
    async with on_mesh(teller, ns), gateway(ns, warmup=0) as url, \
            httpx.AsyncClient(timeout=10) as http:
        sent = await http.post(url + "/agents/Teller/", headers={
            "A2A-Version": "1.0", "A2A-Extensions": "https://ext.example/v1, urn:x"}, json={
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
                "messageId": "m-ext", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}})
        task = sent.json()["result"]["task"]
        said = task["status"]["message"]["parts"][0]["text"]
        assert said == "https://ext.example/v1,urn:x", task


async def test_a_gateway_that_stops_leaves_the_agents_tasks_running(ns: str) -> None:
    """A gateway stopped (or restarted) while an agent works on a task cuts its own turn,
    which is no cancel of the agent's task: that goes on to its end on the mesh (it was
    canceled there, and the gateway's task failed: the two told different stories)."""
    async with on_mesh(WORKER, ns), client_for(f"{BROKER}/{ns}/Worker") as direct:
        async with gateway(ns) as url, Client(url + "/agents/Worker/") as client:
            stream = client.stream("slow")
            task_id = (await _working(stream)).task_id
            await stream.aclose()
        # the gateway has stopped; the agent's task goes on (a cancel sent by the
        # gateway as it stopped would have ended it within its cancel grace, 1 s)
        await asyncio.sleep(2.5)
        on_mesh_task = await direct.get_task(task_id)
        assert on_mesh_task.status.state is TaskState.WORKING, on_mesh_task.status


async def _two_seconds(ctx: Context) -> None:
    await ctx.update("thinking")
    await asyncio.sleep(2)
    await ctx.complete("done on the mesh")


async def test_a_task_a_restarted_gateway_left_ends_as_the_agent_ended_it(
        ns: str, tmp_path: Any) -> None:
    """The gateway stops while the agent works on a task, and starts again on its store:
    the task is taken up where the agent has it and ends as the agent's did (it was
    ended failed, "The server stopped while the task was running", while the agent
    completed it)."""
    from interlingua import Agent

    slow = Agent("Slow", "Takes two seconds.", _two_seconds, streaming=True)
    store = f"sqlite:///{tmp_path}/"
    async with on_mesh(slow, ns):
        async with gateway(ns, store=store) as url, Client(url + "/agents/Slow/") as client:
            stream = client.stream("go")
            task_id = (await _working(stream)).task_id
            await stream.aclose()
        await asyncio.sleep(2.5)  # the agent completes it meanwhile
        async with gateway(ns, store=store) as url, Client(url + "/agents/Slow/") as client:
            for _ in range(100):
                task = await client.get_task(task_id)
                if task.status.state is not TaskState.WORKING:
                    break
                await asyncio.sleep(0.1)
    assert task.status.state is TaskState.COMPLETED, task.status
    assert task.status.message is not None
    assert task.status.message.parts[0].text == "done on the mesh"  # type: ignore[union-attr]


@pytest.mark.parametrize("task_id", ["with+plus", "with#hash", "a/+/b"])
async def test_a_task_id_that_cannot_be_a_topic_level_is_refused_at_once(
        ns: str, task_id: str) -> None:
    """v0.1's ``tasks/send`` names the new task (``params.id``), whose id names its topics
    on the mesh: one holding a wildcard is refused by the gateway with -32600, in the
    caller's dialect, and no task is made (the agent's refusal would go where the
    gateway does not listen)."""
    async with on_mesh(WORKER, ns), gateway(ns, warmup=0) as url, \
            httpx.AsyncClient(timeout=5) as http:
        def send(tid: str) -> dict[str, Any]:
            return {"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {
                "id": tid, "message": {"role": "user", "parts": [{"type": "text",
                                                                  "text": "report"}]}}}

        refused = (await http.post(url + "/agents/Worker/", json=send(task_id))).json()
        assert refused["error"]["code"] == -32600, refused
        assert repr(task_id) in refused["error"]["message"]
        assert "wildcard" in refused["error"]["message"]
        got = (await http.post(url + "/agents/Worker/", json={
            "jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": task_id}})).json()
        assert got["error"]["code"] == -32001, got  # no task was made
        ok = (await http.post(url + "/agents/Worker/", json=send("plain-" + ns))).json()
        assert ok["result"]["id"] == "plain-" + ns
        assert ok["result"]["status"]["state"] == "completed", ok


async def test_a_card_that_cannot_be_read_as_a_card_is_dropped_at_discovery(
        ns: str, caplog: pytest.LogCaptureFixture) -> None:
    """A card on the discovery topic that is JSON with a name but not a card
    (``capabilities`` a string): dropped with a warning, as a card that is not JSON is;
    it does not replace the good card of that agent, and no URL of the gateway answers
    500. Before, it was listed, and its card URL and endpoint answered 500 with an
    ``InvalidCard`` traceback in the log."""
    def card(name: str, **fields: object) -> bytes:
        return msgspec.json.encode({"name": name, "description": "d",
                                    "url": f"{BROKER}/{ns}/{name}", **fields})

    async with Peer(ns) as peer, gateway(ns, warmup=0) as url, \
            httpx.AsyncClient(timeout=10) as http:
        said = {"a2aInstance": "i1"}
        await peer.broker.publish(peer.topics.discovery(), card("Good", description="good"),
                                  said)
        with caplog.at_level("WARNING"):
            await peer.broker.publish(peer.topics.discovery(),
                                      card("Good", capabilities="oops"), said)
            await peer.broker.publish(peer.topics.discovery(),
                                      card("Bad", capabilities="oops"), said)
            # one publisher's messages arrive in order: once Marker is listed, the
            # bad cards have been heard
            await peer.broker.publish(peer.topics.discovery(), card("Marker"), said)
            for _ in range(100):
                listed = [a["name"] for a in (await http.get(url + "/agents")).json()["agents"]]
                if "Marker" in listed:
                    break
                await asyncio.sleep(0.1)
            assert listed == ["Good", "Marker"]
            good = await http.get(url + "/agents/Good/.well-known/agent-card.json")
            assert good.status_code == 200, good.text
            assert good.json()["description"] == "good"
            bad = await http.get(url + "/agents/Bad/.well-known/agent-card.json")
            assert bad.status_code == 404, bad.text
            sent = await http.post(url + "/agents/Bad/", json={
                "jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}})
            assert sent.status_code == 404, sent.text
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert sum("cannot be read" in w and "capabilities" in w for w in warned) == 2, warned
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


async def test_a_stray_message_on_the_status_topic_leaves_the_task_going(
        ns: str, caplog: pytest.LogCaptureFixture) -> None:
    """While a task works on the mesh, its status topic at the gateway gets what is no
    update of it (not JSON, the wrong shape, an error, updates of another task under
    its request id): each is skipped with one warning, and the task ends as the agent
    ends it, with none of it. Before, the first malformed one failed the task, and
    another task's updates were written into it."""
    release = asyncio.Event()
    async with on_mesh(held_agent(release), ns), gateway(ns, gateway_id="gw-stray") as url, \
            Client(url + "/agents/Held/") as client, Peer(ns) as peer:
        stream = client.stream("go")
        task_id = (await _working(stream)).task_id
        topic = peer.topics.gateway_status("gw-stray", task_id)
        with caplog.at_level("WARNING", logger="interlingua.mesh"):
            for payload in stray_updates(task_id):
                await peer.broker.publish(topic, payload)
            await asyncio.sleep(1.0)  # heard by the gateway before the agent goes on
            release.set()
            rest = [e async for e in stream]
        task = await client.get_task(task_id)
    assert rest[-1].state is TaskState.COMPLETED
    assert "injected" not in msgspec.json.encode([e.item for e in rest]).decode()
    assert task.status.state is TaskState.COMPLETED
    assert [p.text for a in task.artifacts for p in a.parts] == ["real"]  # type: ignore[union-attr]
    assert "injected" not in msgspec.json.encode(task).decode()
    skipped = [r.getMessage() for r in caplog.records
               if r.levelname == "WARNING" and "skipped" in r.getMessage()]
    assert len(skipped) == len(stray_updates(task_id)), skipped
