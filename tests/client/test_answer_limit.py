"""``Client(max_answer_bytes=)``: an agent cannot fill its caller's memory. An answer
(or one stream event) past the bound is ``BadResponse``, whether its length is said
up front, it comes in chunks, or it is compressed; within it, nothing changes. Over
real HTTP on loopback, and gRPC against an interlingua server."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest

from interlingua import Agent, Client
from interlingua.client.errors import BadResponse
from interlingua.client.transport import DEFAULT_MAX_ANSWER_BYTES, HTTPXTransport
from interlingua.core.model import Task
from tests.live import live_grpc_agent, live_server

pytestmark = pytest.mark.timeout(30)

LIMIT = 4096


def task_answer(text: str) -> bytes:
    task = {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"},
            "artifacts": [{"artifactId": "a", "parts": [{"text": text}]}]}
    return json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"task": task}}).encode()


class Peer:
    """A 1.0 JSON-RPC agent whose answer to every call is ``body``, sent as ``how`` says:
    ``length`` (Content-Length), ``chunked``, ``gzip`` (compressed, with its length)
    or ``sse`` (each of ``events`` an SSE event)."""

    def __init__(self, how: str, body: bytes = b"", events: list[bytes] | None = None) -> None:
        self.how, self.body, self.events = how, body, events or []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        body, headers = self.body, [(b"content-type", b"application/json")]
        if self.how == "gzip":
            body = gzip.compress(body)
            headers.append((b"content-encoding", b"gzip"))
        if self.how == "sse":
            headers = [(b"content-type", b"text/event-stream")]
        if self.how in ("length", "gzip"):
            headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        if self.how == "sse":
            for event in self.events:
                await send({"type": "http.response.body", "body": event, "more_body": True})
        else:  # in pieces: without a length, uvicorn sends them chunked
            for at in range(0, len(body), 1000):
                await send({"type": "http.response.body", "body": body[at:at + 1000],
                            "more_body": True})
        await send({"type": "http.response.body", "body": b""})


@pytest.mark.parametrize("how", ["length", "chunked", "gzip"])
async def test_an_answer_past_the_bound_is_a_bad_response(how: str) -> None:
    with live_server(Peer(how, task_answer("x" * LIMIT))) as url:
        async with Client(url + "/", dialect="1.0", max_answer_bytes=LIMIT) as client:
            with pytest.raises(BadResponse, match=f"more than {LIMIT} bytes"):
                await client.send("hi")
    with live_server(Peer(how, task_answer("x" * (LIMIT // 2)))) as url:
        async with Client(url + "/", dialect="1.0", max_answer_bytes=LIMIT) as client:
            task = await client.send("hi")
    assert isinstance(task, Task) and len(task.artifacts[0].parts[0].text) == LIMIT // 2  # type: ignore[union-attr]


def event(text: str) -> bytes:
    item = {"statusUpdate": {"taskId": "t", "contextId": "c", "status": {
        "state": "TASK_STATE_WORKING", "message": {"messageId": "m", "role": "ROLE_AGENT",
                                                   "parts": [{"text": text}]}}}}
    return b"data: " + json.dumps({"jsonrpc": "2.0", "id": 1, "result": item}).encode() + b"\n\n"


async def test_one_stream_event_past_the_bound_is_a_bad_response() -> None:
    """Many events together may pass the bound; one event may not, nor a line that
    never ends."""
    final = (b'data: {"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{"taskId":"t",'
             b'"contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}}\n\n')
    small = [event("y" * 1000) for _ in range(20)] + [final]
    with live_server(Peer("sse", events=small)) as url:
        async with Client(url + "/", dialect="1.0", max_answer_bytes=LIMIT) as client:
            assert len([e async for e in client.stream("hi")]) == 21
    # a stream asked for and one plain answer sent instead: bounded as a unary one is
    with live_server(Peer("chunked", task_answer("x" * LIMIT))) as url:
        async with Client(url + "/", dialect="1.0", max_answer_bytes=LIMIT) as client:
            with pytest.raises(BadResponse, match=f"more than {LIMIT} bytes"):
                [e async for e in client.stream("hi")]
    for events in ([event("z" * LIMIT), final], [b"data: " + b"z" * LIMIT * 3]):
        with live_server(Peer("sse", events=events)) as url:
            async with Client(url + "/", dialect="1.0", max_answer_bytes=LIMIT) as client:
                with pytest.raises(BadResponse, match=f"more than {LIMIT} bytes"):
                    [e async for e in client.stream("hi")]


async def test_no_bound_and_a_wrong_one() -> None:
    with live_server(Peer("chunked", task_answer("x" * LIMIT * 4))) as url:
        async with Client(url + "/", dialect="1.0", max_answer_bytes=None) as client:
            assert isinstance(await client.send("hi"), Task)
    assert HTTPXTransport().max_answer_bytes == DEFAULT_MAX_ANSWER_BYTES
    for wrong in (0, -1, "64", True):
        with pytest.raises(ValueError, match="max_answer_bytes must be a positive"):
            Client("http://127.0.0.1:9/", max_answer_bytes=wrong)  # type: ignore[arg-type]


async def _long(ctx: Any) -> None:
    await ctx.complete(artifact="x" * int(ctx.text))


async def test_grpc_answers_are_bounded_too() -> None:
    # (refused by the gRPC library as RESOURCE_EXHAUSTED: it was raised as the agent's
    # RateLimitExceeded, which a caller would back off and retry on)
    with live_grpc_agent(Agent("Long", "Answers at length.", _long)) as (_, target):
        async with Client(f"grpc://{target}", max_answer_bytes=LIMIT) as client:
            assert isinstance(await client.send(str(LIMIT // 2)), Task)
            with pytest.raises(BadResponse, match=f"more than {LIMIT} bytes"):
                await client.send(str(LIMIT))
            with pytest.raises(BadResponse, match=f"more than {LIMIT} bytes"):
                [e async for e in client.stream(str(LIMIT))]
