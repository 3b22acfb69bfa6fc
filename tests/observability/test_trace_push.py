"""A push notification carries the trace of the request that caused it: the
webhook POST has a ``traceparent`` naming the delivery's span, whose parent is
the store commit that queued it."""

from __future__ import annotations

import asyncio

import pytest

from interlingua import Client, create_app
from interlingua.core.model import PushConfig
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
