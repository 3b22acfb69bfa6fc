"""The app works mounted inside another ASGI app (as in FastAPI or Starlette)."""

from __future__ import annotations

from typing import Any

import httpx
import msgspec
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from interlingua import Agent, create_app
from interlingua.stores.memory import MemoryStore
from tests.live import bind_loopback, live_server, url_of

from .sse_client import V1, rpc, v1_message


async def _echo(text: str) -> str:
    return text


def test_mounted_under_a_prefix() -> None:
    sock = bind_loopback()
    base = url_of(sock)
    agent_app = create_app(Agent("Echo", "Echoes", _echo), public_url=base + "/agent")

    async def home(request: object) -> PlainTextResponse:
        return PlainTextResponse("the host app")

    host = Starlette(routes=[Route("/", home), Mount("/agent", app=agent_app)])
    with live_server(host, sock=sock) as url, httpx.Client() as c:
        assert c.get(url + "/").text == "the host app"
        card = c.get(url + "/agent/.well-known/agent-card.json").json()
        assert card["url"] == base + "/agent/"
        r = c.post(card["url"], json=rpc("SendMessage", {"message": v1_message("hi")}),
                   headers=V1).json()
        assert r["result"]["task"]["artifacts"][0]["parts"] == [{"text": "hi"}]


# ------------------------------------------- mounted without public_url, per host


def _fastapi_host(agent_app: Any) -> Any:
    from fastapi import FastAPI

    from interlingua.host import lifespans

    host = FastAPI(lifespan=lifespans(agent_app))

    @host.get("/")
    def home() -> str:
        return "the host app"

    host.mount("/agents/echo", agent_app)
    return host


def _starlette_host(agent_app: Any) -> Any:
    from interlingua.host import lifespans

    async def home(request: object) -> PlainTextResponse:
        return PlainTextResponse("the host app")

    return Starlette(routes=[Route("/", home), Mount("/agents/echo", app=agent_app)],
                     lifespan=lifespans(agent_app))


HOSTS = pytest.mark.parametrize("make_host", [_fastapi_host, _starlette_host],
                                ids=["fastapi", "starlette"])


@HOSTS
def test_card_urls_come_from_the_request(make_host: Any) -> None:
    agent_app = create_app(Agent("Echo", "Echoes", _echo))  # no public_url
    with live_server(make_host(agent_app)) as url, httpx.Client() as c:
        r = c.get(url + "/agents/echo/.well-known/agent-card.json")
        card = r.json()
        assert card["url"] == url + "/agents/echo/"
        assert {i["url"] for i in card["supportedInterfaces"]} == {url + "/agents/echo/",
                                                                   url + "/agents/echo"}
        assert "host" in r.headers["vary"].lower()
        # another name for the same server: its own card
        other = c.get(url + "/agents/echo/.well-known/agent.json",
                      headers={"Host": "agents.example:8443"}).json()
        assert other["url"] == "http://agents.example:8443/agents/echo/"
        # forwarded headers are not trusted unless configured (X-Forwarded-Proto is
        # uvicorn's to apply, from the addresses of --forwarded-allow-ips)
        fwd = c.get(url + "/agents/echo/.well-known/agent-card.json",
                    headers={"X-Forwarded-Host": "evil.example", "X-Forwarded-Prefix": "/x"})
        assert fwd.json()["url"] == url + "/agents/echo/"
        # the client follows the card to this agent, not to another one
        reply = c.post(card["url"], json=rpc("SendMessage", {"message": v1_message("hi")}),
                       headers=V1).json()
        assert reply["result"]["task"]["artifacts"][0]["parts"] == [{"text": "hi"}]


def test_card_from_forwarded_headers_when_trusted() -> None:
    agent_app = create_app(Agent("Echo", "Echoes", _echo), trust_forwarded=True)
    with live_server(_starlette_host(agent_app)) as url, httpx.Client() as c:
        card = c.get(url + "/agents/echo/.well-known/agent-card.json",
                     headers={"X-Forwarded-Host": "agents.example", "X-Forwarded-Proto": "https",
                              "X-Forwarded-Prefix": "/public"}).json()
        assert card["url"] == "https://agents.example/public/agents/echo/"


def test_allowed_hosts() -> None:
    agent_app = create_app(Agent("Echo", "Echoes", _echo),
                           allowed_hosts=["127.0.0.1", "*.example.com"])
    with live_server(_starlette_host(agent_app)) as url, httpx.Client() as c:
        path = url + "/agents/echo/.well-known/agent-card.json"
        assert c.get(path).status_code == 200
        assert c.get(path, headers={"Host": "a2a.example.com"}).json()["url"] == \
            "http://a2a.example.com/agents/echo/"
        refused = c.get(path, headers={"Host": "evil.example"})
        assert refused.status_code == 400 and "evil.example" in refused.json()["error"]["message"]
        rpc_refused = c.post(url + "/agents/echo/", headers={"Host": "evil.example", **V1},
                             json=rpc("SendMessage", {"message": v1_message("hi")}))
        assert rpc_refused.status_code == 400
        assert rpc_refused.json()["error"]["code"] == -32600
        bad = c.get(path, headers={"Host": "bad host/../x"})
        assert bad.status_code == 400


def test_signed_card_per_host() -> None:
    from interlingua.core.card_signing import verify_card_document
    from interlingua.server.auth import CardSigning

    agent_app = create_app(Agent("Echo", "Echoes", _echo), card_signing=CardSigning())
    with live_server(_starlette_host(agent_app)) as url, httpx.Client() as c:
        base = url + "/agents/echo"
        keys = c.get(base + "/.well-known/jwks.json").json()
        for host in (None, "agents.example"):
            headers = {"Host": host} if host else {}
            doc = c.get(base + "/.well-known/agent-card.json", headers=headers).content
            verify_card_document(doc, keys)
            jku = msgspec.json.decode(_b64(msgspec.json.decode(doc)["signatures"][0]["protected"]))
            expected = f"http://{host}/agents/echo" if host else base
            assert jku["jku"] == expected + "/.well-known/jwks.json"


def _b64(text: str) -> bytes:
    import base64

    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class _Store(MemoryStore):
    closed = False

    async def close(self) -> None:
        self.closed = True
        await super().close()


@HOSTS
def test_shutdown_runs_when_mounted(make_host: Any) -> None:
    store = _Store()
    agent_app = create_app(Agent("Echo", "Echoes", _echo), store=store)
    with live_server(make_host(agent_app)) as url, httpx.Client() as c:
        r = c.post(url + "/agents/echo/", json=rpc("SendMessage", {"message": v1_message("hi")}),
                   headers=V1)
        assert r.status_code == 200
        assert agent_app.state.engine.store is store and not store.closed
    assert store.closed


# ------------------------------------------------------------------ card caching


@pytest.mark.parametrize("path", ["/.well-known/agent-card.json", "/.well-known/agent.json"])
@pytest.mark.parametrize("public_url", [True, False], ids=["public_url", "per-host"])
def test_card_etag_and_conditional_get(path: str, public_url: bool) -> None:
    sock = bind_loopback()
    base = url_of(sock)
    app = create_app(Agent("Echo", "Echoes", _echo), public_url=base if public_url else None)
    with live_server(app, sock=sock) as url, httpx.Client() as c:
        first = c.get(url + path)
        etag, modified = first.headers["etag"], first.headers["last-modified"]
        assert etag.startswith('"') and first.headers["cache-control"] == "public, max-age=300"
        again = c.get(url + path, headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.content == b""
        assert again.headers["etag"] == etag and "cache-control" in again.headers
        assert c.get(url + path, headers={"If-None-Match": f'W/{etag}, "x"'}).status_code == 304
        assert c.get(url + path, headers={"If-None-Match": '"other"'}).status_code == 200
        assert c.get(url + path, headers={"If-Modified-Since": modified}).status_code == 304
        old = "Mon, 01 Jan 2001 00:00:00 GMT"
        assert c.get(url + path, headers={"If-Modified-Since": old}).status_code == 200
        if not public_url:  # each rendered variant has its own tag
            other = c.get(url + path, headers={"Host": "agents.example"})
            assert other.headers["etag"] != etag
            assert c.get(url + path, headers={"Host": "agents.example",
                                              "If-None-Match": etag}).status_code == 200


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
def test_without_a_lifespan_the_engine_starts_on_the_first_request(binding: str,
                                                                   tmp_path: Any) -> None:
    # Mounted with no lifespan to start it, and a send the very first request (to a
    # store that must be opened first).
    sock = bind_loopback()
    base = url_of(sock)
    agent_app = create_app(Agent("Echo", "Echoes", _echo), public_url=base + "/agent",
                           store=f"sqlite:///{tmp_path}/tasks.db")
    host = Starlette(routes=[Mount("/agent", app=agent_app)])
    with live_server(host, sock=sock) as url, httpx.Client() as c:
        if binding == "jsonrpc":
            r = c.post(url + "/agent/", json=rpc("SendMessage", {"message": v1_message("hi")}),
                       headers=V1).json()
            task = r["result"]["task"]
        else:
            task = c.post(url + "/agent/message:send", json={"message": v1_message("hi")},
                          headers={"A2A-Version": "1.0"}).json()["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert task["artifacts"][0]["parts"] == [{"text": "hi"}]
