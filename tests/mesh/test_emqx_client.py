"""interlingua's client in the A2A-over-MQTT profile (``mqtt://HOST/ORG/UNIT/AGENT``),
through Mosquitto: against our own agent, against a raw responder for the
profile's retries and its answer shapes; and the SAM layout's client, which now
sets the MQTT 5 Response Topic and Correlation Data too."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest

from interlingua import Agent, Context, client_for
from interlingua.client.errors import AgentUnreachable, BadResponse
from interlingua.client.stream import StreamEvent
from interlingua.core.errors import InvalidParams, RemoteError
from interlingua.core.model import ArtifactUpdate, StatusUpdate, Task, TaskState
from interlingua.mesh.client import MeshClient
from interlingua.mesh.emqx.client import EmqxClient
from interlingua.mesh.emqx.requester import EmqxRequester
from interlingua.mesh.emqx.topics import Space
from interlingua.mesh.topics import parse_mesh_url

from .helpers import (
    BROKER,
    EmqxPeer,
    Peer,
    decoded,
    held_agent,
    need_broker,
    on_emqx,
    on_mesh,
    org_unit,
    stray_updates,
)

pytestmark = pytest.mark.timeout(40)


@pytest.fixture
def space() -> tuple[str, str]:
    need_broker()
    return org_unit()


async def echo(ctx: Context) -> None:
    await ctx.artifact(ctx.text)
    await ctx.complete()


ECHO = Agent("Echo", "Echoes.", echo, streaming=True)


async def slow(ctx: Context) -> None:
    await ctx.update("working")
    await asyncio.sleep(30)


SLOW = Agent("Slow", "Takes its time.", slow)


async def test_client_for_an_org_unit_agent_url_speaks_the_profile_with_our_agent(
        space: tuple[str, str]) -> None:
    org, unit = space
    async with on_emqx(ECHO, org, unit), \
            client_for(f"{BROKER}/{org}/{unit}/Echo", timeout=10) as client:
        assert isinstance(client, EmqxClient)
        card = await client.get_card()
        assert card.name == "Echo" and client.presence == "online"
        task = await client.send("hello")
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        uuid.UUID(task.id)  # the client chose it, as the profile requires
        assert task.artifacts[0].parts[0].text == "hello"  # type: ignore[union-attr]
        events = [e.item async for e in client.stream("streamed")]
        assert isinstance(events[0], Task)
        assert any(isinstance(e, ArtifactUpdate) for e in events)
        assert isinstance(events[-1], StatusUpdate)
        assert events[-1].status.state is TaskState.COMPLETED
        again = await client.get_task(task.id)
        assert again.id == task.id and again.status.state is TaskState.COMPLETED


async def test_cancel_and_a_non_blocking_send(space: tuple[str, str]) -> None:
    org, unit = space
    async with on_emqx(SLOW, org, unit), \
            client_for(f"{BROKER}/{org}/{unit}/Slow", timeout=10) as client:
        task = await client.send("go", blocking=False)
        assert isinstance(task, Task) and task.status.state in (TaskState.SUBMITTED,
                                                                TaskState.WORKING)
        canceled = await client.cancel(task.id)
        assert canceled.id == task.id and canceled.status.state is TaskState.CANCELED


async def test_an_agent_with_no_retained_card_is_unreachable(space: tuple[str, str]) -> None:
    org, unit = space
    async with client_for(f"{BROKER}/{org}/{unit}/Nobody", timeout=1) as client:
        with pytest.raises(AgentUnreachable, match="not registered"):
            await client.get_card()


async def test_a_request_unanswered_is_published_again_with_new_correlation_data(
        space: tuple[str, str]) -> None:
    """The profile's requester retry: same payload (same task id), new correlation;
    the answer to the retry is taken."""
    org, unit = space
    async with EmqxPeer(org, unit) as responder:
        await responder.listen(responder.space.request("Flaky"))
        requester = EmqxRequester(parse_mesh_url(BROKER), Space(org, unit), timeout=10,
                                  first_reply=0.5)
        client = EmqxClient(f"{BROKER}/{org}/{unit}/Flaky", timeout=10)
        client._requester = requester
        try:
            sending = asyncio.ensure_future(client.send("hi"))
            first = await responder.next()
            second = await responder.next(5)  # the first was left unanswered
            assert first.payload == second.payload
            assert first.correlation and second.correlation
            assert first.correlation != second.correlation
            assert first.response_topic == second.response_topic == requester.reply_topic
            request = decoded(second)
            task_id = request["params"]["message"]["taskId"]
            # answered as the profile's own SDK does: events, the last one final
            for state in ("TASK_STATE_SUBMITTED", "TASK_STATE_COMPLETED"):
                event = {"statusUpdate": {"taskId": task_id, "contextId": "c",
                                          "status": {"state": state}}}
                await responder.broker.publish(second.response_topic or "", json.dumps(
                    {"jsonrpc": "2.0", "id": "x", "result": event}).encode(),
                    correlation=second.correlation)
            task = await asyncio.wait_for(sending, 5)
        finally:
            await client.aclose()
    assert task.id == task_id and task.status.state is TaskState.COMPLETED


async def test_errors_of_the_binding_and_of_a2a_are_raised(space: tuple[str, str]) -> None:
    org, unit = space
    async with EmqxPeer(org, unit) as responder, \
            client_for(f"{BROKER}/{org}/{unit}/Err", timeout=5) as client:
        await responder.listen(responder.space.request("Err"))
        for error, expected in (
                ('{"code":-32005,"message":"Missing","data":{"a2a_error":'
                 '"transport_protocol_error"}}', RemoteError),
                ('{"code":-32602,"message":"context_id mismatch"}', InvalidParams)):
            sending = asyncio.ensure_future(client.send("hi"))
            req = await responder.next()
            await responder.broker.publish(req.response_topic or "", json.dumps(
                {"jsonrpc": "2.0", "id": None, "error": json.loads(error)}).encode(),
                correlation=req.correlation)
            with pytest.raises(expected) as raised:
                await asyncio.wait_for(sending, 5)
            if expected is RemoteError:
                assert "transport_protocol_error" in str(raised.value)


async def test_the_sam_client_sets_response_topic_and_correlation_data() -> None:
    need_broker()
    ns = "t" + uuid.uuid4().hex[:12]
    async with on_mesh(ECHO, ns), Peer(ns) as sniffer:
        await sniffer.listen(sniffer.topics.request("Echo"))
        async with client_for(f"{BROKER}/{ns}/Echo", timeout=10) as client:
            assert isinstance(client, MeshClient)
            task = await client.send("hi")
        request = await sniffer.next()
    assert task.status.state is TaskState.COMPLETED  # type: ignore[union-attr]
    assert request.response_topic == request.properties["replyTo"]
    assert request.correlation == decoded(request)["id"].encode()


async def ask_then_write(ctx: Context) -> None:
    if ctx.text == "ask":
        await ctx.require_input("which one?")
        return
    await ctx.update("writing")
    await ctx.artifact(ctx.text)
    await ctx.complete()


ASKER = Agent("Asker", "Asks, then writes.", ask_then_write, streaming=True)


async def test_a_subscription_follows_the_next_turns_until_the_task_ends(
        space: tuple[str, str]) -> None:
    """``subscribe`` to a task waiting for input stays open through the next turn to
    the task's end, as a v1.0 ``SubscribeToTask`` does over HTTP (the agent keeps the
    MQTT stream open); a streaming send still ends its turn at input-required. The
    client stopped at the first input-required."""
    org, unit = space
    async with on_emqx(ASKER, org, unit), \
            client_for(f"{BROKER}/{org}/{unit}/Asker", timeout=10) as client:
        asked = [e async for e in client.stream("ask")]
        assert asked[-1].state is TaskState.INPUT_REQUIRED
        task_id = asked[-1].task_id
        assert task_id is not None
        watched = client.subscribe(task_id)
        now = await anext(watched)
        assert now.state is TaskState.INPUT_REQUIRED
        following = asyncio.ensure_future(asyncio.wait_for(_rest(watched), 8))
        done = await client.send("this", task_id=task_id)
        assert done.status.state is TaskState.COMPLETED  # type: ignore[union-attr]
        seen = await following
    assert seen[-1].state is TaskState.COMPLETED
    assert any(isinstance(e.item, ArtifactUpdate) for e in seen)
    assert {e.task_id for e in seen} == {task_id}


async def _rest(events: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [e async for e in events]


async def test_a_stray_message_on_the_reply_topic_leaves_the_stream_going(
        space: tuple[str, str], caplog: pytest.LogCaptureFixture) -> None:
    """While a streamed task works, its reply topic gets, under the request's
    Correlation Data (anyone who reads the request topic has it), what is no answer of
    the agent's (not JSON, the wrong shape, updates and a final task of another task):
    each is skipped with one warning, and the stream goes on to the task's end with
    none of it. Before, the first malformed one ended the stream with an error, and
    another task's updates were yielded as this one's (its final task ended it)."""
    org, unit = space
    release = asyncio.Event()
    async with on_emqx(held_agent(release), org, unit), EmqxPeer(org, unit) as sniffer, \
            client_for(f"{BROKER}/{org}/{unit}/Held", timeout=10) as client:
        await sniffer.listen(sniffer.space.request("Held"))
        assert isinstance(client, EmqxClient)
        stream = client.stream("go")
        task_id = (await anext(stream)).task_id
        request = await sniffer.next()
        strays = stray_updates(decoded(request)["id"], errors=False)
        with caplog.at_level("WARNING", logger="interlingua.mesh"):
            for payload in strays:
                await sniffer.broker.publish(request.response_topic or "", payload,
                                             correlation=request.correlation)
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
    assert len(skipped) == len(strays), skipped


async def test_a_stray_message_leaves_a_send_going_and_a_last_answer_unread_fails_it(
        space: tuple[str, str]) -> None:
    """A send answered with events (as the profile's SDK answers): strays under its
    Correlation Data are skipped and the task is folded from its own events alone;
    a last answer that cannot be read (a task, a status ending the turn, an error
    without a code) fails the call with ``BadResponse``, not a wait for the timeout."""
    org, unit = space
    async with EmqxPeer(org, unit) as responder, \
            client_for(f"{BROKER}/{org}/{unit}/Fake", timeout=5) as client:
        await responder.listen(responder.space.request("Fake"))

        async def answer(req: Any, result: Any = None, **members: Any) -> None:
            doc = {"jsonrpc": "2.0", "id": decoded(req)["id"], "result": result, **members}
            await responder.broker.publish(
                req.response_topic or "",
                msgspec.json.encode({k: v for k, v in doc.items() if v is not None}),
                correlation=req.correlation)

        def event(req: Any, state: str, **status: Any) -> dict[str, Any]:
            task_id = decoded(req)["params"]["message"]["taskId"]
            return {"statusUpdate": {"taskId": task_id, "contextId": "c",
                                     "status": {"state": state, **status}}}

        sending = asyncio.ensure_future(client.send("hi"))
        req = await responder.next()
        await answer(req, event(req, "TASK_STATE_WORKING"))
        for payload in stray_updates(decoded(req)["id"], errors=False):
            await responder.broker.publish(req.response_topic or "", payload,
                                           correlation=req.correlation)
        await answer(req, event(req, "TASK_STATE_COMPLETED"))
        task = await asyncio.wait_for(sending, 5)
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        assert "injected" not in msgspec.json.encode(task).decode()

        for last in ({"result": {"task": {"id": 5}}},
                     {"status": {"message": 5}},
                     {"error": {"code": "x", "message": "no code"}}):
            sending = asyncio.ensure_future(client.send("hi"))
            req = await responder.next()
            await answer(req, {"artifactUpdate": 3})  # not a last answer: skipped
            if "status" in last:
                await answer(req, event(req, "TASK_STATE_COMPLETED", **last["status"]))
            else:
                await answer(req, **last)
            with pytest.raises(BadResponse, match="Fake"):
                await asyncio.wait_for(sending, 3)
