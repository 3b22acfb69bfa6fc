"""What a card's signature covers: every member of the document a client reads.

A served card is a hybrid document (v1.0 members beside v0.3's ``url``,
``preferredTransport``, ``additionalInterfaces``, type-tagged security schemes and
v0.1's ``authentication``), so a signature over its v1.0 members alone would let the
members older readers act on be changed unseen. Each card a dialect serves is fetched
over HTTP, served again (as it is, then changed one member at a time) beside the
agent's JWKS, and read by the client and the CLI with ``--verify``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import msgspec
import pytest
from click.testing import CliRunner
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from interlingua import Agent
from interlingua.cli.main import main
from interlingua.client import CardVerifier, Client, UnverifiedCard
from interlingua.core.card_signing import CardSignatureError, verify_card_document
from interlingua.core.dialects.v0_3 import decode_card_v03
from interlingua.core.dialects.v1_0 import decode_card_v1
from interlingua.core.model import AgentCard, AgentSkill
from interlingua.server.auth import APIKeyAuth, AuthConfig, CardSigning
from tests.live import bind_loopback

from .helpers import serve_agent, serve_app

KEY = {"X-API-Key": "covered-" + "k" * 20}
EVIL = "https://evil.example/"


async def _echo(text: str) -> str:
    return text


def _premium(base: AgentCard) -> AgentCard:
    """The extended card: its calls go to other URLs than the public card's."""
    moved = [msgspec.structs.replace(i, url=i.url.rstrip("/") + "/premium/")
             for i in base.interfaces]
    return msgspec.structs.replace(base, name="Covered+", interfaces=moved)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    agent = Agent("Covered", "A signed card.", _echo,
                  skills=[AgentSkill(id="echo", name="Echo", tags=["t"])],
                  extended_card=_premium)
    auth = AuthConfig(schemes={"key": APIKeyAuth({"me": KEY["X-API-Key"]})})
    with serve_agent(agent, auth=auth, card_signing=CardSigning()) as url:
        yield url


def _served(base: str) -> dict[str, bytes]:
    """Each card document the agent serves over HTTP, by the path a dialect reads it at."""
    def rpc(method: str, version: str) -> bytes:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {}}
        reply = c.post(base + "/", json=body, headers={**KEY, "A2A-Version": version})
        return json.dumps(reply.json()["result"]).encode()

    with httpx.Client(timeout=10) as c:
        return {
            "well-known": c.get(base + "/.well-known/agent-card.json").content,
            "well-known-v1": c.get(base + "/.well-known/agent-card.json",
                                   headers={"A2A-Version": "1.0"}).content,
            "jsonrpc-v1-extended": rpc("GetExtendedAgentCard", "1.0"),
            "jsonrpc-v03-extended": rpc("agent/getAuthenticatedExtendedCard", "0.3"),
            "rest-v1-extended": c.get(base + "/extendedAgentCard", headers=KEY).content,
            "rest-v03-card": c.get(base + "/v1/card", headers=KEY).content,
            "rest-v03-public": c.get(base + "/v1/card").content,
            "v02-extended": c.get(base + "/agent/authenticatedExtendedCard",
                                  headers=KEY).content,
        }


@pytest.fixture(scope="module")
def served(server: str) -> dict[str, bytes]:
    return _served(server)


@pytest.fixture(scope="module")
def jwks(server: str) -> Any:
    return httpx.get(server + "/.well-known/jwks.json").json()


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """A change that sets the member at ``path`` (dotted; digits index lists)."""
    def change(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = doc
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        node[int(last) if last.isdigit() else last] = value
    return change


def _append_interface(doc: dict[str, Any]) -> None:
    doc["additionalInterfaces"].append({"url": EVIL, "transport": "GRPC"})


#: one change to each class of member a reader acts on, by name
CHANGES: dict[str, Callable[[dict[str, Any]], None]] = {
    "v0.3 url": _set("url", EVIL),
    "v0.3 preferredTransport": _set("preferredTransport", "HTTP+JSON"),
    "v0.3 additionalInterfaces url": _set("additionalInterfaces.1.url", EVIL),
    "v0.3 additionalInterfaces added": _append_interface,
    "v0.3 protocolVersion": _set("protocolVersion", "0.2.5"),
    "v0.3 security scheme": _set("securitySchemes.key.name", "X-Evil"),
    "v0.3 security": _set("security", [{"other": []}]),
    "v0.3 supportsAuthenticatedExtendedCard": _set("supportsAuthenticatedExtendedCard", False),
    "v0.3 stateTransitionHistory": _set("capabilities.stateTransitionHistory", False),
    "capabilities streaming": _set("capabilities.streaming", False),
    "v0.1 authentication": _set("authentication", {"schemes": ["Bearer"]}),
    "v1.0 supportedInterfaces": _set("supportedInterfaces.0.url", EVIL),
    "v1.0 security scheme": _set("securitySchemes.key.apiKeySecurityScheme.name", "X-Evil"),
    "a member added": _set("x-note", "trust me"),
}


@pytest.fixture(scope="module")
def site(served: dict[str, bytes], jwks: Any) -> Iterator[str]:
    """Every served document at ``/{name}/card.json`` as served, and changed at
    ``/changed/{i}/card.json`` (the well-known card, ``CHANGES``' i-th change), beside
    the agent's JWKS at the root."""
    docs = {f"/{name}/card.json": body for name, body in served.items()}
    for i, change in enumerate(CHANGES.values()):
        doc = copy.deepcopy(json.loads(served["well-known"]))
        change(doc)
        docs[f"/changed/{i}/card.json"] = json.dumps(doc).encode()
    keys = json.dumps(jwks).encode()

    async def route(request: Request) -> Response:
        path = request.url.path
        if path.endswith("/.well-known/jwks.json"):
            return Response(keys if path == "/.well-known/jwks.json" else b"",
                            status_code=200 if path == "/.well-known/jwks.json" else 404,
                            media_type="application/json")
        body = docs.get(path)
        if body is None:
            return Response(b"", status_code=404)
        return Response(body, media_type="application/json")

    app = Starlette(routes=[Route("/{path:path}", route)])
    with serve_app(app, bind_loopback()) as url:
        yield url


def test_the_changes_change_what_a_reader_reads(served: dict[str, bytes]) -> None:
    # (each change is to a member that is there: a change to nothing would prove nothing)
    for name, change in CHANGES.items():
        doc = json.loads(served["well-known"])
        before = json.dumps(doc, sort_keys=True)
        change(doc)
        assert json.dumps(doc, sort_keys=True) != before, name


@pytest.mark.parametrize("name", list(CHANGES))
async def test_a_changed_member_fails_verification(
        site: str, served: dict[str, bytes], jwks: Any, name: str) -> None:
    doc = json.loads(served["well-known"])
    CHANGES[name](doc)
    with pytest.raises(CardSignatureError, match="does not match"):
        verify_card_document(doc, jwks)
    url = f"{site}/changed/{list(CHANGES).index(name)}/card.json"
    async with Client(url, card_verifier=CardVerifier()) as c:
        with pytest.raises(UnverifiedCard, match="does not match the card"):
            await c.get_card()


@pytest.mark.parametrize("name", list(CHANGES))
def test_the_cli_refuses_a_changed_member(site: str, name: str) -> None:
    url = f"{site}/changed/{list(CHANGES).index(name)}/card.json"
    r = CliRunner().invoke(main, ["card", url, "--verify"], prog_name="interlingua")
    assert r.exit_code == 1, r.output
    # both signatures (one key, two payloads) fail alike: said once, on one line
    [line] = r.stderr.splitlines()
    assert line.count("does not match the card") == 1, line


#: the card of each dialect's path, as served
WHERE = ["well-known", "well-known-v1", "jsonrpc-v1-extended", "jsonrpc-v03-extended",
         "rest-v1-extended", "rest-v03-card", "rest-v03-public", "v02-extended"]


@pytest.mark.parametrize("where", WHERE)
async def test_every_served_card_verifies_as_served(site: str, where: str) -> None:
    public = where.startswith("well-known") or where.endswith("public")
    async with Client(f"{site}/{where}/card.json", card_verifier=CardVerifier()) as c:
        assert (await c.get_card()).name == ("Covered" if public else "Covered+")


@pytest.mark.parametrize("where", WHERE)
def test_the_cli_verifies_every_served_card(site: str, where: str) -> None:
    url = f"{site}/{where}/card.json"
    r = CliRunner().invoke(main, ["card", url, "--verify"], prog_name="interlingua")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[-1].startswith("Verified: signed by key ")


def _v03_members(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: doc.get(k) for k in ("url", "preferredTransport", "additionalInterfaces",
                                    "protocolVersion", "supportsAuthenticatedExtendedCard")}


@pytest.mark.parametrize("where", ["jsonrpc-v03-extended", "rest-v03-card", "v02-extended"])
def test_the_extended_cards_v03_url_is_its_own(served: dict[str, bytes], jwks: Any,
                                               where: str) -> None:
    """The extended card's calls go elsewhere than the public card's: a v0.3 reader is
    sent there too, by a document whose every member is signed."""
    doc = json.loads(served[where])
    card = verify_card_document(doc, jwks)
    legacy = [i.url for i in card.interfaces
              if i.binding == "JSONRPC" and i.protocol_version == "0.3"]
    assert legacy and legacy[0].endswith("/premium/")
    assert doc["url"] == legacy[0]
    assert {i["url"] for i in doc["additionalInterfaces"]} <= {i.url for i in card.interfaces}
    # the same card, whichever path of the three it was read at
    others = [json.loads(served[w]) for w in ("jsonrpc-v03-extended", "rest-v03-card",
                                               "v02-extended")]
    assert all(_v03_members(o) == _v03_members(doc) for o in others)
    with pytest.raises(CardSignatureError, match="does not match"):
        verify_card_document({**doc, "url": EVIL}, jwks)


@pytest.mark.parametrize("where", ["well-known", "rest-v03-card", "v02-extended"])
def test_the_capabilities_read_by_each_generation_agree_and_are_signed(
        served: dict[str, bytes], jwks: Any, where: str) -> None:
    doc = json.loads(served[where])
    as_v1, as_v03 = decode_card_v1(doc).capabilities, decode_card_v03(doc).capabilities
    for field in ("streaming", "push_notifications", "extended_card"):
        assert getattr(as_v1, field) == getattr(as_v03, field), field
    # what a v0.3 reader reads of the capabilities is what was signed
    assert as_v03.state_transition_history is True
    caps = doc["capabilities"]
    for member in ("streaming", "pushNotifications", "stateTransitionHistory"):
        with pytest.raises(CardSignatureError, match="does not match"):
            verify_card_document({**doc, "capabilities": {**caps, member: not caps[member]}},
                                 jwks)
