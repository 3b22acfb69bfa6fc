"""Answers of v0.3 JSON-RPC peers in others' spellings (real HTTP): ProtoJSON state names
(``TASK_STATE_CANCELLED``) are read, as over v0.3 HTTP+JSON; and a result wrapped the
v1.0 way (``{"task": …}``) that is still wrong is reported at its real fault, inside
the wrapper, not as the wrapper's missing ``kind``."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import pytest

from interlingua import Client, Task, TaskState
from interlingua.client import BadResponse
from tests.live import asgi_body, live_server

pytestmark = pytest.mark.timeout(30)


def _task(state: Any, role: str = "agent") -> dict[str, Any]:
    return {"kind": "task", "id": "t1", "contextId": "c1", "status": {
        "state": state, "message": {"kind": "message", "role": role, "messageId": "m1",
                                    "parts": [{"kind": "text", "text": "hi"}]}}}


def _event(state: str, final: bool) -> dict[str, Any]:
    return {"kind": "status-update", "taskId": "t1", "contextId": "c1",
            "status": {"state": state}, "final": final}


class Peer:
    """A v0.3 JSON-RPC agent answering every call with ``result`` (a stream: ``events``)."""

    def __init__(self, result: Any, events: list[Any]) -> None:
        self.result, self.events, self.url = result, events, ""

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await asgi_body(receive)
        kind, out = b"application/json", b""
        if scope["method"] == "GET":
            out = json.dumps({
                "name": "p", "description": "d", "version": "1", "protocolVersion": "0.3.0",
                "url": self.url + "/", "preferredTransport": "JSONRPC",
                "capabilities": {"streaming": True}, "defaultInputModes": ["text/plain"],
                "defaultOutputModes": ["text/plain"], "skills": []}).encode()
        else:
            rid = json.loads(body)["id"]
            if json.loads(body)["method"] == "message/stream":
                kind = b"text/event-stream"
                out = b"".join(b"data: " + json.dumps(
                    {"jsonrpc": "2.0", "id": rid, "result": e}).encode() + b"\n\n"
                    for e in self.events)
            else:
                out = json.dumps({"jsonrpc": "2.0", "id": rid, "result": self.result}).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", kind)]})
        await send({"type": "http.response.body", "body": out})


@contextlib.contextmanager
def serving(result: Any, events: list[Any] | None = None) -> Iterator[str]:
    peer = Peer(result, events or [])
    with live_server(peer) as url:
        peer.url = url
        yield url


@pytest.mark.parametrize(("spelled", "state"), [
    ("TASK_STATE_COMPLETED", TaskState.COMPLETED), ("TASK_STATE_CANCELLED", TaskState.CANCELED),
    ("TASK_STATE_CANCELED", TaskState.CANCELED)])
async def test_protojson_state_names_are_read_by_send_and_get(spelled: str,
                                                              state: TaskState) -> None:
    with serving(_task(spelled)) as url:
        async with Client(url, timeout=10) as client:
            task = await client.send("hi")
            assert isinstance(task, Task) and task.status.state is state
            assert (await client.get_task("t1")).status.state is state


async def test_a_stream_with_protojson_state_names_is_read_whole() -> None:
    events = [_task("TASK_STATE_SUBMITTED"), _event("TASK_STATE_WORKING", False),
              _event("working", False), _event("TASK_STATE_COMPLETED", True)]
    with serving(_task("completed"), events) as url:
        async with Client(url, timeout=10) as client:
            got = [event async for event in client.stream("hi")]
    states = [event.item.status.state for event in got]  # type: ignore[union-attr]
    assert states == [TaskState.SUBMITTED, TaskState.WORKING, TaskState.WORKING,
                      TaskState.COMPLETED]


@pytest.mark.parametrize(("inner", "fault"), [
    (_task("finished"), "Invalid enum value 'finished' - at `result.task.status.state`"),
    (_task("completed", role="ROLE_BOT"),
     "Invalid enum value 'ROLE_BOT' - at `result.task.status.message.role`")])
async def test_a_wrapped_result_is_faulted_inside_its_wrapper(inner: dict[str, Any],
                                                              fault: str) -> None:
    del inner["kind"]  # (as a peer wrapping it the v1.0 way sends it)
    with serving({"task": inner}) as url:
        async with Client(url, timeout=10) as client:
            with pytest.raises(BadResponse) as caught:
                await client.send("hi")
    assert fault in str(caught.value)
    assert "kind" not in str(caught.value)
