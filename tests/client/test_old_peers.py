"""The client against agents that speak only an older dialect (real HTTP)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from interlingua import Agent, Client, Context, Task, TaskState, create_app, get_text
from tests.live import asgi_body, bind_loopback, live_server, url_of

V01_METHODS = {"tasks/send", "tasks/get", "tasks/cancel", "tasks/sendSubscribe",
               "tasks/resubscribe"}
V03_METHODS = {"message/send", "message/stream", "tasks/get", "tasks/cancel",
               "tasks/resubscribe"}


async def _agent(ctx: Context) -> None:
    if len(ctx.task.history) == 1 and ctx.text == "ask":
        await ctx.require_input("What else?")
    else:
        await ctx.complete(artifact=f"got {ctx.text}")


class OnlyOld:
    """An agent that understands only ``methods`` and serves ``card``: an old peer."""

    def __init__(self, inner: Any, methods: set[str], card: dict[str, Any]) -> None:
        self.inner, self.methods, self.card = inner, methods, msgspec.json.encode(card)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/.well-known/"):
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": self.card})
            return
        if scope["type"] == "http" and scope["method"] == "POST":
            body = await asgi_body(receive)
            doc = msgspec.json.decode(body)
            if doc.get("method") not in self.methods:
                out = msgspec.json.encode({"jsonrpc": "2.0", "id": doc.get("id"), "error": {
                    "code": -32601, "message": f"Method not found: {doc.get('method')}"}})
                await send({"type": "http.response.start", "status": 200,
                            "headers": [(b"content-type", b"application/json")]})
                await send({"type": "http.response.body", "body": out})
                return
            sent = False

            async def replay() -> Any:
                nonlocal sent
                if not sent:
                    sent = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()

            await self.inner(scope, replay, send)
            return
        await self.inner(scope, receive, send)


def serve_old(methods: set[str], card: dict[str, Any]) -> Iterator[str]:
    sock = bind_loopback()
    base = url_of(sock)
    app = create_app(Agent("Old", "An older agent", _agent), public_url=base)
    card = {**card, "url": base + "/"}
    # (the engine starts on the first request, so the wrapper needs no lifespan)
    with live_server(OnlyOld(app, methods, card), sock=sock) as url:
        yield url


V01_CARD = {"name": "Old", "version": "1", "capabilities": {"streaming": True},
            "authentication": {"schemes": []}, "skills": []}
V03_CARD = {"name": "Old", "description": "d", "version": "1", "protocolVersion": "0.3.0",
            "preferredTransport": "JSONRPC", "capabilities": {"streaming": True},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": []}


@pytest.fixture
def v01_agent() -> Iterator[str]:
    yield from serve_old(V01_METHODS, V01_CARD)


@pytest.fixture
def v03_agent() -> Iterator[str]:
    yield from serve_old(V03_METHODS, V03_CARD)


@pytest.fixture
def v01_behind_v03_card() -> Iterator[str]:
    yield from serve_old(V01_METHODS, V03_CARD)


async def test_v01_only_agent(v01_agent: str) -> None:
    async with Client(v01_agent) as c:
        task = await c.send("ask")
        assert c.dialect == "0.1"
        assert isinstance(task, Task) and task.status.state is TaskState.INPUT_REQUIRED
        done = await c.send("more", task_id=task.id)
        assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
        assert get_text(done.artifacts[0]) == "got more"
        again = await c.get_task(task.id)
        assert again.status.state is TaskState.COMPLETED
        events = [e async for e in c.stream("hello")]
        assert events[-1].final


async def test_v03_only_agent(v03_agent: str) -> None:
    async with Client(v03_agent) as c:
        task = await c.send("hello")
        assert c.dialect == "0.3"
        assert isinstance(task, Task) and get_text(task.artifacts[0]) == "got hello"


async def test_falls_back_to_v01_when_the_card_overstates(v01_behind_v03_card: str) -> None:
    async with Client(v01_behind_v03_card) as c:
        task = await c.send("hello")
        assert c.dialect == "0.1"
        assert isinstance(task, Task) and get_text(task.artifacts[0]) == "got hello"
