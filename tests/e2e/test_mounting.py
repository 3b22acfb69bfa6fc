"""The app works mounted inside another ASGI app (as in FastAPI or Starlette)."""

from __future__ import annotations

import httpx
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from interlingua import Agent, create_app
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
