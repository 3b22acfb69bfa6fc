"""A stream resumed while its server says "not yet": 503 (a gateway warming up after a
restart, a server draining) or 429, with ``Retry-After``. The resumption waits as the
server says, within the policy's ``max_retry_after``, and goes on. It gave up at once
(the 503's error raised), or after the backoff's few seconds, shorter than a gateway's
ten-second warm-up."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from interlingua.client import Client, ResumePolicy, StreamInterrupted
from interlingua.core.model import TaskState
from interlingua.host import create_app
from tests.e2e.agents import story
from tests.live import bind_loopback, live_server, url_of

from .test_stream_resume import CuttingProxy, Sleeps, check_story, read_all

pytestmark = pytest.mark.timeout(30)


class NotYet:
    """The story agent, whose resumptions (requests with ``Last-Event-ID``) are answered
    ``status`` with ``Retry-After: retry_after`` the first ``times`` times."""

    def __init__(self, app: Any, status: int, retry_after: str, times: int) -> None:
        self.app = app
        self.status = status
        self.retry_after = retry_after
        self.times = times
        self.refused = 0
        self.port = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and self.refused < self.times and any(
                k.lower() == b"last-event-id" for k, _ in scope["headers"]):
            self.refused += 1
            body = msgspec.json.encode({"error": {"code": self.status, "message": (
                f"not yet: try again in {self.retry_after} s")}})
            await send({"type": "http.response.start", "status": self.status, "headers": [
                (b"content-type", b"application/json"),
                (b"retry-after", self.retry_after.encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


@pytest.fixture
def not_yet(request: pytest.FixtureRequest) -> Iterator[NotYet]:
    status, retry_after, times = request.param
    sock = bind_loopback()
    wrapper = NotYet(create_app(story, store="memory://", public_url=url_of(sock)),
                     status, retry_after, times)
    wrapper.port = sock.getsockname()[1]
    with live_server(wrapper, sock=sock):
        yield wrapper


BINDINGS = [("jsonrpc", "1.0"), ("jsonrpc", "0.3"), ("rest", "1.0"), ("rest", "0.3")]


@pytest.mark.parametrize("not_yet", [(503, "7", 3), (429, "7", 3)], indirect=True)
@pytest.mark.parametrize(("binding", "dialect"), BINDINGS)
async def test_a_resumption_waits_as_retry_after_says(
        not_yet: NotYet, binding: str, dialect: str, story_port: int) -> None:
    sleeps = Sleeps()
    with CuttingProxy(story_port, cut_after={0: 5}) as proxy:
        async with Client(proxy.url, dialect=dialect, binding=binding,
                          resume=ResumePolicy(sleep=sleeps, random=lambda: 1.0)) as client:
            events = await read_all(client.stream("30 0.005"))
    check_story(events, 30)
    assert events[-1].state is TaskState.COMPLETED
    assert not_yet.refused == 3
    # the backoff's first step after the cut, then the server's 7 s each time
    assert sleeps.calls == [0.25, 7.0, 7.0, 7.0]


@pytest.mark.parametrize("not_yet", [(503, "3600", 1)], indirect=True)
async def test_a_long_retry_after_is_capped_by_the_policy(
        not_yet: NotYet, story_port: int) -> None:
    sleeps = Sleeps()
    with CuttingProxy(story_port, cut_after={0: 5}) as proxy:
        async with Client(proxy.url, dialect="1.0", resume=ResumePolicy(
                sleep=sleeps, random=lambda: 1.0, max_retry_after=12.0)) as client:
            events = await read_all(client.stream("20 0.005"))
    check_story(events, 20)
    assert sleeps.calls == [0.25, 12.0]


@pytest.mark.parametrize("not_yet", [(503, "7", 10)], indirect=True)
async def test_a_server_that_keeps_saying_not_yet_exhausts_the_retries(
        not_yet: NotYet, story_port: int) -> None:
    sleeps = Sleeps()
    with CuttingProxy(story_port, cut_after={0: 5}) as proxy:
        async with Client(proxy.url, dialect="1.0", resume=ResumePolicy(
                retries=3, sleep=sleeps, random=lambda: 1.0)) as client:
            with pytest.raises(StreamInterrupted, match="gave up after 3 attempts"):
                await read_all(client.stream("20 0.005"))
    assert sleeps.calls == [0.25, 7.0, 7.0]


@pytest.mark.parametrize("not_yet", [(503, "1", 2)], indirect=True)
async def test_the_default_policy_really_waits(not_yet: NotYet, story_port: int) -> None:
    loop = asyncio.get_running_loop()
    with CuttingProxy(story_port, cut_after={0: 5}) as proxy:
        async with Client(proxy.url, dialect="1.0") as client:
            began = loop.time()
            events = await read_all(client.stream("20 0.005"))
            took = loop.time() - began
    check_story(events, 20)
    assert not_yet.refused == 2
    assert took >= 2.0  # two Retry-After: 1, not the backoff's quarter and half second



@pytest.fixture
def story_port(not_yet: NotYet) -> int:
    return not_yet.port
