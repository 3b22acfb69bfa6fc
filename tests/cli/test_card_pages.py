"""A web page where an agent card or an answer would be (a site's catch-all page, a web
server's error page): no card there, and said by its title, never as markup."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from tests.live import live_server

PAGE = ("<!DOCTYPE html><html><head><title>My  App</title></head><body><div id=app>"
        "</div><script src=/app.js></script></body></html>")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "interlingua.cli.main", *args],
                          capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def _site(card: bytes | None = None, status: int = 200) -> Starlette:
    """A site answering every path with PAGE (``status``), but ``card`` (when given) at
    the older well-known path."""

    async def page(request: Request) -> Response:
        if card is not None and request.url.path == "/.well-known/agent.json":
            return Response(card, media_type="application/json")
        return HTMLResponse(PAGE, status_code=status)

    return Starlette(routes=[Route("/{p:path}", page, methods=["GET", "POST"])])


def test_a_web_page_where_the_card_would_be_is_no_card() -> None:
    # (it was exit 1, "the agent card is not JSON: JSON is malformed: invalid character
    # (byte 0)", and the older path was not asked)
    with live_server(_site()) as url:
        done = cli("card", url)
    assert done.returncode == 3, done.stderr
    assert done.stderr == (
        f"error: no agent card found ({url}/.well-known/agent-card.json: HTTP 200: an HTML "
        f"page titled 'My App'; {url}/.well-known/agent.json: HTTP 200: an HTML page "
        "titled 'My App')\n")


def test_past_a_web_page_the_card_at_the_older_path_is_read(agent_url: str) -> None:
    card = httpx.get(agent_url.rstrip("/") + "/.well-known/agent-card.json").content
    with live_server(_site(card)) as url:
        shown = cli("card", url)
        sent = cli("send", url, "echo: hi")
    assert shown.returncode == 0, shown.stderr
    assert f"Card: {url}/.well-known/agent.json" in shown.stdout
    assert sent.returncode == 0, sent.stderr


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
@pytest.mark.parametrize("status", [200, 501])
def test_a_web_page_answered_to_a_call_is_said_by_its_title(binding: str,
                                                           status: int) -> None:
    # (with --dialect no card is read; the page's markup was the error line)
    with live_server(_site(status=status)) as url:
        done = cli("send", url, "hi", "--dialect", "1.0", "--binding", binding)
    assert done.returncode != 0
    assert "an HTML page titled 'My App'" in done.stderr, done.stderr
    assert "<" not in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr
