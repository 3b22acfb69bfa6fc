"""Every scheme x {missing, wrong, expired, valid} credential, over real HTTPS, in every dialect.

One server accepts any one of four schemes (API key, Basic, Bearer JWT,
mutual TLS); each request is made in v1.0, v0.3 and v0.1 and checked for
the HTTP status, the WWW-Authenticate challenges and the JSON-RPC code the
dialect uses (v0.1 has its own codes: -32007 authentication required;
later dialects answer the HTTP status with a generic JSON-RPC error).
"""

from __future__ import annotations

import base64
import ssl
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from interlingua import Agent, Context
from interlingua.client import tls_context
from interlingua.server.auth import (
    APIKeyAuth,
    AuthConfig,
    BasicAuth,
    BearerAuth,
    MutualTLSAuth,
    hash_secret,
)

from .helpers import PKI, UNAUTHENTICATED, Issuer, send_request, serve_agent

API_KEY = "k-" + "a" * 30
PASSWORD = "correct horse battery staple"
DIALECTS = ["1.0", "0.3", "0.1"]


async def _whoami(ctx: Context) -> None:
    await ctx.complete(f"hello {ctx.principal}")


def auth_config(issuer: Issuer) -> AuthConfig:
    return AuthConfig(schemes={
        "apiKey": APIKeyAuth({"key-user": API_KEY}),
        "basic": BasicAuth({"basic-user": hash_secret(PASSWORD, iterations=1000)}),
        "bearer": BearerAuth(issuer=issuer.iss, audience="a2a-test", keys=issuer.jwks),
        "mtls": MutualTLSAuth(allowed={"alice", "bob"}),
    })


@pytest.fixture(scope="module")
def url(pki: PKI, issuer: Issuer) -> Iterator[str]:
    agent = Agent("Secure", "Says who you are.", _whoami)
    with serve_agent(agent, certfile=str(pki.server), client_ca=str(pki.ca),
                     auth=auth_config(issuer)) as base:
        yield base


def client(pki: PKI, cert: Any = None) -> httpx.Client:
    ctx = tls_context(str(pki.ca), cert)
    assert isinstance(ctx, ssl.SSLContext)
    return httpx.Client(verify=ctx, timeout=20)


def post(c: httpx.Client, url: str, dialect: str, headers: dict[str, str] | None = None,
         params: str = "") -> httpx.Response:
    body, h = send_request(dialect)
    return c.post(url + "/" + params, json=body, headers={**h, **(headers or {})})


def assert_refused(r: httpx.Response, dialect: str, status: int, code: int) -> dict[str, Any]:
    assert r.status_code == status, r.text
    doc = r.json()
    assert doc["jsonrpc"] == "2.0" and doc["id"] == "r1" and "result" not in doc
    assert doc["error"]["code"] == code, doc
    return doc


def challenges(r: httpx.Response) -> list[str]:
    return r.headers.get_list("www-authenticate")


def basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


# ------------------------------------------------------------------- missing


@pytest.mark.parametrize("dialect", DIALECTS)
def test_missing_credentials(pki: PKI, url: str, dialect: str) -> None:
    with client(pki) as c:
        r = post(c, url, dialect)
    doc = assert_refused(r, dialect, 401, UNAUTHENTICATED[dialect])
    names = [ch.split()[0] for ch in challenges(r)]
    assert names == ["ApiKey", "Basic", "Bearer", "MutualTLS"]
    assert not any("error=" in ch for ch in challenges(r))
    assert "Authentication required" in doc["error"]["message"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_batch_without_credentials_is_answered_with_an_array(
        pki: PKI, url: str, dialect: str) -> None:
    """A batch refused before it is read is still answered as a batch (JSON-RPC 2.0
    §6): an array, an error for each request with its id (a lone error object came
    back, with the first request's id, which a batch caller cannot match)."""
    first, h = send_request(dialect)
    second, _ = send_request(dialect)
    second["id"] = "r2"
    with client(pki) as c:
        r = c.post(url + "/", json=[first, second], headers=h)
    assert r.status_code == 401, r.text
    answers = r.json()
    assert isinstance(answers, list), answers
    assert [a["id"] for a in answers] == ["r1", "r2"]
    assert {a["error"]["code"] for a in answers} == {UNAUTHENTICATED[dialect]}


def test_public_card_needs_no_credentials(pki: PKI, url: str) -> None:
    with client(pki) as c:
        r = c.get(url + "/.well-known/agent-card.json")
    assert r.status_code == 200
    card = r.json()
    assert set(card["securitySchemes"]) == {"apiKey", "basic", "bearer", "mtls"}
    assert card["securitySchemes"]["apiKey"]["apiKeySecurityScheme"] == {
        "location": "header", "name": "X-API-Key"}
    assert card["securitySchemes"]["mtls"]["type"] == "mutualTLS"
    assert card["securityRequirements"] == [
        {"schemes": {n: {"list": []}}} for n in ("apiKey", "basic", "bearer", "mtls")]
    assert card["security"] == [{n: []} for n in ("apiKey", "basic", "bearer", "mtls")]
    assert card["authentication"]["schemes"] == ["ApiKey", "Basic", "Bearer", "mTLS"]


# --------------------------------------------------------------------- wrong


@pytest.mark.parametrize("dialect", DIALECTS)
def test_wrong_api_key(pki: PKI, url: str, dialect: str) -> None:
    with client(pki) as c:
        r = post(c, url, dialect, {"X-API-Key": "k-" + "b" * 30})
    doc = assert_refused(r, dialect, 401, UNAUTHENTICATED[dialect])
    assert 'ApiKey realm="a2a", in="header", name="X-API-Key", error="invalid_token"' in \
        challenges(r)
    assert "b" * 30 not in r.text and "API key" in doc["error"]["message"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_wrong_basic_password(pki: PKI, url: str, dialect: str) -> None:
    with client(pki) as c:
        r = post(c, url, dialect, basic("basic-user", "wrong"))
        unknown = post(c, url, dialect, basic("nobody", PASSWORD))
    assert_refused(r, dialect, 401, UNAUTHENTICATED[dialect])
    assert_refused(unknown, dialect, 401, UNAUTHENTICATED[dialect])
    # the same answer for an unknown user as for a wrong password
    assert r.json()["error"]["message"] == unknown.json()["error"]["message"]
    # the rejected scheme's challenge says so, as a rejected key's or token's does;
    # the schemes given nothing are challenged plainly
    for answer in (r, unknown):
        assert challenges(answer) == [
            'ApiKey realm="a2a", in="header", name="X-API-Key"',
            'Basic realm="a2a", charset="UTF-8", error="invalid_token"',
            'Bearer realm="a2a"', 'MutualTLS realm="a2a"']


@pytest.mark.parametrize("dialect", DIALECTS)
def test_wrong_bearer_token(pki: PKI, url: str, dialect: str) -> None:
    forged = Issuer(kid="k1").token("bearer-user")  # same kid, another key
    with client(pki) as c:
        r = post(c, url, dialect, {"Authorization": f"Bearer {forged}"})
        junk = post(c, url, dialect, {"Authorization": "Bearer not-a-jwt"})
    assert_refused(r, dialect, 401, UNAUTHENTICATED[dialect])
    assert 'Bearer realm="a2a", error="invalid_token"' in challenges(r)
    assert "signature" in r.json()["error"]["message"]
    assert_refused(junk, dialect, 401, UNAUTHENTICATED[dialect])


@pytest.mark.parametrize("dialect", DIALECTS)
def test_bearer_for_another_audience_or_issuer(pki: PKI, url: str, issuer: Issuer,
                                               dialect: str) -> None:
    other_aud = issuer.token("bearer-user", aud="someone-else")
    other_iss = issuer.token("bearer-user", iss="https://evil.example")
    with client(pki) as c:
        for token in (other_aud, other_iss):
            r = post(c, url, dialect, {"Authorization": f"Bearer {token}"})
            assert_refused(r, dialect, 401, UNAUTHENTICATED[dialect])
            assert "claims are not valid" in r.json()["error"]["message"]


def test_wrong_client_certificate_fails_the_handshake(pki: PKI, url: str) -> None:
    # signed by another CA: the TLS layer refuses it before any HTTP
    with client(pki, str(pki.stranger)) as c, pytest.raises(httpx.TransportError):
        post(c, url, "1.0")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_certificate_of_an_unlisted_principal(pki: PKI, url: str, dialect: str) -> None:
    with client(pki, str(pki.eve)) as c:
        r = post(c, url, dialect)
    assert_refused(r, dialect, 401, UNAUTHENTICATED[dialect])
    assert challenges(r) == [
        'ApiKey realm="a2a", in="header", name="X-API-Key"', 'Basic realm="a2a", charset="UTF-8"',
        'Bearer realm="a2a"', 'MutualTLS realm="a2a", error="invalid_token"']


# ------------------------------------------------------------------- expired


@pytest.mark.parametrize("dialect", DIALECTS)
def test_expired_bearer_token(pki: PKI, url: str, issuer: Issuer, dialect: str) -> None:
    token = issuer.token("bearer-user", ttl=-120)  # beyond the 30 s leeway
    with client(pki) as c:
        r = post(c, url, dialect, {"Authorization": f"Bearer {token}"})
    assert_refused(r, dialect, 401, UNAUTHENTICATED[dialect])
    assert r.json()["error"]["message"] == "The bearer token has expired"
    assert 'Bearer realm="a2a", error="invalid_token"' in challenges(r)


def test_expired_client_certificate_fails_the_handshake(pki: PKI, url: str) -> None:
    with client(pki, str(pki.expired)) as c, pytest.raises(httpx.TransportError):
        post(c, url, "1.0")


# --------------------------------------------------------------------- valid


def _answer_text(doc: dict[str, Any], dialect: str) -> str:
    result = doc["result"]
    task = result.get("task", result) if dialect == "1.0" else result
    parts = task["status"]["message"]["parts"]
    return parts[0]["text"]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("scheme", ["apiKey", "basic", "bearer", "mtls"])
def test_valid_credentials(pki: PKI, url: str, issuer: Issuer, dialect: str,
                           scheme: str) -> None:
    headers: dict[str, str] = {}
    cert = None
    expected = {"apiKey": "key-user", "basic": "basic-user", "bearer": "bearer-user",
                "mtls": "alice"}[scheme]
    if scheme == "apiKey":
        headers = {"X-API-Key": API_KEY}
    elif scheme == "basic":
        headers = basic("basic-user", PASSWORD)
    elif scheme == "bearer":
        headers = {"Authorization": f"Bearer {issuer.token('bearer-user')}"}
    else:
        cert = str(pki.alice)
    with client(pki, cert) as c:
        r = post(c, url, dialect, headers)
    assert r.status_code == 200, r.text
    assert "www-authenticate" not in r.headers
    assert _answer_text(r.json(), dialect) == f"hello {expected}"
