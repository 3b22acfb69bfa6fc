"""Over the mesh (the machine's Mosquitto) the trace goes along as the MQTT user
property ``traceparent``: the agent's request span hangs from the caller's span."""

from __future__ import annotations

import pytest

from interlingua import Agent, client_for, create_app
from interlingua.mesh import MeshSettings, attach
from tests.mesh.helpers import BROKER
from tests.observability.spans import memory_provider, named

pytestmark = pytest.mark.timeout(30)


async def _echo(text: str) -> str:
    return text.upper()


async def test_mesh_request_is_a_child_of_the_callers_span(ns: str):
    provider, exporter = memory_provider()
    app = create_app(Agent("Echo", "Echoes.", _echo), freeze_gc=False, tracing=provider)
    attach(app, MeshSettings(url=BROKER, namespace=ns, card_interval=0.5, cancel_grace=1.0,
                             session_expiry=30))
    async with app.router.lifespan_context(app):
        with provider.get_tracer("test").start_as_current_span("root") as root:
            async with client_for(f"{BROKER}/{ns}/Echo") as client:
                task = await client.send("hi")
    spans = exporter.get_finished_spans()
    (send,) = named(spans, "A2A SendMessage")
    assert send.attributes["a2a.binding"] == "mqtt"
    assert send.attributes["a2a.task_id"] == task.id
    assert send.context.trace_id == root.get_span_context().trace_id
    assert send.parent.span_id == root.get_span_context().span_id
    (turn,) = named(spans, "A2A executor turn")
    assert turn.parent.span_id == send.context.span_id


async def test_mesh_requests_refused_once_read_are_counted_and_traced(ns: str):
    """A send whose id no topic can hold, and a batch: answered with -32600 and told
    to the request hooks, as every other binding's refusals are (they were neither
    counted nor traced)."""
    import asyncio
    import json

    import aiomqtt
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties

    provider, exporter = memory_provider()
    app = create_app(Agent("Echo", "Echoes.", _echo), freeze_gc=False, tracing=provider,
                     metrics=True)
    attach(app, MeshSettings(url=BROKER, namespace=ns, card_interval=0.5, cancel_grace=1.0,
                             session_expiry=30))
    reply = f"{ns}/probe/replies"
    message = {"message": {"role": "user", "parts": [{"type": "text", "text": "hi"}]}}
    async with app.router.lifespan_context(app), \
            aiomqtt.Client("127.0.0.1", 1883, protocol=aiomqtt.ProtocolVersion.V5) as mq:
        await mq.subscribe(reply, qos=1)
        async with client_for(f"{BROKER}/{ns}/Echo") as client:
            await client.get_card()  # the agent is there
        props = Properties(PacketTypes.PUBLISH)
        props.UserProperty = [("replyTo", reply)]
        for body in ({"jsonrpc": "2.0", "id": "bad+id", "method": "tasks/send",
                      "params": message},
                     [{"jsonrpc": "2.0", "id": "b1", "method": "tasks/get",
                       "params": {"id": "x"}}]):
            await mq.publish(f"{ns}/a2a/v1/agent/request/Echo", json.dumps(body), qos=1,
                             properties=props)
        answers = []
        async with asyncio.timeout(10):
            async for got in mq.messages:
                answers.append(json.loads(got.payload))
                if len(answers) == 2:
                    break
        assert all(a["error"]["code"] == -32600 for a in answers), answers
        metrics = app.state.service.observer.metrics
        counted = dict(metrics.requests)
    assert counted.get(("SendMessage", "sam", "mqtt", "InvalidRequest")) == 1, counted
    assert counted.get(("unread", "", "mqtt", "InvalidRequest")) == 1, counted
    refused = named(exporter.get_finished_spans(), "A2A SendMessage")
    assert [s.attributes["a2a.outcome"] for s in refused] == ["InvalidRequest"]
