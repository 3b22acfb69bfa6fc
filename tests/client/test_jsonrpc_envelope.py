"""A JSON-RPC answer is this call's only when its envelope says so (JSON-RPC 2.0 §5):
``"jsonrpc": "2.0"``, the request's id (null allowed for an error, when the server
could not read the request's id), and a result or an error, never both. Checked before
the error is raised, and on every event of a stream (each is a response to the
streaming request, A2A 1.0 §9.4.2): an error answered to another request is not this
call's ``TaskNotFound``; it is a ``BadResponse``, as a result with the wrong id already
was. Over real HTTP."""

from __future__ import annotations

import json
from typing import Any

import pytest

from interlingua import Client
from interlingua.client.errors import BadResponse
from interlingua.core.errors import TaskNotFound
from interlingua.core.model import Task
from tests.live import asgi_body, live_server

pytestmark = pytest.mark.timeout(30)

TASK = '{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}'
NOT_FOUND = '{"code":-32001,"message":"Task not found: t9"}'


class Peer:
    """Answers each POST with ``answer``, ``RID`` in it replaced by the request's id;
    as an event stream when ``stream``."""

    def __init__(self, answer: str, *, stream: bool = False) -> None:
        self.answer = answer
        self.stream = stream

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        rid = json.loads(await asgi_body(receive))["id"]
        text = self.answer.replace("RID", json.dumps(rid))
        media = b"text/event-stream" if self.stream else b"application/json"
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", media)]})
        await send({"type": "http.response.body", "body": text.encode()})


async def answer_to_get(answer: str) -> Task:
    with live_server(Peer(answer)) as url:
        async with Client(url + "/", dialect="1.0", timeout=10) as client:
            return await client.get_task("t1")


async def answer_to_stream(events: list[str]) -> list[Any]:
    body = "".join(f"data: {e}\n\n" for e in events)
    with live_server(Peer(body, stream=True)) as url:
        async with Client(url + "/", dialect="1.0", timeout=10) as client:
            return [e.item async for e in client.stream("hi")]


@pytest.mark.parametrize(("answer", "said"), [
    ('{"jsonrpc":"2.0","id":999,"error":' + NOT_FOUND + "}", "answered request 999"),
    ('{"jsonrpc":"2.0","id":"RID","error":' + NOT_FOUND + "}", "answered request '1'"),
    ('{"jsonrpc":"2.0","id":RID,"result":' + TASK + ',"error":' + NOT_FOUND + "}",
     "both a result and an error"),
    ('{"jsonrpc":"1.0","id":RID,"error":' + NOT_FOUND + "}", "JSON-RPC '1.0'"),
    ('{"jsonrpc":"1.0","id":RID,"result":' + TASK + "}", "JSON-RPC '1.0'"),
], ids=["error, another id", "error, the id as a string", "result and error",
        "error, not 2.0", "result, not 2.0"])
async def test_an_answer_that_is_not_this_calls_is_a_bad_response(answer: str,
                                                                   said: str) -> None:
    with pytest.raises(BadResponse, match=said):
        await answer_to_get(answer)


@pytest.mark.parametrize("rid", ["RID", "null"])
async def test_an_error_to_this_request_or_to_none_read_is_raised(rid: str) -> None:
    with pytest.raises(TaskNotFound, match="t9"):
        await answer_to_get('{"jsonrpc":"2.0","id":' + rid + ',"error":' + NOT_FOUND + "}")


async def test_a_result_to_this_request_is_read() -> None:
    task = await answer_to_get('{"jsonrpc":"2.0","id":RID,"result":' + TASK + "}")
    assert task.id == "t1"


async def test_a_stream_of_responses_to_this_request_is_read() -> None:
    items = await answer_to_stream(['{"jsonrpc":"2.0","id":RID,"result":{"task":' + TASK + "}}"])
    assert [type(i) for i in items] == [Task]


@pytest.mark.parametrize(("event", "said"), [
    ('{"jsonrpc":"2.0","id":999,"result":{"task":' + TASK + "}}", "request 999"),
    ('{"jsonrpc":"2.0","id":999,"error":' + NOT_FOUND + "}", "request 999"),
    ('{"jsonrpc":"2.0","id":RID,"result":{"task":' + TASK + '},"error":' + NOT_FOUND + "}",
     "both a result and an error"),
], ids=["result, another id", "error, another id", "result and error"])
async def test_a_stream_event_that_is_not_this_requests_is_a_bad_response(
        event: str, said: str) -> None:
    with pytest.raises(BadResponse, match=said):
        await answer_to_stream([event])


async def test_a_stream_error_to_no_request_read_is_raised() -> None:
    with pytest.raises(TaskNotFound, match="t9"):
        await answer_to_stream(['{"jsonrpc":"2.0","id":null,"error":' + NOT_FOUND + "}"])
