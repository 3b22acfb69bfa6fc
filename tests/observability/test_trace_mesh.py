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
