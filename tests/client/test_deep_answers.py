"""A peer's JSON nested deeper than the decoder goes is a bad answer, on every path
the client reads: said as ``BadResponse`` (``InvalidCard`` for a card), never as a
``RecursionError`` out of the decoder. The server refuses such requests the same
way (``nested too deeply``); here it is the client's turn, over real HTTP."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from interlingua import Client
from interlingua.client.card import InvalidCard
from interlingua.client.errors import BadResponse
from interlingua.client.push_receiver import Receiver
from interlingua.core.calls import GetTask
from interlingua.core.dialects import get_codec
from interlingua.core.errors import InvalidAgentResponse
from tests.live import asgi_body, live_server

pytestmark = pytest.mark.timeout(30)

DEEP = "[" * 5000 + "]" * 5000
TASK = ('{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"},'
        '"metadata":{"x":@DEEP}}').replace("@DEEP", DEEP)


def deep(template: str) -> str:
    """``template`` with its ``@TASK`` and ``@DEEP`` filled in."""
    return template.replace("@TASK", TASK).replace("@DEEP", DEEP)


class Peer:
    """Answers every path with what ``answers`` holds for it (the card by default,
    or ``default``)."""

    def __init__(self) -> None:
        self.answers: dict[str, tuple[int, str, str]] = {}
        self.default: tuple[int, str, str] | None = None
        self.url = ""

    def card(self) -> str:
        return json.dumps({
            "name": "deep", "description": "d", "version": "1", "skills": [],
            "capabilities": {"streaming": True},
            "defaultInputModes": ["text"], "defaultOutputModes": ["text"],
            "supportedInterfaces": [
                {"url": self.url + "/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {"url": self.url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}]})

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await asgi_body(receive)
        status, media, text = self.answers.get(
            scope["path"], self.default or (200, "application/json", self.card()))
        if "RID" in text:
            text = text.replace("RID", json.dumps(json.loads(body)["id"]))
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", media.encode())]})
        await send({"type": "http.response.body", "body": text.encode()})


JSON, SSE = "application/json", "text/event-stream"

# (binding, streamed, path, answer)
CASES = {
    "JSON-RPC result": ("jsonrpc", False, "/", (200, JSON,
                        deep('{"jsonrpc":"2.0","id":RID,"result":{"task":@TASK}}'))),
    "JSON-RPC member beside the result": ("jsonrpc", False, "/", (200, JSON,
        deep('{"jsonrpc":"2.0","id":RID,"x":@DEEP,"result":{"message":{}}}'))),
    "JSON-RPC error data": ("jsonrpc", False, "/", (200, JSON,
        deep('{"jsonrpc":"2.0","id":RID,"error":{"code":-32001,"message":"no","data":@DEEP}}'))),
    "JSON-RPC stream event": ("jsonrpc", True, "/", (200, SSE,
        deep('data: {"jsonrpc":"2.0","id":1,"result":{"task":@TASK}}\n\n'))),
    "HTTP+JSON result": ("rest", False, "/message:send", (200, JSON, deep('{"task":@TASK}'))),
    "HTTP+JSON error": ("rest", False, "/message:send", (404, JSON,
        deep('{"error":{"code":404,"status":"NOT_FOUND","message":"x","details":@DEEP}}'))),
    "HTTP+JSON stream event": ("rest", True, "/message:stream", (200, SSE,
                               deep('data: {"task":@TASK}\n\n'))),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_a_deep_answer_is_a_bad_response(case: str) -> None:
    binding, streamed, path, answer = CASES[case]
    peer = Peer()
    peer.answers[path] = answer
    with live_server(peer) as url:
        peer.url = url
        async with Client(url, binding=binding) as client:
            with pytest.raises(BadResponse, match="nested too deeply"):
                if streamed:
                    [e async for e in client.stream("hi")]
                else:
                    await client.send("hi")


async def test_a_deep_card_is_an_invalid_card() -> None:
    peer = Peer()
    peer.default = (200, JSON, deep('{"name":"deep","x":@DEEP}'))  # at every well-known path
    with live_server(peer) as url:
        async with Client(url) as client:
            with pytest.raises(InvalidCard, match="nested too deeply"):
                await client.get_card()


def test_the_1_0_codec_calls_a_deep_result_invalid() -> None:
    with pytest.raises(InvalidAgentResponse, match="nested too deeply"):
        get_codec("1.0").decode_result(GetTask(id="t"), TASK.encode())
    with pytest.raises(InvalidAgentResponse, match="nested too deeply"):
        get_codec("1.0").decode_stream_item((deep('{"task":@TASK}')).encode())


async def test_a_deep_notification_is_refused_by_the_receiver() -> None:
    receiver = Receiver()
    with live_server(receiver) as url:
        async with httpx.AsyncClient() as http:
            for body in (deep('{"task":@TASK}'), DEEP):
                reply = await http.post(url + "/hook", content=body,
                                        headers={"content-type": "application/json"})
                assert reply.status_code == 400
                assert "nested too deeply" in reply.json()["error"]
    assert receiver.refused == 2 and not receiver.events
