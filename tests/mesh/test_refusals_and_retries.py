"""What the mesh clients hear, in both layouts, as HTTP's clients do: a request refused
before it is read (no credentials, past the rate, too large) is answered with its
error at once, and a message sent again (same id) is answered with its task, the agent
run once. In SAM's layout the refusal went out with no id, which no client matched:
the call waited for its timeout (a gateway for ever); and each send named a task of
its own, so a retry ran the agent again."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any

import pytest

from interlingua import Agent, Context, Message, client_for
from interlingua.core.errors import (
    AuthenticationRequired,
    InvalidRequest,
    RateLimitExceeded,
)
from interlingua.core.model import Role, Task, TextPart
from interlingua.server.auth import APIKeyAuth, AuthConfig, Limits, RateLimit

from .helpers import BROKER, in_layout, need_broker, org_unit

pytestmark = pytest.mark.timeout(60)

KEY = "mesh-key-0123456789abcdef"
RUNS: Counter[str] = Counter()


async def count(ctx: Context) -> None:
    RUNS[ctx.message.message_id] += 1
    await ctx.complete(ctx.text)


AGENT = Agent("Counter", "Counts its runs.", count)


def served(layout: str, **options: Any) -> Any:
    """``AGENT`` on the mesh in ``layout`` with ``create_app`` ``options``: its URL."""
    need_broker()
    org, unit = org_unit()
    return in_layout(AGENT, layout, BROKER, org, unit, **options)


@pytest.fixture(params=["sam", "emqx"])
def layout(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def _refused(url: str, error: type[Exception], **client: Any) -> Exception:
    started = time.monotonic()
    async with client_for(url, timeout=20, **client) as c:
        with pytest.raises(error) as raised:
            await c.send("hello")
    assert time.monotonic() - started < 5  # answered, not timed out
    return raised.value


async def test_a_caller_without_credentials_hears_why_at_once(layout: str) -> None:
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": KEY})})
    async with served(layout, auth=auth) as url:
        await _refused(url, AuthenticationRequired)
        async with client_for(url, timeout=20, headers={"X-API-Key": KEY}) as c:
            assert isinstance(await c.send("hello"), Task)


async def test_a_caller_past_its_rate_hears_it_at_once(layout: str) -> None:
    limits = Limits(rate_limit=RateLimit(rate=0.001, burst=1))
    async with served(layout, limits=limits) as url:
        async with client_for(url, timeout=20) as c:
            assert isinstance(await c.send("the burst's one"), Task)
        await _refused(url, RateLimitExceeded)


async def test_a_request_too_large_is_refused_at_once(layout: str) -> None:
    async with served(layout, max_body_bytes=2048) as url:
        async with client_for(url, timeout=20) as c:
            started = time.monotonic()
            with pytest.raises(InvalidRequest, match="larger than the limit of 2048"):
                await c.send("x" * 4096)
            assert time.monotonic() - started < 5


async def test_a_message_sent_again_is_answered_with_its_task(layout: str) -> None:
    async with served(layout) as url:
        message = Message(role=Role.USER, parts=[TextPart(text="once")],
                          message_id=f"retry-{layout}-{time.time_ns()}")
        async with client_for(url, timeout=20) as c:
            first = await c.send(message)
            again = await c.send(message)
            assert isinstance(first, Task) and isinstance(again, Task)
            assert again.id == first.id
            await asyncio.sleep(0.2)
        assert RUNS[message.message_id] == 1
