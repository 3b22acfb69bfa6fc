"""Reply topics and ids that hold MQTT wildcards (or a NUL): checked when a request
arrives, refused on a reply topic that can take the refusal or dropped with one log
line, and the task never run (real Mosquitto)."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest

from interlingua import Agent, Context

from .helpers import Peer, decoded, on_mesh

pytestmark = pytest.mark.timeout(30)

RUNS: list[str] = []


async def _count(ctx: Context) -> None:
    RUNS.append(ctx.task_id)
    await ctx.complete("done")


def _agent() -> Agent:
    return Agent("Counter", "Counts its runs.", _count)


def _send(rid: str, method: str = "tasks/send") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": {
        "message": {"role": "user", "parts": [{"text": "x"}], "message_id": "m-" + rid}}}


async def _refused(peer: Peer, topic: str, rid: str) -> str:
    """The error answered on ``topic`` to request ``rid``: its message."""
    got, _ = await peer.until(topic)
    body = decoded(got)
    assert body["id"] == rid
    assert body["error"]["code"] == -32600
    assert "result" not in body
    return str(body["error"]["message"])


@pytest.mark.parametrize(("props", "where", "named"), [
    # a wildcard in replyTo: refused on the clientId's response topic
    ({"replyTo": "{ns}/a2a/v1/gw/#", "clientId": "me"}, "client", "replyTo"),
    ({"replyTo": "{ns}/a2a/+/x", "clientId": "me"}, "client", "replyTo"),
    # in the status topic (any send: a non-streaming one would name it for a resubscribe)
    ({"replyTo": "{ns}/r", "a2aStatusTopic": "{ns}/s/#"}, "reply", "a2aStatusTopic"),
    ({"replyTo": "{ns}/r", "a2aStatusTopic": "{ns}/s/+/x"}, "reply", "a2aStatusTopic"),
    # in the clientId (a topic level of the client topics)
    ({"replyTo": "{ns}/r", "clientId": "me/+"}, "reply", "clientId"),
    ({"replyTo": "{ns}/r", "clientId": "#"}, "reply", "clientId"),
    # in the MQTT 5 response topic
    ({"response_topic": "{ns}/resp/#", "clientId": "me"}, "client", "response topic"),
])
async def test_a_reply_topic_with_a_wildcard_is_refused_and_nothing_runs(
        ns: str, props: dict[str, str], where: str, named: str,
        caplog: pytest.LogCaptureFixture) -> None:
    props = {k: v.format(ns=ns) for k, v in props.items()}
    async with on_mesh(_agent(), ns), Peer(ns) as peer:
        topic = f"{ns}/r" if where == "reply" else peer.topics.client_response("me")
        await peer.listen(topic)
        rid = "w-" + ns
        with caplog.at_level("WARNING"):
            await peer.request("Counter", _send(rid, "tasks/send-streaming"), **props)
            message = await _refused(peer, topic, rid)
            assert named in message
            # the consumer lives on: a good request is answered
            await peer.request("Counter", _send("ok-" + ns), replyTo=topic)
            got, _ = await peer.until(topic)
            assert decoded(got)["result"]["status"]["state"] == "completed"
            gc.collect()
    assert rid not in RUNS and "ok-" + ns in RUNS
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]


@pytest.mark.parametrize("method", ["tasks/send", "tasks/send-streaming"])
@pytest.mark.parametrize("rid", ["a+b", "a/#", "x\x00"])
async def test_a_send_whose_id_names_no_topic_is_refused_and_nothing_runs(
        ns: str, method: str, rid: str) -> None:
    async with on_mesh(_agent(), ns), Peer(ns) as peer:
        reply_to = peer.topics.client_response("me")
        await peer.listen(reply_to, peer.topics.client_status("me") + "/#")
        await peer.request("Counter", _send(rid, method), clientId="me")
        message = await _refused(peer, reply_to, rid)
        assert "the id of a send names its task" in message
        assert not await peer.quiet(0.3)  # no update, no second answer
    assert rid not in RUNS


async def test_a_request_no_reply_topic_can_refuse_is_dropped_with_one_log_line(
        ns: str, caplog: pytest.LogCaptureFixture) -> None:
    async with on_mesh(_agent(), ns) as agent, Peer(ns) as peer:
        ok = peer.topics.client_response("ok")
        await peer.listen(f"{ns}/#")
        with caplog.at_level("WARNING"):
            for props in ({"replyTo": f"{ns}/gw/+"}, {"clientId": "c#"},
                          {"replyTo": f"{ns}/gw/#", "clientId": "c+"}):
                await peer.request("Counter", _send("drop-" + ns), **props)
            await peer.request("Counter", _send("ok-" + ns), clientId="ok")
            _, before = await peer.until(ok)
            # counted once its answer is published, which the peer may hear first
            deadline = asyncio.get_running_loop().time() + 5
            while agent.handled < 1:
                assert asyncio.get_running_loop().time() < deadline
                await asyncio.sleep(0.01)
            gc.collect()
    assert not [m.topic for m in before if "/request/" not in m.topic]  # nothing else answered
    assert "drop-" + ns not in RUNS
    dropped = [r for r in caplog.records if "is dropped" in r.getMessage()]
    assert len(dropped) == 3
    assert "wildcard" in dropped[0].getMessage()
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
    assert agent.handled == 1
