"""``/metrics`` over real HTTP, read with prometheus_client's own text parser:
counters move as requests are made on every binding; off by default (404)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from interlingua import Agent, Client, Context, create_app
from interlingua.bindings.grpc import add_grpc
from interlingua.core.errors import TaskNotFound
from interlingua.core.model import PushConfig
from interlingua.core.parts import new_id
from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2 as pb1
from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2_grpc as rpc1
from interlingua.server.engine import EngineConfig
from interlingua.stores import open_store
from tests.live import bind_loopback, live_agent, live_server, url_of
from tests.observability.spans import memory_provider, named
from tests.push.helpers import Hook, dev_settings, serve_hook, until

pytestmark = pytest.mark.timeout(30)


async def _echo(text: str) -> str:
    return text.upper()


def _scrape(url: str) -> dict[str, Any]:
    """{sample name: {labels as a sorted tuple: value}}, and the families' types."""
    answer = httpx.get(url + "/metrics")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    samples: dict[str, Any] = {"_types": {}}
    for family in text_string_to_metric_families(answer.text):
        samples["_types"][family.name] = family.type
        for sample in family.samples:
            samples.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = \
                sample.value
    return samples


def _value(samples: dict[str, Any], name: str, **labels: str) -> float:
    return samples.get(name, {}).get(tuple(sorted(labels.items())), 0.0)


def test_metrics_are_off_unless_asked_for():
    with live_agent(Agent("Echo", "Echoes.", _echo)) as url:
        assert httpx.get(url + "/metrics").status_code == 404


async def test_counters_move_as_requests_are_made():
    agent = Agent("Echo", "Echoes.", _echo, push_notifications=True)
    hook = Hook()
    with serve_hook(hook) as hook_url:
        sock = bind_loopback()
        app = create_app(agent, public_url=url_of(sock), metrics=True, push=dev_settings())
        with live_server(app, sock=sock) as url:
            before = _scrape(url)
            assert _value(before, "interlingua_requests_total", method="SendMessage",
                          dialect="1.0", binding="jsonrpc", outcome="ok") == 0
            assert before["_types"]["interlingua_request_duration_seconds"] == "histogram"
            assert _value(before, "interlingua_lease_held") == 1

            async with Client(url) as client:
                for _ in range(3):
                    await client.send("hi")
                with pytest.raises(TaskNotFound):
                    await client.get_task("no-such-task")
                events = [e async for e in client.stream("streamed")]
                assert events
                await client.send("pushed", push=PushConfig(url=hook_url + "/hook"))
            async with Client(url, binding="http+json") as client:
                await client.send("over rest")
            await until(lambda: len(hook.delivered()) >= 2)

            after = _scrape(url)
    sends = _value(after, "interlingua_requests_total", method="SendMessage", dialect="1.0",
                   binding="jsonrpc", outcome="ok")
    assert sends == 4
    assert _value(after, "interlingua_requests_total", method="GetTask", dialect="1.0",
                  binding="jsonrpc", outcome="TaskNotFound") == 1
    assert _value(after, "interlingua_requests_total", method="SendStreamingMessage",
                  dialect="1.0", binding="jsonrpc", outcome="ok") == 1
    assert _value(after, "interlingua_requests_total", method="SendMessage", dialect="1.0",
                  binding="rest", outcome="ok") == 1
    # the histogram counted every send, in some bucket
    assert _value(after, "interlingua_request_duration_seconds_count",
                  method="SendMessage", binding="jsonrpc") == 4
    assert _value(after, "interlingua_request_duration_seconds_bucket",
                  method="SendMessage", binding="jsonrpc", le="+Inf") == 4
    assert _value(after, "interlingua_request_duration_seconds_sum",
                  method="SendMessage", binding="jsonrpc") > 0
    # six tasks completed: 4 + 1 streamed + 1 over REST
    assert _value(after, "interlingua_task_transitions_total", state="completed") == 6
    assert _value(after, "interlingua_events_total") >= 12
    assert _value(after, "interlingua_push_attempts_total", outcome="delivered") >= 2
    # the outbox: its queue depth and its dead letters
    assert set(after["interlingua_push_outbox"]) == {(("status", "dead"),),
                                                     (("status", "pending"),)}
    assert _value(after, "interlingua_push_outbox", status="dead") == 0
    assert _value(after, "interlingua_streams_open") == 0
    assert _value(after, "interlingua_turns_running") == 0


def test_grpc_requests_are_counted_and_traced_from_their_metadata():
    provider, exporter = memory_provider()
    sock = bind_loopback()
    app = create_app(Agent("Echo", "Echoes.", _echo), public_url=url_of(sock), metrics=True,
                     tracing=provider)
    server = add_grpc(app, "127.0.0.1:0")
    trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    with live_server(app, sock=sock) as url:
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            stub = rpc1.A2AServiceStub(channel)
            message = pb1.Message(message_id=new_id(), role=pb1.ROLE_USER,
                                  parts=[pb1.Part(text="hi")])
            sent = stub.SendMessage(pb1.SendMessageRequest(message=message), metadata=(
                ("a2a-version", "1.0"), ("traceparent", f"00-{trace_id}-{parent_id}-01")))
        assert sent.task.status.state == pb1.TASK_STATE_COMPLETED
        samples = _scrape(url)
    assert _value(samples, "interlingua_requests_total", method="SendMessage", dialect="1.0",
                  binding="grpc", outcome="ok") == 1
    (span,) = named(exporter.get_finished_spans(), "A2A SendMessage")
    assert span.attributes["a2a.binding"] == "grpc"
    assert span.attributes["a2a.task_id"] == sent.task.id
    assert span.context.trace_id == int(trace_id, 16)
    assert span.parent.span_id == int(parent_id, 16)


async def _slow(ctx: Context) -> None:
    if ctx.text == "wait":
        await ctx.update("waiting")
        await asyncio.sleep(30)
    await ctx.complete(artifact=ctx.text)


async def test_gauges_show_open_streams_running_turns_and_lease_heartbeats():
    sock = bind_loopback()
    app = create_app(Agent("Slow", "Waits.", _slow), public_url=url_of(sock), metrics=True,
                     engine_config=EngineConfig(lease_interval=0.1, lease_timeout=5.0))
    with live_server(app, sock=sock) as url:
        async with Client(url) as client:
            stream = client.stream("wait")
            first = await anext(stream)  # the stream is open, its turn waiting
            assert first is not None
            samples = await asyncio.to_thread(_scrape, url)
            assert _value(samples, "interlingua_streams_open") == 1
            assert _value(samples, "interlingua_turns_running") == 1
            assert _value(samples, "interlingua_tasks_live", state="working") == 1
            assert (("stat", "max"),) in samples["interlingua_stream_lag_events"]
            await stream.aclose()
            await until(lambda: _value(_scrape(url), "interlingua_streams_open") == 0)
        await asyncio.sleep(0.3)  # a few heartbeats
        samples = _scrape(url)
    assert _value(samples, "interlingua_lease_renewals_total", result="ok") >= 1
    assert 0 <= _value(samples, "interlingua_lease_heartbeat_age_seconds") < 2
    assert _value(samples, "interlingua_lease_held") == 1
    assert _value(samples, "interlingua_lease_epoch") >= 1


async def test_push_retries_and_dead_letters_are_counted():
    agent = Agent("Echo", "Echoes.", _echo, push_notifications=True)
    hook = Hook(lambda hook, headers, body, path: 500)
    with serve_hook(hook) as hook_url:
        sock = bind_loopback()
        app = create_app(agent, public_url=url_of(sock), metrics=True,
                         push=dev_settings(max_attempts=2))
        with live_server(app, sock=sock) as url:
            async with Client(url) as client:
                await client.send("pushed", push=PushConfig(url=hook_url + "/hook"))
            await until(lambda: _value(_scrape(url), "interlingua_push_outbox",
                                       status="pending") == 0)
            samples = _scrape(url)
    dead = _value(samples, "interlingua_push_outbox", status="dead")
    assert dead >= 1
    assert _value(samples, "interlingua_push_attempts_total", outcome="retry") == dead
    assert _value(samples, "interlingua_push_attempts_total", outcome="dead") == dead
    assert _value(samples, "interlingua_push_attempts_total", outcome="delivered") == 0


async def test_a_revoked_lease_is_counted_as_revoked(tmp_path: Path) -> None:
    """Another process on the store revokes this one's lease (as it does a lease
    whose heartbeats stopped): the next heartbeat finds it gone and counts it so."""
    url = f"sqlite:///{tmp_path}/tasks.db"
    sock = bind_loopback()
    app = create_app(Agent("Echo", "Echoes.", _echo), public_url=url_of(sock), metrics=True,
                     store=url,
                     engine_config=EngineConfig(lease_interval=0.1, lease_timeout=60.0))
    with live_server(app, sock=sock) as base:
        await until(lambda: _value(_scrape(base), "interlingua_lease_renewals_total",
                                   result="ok") >= 1)
        epoch = int(_value(_scrape(base), "interlingua_lease_epoch"))
        other = open_store(url)
        await other.open()
        try:
            assert await other.revoke_lease(epoch)
        finally:
            await other.close()
        await until(lambda: _value(_scrape(base), "interlingua_lease_renewals_total",
                                   result="revoked") >= 1)
        samples = _scrape(base)
    assert _value(samples, "interlingua_lease_renewals_total", result="revoked") == 1
    assert _value(samples, "interlingua_lease_held") == 1  # a new lease is held
    assert _value(samples, "interlingua_lease_epoch") > epoch


def test_a_call_refused_before_it_is_made_is_counted_on_every_binding() -> None:
    """A version this server does not speak, a method it does not know, a caller over
    its rate: answered with an error on every binding, and counted by that error (none
    was counted). A call that was not read is counted as "unread", not by the name its
    caller sent (each a label of the caller's choosing)."""
    from interlingua.server.auth import Limits, RateLimit

    sock = bind_loopback()
    app = create_app(Agent("Echo", "Echoes.", _echo), public_url=url_of(sock), metrics=True,
                     freeze_gc=False, limits=Limits(rate_limit=RateLimit(rate=0.001, burst=6)))
    hub = add_grpc(app, "127.0.0.1:0")
    old = {"A2A-Version": "9.0"}
    with live_server(app, sock=sock) as url:
        body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}
        assert "error" in httpx.post(url + "/", json=body, headers=old).json()
        assert httpx.get(url + "/tasks/t", headers=old).status_code == 400
        with grpc.insecure_channel(f"127.0.0.1:{hub.port}") as channel:
            with pytest.raises(grpc.RpcError):
                rpc1.A2AServiceStub(channel).GetTask(pb1.GetTaskRequest(id="t"),
                                                     metadata=(("a2a-version", "9.0"),))
            # a method the service does not have (it was answered by grpc unseen)
            with pytest.raises(grpc.RpcError) as unknown:
                channel.unary_unary("/lf.a2a.v1.A2AService/Nope")(b"")
            assert unknown.value.code() == grpc.StatusCode.UNIMPLEMENTED
        nope = {"jsonrpc": "2.0", "id": 1, "method": "Nope", "params": {}}
        assert httpx.post(url + "/", json=nope, headers={"A2A-Version": "1.0"}).json()[
            "error"]["code"] == -32601
        # the burst spent (6 answered so far but the refused ones count too): refused
        statuses = [httpx.post(url + "/", json=body, headers={"A2A-Version": "1.0"}).status_code
                    for _ in range(4)]
        assert 429 in statuses, statuses
        samples = _scrape(url)
    requests = samples["interlingua_requests_total"]
    by = {(dict(k)["method"], dict(k)["binding"], dict(k)["outcome"]): v
          for k, v in requests.items()}
    for binding in ("jsonrpc", "rest", "grpc"):
        assert by.get(("unread", binding, "VersionNotSupported")) == 1, (binding, by)
    assert by.get(("unread", "jsonrpc", "MethodNotFound")) == 1, by
    assert by.get(("unread", "grpc", "MethodNotFound")) == 1, by
    assert by.get(("unread", "jsonrpc", "RateLimited")), by
    assert "Nope" not in {method for method, _, _ in by}


async def _chatty(ctx: Context) -> None:
    if ctx.text == "ask":
        await ctx.require_input("which?")
        return
    for n in range(4):
        await ctx.update(f"step {n}")  # progress: the task stays working
    await ctx.complete("done")


async def test_a_task_enters_a_state_once_however_many_updates_it_gets() -> None:
    """``interlingua_task_transitions_total`` counts states entered: four progress
    updates in ``working`` enter it once; a task that asks for input at once and then
    works enters it once more; events count every one."""
    sock = bind_loopback()
    app = create_app(Agent("Chatty", "Says what it does.", _chatty), public_url=url_of(sock),
                     metrics=True, freeze_gc=False)
    with live_server(app, sock=sock) as url:
        async with Client(url) as client:
            first = await client.send("go")
            asked = await client.send("ask")
            assert asked.status.state.value == "input-required"
            answered = await client.send("go", task_id=asked.id, context_id=asked.context_id)
        assert first.status.state.value == answered.status.state.value == "completed"
        samples = _scrape(url)
    entered = {dict(k)["state"]: v for k, v in
               samples["interlingua_task_transitions_total"].items()}
    assert entered == {"submitted": 2, "working": 2, "input-required": 1, "completed": 2}, \
        entered
    assert _value(samples, "interlingua_events_total") >= 14
