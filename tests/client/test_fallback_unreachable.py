"""A fallback the card names that cannot be reached is passed over: the client goes on
to the next (the next dialect at the URL that answered, as the README says), and when
nothing else works, raises the agent's own refusal, not the connection error of a URL
the caller never named. Over real HTTP, the dead interface at a port nothing listens on."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import pytest

from interlingua import Client
from interlingua.core.errors import MethodNotFound
from tests.live import asgi_body, live_server
from tests.ports import free_port

pytestmark = pytest.mark.timeout(30)


class OldAgent:
    """An agent whose card says v1.0 JSON-RPC here and v0.3 at ``elsewhere``; here it
    refuses every v1.0 method, and answers the v0.3 ones when ``speaks_03``."""

    def __init__(self, elsewhere: str, *, speaks_03: bool) -> None:
        self.elsewhere = elsewhere
        self.speaks_03 = speaks_03
        self.url = ""
        self.methods: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await asgi_body(receive)
        if scope["method"] == "GET":
            answer: dict[str, Any] = {
                "name": "old", "description": "d", "version": "1", "skills": [],
                "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [],
                "supportedInterfaces": [
                    {"url": self.url + "/", "protocolBinding": "JSONRPC",
                     "protocolVersion": "1.0"},
                    {"url": self.elsewhere, "protocolBinding": "JSONRPC",
                     "protocolVersion": "0.3"}]}
        else:
            request = json.loads(body)
            method = request["method"]
            self.methods.append(method)
            answer = {"jsonrpc": "2.0", "id": request["id"]}
            if self.speaks_03 and "/" in method:
                answer["result"] = {"kind": "task", "id": "t1", "contextId": "c1",
                                    "status": {"state": "completed"}}
            else:
                answer["error"] = {"code": -32601, "message": f"Method not found: {method}"}
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": json.dumps(answer).encode()})


@contextlib.contextmanager
def serving(peer: OldAgent) -> Iterator[str]:
    with live_server(peer) as url:
        peer.url = url
        yield url


@pytest.fixture
def dead_url() -> str:
    return f"http://127.0.0.1:{free_port()}/"  # (nothing listens there)


async def test_the_next_dialect_at_the_url_that_answered_is_tried(dead_url: str) -> None:
    peer = OldAgent(dead_url, speaks_03=True)
    with serving(peer) as url:
        async with Client(url, timeout=10) as client:
            task = await client.get_task("t1")
            assert task.id == "t1"
            assert client.dialect == "0.3"
            assert client.endpoint is not None and client.endpoint.url == url + "/"
    assert peer.methods == ["GetTask", "tasks/get"]


async def test_when_nothing_works_the_agents_own_refusal_is_raised(dead_url: str) -> None:
    peer = OldAgent(dead_url, speaks_03=False)
    with serving(peer) as url:
        async with Client(url, timeout=10) as client:
            with pytest.raises(MethodNotFound, match=r"^Method not found: GetTask") as caught:
                await client.get_task("t1")
    # the dead interface named beside it
    assert f"cannot reach {dead_url}" in str(caught.value)
    assert peer.methods == ["GetTask", "tasks/get", "tasks/get"]  # 1.0, then 0.3 and 0.1
