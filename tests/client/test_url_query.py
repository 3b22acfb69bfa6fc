"""An agent URL with a query (a gateway's ``?code=KEY``): the card is looked for, and
HTTP+JSON calls made, below the URL's path with its query kept, as JSON-RPC posts to
the URL itself. (The paths were put after the query: ``/?code=k/.well-known/...``.)"""

from __future__ import annotations

from typing import Any

import pytest

from interlingua import Client, create_app
from interlingua.core.model import Task
from tests.client.agents import agent
from tests.live import bind_loopback, live_server, url_of


class NeedsCode:
    """The agent's app behind a check of ``?code=``, as a function gateway does."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[tuple[str, bytes]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.seen.append((scope["path"], scope["query_string"]))
            if b"code=k3y" not in scope["query_string"].split(b"&"):
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b""})
                return
        await self.app(scope, receive, send)


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_a_query_in_the_agent_url_is_kept_on_every_path(binding: str) -> None:
    sock = bind_loopback()
    gate = NeedsCode(create_app(agent, public_url=url_of(sock), store="memory://"))
    with live_server(gate, sock=sock) as url:
        # (the URL given is the endpoint: the card's interfaces name the agent's
        # own URLs, without the gateway's code)
        async with Client(url + "/?code=k3y", binding=binding, dialect="1.0") as client:
            card = await client.get_card()
            assert card.name
            task = await client.send("echo this")
            assert isinstance(task, Task)
            again = await client.get_task(task.id, history_length=1)
            assert again.id == task.id and len(again.history) == 1
    paths = {path for path, _ in gate.seen}
    assert "/.well-known/agent-card.json" in paths
    if binding == "rest":
        assert "/message:send" in paths and f"/tasks/{task.id}" in paths
        assert (f"/tasks/{task.id}", b"code=k3y&historyLength=1") in gate.seen
