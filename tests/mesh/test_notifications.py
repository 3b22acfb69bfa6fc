"""A JSON-RPC notification (a request without an id) on the mesh, in both layouts:
never answered (JSON-RPC 2.0 §4.1), and run as over HTTP, where the JSON-RPC endpoint
answers 204 and runs it, unless it is a stream (refused unanswered: a stream's events
are its answers). The A2A-over-MQTT layout ran any of them and answered with
``"id": null``, which no requester can match."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from typing import Any

import pytest

from interlingua import Agent, Context

from .helpers import BROKER, EmqxPeer, Peer, decoded, in_layout, need_broker, org_unit

pytestmark = pytest.mark.timeout(30)

RUNS: Counter[str] = Counter()


async def count(ctx: Context) -> None:
    RUNS[ctx.message.message_id] += 1
    await ctx.complete(ctx.text)


AGENT = Agent("Noted", "Counts its runs.", count, streaming=True)

#: per layout: a send, a streamed send and a read of a task, by method name
METHODS = {"sam": ("tasks/send", "tasks/send-streaming", "tasks/get"),
           "emqx": ("SendMessage", "SendStreamingMessage", "GetTask")}


def _message(layout: str, message_id: str) -> dict[str, Any]:
    if layout == "sam":
        return {"role": "user", "message_id": message_id, "kind": "message",
                "parts": [{"text": "hi"}]}
    return {"role": "ROLE_USER", "messageId": message_id, "taskId": str(uuid.uuid4()),
            "parts": [{"text": "hi"}]}


@pytest.mark.parametrize("layout", ["sam", "emqx"])
async def test_a_notification_is_run_as_over_http_and_never_answered(layout: str, caplog: Any) -> None:
    need_broker()
    org, unit = org_unit()
    send, stream, get = METHODS[layout]
    sent, streamed = uuid.uuid4().hex, uuid.uuid4().hex
    async with in_layout(AGENT, layout, BROKER, org, unit):
        peer: Peer = Peer(org) if layout == "sam" else EmqxPeer(org, unit)
        async with peer:
            reply = (peer.topics.client_response("peer", "r") if layout == "sam"
                     else peer.reply_topic)
            await peer.listen(reply)

            async def publish(body: dict[str, Any]) -> None:
                await peer.request("Noted", {"jsonrpc": "2.0", **body}, replyTo=reply,
                                   response_topic=reply, correlation=b"c-" + body["method"].encode())

            await publish({"method": send, "params": {"message": _message(layout, sent)}})
            await publish({"method": stream, "params": {"message": _message(layout, streamed)}})
            await publish({"method": get, "params": {"id": "no-such-task"}})
            heard = await peer.quiet(1.5)
            # the agent is there and answers a request with an id, on the same topic
            await publish({"id": "r1", "method": get, "params": {"id": "no-such-task"}})
            answer = await peer.next()
            for _ in range(50):
                if RUNS[sent]:
                    break
                await asyncio.sleep(0.05)
    assert [decoded(m) for m in heard] == []
    assert decoded(answer)["id"] == "r1" and "error" in decoded(answer)
    assert RUNS[sent] == 1  # run, as over HTTP
    assert RUNS[streamed] == 0  # refused, as over HTTP: a stream needs an id
