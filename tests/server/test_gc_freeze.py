"""A started server keeps its start-up heap out of the cycle collector's view, and
gives it back at shutdown (``create_app(freeze_gc=...)``); it collects the young
generation less often meanwhile (``young_gc_threshold``)."""

from __future__ import annotations

import gc

import httpx
import pytest

from interlingua.host.app import YOUNG_GC_THRESHOLD
from interlingua.server import Agent, Context

from ..live import live_agent


async def echo(ctx: Context) -> None:
    await ctx.complete(artifact=ctx.text)


def _send(base_url: str) -> str:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": {"message": {"role": "ROLE_USER", "messageId": "m-1",
                                   "parts": [{"text": "hi"}]}}}
    reply = httpx.post(base_url + "/", json=body, headers={"A2A-Version": "1.0"}).json()
    state: str = reply["result"]["task"]["status"]["state"]
    return state


@pytest.mark.parametrize("freeze", [True, False])
def test_the_start_up_heap_is_frozen_while_the_server_runs(freeze: bool) -> None:
    agent = Agent(name="echo", description="Echo", executor=echo)
    assert gc.get_freeze_count() == 0
    with live_agent(agent, freeze_gc=freeze) as url:
        frozen = gc.get_freeze_count()
        assert _send(url) == "TASK_STATE_COMPLETED"
    if freeze:
        # the interpreter's modules and the agent at least
        assert frozen > 10_000
    else:
        assert frozen == 0
    assert gc.get_freeze_count() == 0


@pytest.mark.parametrize(("asked", "serving"), [
    ("default", YOUNG_GC_THRESHOLD),
    (None, 700),
    (500, 700),  # never lower than the process's own
    (20_000, 20_000),
])
def test_the_young_generation_is_larger_while_the_server_runs(asked: object,
                                                             serving: int) -> None:
    agent = Agent(name="echo", description="Echo", executor=echo)
    before = gc.get_threshold()
    gc.set_threshold(700, *before[1:])
    try:
        options = {} if asked == "default" else {"young_gc_threshold": asked}
        with live_agent(agent, **options) as url:
            during = gc.get_threshold()
            assert _send(url) == "TASK_STATE_COMPLETED"
        assert during == (serving, *before[1:])
        assert gc.get_threshold() == (700, *before[1:])
    finally:
        gc.set_threshold(*before)
