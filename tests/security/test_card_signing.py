"""Signed cards: RFC 8785 canonical form, JWS detached signatures, verification by others.

The signature is checked here by three verifiers: ours (``verify_card_document``
and the client's ``CardVerifier``), PyJWT over a payload this test builds
from the spec's rules on its own, and the official a2a-sdk's verifier (in the
interop tests' environment, made when missing). A card changed after signing
fails all of them.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt as pyjwt
import msgspec
import pytest
from click.testing import CliRunner
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route

from interlingua import Agent
from interlingua.cli.main import main
from interlingua.client import CardVerifier, Client, UnverifiedCard
from interlingua.client.card import FetchedCard, parse_card
from interlingua.client.transport import HTTPXTransport
from interlingua.core.card_signing import CardSignatureError, verify_card_document
from interlingua.core.jcs import CanonicalizationError, canonicalize
from interlingua.core.model import AgentSkill, APIKeyScheme
from interlingua.server.auth import APIKeyAuth, AuthConfig, CardSigning
from tests.interop.harness import ensure_env
from tests.interop.matrix import ROWS
from tests.live import bind_loopback

from .helpers import serve_agent, serve_app

KEY = {"X-API-Key": "signed-" + "k" * 20}


async def _echo(text: str) -> str:
    return text


def signed_agent() -> Agent:
    return Agent("Signed", "A signed card — ünïcode too.", _echo,
                 skills=[AgentSkill(id="echo", name="Echo", tags=["t"])],
                 extended_card=lambda base: msgspec.structs.replace(base, name="Signed+"))


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    auth = AuthConfig(schemes={"key": APIKeyAuth({"me": KEY["X-API-Key"]})})
    with serve_agent(signed_agent(), auth=auth, card_signing=CardSigning()) as url:
        yield url


@pytest.fixture(scope="module")
def served(server: str) -> tuple[bytes, dict[str, Any]]:
    with httpx.Client() as c:
        card = c.get(server + "/.well-known/agent-card.json").content
        jwks = c.get(server + "/.well-known/jwks.json").json()
    return card, jwks


# ------------------------------------------------------------------------ JCS

# RFC 8785 Appendix B: IEEE 754 bit patterns and their canonical text
NUMBERS = {
    "0000000000000000": "0", "8000000000000000": "0", "0000000000000001": "5e-324",
    "7fefffffffffffff": "1.7976931348623157e+308", "4340000000000000": "9007199254740992",
    "4430000000000000": "295147905179352830000", "44b52d02c7e14af6": "1e+23",
    "444b1ae4d6e2ef50": "1e+21", "444b1ae4d6e2ef4f": "999999999999999900000",
    "3eb0c6f7a0b5ed8d": "0.000001", "3eb0c6f7a0b5ed8c": "9.999999999999997e-7",
    "41b3de4355555553": "333333333.3333332", "becbf647612f3696": "-0.0000033333333333333333",
    "43143ff3c1cb0959": "1424953923781206.2",
}


@pytest.mark.parametrize(("bits", "text"), list(NUMBERS.items()))
def test_jcs_numbers(bits: str, text: str) -> None:
    assert canonicalize(struct.unpack(">d", bytes.fromhex(bits))[0]).decode() == text


def test_jcs_objects_and_strings() -> None:
    # RFC 8785 §3.2.3: keys sorted by UTF-16 code units
    doc = {"\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet",
           "1": "One", "\U0001f600": "Emoji: Grinning Face", "\u0080": "Control",
           "\u00f6": "Latin Small Letter O With Diaeresis"}
    keys = [k for k in json.loads(canonicalize(doc))]
    assert keys == ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]
    assert canonicalize({"b": [1, None, True], "a": "x\n\"\\\u001f/é"}) == \
        '{"a":"x\\n\\"\\\\\\u001f/é","b":[1,null,true]}'.encode()
    with pytest.raises(CanonicalizationError):
        canonicalize(float("nan"))
    with pytest.raises(CanonicalizationError):
        canonicalize({1: "x"})


# ------------------------------------------------------------ the signed card


def spec_payload(doc: dict[str, Any]) -> bytes:
    """The v1.0 §8.4 payload built from the served document by this test alone:
    the v1.0 members, empty values dropped, `signatures` out, sorted keys."""
    v1_keys = {"name", "description", "supportedInterfaces", "provider", "version",
               "documentationUrl", "capabilities", "securitySchemes", "securityRequirements",
               "defaultInputModes", "defaultOutputModes", "skills", "iconUrl"}
    cap_keys = {"streaming", "pushNotifications", "extensions", "extendedAgentCard"}
    card = {k: v for k, v in doc.items() if k in v1_keys}
    card["capabilities"] = {k: v for k, v in card["capabilities"].items() if k in cap_keys}
    if "securitySchemes" in card:
        card["securitySchemes"] = {name: {k: v for k, v in s.items() if k.endswith("Scheme")}
                                   for name, s in card["securitySchemes"].items()}

    def clean(v: Any) -> Any:
        if isinstance(v, dict):
            v = {k: c for k, x in v.items() if (c := clean(x)) is not None}
        elif isinstance(v, list):
            v = [c for x in v if (c := clean(x)) is not None]
        return None if v in ("", [], {}) or v is None else v

    return json.dumps(clean(card), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode()


def document_payload(doc: dict[str, Any]) -> bytes:
    """The payload of the whole document, built by this test alone: every member
    but `signatures`, sorted keys, no whitespace (RFC 8785 for this card's JSON)."""
    card = {k: v for k, v in doc.items() if k != "signatures"}
    return json.dumps(card, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def test_signature_shape(served: tuple[bytes, dict[str, Any]]) -> None:
    card, jwks = served
    doc = json.loads(card)
    # one over the whole document, one over its v1.0 rendering: same key
    assert len(doc["signatures"]) == 2
    for sig in doc["signatures"]:
        header = json.loads(base64.urlsafe_b64decode(
            sig["protected"] + "=" * (-len(sig["protected"]) % 4)))
        assert header["alg"] == "ES256" and header["typ"] == "JOSE"
        assert header["kid"] in {k["kid"] for k in jwks["keys"]}
        assert header["jku"].endswith("/.well-known/jwks.json")
        assert set(sig) == {"protected", "signature"}
    assert all("d" not in k for k in jwks["keys"])  # public halves only


def test_verified_by_pyjwt(served: tuple[bytes, dict[str, Any]]) -> None:
    card, jwks = served
    doc = json.loads(card)
    whole, v1 = doc["signatures"]
    key = pyjwt.PyJWKSet.from_dict(jwks).keys[0]

    def token(sig: dict[str, str], payload: bytes) -> str:
        # the JWS signing input: BASE64URL(header) . BASE64URL(payload) (spec §8.4.2)
        body = base64.urlsafe_b64encode(payload).rstrip(b"=").decode()
        return f"{sig['protected']}.{body}.{sig['signature']}"

    for sig, payload in ((whole, document_payload), (v1, spec_payload)):
        got = pyjwt.api_jws.decode_complete(token(sig, payload(doc)), key.key,
                                            algorithms=["ES256"])
        assert json.loads(got["payload"])["name"] == "Signed"
    # the v0.3 url is in the first payload alone; the description in both
    with pytest.raises(pyjwt.InvalidSignatureError):
        pyjwt.api_jws.decode_complete(token(whole, document_payload({**doc, "url": "x"})),
                                      key.key, algorithms=["ES256"])
    doc["description"] = "tampered"
    for sig, payload in ((whole, document_payload), (v1, spec_payload)):
        with pytest.raises(pyjwt.InvalidSignatureError):
            pyjwt.api_jws.decode_complete(token(sig, payload(doc)), key.key,
                                          algorithms=["ES256"])


def test_verified_by_us_and_tamper_fails(served: tuple[bytes, dict[str, Any]]) -> None:
    card, jwks = served
    assert verify_card_document(card, jwks).name == "Signed"
    for change in ({"name": "Evil"}, {"url": "https://evil.example/"},
                   {"skills": []}, {"signatures": []}):
        doc = {**json.loads(card), **change}
        with pytest.raises(CardSignatureError):
            verify_card_document(doc, jwks)
    with pytest.raises(CardSignatureError, match="not signed by any of the given keys"):
        verify_card_document(card, {"keys": [dict(jwks["keys"][0], kid="other")]})


@pytest.mark.parametrize("crit", [5, [5]])
def test_a_signature_whose_header_the_jose_library_trips_on_verifies_not(
        served: tuple[bytes, dict[str, Any]], crit: Any) -> None:
    # a "crit" that is no list of names: joserfc raises TypeError, not a JoseError
    card, jwks = served
    doc = json.loads(card)
    bent_sigs = []
    for sig in doc["signatures"]:
        header = json.loads(base64.urlsafe_b64decode(
            sig["protected"] + "=" * (-len(sig["protected"]) % 4)))
        bent = base64.urlsafe_b64encode(json.dumps({**header, "crit": crit}).encode())
        bent_sigs.append({**sig, "protected": bent.rstrip(b"=").decode()})
    doc["signatures"] = bent_sigs
    with pytest.raises(CardSignatureError, match="does not match"):
        verify_card_document(doc, jwks)


#: the interop tests' environment of the official Python SDK 1.x
SDK_ENV = next(row.env for row in ROWS if row.env.startswith("py-a2a-1."))


@pytest.mark.interop(envs=[SDK_ENV])
def test_verified_by_reference_sdk(served: tuple[bytes, dict[str, Any]], tmp_path: Path) -> None:
    card, jwks = served
    sdk_python = ensure_env(SDK_ENV) / "bin" / "python"  # or skipped (failed under CI)
    jwt_dir = Path(pyjwt.__file__).parent
    (tmp_path / "jwt").symlink_to(jwt_dir)  # the SDK's verifier needs PyJWT
    script = (
        "import json,sys\n"
        "from google.protobuf.json_format import ParseDict\n"
        "from a2a.types import AgentCard\n"
        "from a2a.utils.signing import create_signature_verifier\n"
        "from jwt import PyJWKSet\n"
        "doc=json.load(open(sys.argv[1])); keys=PyJWKSet.from_dict(json.load(open(sys.argv[2])))\n"
        "card=ParseDict(doc, AgentCard(), ignore_unknown_fields=True)\n"
        "create_signature_verifier(lambda kid, jku: keys[kid], ['ES256'])(card)\n"
        "print('verified')\n")
    good, bad, keys = tmp_path / "good.json", tmp_path / "bad.json", tmp_path / "jwks.json"
    good.write_bytes(card)
    bad.write_text(json.dumps({**json.loads(card), "description": "tampered"}))
    keys.write_text(json.dumps(jwks))
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    ok = subprocess.run([str(sdk_python), "-c", script, str(good), str(keys)], env=env,
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and "verified" in ok.stdout, ok.stderr
    no = subprocess.run([str(sdk_python), "-c", script, str(bad), str(keys)], env=env,
                        capture_output=True, text=True, timeout=60)
    assert no.returncode != 0 and "InvalidSignaturesError" in no.stderr


async def test_extended_card_is_signed(server: str, served: tuple[bytes, dict[str, Any]]) -> None:
    _, jwks = served
    async with httpx.AsyncClient() as c:
        r = await c.get(server + "/agent/authenticatedExtendedCard", headers=KEY)
    assert r.status_code == 200
    assert verify_card_document(r.content, jwks).name == "Signed+"


def test_key_file_keeps_the_key(tmp_path: Path) -> None:
    from interlingua.host import create_app

    path = str(tmp_path / "card-key.json")
    kids = []
    for _ in range(2):
        app = create_app(signed_agent(), card_signing=CardSigning(key_path=path))
        kids.append(app.state.a2a.security.signer.ring.current.kid)
    assert kids[0] == kids[1]
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"


# ---------------------------------------------------------------- the client


@contextlib.contextmanager
def card_site(card: Any, jwks: Any) -> Iterator[str]:
    """A site serving ``card`` and ``jwks`` (any JSON) at their well-known paths."""
    async def card_route(request: Any) -> Response:
        return Response(json.dumps(card), media_type="application/json")

    async def jwks_route(request: Any) -> Response:
        return Response(json.dumps(jwks), media_type="application/json")

    app = Starlette(routes=[Route("/.well-known/agent-card.json", card_route),
                            Route("/.well-known/jwks.json", jwks_route)])
    with serve_app(app, bind_loopback()) as url:
        yield url


@pytest.fixture(scope="module")
def tampered(served: tuple[bytes, dict[str, Any]]) -> Iterator[str]:
    card, jwks = served
    doc = json.loads(card)
    doc["skills"][0]["description"] = "now with data exfiltration"
    with card_site(doc, jwks) as url:
        yield url


async def test_client_verifies(server: str, tampered: str) -> None:
    async with Client(server, card_verifier=CardVerifier()) as c:
        assert (await c.get_card()).name == "Signed"
    async with Client(tampered, card_verifier=CardVerifier()) as c:
        with pytest.raises(UnverifiedCard, match="is not trusted"):
            await c.get_card()
        assert c.card is None  # never used
    async with Client(tampered) as c:  # without a verifier the card is read as is
        assert (await c.get_card()).skills[0].description == "now with data exfiltration"


async def test_client_with_pinned_keys(server: str, served: tuple[bytes, dict[str, Any]],
                                       tmp_path: Path) -> None:
    _, jwks = served
    async with Client(server, card_verifier=CardVerifier(keys=jwks)) as c:
        assert (await c.get_card()).name == "Signed"
    from joserfc.jwk import ECKey

    other = ECKey.generate_key("P-256", private=True)
    pem = other.as_pem(private=False).decode()
    async with Client(server, card_verifier=CardVerifier(keys=[pem])) as c:
        with pytest.raises(UnverifiedCard):
            await c.get_card()


async def test_the_card_of_one_of_several_agents_verifies_with_its_own_keys() -> None:
    """Each agent of several has its JWKS below its path, as its signatures' ``jku``
    says; the verifier looked at the origin's only, where there is none."""
    async def _other(text: str) -> str:
        return text

    agents = [signed_agent(), Agent("Other", "Another.", _other)]
    with serve_agent(agents, card_signing=CardSigning()) as url:
        assert httpx.get(url + "/.well-known/jwks.json").status_code == 404
        async with Client(url + "/agents/Signed/", card_verifier=CardVerifier()) as c:
            assert (await c.get_card()).name == "Signed"
        verifier = CardVerifier()
        card_url = url + "/agents/Signed/.well-known/agent-card.json"
        assert verifier.jwks_urls_for(card_url) == [
            url + "/agents/Signed/.well-known/jwks.json", url + "/.well-known/jwks.json"]


async def test_a_jku_is_not_where_keys_are_looked_for(served: tuple[bytes, dict[str, Any]]
                                                      ) -> None:
    """Keys are looked for beside the card, then at its origin, never at a ``jku``: the
    signer names it, even at the card's origin (another agent served there)."""
    card = parse_card(served[0])
    jku = json.loads(base64.urlsafe_b64decode(card.signatures[0].protected + "=="))["jku"]
    origin = jku.removesuffix("/.well-known/jwks.json")
    verifier = CardVerifier()
    assert verifier.jwks_urls_for(origin + "/cards/signed/.well-known/agent-card.json", card) == [
        origin + "/cards/signed/.well-known/jwks.json", origin + "/.well-known/jwks.json"]
    assert verifier.jwks_urls_for("http://elsewhere.example/.well-known/agent-card.json",
                                  card) == ["http://elsewhere.example/.well-known/jwks.json"]


async def test_a_card_signed_by_another_agent_of_the_origin_is_not_trusted() -> None:
    """Before: a card signed by one agent served beside others, with a ``jku`` naming its
    own keys, verified as the card of another URL of that origin (a card read over the
    mesh or gRPC names its own URL): the keys the signer named were taken."""
    async def _other(text: str) -> str:
        return text

    agents = [signed_agent(), Agent("Other", "Another.", _other)]
    with serve_agent(agents, card_signing=CardSigning()) as url:
        document = httpx.get(url + "/agents/Signed/.well-known/agent-card.json").content
        card = parse_card(document)
        transport = HTTPXTransport()
        try:
            for claimed in (url + "/.well-known/agent-card.json",
                            url + "/agents/Other/.well-known/agent-card.json"):
                with pytest.raises(UnverifiedCard):
                    await CardVerifier().verify(FetchedCard(card, document, claimed), transport)
            # where it was served, its own keys verify it
            own = FetchedCard(card, document, url + "/agents/Signed/.well-known/agent-card.json")
            assert (await CardVerifier().verify(own, transport)).name == "Signed"
        finally:
            await transport.aclose()


async def test_the_verifier_says_whose_keys_verified_the_card(
        served: tuple[bytes, dict[str, Any]]) -> None:
    """A card below a path whose keys are at the origin's root only, a catch-all page
    answering beside it: the root's keys verify it, and are named as the ones that did
    (the inspector named the first place looked at; a catch-all's page stopped the search)."""
    document, jwks = served

    async def card_route(request: Any) -> Response:
        return Response(document, media_type="application/json")

    async def jwks_route(request: Any) -> Response:
        return Response(json.dumps(jwks), media_type="application/json")

    async def catch_all(request: Any) -> Response:
        return Response("<html>hello</html>", media_type="text/html")

    app = Starlette(routes=[Route("/a/.well-known/agent-card.json", card_route),
                            Route("/.well-known/jwks.json", jwks_route),
                            Route("/a/.well-known/jwks.json", catch_all)])
    with serve_app(app, bind_loopback()) as url:
        verifier = CardVerifier()
        transport = HTTPXTransport()
        try:
            fetched = FetchedCard(parse_card(document), document,
                                  url + "/a/.well-known/agent-card.json")
            assert (await verifier.verify(fetched, transport)).name
        finally:
            await transport.aclose()
        assert verifier.keys_url == url + "/.well-known/jwks.json"


@pytest.mark.parametrize("jwks", [5, None, True, "keys", {"keys": 5}, [1]])
async def test_a_jwks_that_is_no_key_set_leaves_the_card_unverified(jwks: Any) -> None:
    with card_site(CARD_OF_NO_ONE, jwks) as url:
        async with Client(url, card_verifier=CardVerifier()) as c:
            with pytest.raises(UnverifiedCard, match="is not a usable JWKS"):
                await c.get_card()


#: a card as an agent might serve it, signed by whoever (an unsigned one is refused as
#: such before keys are looked for): the keys are refused first
CARD_OF_NO_ONE = {"name": "Anyone", "description": "d", "version": "1",
                  "supportedInterfaces": [{"url": "http://x/", "protocolBinding": "JSONRPC",
                                           "protocolVersion": "1.0"}],
                  "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [],
                  "skills": [],
                  "signatures": [{"protected": "eyJhbGciOiJFUzI1NiIsImtpZCI6ImsxIn0",
                                  "signature": "AAAA"}]}


def test_cli_card_verify(server: str, tampered: str, served: tuple[bytes, dict[str, Any]],
                         tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(main, ["card", server, "--verify"], prog_name="interlingua")
    assert ok.exit_code == 0, ok.output
    assert "Signed" in ok.output
    said = ok.stdout.splitlines()[-1]
    assert said.startswith("Verified: signed by key '"), said
    assert said.endswith(f"' (keys from {server}/.well-known/jwks.json)"), said
    bad = runner.invoke(main, ["card", tampered, "--verify"], prog_name="interlingua")
    assert bad.exit_code == 1
    assert "is not trusted: no signature of the card verifies" in bad.output
    # the keys of the genuine server, named explicitly, still refuse the tampered copy
    jwks_url = server + "/.well-known/jwks.json"
    bad2 = runner.invoke(main, ["card", tampered, "--verify", "--jwks", jwks_url],
                         prog_name="interlingua")
    assert bad2.exit_code == 1
    unsigned = runner.invoke(main, ["card", tampered], prog_name="interlingua")
    assert unsigned.exit_code == 0  # no --verify: shown as served


def test_unsigned_card_is_refused_when_verifying() -> None:
    with serve_agent(Agent("Plain", "d", _echo)) as url:
        r = CliRunner().invoke(main, ["card", url, "--verify"], prog_name="interlingua")
    assert r.exit_code == 1
    # said before any key is looked for (there are none: the JWKS answers 404)
    assert "the card is not signed" in r.output, r.output
    assert "jwks" not in r.output


def test_secret_in_card_is_refused() -> None:
    from interlingua.host import create_app

    key = "sk-live-" + "z" * 24
    auth = AuthConfig(schemes={"key": APIKeyAuth({"me": key},
                                                 description=f"use {key} to try it")})
    with pytest.raises(ValueError, match="would publish a secret"):
        create_app(Agent("Leaky", "d", _echo), auth=auth)
    with pytest.raises(ValueError, match="would publish a secret"):
        create_app(Agent("Leaky", f"try {key}", _echo),
                   auth=AuthConfig(schemes={"key": APIKeyAuth({"me": key})}))


def test_declared_but_not_enforced_is_refused() -> None:
    from interlingua.host import create_app

    agent = Agent("Two", "d", _echo,
                  security_schemes={"other": APIKeyScheme(name="X-Other", location="header")})
    with pytest.raises(ValueError, match="does not enforce"):
        create_app(agent, auth=AuthConfig(schemes={"key": APIKeyAuth({"me": "k" * 20})}))


def test_no_jwks_when_nothing_is_signed() -> None:
    # no push notifications, no card signing: no keys to publish
    with serve_agent(Agent("Plain", "d", _echo)) as url, httpx.Client() as c:
        assert c.get(url + "/.well-known/jwks.json").status_code == 404


def test_a_pinned_pem_verifies_a_signature_whatever_its_kid(tmp_path: Path) -> None:
    # A third party's card, signed with kid "k1" (ES256, JCS): a PEM has no kid of its
    # own, so the key pinned with --key is tried against every signature; keys of a JWKS
    # are still matched by kid.
    from joserfc.jwk import ECKey

    from interlingua.core.card_signing import canonical_payload, sign_payload

    key = ECKey.generate_key("P-256")
    pem = key.as_pem(private=False)
    doc = {"name": "Theirs", "description": "d", "version": "1",
           "supportedInterfaces": [{"url": "http://x/", "protocolBinding": "JSONRPC",
                                    "protocolVersion": "1.0"}],
           "capabilities": {"streaming": True}, "defaultInputModes": ["text/plain"],
           "defaultOutputModes": ["text/plain"], "skills": []}
    # (empty values dropped, then JCS: as a2a-sdk's signer makes the payload)
    sig = sign_payload(canonical_payload(doc), key, alg="ES256", kid="k1")
    doc["signatures"] = [{"protected": sig.protected, "signature": sig.signature}]
    assert verify_card_document(doc, pem).name == "Theirs"
    # a key that did not sign it: said so, not as a card that does not match its
    # signature (which reads as a card changed)
    other = ECKey.generate_key("P-256")
    with pytest.raises(CardSignatureError) as unrelated:
        verify_card_document(doc, other.as_pem(private=False))
    assert str(unrelated.value) == ("the card is not signed by any of the given keys (it is "
                                    "signed by key 'k1'), or was changed after it was signed")
    jwk = dict(key.as_dict(private=False), kid="k2")
    with pytest.raises(CardSignatureError) as no_kid:
        verify_card_document(doc, {"keys": [jwk]})
    assert str(no_kid.value) == ("the card is not signed by any of the given keys (it is "
                                 "signed by key 'k1')")
    # a key of the signature's own kid that does not verify it: the card was changed
    named = dict(other.as_dict(private=False), kid="k1")
    with pytest.raises(CardSignatureError, match="the signature by key 'k1' does not match"):
        verify_card_document(doc, {"keys": [named]})

    pem_file = tmp_path / "theirs.pem"
    pem_file.write_bytes(pem)
    app = Starlette(routes=[Route("/.well-known/agent-card.json",
                                  lambda request: Response(json.dumps(doc),
                                                           media_type="application/json"))])
    other_file = tmp_path / "other.pem"
    other_file.write_bytes(other.as_pem(private=False))
    with serve_app(app, bind_loopback()) as url:
        r = CliRunner().invoke(main, ["card", url, "--key", str(pem_file)],
                               prog_name="interlingua")
        as_json = CliRunner().invoke(main, ["card", url, "--key", str(pem_file), "--json"],
                                     prog_name="interlingua")
        refused = CliRunner().invoke(main, ["card", url, "--key", str(other_file)],
                                     prog_name="interlingua")
    assert r.exit_code == 0, r.output
    assert "Theirs" in r.output
    # a verified card says so, in one line: after the card, or on stderr beside its JSON
    assert r.stdout.splitlines()[-1] == "Verified: signed by key 'k1' (a key given with --key)"
    assert json.loads(as_json.stdout)["name"] == "Theirs"
    assert as_json.stderr == "Verified: signed by key 'k1' (a key given with --key)\n"
    assert refused.exit_code == 1
    assert refused.stderr == (f"error: the card at {url}/.well-known/agent-card.json is not "
                              "trusted: the card is not signed by any of the given keys (it "
                              "is signed by key 'k1'), or was changed after it was signed\n")


@pytest.mark.parametrize("form", ["jwk", "jwks", "jwk with a byte order mark"])
def test_card_key_takes_a_jwk_file_saved_from_the_agents_key_set(
        server: str, served: tuple[bytes, dict[str, Any]], tmp_path: Path, form: str) -> None:
    # (a JWK file was refused: "a key is neither a JWK nor a PEM ...", only PEMs were read)
    from joserfc.jwk import ECKey

    jwk = served[1]["keys"][0]
    file = tmp_path / "pub.jwk"
    file.write_text(("\ufeff" if "mark" in form else "")
                    + json.dumps({"keys": [jwk]} if form == "jwks" else jwk), encoding="utf-8")
    other = tmp_path / "other.jwk"
    other.write_text(json.dumps(dict(ECKey.generate_key("P-256").as_dict(private=False),
                                     kid=jwk["kid"])))
    run = [sys.executable, "-m", "interlingua.cli.main", "card", server, "--key"]
    done = subprocess.run([*run, str(file)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == \
        f"Verified: signed by key '{jwk['kid']}' (a key given with --key)"
    refused = subprocess.run([*run, str(other)], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 1, refused.stderr
    assert f"the signature by key '{jwk['kid']}' does not match the card" in refused.stderr


@pytest.mark.parametrize(("text", "said"), [
    ('{"kty": "EC",', "a key that is neither a PEM nor a JWK in JSON"),
    ('{"keys": []}', "a JWKS holds no keys"),
    ('{"kty": "oct", "k": "c2VjcmV0"}', "a key is neither a JWK nor a PEM of an EC, RSA or OKP"),
])
def test_card_key_says_what_is_wrong_with_a_json_key_file(server: str, tmp_path: Path,
                                                          text: str, said: str) -> None:
    file = tmp_path / "bad.jwk"
    file.write_text(text)
    done = subprocess.run([sys.executable, "-m", "interlingua.cli.main", "card", server, "--key",
                           str(file)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"error: Invalid value for '--key': {said}"), done.stderr


# ------------------------------------------------------- keys of another agent


@pytest.fixture(scope="module")
def other_signed() -> Iterator[tuple[str, str]]:
    """Another agent signing its card with a key of its own: its URL, and that key's kid."""
    with serve_agent(Agent("Other", "Another.", _echo), card_signing=CardSigning()) as url:
        yield url, httpx.get(url + "/.well-known/jwks.json").json()["keys"][0]["kid"]


def _signed_by_other(url: str, kid: str) -> str:
    # every key of a JWKS has a kid, and none is the signature's: no "or was changed"
    # (said with pinned PEMs only, which have no kid to compare)
    return (f"the card at {url}/.well-known/agent-card.json is not trusted: the card is not "
            f"signed by any of the given keys (it is signed by key '{kid}')")


@pytest.mark.parametrize("given", ["--key", "--jwks"])
def test_cli_says_a_card_is_signed_by_a_key_of_no_given_kid(
        server: str, served: tuple[bytes, dict[str, Any]], other_signed: tuple[str, str],
        tmp_path: Path, given: str) -> None:
    other, kid = other_signed
    file = tmp_path / "jwks.json"
    file.write_text(json.dumps(served[1]))
    keys = str(file) if given == "--key" else server + "/.well-known/jwks.json"
    done = subprocess.run([sys.executable, "-m", "interlingua.cli.main", "card", other, given,
                           keys], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert done.stderr == f"error: {_signed_by_other(other, kid)}\n"


@pytest.mark.parametrize("given", ["keys", "jwks_url"])
async def test_client_says_a_card_is_signed_by_a_key_of_no_given_kid(
        server: str, served: tuple[bytes, dict[str, Any]], other_signed: tuple[str, str],
        given: str) -> None:
    other, kid = other_signed
    verifier = (CardVerifier(keys=served[1]) if given == "keys"
                else CardVerifier(jwks_url=server + "/.well-known/jwks.json"))
    async with Client(other, card_verifier=verifier) as c:
        with pytest.raises(UnverifiedCard) as refused:
            await c.get_card()
    assert str(refused.value) == _signed_by_other(other, kid)


# ------------------------------------------------- every rendering, every binding


@pytest.fixture(scope="module")
def signed_grpc() -> Iterator[tuple[str, str]]:
    from tests.live import live_grpc_agent

    auth = AuthConfig(schemes={"key": APIKeyAuth({"me": KEY["X-API-Key"]})})
    with live_grpc_agent(signed_agent(), auth=auth, card_signing=CardSigning()) as where:
        yield where


def _grpc_cards(target: str) -> dict[str, dict[str, Any]]:
    """The cards gRPC serves, as ProtoJSON (what a verifier of a proto card reads)."""
    import grpc
    from google.protobuf.json_format import MessageToDict

    from interlingua.grpc_wire.protos import interlingua_a2a_v1_pb2 as pb03
    from interlingua.grpc_wire.protos import interlingua_a2a_v1_pb2_grpc as rpc03
    from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2 as pb1
    from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2_grpc as rpc1

    metadata = [("x-api-key", KEY["X-API-Key"])]
    with grpc.insecure_channel(target) as ch:
        v1 = rpc1.A2AServiceStub(ch).GetExtendedAgentCard(pb1.GetExtendedAgentCardRequest(),
                                                          metadata=metadata)
        v03 = rpc03.A2AServiceStub(ch)
        extended = v03.GetAgentCard(pb03.GetAgentCardRequest(), metadata=metadata)
        public = v03.GetAgentCard(pb03.GetAgentCardRequest())
    return {"gRPC v1.0 GetExtendedAgentCard": MessageToDict(v1),
            "gRPC v0.3 GetAgentCard": MessageToDict(extended),
            "gRPC v0.3 GetAgentCard (public)": MessageToDict(public)}


def _http_cards(base: str) -> dict[str, dict[str, Any]]:
    def rpc(method: str, version: str) -> Any:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {}}
        return c.post(base + "/", json=body, headers={**KEY, "A2A-Version": version}).json()

    with httpx.Client(timeout=10) as c:
        return {
            "well-known": c.get(base + "/.well-known/agent-card.json").json(),
            "JSON-RPC v1.0 GetExtendedAgentCard": rpc("GetExtendedAgentCard", "1.0")["result"],
            "JSON-RPC v0.3 agent/getAuthenticatedExtendedCard":
                rpc("agent/getAuthenticatedExtendedCard", "0.3")["result"],
            "HTTP+JSON v1.0 GET /extendedAgentCard":
                c.get(base + "/extendedAgentCard", headers=KEY).json(),
            "HTTP+JSON v0.3 GET /v1/card": c.get(base + "/v1/card", headers=KEY).json(),
            "HTTP+JSON v0.3 GET /v1/card (public)": c.get(base + "/v1/card").json(),
            "v0.2 GET /agent/authenticatedExtendedCard":
                c.get(base + "/agent/authenticatedExtendedCard", headers=KEY).json(),
        }


def test_every_served_card_verifies_and_a_changed_one_does_not(
        signed_grpc: tuple[str, str]) -> None:
    # (the v0.3 renderings carried the signature of the v1.0 rendering, which they
    # cannot be read back into: no verifier accepted them)
    base, target = signed_grpc
    jwks = httpx.get(base + "/.well-known/jwks.json").json()
    cards = {**_http_cards(base), **_grpc_cards(target)}
    failed = {}
    for where, doc in cards.items():
        assert doc.get("signatures"), where
        public = where == "well-known" or where.endswith("(public)")
        try:
            card = verify_card_document(doc, jwks)
        except CardSignatureError as exc:
            failed[where] = str(exc)
            continue
        assert card.name == ("Signed" if public else "Signed+"), where
        with pytest.raises(CardSignatureError, match="does not match"):
            verify_card_document({**doc, "description": "tampered"}, jwks)
    assert not failed


def test_a_card_served_again_carries_the_signature_it_was_given(
        signed_grpc: tuple[str, str]) -> None:
    # ES256 signatures differ from one signing to the next: the same one twice
    # means the card was signed once, on gRPC v0.3 as on HTTP
    base, target = signed_grpc
    first = {**_http_cards(base), **_grpc_cards(target)}
    again = {**_http_cards(base), **_grpc_cards(target)}
    changed = [where for where, doc in first.items()
               if doc["signatures"] != again[where]["signatures"]]
    assert not changed
