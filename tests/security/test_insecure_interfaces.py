"""A card read over HTTPS that names an interface on plain HTTP (or gRPC without TLS) on
another host: the client passes it over for one it can use safely, refuses the card
(``InsecureInterface``, an ``InvalidCard``) when it names no other, and sends there
only when told to (``allow_insecure_interfaces``, ``--allow-insecure-interfaces``).
A loopback host is this machine: its interfaces are used as named. (The client sent
the caller's credentials to whatever the card named, in clear text.)

The interfaces in clear text are at ``agent.example``, which no request reaches: the
choice and the refusal are made before any call."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from click.testing import CliRunner

from interlingua import Client
from interlingua.cli.main import main
from interlingua.client import InsecureInterface, InvalidCard
from interlingua.core.model import Task
from tests.client.agents import agent
from tests.live import bind_loopback, live_agent, live_server

from .helpers import PKI, serve_agent, serve_app

pytestmark = pytest.mark.timeout(30)

CLEAR = "http://agent.example/"
SECRET = {"Authorization": "Bearer s3cret"}


class CardPeer:
    """Serves, at ``/NAME/.well-known/agent-card.json``, a v1.0 card naming the
    interfaces ``cards[NAME]`` holds (binding, URL)."""

    def __init__(self, cards: dict[str, list[tuple[str, str]]]) -> None:
        self.cards = cards

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        name = scope["path"].strip("/").split("/")[0]
        card = {"name": name, "description": "d", "version": "1", "capabilities": {},
                "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
                "skills": [], "supportedInterfaces": [
                    {"url": url, "protocolBinding": binding, "protocolVersion": "1.0"}
                    for binding, url in self.cards.get(name, [])]}
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": json.dumps(card).encode()})


@dataclass
class Peers:
    https: str  # the cards, over HTTPS
    http: str  # the same cards, over plain HTTP on loopback
    secure: str  # the test agent, over HTTPS
    plain: str  # the test agent, over plain HTTP on loopback


@pytest.fixture(scope="module")
def peers(pki: PKI) -> Iterator[Peers]:
    with serve_agent(agent, certfile=str(pki.server)) as secure, live_agent(agent) as plain:
        port = plain.rpartition(":")[2]
        cards = {
            "clear-first": [("JSONRPC", CLEAR), ("JSONRPC", secure + "/")],
            "clear-only": [("JSONRPC", CLEAR), ("HTTP+JSON", CLEAR.rstrip("/"))],
            "grpc-clear": [("GRPC", "grpc://agent.example:50051")],
            "grpc-bare": [("GRPC", "agent.example:50051")],
            "loopback": [("JSONRPC", plain + "/")],
            "localhost": [("HTTP+JSON", f"http://localhost:{port}")],
        }
        peer = CardPeer(cards)
        with serve_app(peer, bind_loopback(), certfile=str(pki.server)) as https, \
                live_server(peer) as http:
            yield Peers(https, http, secure, plain)


async def test_an_interface_in_clear_text_is_passed_over(pki: PKI, peers: Peers) -> None:
    async with Client(f"{peers.https}/clear-first/", verify=str(pki.ca),
                      headers=SECRET) as client:
        await client.get_card()
        assert [ep.url for ep in client.endpoints] == [peers.secure + "/"]
        task = await client.send("echo this")
        assert isinstance(task, Task) and task.status.state.value == "completed"
        assert client.endpoint is not None and client.endpoint.url == peers.secure + "/"


@pytest.mark.parametrize("name", ["clear-only", "grpc-clear"])
async def test_a_card_naming_only_interfaces_in_clear_text_is_refused(
        pki: PKI, peers: Peers, name: str) -> None:
    for call in ("get_card", "send"):
        async with Client(f"{peers.https}/{name}/", verify=str(pki.ca),
                          headers=SECRET) as client:
            with pytest.raises(InsecureInterface) as caught:
                await (client.get_card() if call == "get_card" else client.send("hi"))
            assert client.card is None  # not kept, as any card that is no use
    assert isinstance(caught.value, InvalidCard)
    message = str(caught.value)
    assert "agent.example" in message and "clear text" in message, message
    assert "allow_insecure_interfaces" in message and "\n" not in message


async def test_the_caller_may_allow_them(pki: PKI, peers: Peers) -> None:
    async with Client(f"{peers.https}/clear-only/", verify=str(pki.ca),
                      allow_insecure_interfaces=True) as client:
        endpoint = await client.resolve()
        assert (endpoint.binding, endpoint.url) == ("JSONRPC", CLEAR)
        assert [ep.url for ep in client.endpoints] == [CLEAR, CLEAR.rstrip("/")]


@pytest.mark.parametrize(("name", "where"), [
    ("loopback", "{plain}/"),
    ("localhost", "http://localhost:{port}"),
])
async def test_loopback_interfaces_are_used(pki: PKI, peers: Peers, name: str,
                                            where: str) -> None:
    expected = where.format(plain=peers.plain, port=peers.plain.rpartition(":")[2])
    async with Client(f"{peers.https}/{name}/", verify=str(pki.ca)) as client:
        task = await client.send("echo this")
        assert isinstance(task, Task) and task.status.state.value == "completed"
        assert client.endpoint is not None and client.endpoint.url == expected


async def test_a_bare_grpc_address_of_an_https_card_is_tls(pki: PKI, peers: Peers) -> None:
    async with Client(f"{peers.https}/grpc-bare/", verify=str(pki.ca)) as client:
        endpoint = await client.resolve()
        assert endpoint.url == "grpcs://agent.example:50051"


async def test_a_card_read_in_clear_text_is_taken_as_it_is(peers: Peers) -> None:
    # (nothing is downgraded: the caller chose plain HTTP for the card itself)
    async with Client(f"{peers.http}/clear-only/") as client:
        endpoint = await client.resolve()
        assert endpoint.url == CLEAR


def test_the_cli_refuses_them_and_allows_them_when_told(pki: PKI, peers: Peers) -> None:
    runner = CliRunner()
    url = f"{peers.https}/clear-only/"
    trust = ["--ca-bundle", str(pki.ca)]
    for command in (["card", url], ["send", url, "hi"]):
        refused = runner.invoke(main, [*command, *trust, "-H", "Authorization: Bearer s"],
                                prog_name="interlingua")
        assert refused.exit_code == 1, refused.output
        assert "clear text" in refused.output and "--allow-insecure-interfaces" in \
            refused.output and "Traceback" not in refused.output
    allowed = runner.invoke(main, ["card", url, *trust, "--allow-insecure-interfaces"],
                            prog_name="interlingua")
    assert allowed.exit_code == 0, allowed.output
    assert "agent.example" in allowed.output
    used = runner.invoke(main, ["send", f"{peers.https}/clear-first/", "echo", *trust],
                         prog_name="interlingua")
    assert used.exit_code == 0, used.output


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.8.9.10", True), ("[::1]", True), ("::ffff:127.0.0.1", True),
    ("localhost", True), ("LOCALHOST.", True), ("api.localhost", True),
    ("agent.example", False), ("10.0.0.1", False), ("localhost.example", False),
    ("[::2]", False), ("", False),
])
def test_which_hosts_are_loopback(host: str, loopback: bool) -> None:
    from interlingua.client.interfaces import is_loopback

    assert is_loopback(host) is loopback
