"""What a web page may ask of an agent, asked by a real browser (headless Chromium):
a page of another origin cannot drive the agent, not even with the requests a page
sends without asking first; a page of an allowed origin calls it and reads the answer.
core/origins.py; docs/security.md, "Requests from web pages"."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route

from interlingua import Agent
from tests.browser import chromium
from tests.live import bind_loopback, live_agent, live_server, url_of

pytestmark = pytest.mark.timeout(120)

async def echo(text: str) -> str:
    return text


AGENT = Agent("Echo", "Echoes.", echo)


def page_app() -> Starlette:
    async def page(request: Any) -> HTMLResponse:
        return HTMLResponse("<!doctype html><title>a page</title><p>a page</p>")

    return Starlette(routes=[Route("/", page)])


@pytest.fixture(scope="module")
def pages() -> Iterator[tuple[str, str]]:
    """Two web pages on loopback: (the allowed one's origin, another one's)."""
    allowed, other = bind_loopback(), bind_loopback()
    with live_server(page_app(), sock=allowed), live_server(page_app(), sock=other):
        yield url_of(allowed), url_of(other)


@pytest.fixture
def agent(pages: tuple[str, str]) -> Iterator[str]:
    """An agent that allows the first page's origin (its base URL, no slash)."""
    with live_agent(AGENT, allowed_origins=[pages[0]]) as url:
        yield url.rstrip("/")


@contextlib.contextmanager
def page_at(browser: Any, origin: str) -> Iterator[Any]:
    """A browser page loaded from ``origin``."""
    page = browser.new_page()
    try:
        page.goto(origin + "/")
        yield page
    finally:
        page.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


def tasks(agent: str) -> int:
    listed = httpx.get(agent + "/tasks", headers={"A2A-Version": "1.0"}, timeout=30).json()
    return int(listed["totalSize"])


SEND_V1 = """async ([agent]) => {
  const answer = await fetch(agent + "/message:send", {method: "POST",
    headers: {"Content-Type": "application/json", "A2A-Version": "1.0"},
    body: JSON.stringify({message: {messageId: crypto.randomUUID(), role: "ROLE_USER",
                                    parts: [{text: "from the page"}]}})});
  return [answer.status, await answer.json()];
}"""

# what a page sends with no preflight: text/plain to JSON-RPC, and a body of no type
# to HTTP+JSON (the answers are opaque to the page; the requests are made all the same)
SIMPLE = """async ([agent]) => {
  const rpc = JSON.stringify({jsonrpc: "2.0", id: 1, method: "message/send", params: {
    message: {kind: "message", messageId: crypto.randomUUID(), role: "user",
              parts: [{kind: "text", text: "forged"}]}}});
  await fetch(agent + "/", {method: "POST", mode: "no-cors", body: rpc});
  const rest = JSON.stringify({message: {messageId: crypto.randomUUID(),
                                         role: "ROLE_USER", parts: [{text: "forged"}]}});
  await fetch(agent + "/message:send?A2A-Version=1.0", {method: "POST", mode: "no-cors",
                                                        body: new Blob([rest])});
  return "sent";
}"""


def test_a_page_of_another_origin_cannot_drive_the_agent(
        browser: Any, pages: tuple[str, str], agent: str) -> None:
    with page_at(browser, pages[1]) as page:
        assert page.evaluate(SIMPLE, [agent]) == "sent"
        with pytest.raises(Exception, match="Failed to fetch"):
            page.evaluate(SEND_V1, [agent])
    assert tasks(agent) == 0  # nothing was made


def test_a_page_of_an_allowed_origin_calls_the_agent_and_reads_the_answer(
        browser: Any, pages: tuple[str, str], agent: str) -> None:
    with page_at(browser, pages[0]) as page:
        status, answer = page.evaluate(SEND_V1, [agent])
    assert status == 200, answer
    assert "task" in answer, answer
    assert answer["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert answer["task"]["artifacts"][0]["parts"] == [{"text": "from the page"}]
    assert tasks(agent) == 1
