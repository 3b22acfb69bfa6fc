"""A card whose interface URL no agent can be reached at (a bracket left open, a port
past 65535): the card is the peer's, so it is ``InvalidCard`` naming the interface,
from the client and as one line from the command, and an interface of the card that
works is used instead. (A bare ``ValueError`` came out of ``get_card``, or anyio's
``ExceptionGroup`` around ``OverflowError`` out of the first call, and the command
printed the traceback.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from interlingua import Client
from interlingua.cli.main import main
from interlingua.client.errors import InvalidCard
from interlingua.core.errors import TaskNotFound
from tests.live import live_agent, live_server

from .agents import agent

pytestmark = pytest.mark.timeout(30)

#: (binding, URL) of the interfaces a card names, and what the error says of them
BROKEN = {
    "bracket": (("JSONRPC", "http://[::1"), "Invalid IPv6 URL"),
    "JSON-RPC port": (("JSONRPC", "http://127.0.0.1:99999/"), "out of range"),
    "HTTP+JSON port": (("HTTP+JSON", "http://127.0.0.1:99999"), "out of range"),
    "relative port": (("JSONRPC", "//127.0.0.1:99999/"), "out of range"),
}


class CardPeer:
    """Serves, at ``/NAME/.well-known/agent-card.json``, a card naming the interfaces
    ``cards[NAME]`` holds."""

    def __init__(self, cards: dict[str, list[tuple[str, str]]]) -> None:
        self.cards = cards

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        name = scope["path"].strip("/").split("/")[0]
        card = {"name": "x", "description": "x", "version": "1", "capabilities": {},
                "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
                "skills": [], "supportedInterfaces": [
                    {"url": url, "protocolBinding": binding, "protocolVersion": "1.0"}
                    for binding, url in self.cards[name]]}
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": json.dumps(card).encode()})


@pytest.fixture(scope="module")
def peer() -> Iterator[str]:
    with live_agent(agent) as agent_url:
        cards = {name: [iface] for name, (iface, _) in BROKEN.items()}
        # a broken interface first, then one that works (the test agent's JSON-RPC)
        cards["one works"] = [BROKEN["bracket"][0], BROKEN["HTTP+JSON port"][0],
                              ("JSONRPC", agent_url + "/")]
        with live_server(CardPeer(cards)) as url:
            yield url


@pytest.mark.parametrize("name", BROKEN)
async def test_a_card_whose_only_interface_url_is_broken_is_invalid(
        peer: str, name: str) -> None:
    (binding, url), said = BROKEN[name]
    for call in ("get_card", "get_task", "send"):
        async with Client(f"{peer}/{name}/", timeout=5) as client:
            with pytest.raises(InvalidCard) as caught:
                await (client.get_card() if call == "get_card"
                       else client.get_task("t") if call == "get_task" else client.send("hi"))
        message = str(caught.value)
        assert f"{binding} interface" in message and repr(url) in message, message
        assert said in message and "\n" not in message


async def test_the_interface_that_works_is_used(peer: str) -> None:
    async with Client(f"{peer}/one works/", timeout=5) as client:
        with pytest.raises(TaskNotFound):  # (the test agent answered)
            await client.get_task("t")
        assert [ep.binding for ep in client.endpoints] == ["JSONRPC"]


@pytest.mark.parametrize("args", [("card",), ("send",), ("get",)])
def test_the_command_says_it_in_one_line(peer: str, args: tuple[str, ...]) -> None:
    for name in ("bracket", "HTTP+JSON port"):
        extra = {"card": (), "send": ("hi",), "get": ("t",)}[args[0]]
        result = CliRunner().invoke(main, [*args, f"{peer}/{name}/", *extra],
                                    prog_name="interlingua")
        assert isinstance(result.exception, SystemExit), result.exception
        assert result.exit_code == 1, (result.output, result.stderr)
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, \
            result.stderr
        assert "interface" in result.stderr and "Traceback" not in result.output
