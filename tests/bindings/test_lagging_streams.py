"""A stream that falls more than ``max_lag`` events behind is cut with an error event
that says where to resume, in each dialect's own shape (docs/streaming.md, "Fan-out
and slow readers"): v0.3's ``data`` object, v1.0's ErrorInfo details over JSON-RPC and
HTTP+JSON. Real HTTP on loopback; gRPC's is in test_grpc.py."""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx
import msgspec
import pytest

from tests.bindings.test_grpc import served

pytestmark = pytest.mark.timeout(60)


def _v1_message() -> dict[str, Any]:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "flood"}]}


def _v03_message() -> dict[str, Any]:
    return {"messageId": str(uuid.uuid4()), "role": "user", "kind": "message",
            "parts": [{"kind": "text", "text": "flood"}]}


REQUESTS = {
    "jsonrpc-1.0": ("/", {"A2A-Version": "1.0"}, {
        "jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
        "params": {"message": _v1_message()}}),
    "jsonrpc-0.3": ("/", {}, {
        "jsonrpc": "2.0", "id": 1, "method": "message/stream",
        "params": {"message": _v03_message()}}),
    "rest-1.0": ("/message:stream", {"A2A-Version": "1.0"}, {"message": _v1_message()}),
}


def _cut(url: str, path: str, headers: dict[str, str], body: dict[str, Any]) -> Any:
    """The error event's JSON of a stream read one event, then left unread a while."""
    with httpx.Client(timeout=30) as client, client.stream(
            "POST", url + path, json=body, headers=headers) as answer:
        lines = answer.iter_lines()
        next(line for line in lines if line.startswith("data:"))
        time.sleep(2)  # the agent runs on; the server cannot send what is not read
        event = None
        for line in lines:
            if line.startswith("event:"):
                event = line.split(":", 1)[1].strip()
            elif line.startswith("data:") and event == "error":
                return msgspec.json.decode(line[5:])
    raise AssertionError("the stream ended without an error event")


@pytest.mark.parametrize("name", list(REQUESTS))
def test_a_stream_too_far_behind_says_where_to_resume(name: str) -> None:
    path, headers, body = REQUESTS[name]
    with served(max_lag=64) as (url, _):
        error = _cut(url, path, headers, body)
    if name == "jsonrpc-0.3":
        data = error["error"]["data"]
        assert error["error"]["code"] == -32603
        assert data["resumable"] is True and isinstance(data["lastEventId"], int)
        return
    details = error["error"]["data"] if name.startswith("jsonrpc") else error["error"]["details"]
    [info] = [d for d in details if d["@type"].endswith("google.rpc.ErrorInfo")]
    assert info["reason"] == "RESOURCE_UNAVAILABLE"
    assert info["metadata"]["resumable"] == "true"
    assert info["metadata"]["lastEventId"].isdigit()
    if name.startswith("jsonrpc"):
        assert error["error"]["code"] == -32603
