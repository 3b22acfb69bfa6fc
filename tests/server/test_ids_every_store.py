"""The ids a caller gives are held to what every store can keep (core/ids.py), so that
one request gets one answer whichever store the server has. PostgreSQL refused an id
with NUL as invalid params where SQLite and the memory store took it, and answered an
id past its index's 2,704 bytes with an internal error; now every store refuses both as
invalid params, before any is asked. Real HTTP on loopback, real SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from interlingua import Agent, Context
from interlingua.core.ids import MAX_ID_BYTES
from interlingua.core.parts import new_id
from tests.live import live_agent
from tests.stores.conftest import store_url

pytestmark = pytest.mark.timeout(60)


async def echo(ctx: Context) -> None:
    await ctx.complete(ctx.text)


@pytest.fixture(params=["memory", "sqlite-file", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with live_agent(Agent("Echo", "Echoes.", echo),
                    store=store_url(request.param, tmp_path, request)) as base:
        yield base


def send(client: httpx.Client, url: str, *, path: str = "/message:send",
         **message: Any) -> httpx.Response:
    body = {"message": {"messageId": new_id(), "role": "ROLE_USER", "parts": [{"text": "hi"}],
                        **message}}
    return client.post(url + path, json=body, headers={"A2A-Version": "1.0"})


def test_an_id_no_store_can_keep_is_invalid_params_on_every_store(url: str) -> None:
    long_ascii = "m" * (MAX_ID_BYTES + 1)
    long_utf8 = "é" * (MAX_ID_BYTES // 2 + 1)  # fewer characters than bytes
    refused = {
        "message.messageId holds the NUL character": {"messageId": "m\x00" + new_id()},
        f"message.messageId is longer than {MAX_ID_BYTES} bytes": {"messageId": long_ascii},
        f"message.contextId is longer than {MAX_ID_BYTES} bytes": {"contextId": long_utf8},
        "message.contextId holds the NUL character": {"contextId": "c\x00"},
        "message.referenceTaskIds[1] holds the NUL character": {
            "referenceTaskIds": ["t", "t\x00"]},
        # control characters: into logs and terminals, forging a line or a colour
        "message.messageId holds a control character (U+000A)": {
            "messageId": new_id() + "\nFORGED LOG LINE"},
        "message.contextId holds a control character (U+001B)": {"contextId": "c\x1b[31m"},
        "message.taskId holds a control character (U+0085)": {"taskId": "t\x85"},
    }
    with httpx.Client(timeout=30) as client:
        for said, member in refused.items():
            r = send(client, url, **member)
            assert r.status_code == 400, (said, r.text)
            error = r.json()["error"]
            assert error["details"][0]["reason"] == "INVALID_PARAMS" and said in error["message"]
        r = send(client, url, path=f"/{'t' * (MAX_ID_BYTES + 1)}/message:send")
        assert r.status_code == 400 and "tenant is longer than" in r.json()["error"]["message"]
        # a tenant every call names: PostgreSQL answered these with an internal error
        for verb, path in (("GET", "/tasks"), ("GET", "/tasks/x"), ("POST", "/tasks/x:cancel")):
            r = client.request(verb, url + "/a%00b" + path, headers={"A2A-Version": "1.0"})
            assert r.status_code == 400, (path, r.text)
            assert "tenant holds the NUL character" in r.json()["error"]["message"]
        r = client.get(url + "/a%0Ab/tasks", headers={"A2A-Version": "1.0"})
        assert r.status_code == 400
        assert "tenant holds a control character (U+000A)" in r.json()["error"]["message"]
        r = client.get(url + "/tasks", params={"contextId": "c\x00"},
                       headers={"A2A-Version": "1.0"})
        assert r.status_code == 400 and "contextId holds the NUL" in r.text
        # the task v0.1 names for a new one, named as it sent it: its params' ``id``
        r = client.post(url + "/", json={"jsonrpc": "2.0", "id": 1, "method": "tasks/send",
                                         "params": {"id": "t\x85", "message": {
                                             "role": "user",
                                             "parts": [{"type": "text", "text": "hi"}]}}})
        assert "Invalid params: params.id holds a control character (U+0085)" in \
            r.json()["error"]["message"], r.text
        # a context as each dialect's params name it: v0.1's ``sessionId``, SAM's snake case
        r = client.post(url + "/", json={"jsonrpc": "2.0", "id": 2, "method": "tasks/send",
                                         "params": {"id": "t1", "sessionId": "s\x00",
                                                    "message": {"role": "user", "parts": [
                                                        {"type": "text", "text": "hi"}]}}})
        assert r.json()["error"] == {
            "code": -32602, "message": "Invalid params: params.sessionId holds the NUL character"}
        r = client.post(url + "/", json={
            "jsonrpc": "2.0", "id": "s-1", "method": "tasks/send-streaming", "params": {
                "message": {"role": "user", "parts": [{"text": "hi"}], "message_id": "m-s1",
                            "context_id": "c" * (MAX_ID_BYTES + 1)}}})
        assert r.json()["error"]["message"] == \
            f"Invalid params: params.message.context_id is longer than {MAX_ID_BYTES} bytes"
        # up to the limit, every store keeps them, and finds the task by them
        ok = send(client, url, messageId="m" * MAX_ID_BYTES,
                  contextId="é" * (MAX_ID_BYTES // 2))
        assert ok.status_code == 200, ok.text
        listed = client.get(url + "/tasks", params={"contextId": "é" * (MAX_ID_BYTES // 2)},
                            headers={"A2A-Version": "1.0"})
        assert [t["id"] for t in listed.json()["tasks"]] == [ok.json()["task"]["id"]]
        again = send(client, url, messageId="m" * MAX_ID_BYTES,
                     contextId="é" * (MAX_ID_BYTES // 2))
        assert again.json()["task"]["id"] == ok.json()["task"]["id"]  # a retry: one task
