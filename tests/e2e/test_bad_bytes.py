"""Bad bytes in the body and bad header values get a JSON-RPC error in the caller's
dialect, with and without authentication, over real HTTP (never a 500 or -32603)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from interlingua import Agent, create_app
from interlingua.server.auth import APIKeyAuth, AuthConfig
from tests.live import live_server

KEY = "k-" + "x" * 30


async def _echo(text: str) -> str:
    return text


@pytest.fixture(scope="module", params=["open", "auth"])
def server(request: pytest.FixtureRequest) -> Iterator[tuple[str, bool]]:
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": KEY})}) if request.param == "auth" else None
    app = create_app(Agent("Bytes", "Bad bytes", _echo), auth=auth)
    with live_server(app) as url:
        yield url, auth is not None


def _post(url: str, body: bytes, headers: dict[str, Any]) -> httpx.Response:
    with httpx.Client(timeout=10) as c:
        return c.post(url, content=body, headers={"content-type": "application/json", **headers})


def _error(r: httpx.Response, authed: bool) -> dict[str, Any]:
    assert r.headers["content-type"] == "application/json", r.text
    doc = r.json()
    assert doc["jsonrpc"] == "2.0" and "error" in doc, doc
    if authed:
        assert r.status_code == 401, r.text
    else:
        assert r.status_code == 200, r.text
    return doc["error"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("body", [
    b'{"jsonrpc":"2.0","id":1,"method":"message/s\xffend","params":{}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"\xff\xfe"}}',
    b'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"parts":[{"text":"\xc3"}]}}}',
    b'[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"\xed\xa0\x80"}}]',
], ids=["in-method", "in-params", "truncated-sequence", "surrogate-in-batch"])
def test_invalid_utf8_is_a_parse_error(server: tuple[str, bool], body: bytes) -> None:
    url, authed = server
    headers = {"X-API-Key": KEY} if authed else {}
    err = _error(_post(url, body, headers), authed=False)
    assert err["code"] == -32700 and "UTF-8" in err["message"]
    if authed:  # without credentials: refused first, in a JSON-RPC body
        err = _error(_post(url, body, {}), authed=True)
        assert err["code"] in (-32600, -32700)


GET_V1 = b'{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"t"}}'
GET_V01 = b'{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"id":"t"}}'


@pytest.mark.parametrize(("body", "code"), [(GET_V1, -32009), (GET_V01, -32600)],
                         ids=["v1.0", "v0.x"])
@pytest.mark.parametrize("version", [b"\xb2", b"1." + b"9" * 5000, b"9" * 5000, "\u0661".encode()],
                         ids=["superscript-two", "long-minor", "long-major", "arabic-one"])
def test_bad_version_header_is_version_not_supported(
        server: tuple[str, bool], body: bytes, code: int, version: bytes) -> None:
    url, authed = server
    headers: dict[str, Any] = {"A2A-Version": version}
    if authed:
        err = _error(_post(url, body, headers), authed=True)
        assert err["code"] in (-32600, -32007)  # refused before anything else
        headers["X-API-Key"] = KEY
    err = _error(_post(url, body, headers), authed=False)
    assert err["code"] == code, err
    assert "A2A-Version" in err["message"] and len(err["message"]) < 300


@pytest.mark.parametrize("last_event_id", [b"9" * 5000, b"\xb2", b"99999999999999999999"])
def test_bad_last_event_id_is_invalid_params(server: tuple[str, bool], last_event_id: bytes) -> None:
    url, authed = server
    body = b'{"jsonrpc":"2.0","id":3,"method":"SubscribeToTask","params":{"id":"t"}}'
    headers: dict[str, Any] = {"A2A-Version": "1.0", "Last-Event-ID": last_event_id}
    if authed:
        _error(_post(url, body, headers), authed=True)
        headers["X-API-Key"] = KEY
    err = _error(_post(url, body, headers), authed=False)
    assert err["code"] == -32602 and "Last-Event-ID" in err["message"], err
    assert len(err["message"]) < 300
