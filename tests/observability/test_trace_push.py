"""A push notification carries the trace of the request that caused it: the
webhook POST has a ``traceparent`` naming the delivery's span, whose parent is
the store commit that queued it."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from interlingua import Agent, Client, Context, create_app
from interlingua.core.model import PushConfig
from interlingua.server.auth import APIKeyAuth, AuthConfig
from tests.live import bind_loopback, live_server, url_of
from tests.observability.spans import memory_provider, named, parent_of
from tests.push.helpers import Hook, dev_settings, echo, serve_hook, until

pytestmark = pytest.mark.timeout(30)


async def test_webhook_post_carries_the_traceparent_of_its_delivery():
    provider, exporter = memory_provider()
    hook = Hook()
    with serve_hook(hook) as hook_url:
        sock = bind_loopback()
        url = url_of(sock)
        app = create_app(echo, public_url=url, push=dev_settings(), tracing=provider)
        with live_server(app, sock=sock):
            with provider.get_tracer("test").start_as_current_span("root") as root:
                async with Client(url) as client:
                    task = await client.send("hi", push=PushConfig(url=hook_url + "/hook"))

            def delivered() -> bool:
                spans = named(exporter.get_finished_spans(), "A2A push delivery")
                return bool(hook.requests) and len(spans) == len(hook.requests)

            await until(delivered)
            await asyncio.sleep(0.3)  # anything still queued arrives too
            await until(delivered)

    spans = exporter.get_finished_spans()
    deliveries = {s.context.span_id: s for s in named(spans, "A2A push delivery")}
    assert hook.requests
    trace_id = root.get_span_context().trace_id
    for received in hook.requests:
        version, trace_hex, span_hex, _flags = received.headers["traceparent"].split("-")
        assert version == "00"
        assert int(trace_hex, 16) == trace_id
        delivery = deliveries[int(span_hex, 16)]
        assert delivery.attributes["a2a.task_id"] == task.id
        assert delivery.attributes["a2a.push.outcome"] == "delivered"
        commit = parent_of(delivery, spans)
        assert commit is not None and commit.name == "A2A store commit"
        assert commit.attributes["a2a.task_id"] == task.id


ALICE, BOB = "alice-key-0123456789", "bob-key-0123456789ab"
TRACE_A, TRACE_B, TRACE_C = "a" * 32, "b" * 32, "c" * 32


def _send01(url: str, key: str, trace: str, text: str, hook: str | None = None) -> Any:
    params: dict[str, Any] = {"id": "shared-task", "message": {
        "role": "user", "parts": [{"type": "text", "text": text}]}}
    if hook is not None:
        params["pushNotification"] = {"url": hook}
    answer = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tasks/send",
                                   "params": params},
                        headers={"X-API-Key": key,
                                 "traceparent": f"00-{trace}-{'1' * 16}-01"}).json()
    assert "result" in answer, answer
    return answer["result"]


async def _asks_first(ctx: Context) -> None:
    if ctx.text == "go":
        await ctx.require_input("and then?")
    else:
        await ctx.complete("done")


async def test_a_retried_delivery_hangs_from_the_commit_that_queued_it():
    """A delivery retried after other commits (of its own task, and of another
    principal's task of the same id) still carries the trace of the commit that
    wrote its event, not the latest commit of any task of that id."""
    provider, _ = memory_provider()
    failing = {"on": True}
    hook = Hook(lambda _hook, _headers, _body, _path: 500 if failing["on"] else 200)
    agent = Agent("asks", "Asks once.", _asks_first, push_notifications=True)
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": ALICE, "bob": BOB})})
    with serve_hook(hook) as hook_url:
        sock = bind_loopback()
        url = url_of(sock)
        app = create_app(agent, public_url=url, auth=auth, tracing=provider,
                         push=dev_settings(backoff_base=1.0, backoff_max=1.0, jitter=0.0))
        with live_server(app, sock=sock):
            first = await asyncio.to_thread(_send01, url, ALICE, TRACE_A, "go",
                                            hook_url + "/alice")
            assert first["status"]["state"] == "input-required"
            await until(lambda: bool(hook.requests))
            await asyncio.sleep(0.3)  # the first attempts of what was queued then
            first_seqs = {r.seq for r in hook.requests}
            # before the retries: alice's next turn, then bob's task of the same id
            last = await asyncio.to_thread(_send01, url, ALICE, TRACE_C, "more")
            assert last["status"]["state"] == "completed"
            await asyncio.to_thread(_send01, url, BOB, TRACE_B, "go")
            failing["on"] = False
            await until(lambda: len({r.seq for r in hook.delivered()}) > len(first_seqs)
                        and {r.seq for r in hook.delivered()} >= first_seqs, timeout=10)
            await asyncio.sleep(0.3)

    traces = {r.seq: set() for r in hook.requests}
    for r in hook.requests:
        traces[r.seq].add(r.headers["traceparent"].split("-")[1])
    assert all(traces[seq] == {TRACE_A} for seq in first_seqs), traces
    assert traces[max(traces)] == {TRACE_C}, traces
