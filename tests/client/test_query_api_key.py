"""An agent URL carrying an API key in its query (``https://host/?api_key=KEY``) to an
agent whose card declares that key (``apiKey``, ``in: query``, named ``api_key``):
the key goes with every call to the card's JSON-RPC and HTTP+JSON interfaces, and
nothing else of the query does. (The key was dropped once the client took the
card's interface URL: every call was refused as unauthenticated.)"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl

import pytest

from interlingua import Client, create_app
from interlingua.core.errors import AuthenticationRequired
from interlingua.core.model import APIKeyScheme, Task
from interlingua.server.auth import APIKeyAuth, AuthConfig
from tests.live import bind_loopback, live_server, url_of

from .agents import agent

pytestmark = pytest.mark.timeout(30)

KEY = "k3y-for-the-query-0123"


class Recorder:
    """The agent's app, with each request's method, path and query kept."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[tuple[str, str, dict[str, str]]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            query = dict(parse_qsl(scope["query_string"].decode(), keep_blank_values=True))
            self.seen.append((scope["method"], scope["path"], query))
        await self.app(scope, receive, send)

    def calls(self) -> list[tuple[str, dict[str, str]]]:
        """(path, query) of every request that was not for the card."""
        return [(path, query) for method, path, query in self.seen
                if "/.well-known/" not in path]


@pytest.fixture
def keyed() -> Iterator[tuple[str, Recorder]]:
    """An agent whose calls need ``?api_key=KEY`` (its card, public, declares it)."""
    sock = bind_loopback()
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": KEY}, name="api_key",
                                                  location="query")})
    recorder = Recorder(create_app(agent, public_url=url_of(sock), store="memory://",
                                   auth=auth))
    with live_server(recorder, sock=sock) as url:
        yield url, recorder


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_the_declared_query_key_goes_to_the_cards_interfaces(
        keyed: tuple[str, Recorder], binding: str) -> None:
    url, recorder = keyed
    async with Client(f"{url}/?api_key={KEY}&other=1", binding=binding) as client:
        card = await client.get_card()
        scheme = card.security_schemes["key"]
        assert isinstance(scheme, APIKeyScheme) and scheme.location == "query"
        task = await client.send("echo this")
        assert isinstance(task, Task) and task.status.state.value == "completed"
        again = await client.get_task(task.id, history_length=1)
        assert again.id == task.id
    calls = recorder.calls()
    assert len(calls) >= 2
    for _, query in calls:
        # the key, and only the key: the other parameter was the caller's, for the card
        assert query.get("api_key") == KEY and "other" not in query
    if binding == "rest":
        assert (f"/tasks/{task.id}", {"api_key": KEY, "historyLength": "1"}) in calls


async def test_a_parameter_the_card_does_not_declare_is_not_carried(
        keyed: tuple[str, Recorder]) -> None:
    url, recorder = keyed
    async with Client(f"{url}/?token={KEY}") as client:
        with pytest.raises(AuthenticationRequired):
            await client.send("echo this")
    calls = recorder.calls()
    assert calls and all("token" not in query for _, query in calls)
