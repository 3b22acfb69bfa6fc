"""Each binding names itself to the front door: a request's metric and span carry
the name of the binding it came in on (JSON-RPC, HTTP+JSON, gRPC, the mesh's
MQTT), a unary send and a streaming one alike, over the real transports."""

from __future__ import annotations

import asyncio
import logging

import pytest
from prometheus_client.parser import text_string_to_metric_families

from interlingua import Agent, Client, client_for, create_app
from interlingua.bindings.grpc import add_grpc
from interlingua.mesh import MeshSettings, attach
from tests.live import bind_loopback, live_server, url_of
from tests.mesh.helpers import BROKER
from tests.observability.spans import memory_provider, named

pytestmark = pytest.mark.timeout(60)


async def _echo(text: str) -> str:
    return text.upper()


def _requests(url: str) -> dict[tuple[str, str], float]:
    """interlingua_requests_total as {(method, binding): count}."""
    import httpx

    out: dict[tuple[str, str], float] = {}
    for family in text_string_to_metric_families(httpx.get(url + "/metrics").text):
        for sample in family.samples:
            if sample.name == "interlingua_requests_total":
                key = (sample.labels["method"], sample.labels["binding"])
                out[key] = out.get(key, 0) + sample.value
    return out


@pytest.mark.parametrize(("binding", "name"), [("jsonrpc", "jsonrpc"), ("http+json", "rest"),
                                               ("grpc", "grpc"), ("mqtt", "mqtt")])
async def test_the_request_metric_and_span_carry_the_binding_name(
        binding: str, name: str, request: pytest.FixtureRequest) -> None:
    provider, exporter = memory_provider()
    sock = bind_loopback()
    app = create_app(Agent("Echo", "Echoes.", _echo), public_url=url_of(sock), metrics=True,
                     tracing=provider, freeze_gc=False)
    target, client_binding = url_of(sock), binding
    if binding == "grpc":
        add_grpc(app, "127.0.0.1:0")
    elif binding == "mqtt":
        ns = request.getfixturevalue("ns")  # skips without the broker
        attach(app, MeshSettings(url=BROKER, namespace=ns, card_interval=0.5,
                                 cancel_grace=1.0, session_expiry=30))
        target, client_binding = f"{BROKER}/{ns}/Echo", None
    with live_server(app, sock=sock) as url:
        async with client_for(target, binding=client_binding) as client:
            task = await client.send("hi")
            streamed = [e async for e in client.stream("streamed")]
        assert streamed
        counted = await asyncio.to_thread(_requests, url)
    # the two requests made, and nothing else: the mesh reads the task once more for
    # a stream's final answer, which was counted as a GetTask nobody sent
    assert counted == {("SendMessage", name): 1, ("SendStreamingMessage", name): 1}, counted
    spans = exporter.get_finished_spans()
    (send,) = named(spans, "A2A SendMessage")
    assert send.attributes["a2a.binding"] == name
    assert send.attributes["a2a.task_id"] == task.id
    (stream,) = named(spans, "A2A SendStreamingMessage")
    assert stream.attributes["a2a.binding"] == name


async def test_a_failing_hook_is_logged_and_the_request_answered(
        caplog: pytest.LogCaptureFixture) -> None:
    """A hook's fault is not the request's: logged, and the others still run."""
    app = create_app(Agent("Echo", "Echoes.", _echo), freeze_gc=False)
    seen: list[tuple[str, str, str]] = []

    def broken(method: str, call: object, info: object) -> None:
        raise RuntimeError("a broken hook")

    def noted(method: str, call: object, info: object):  # type: ignore[no-untyped-def]
        def end(error: BaseException | None, result: object) -> None:
            seen.append((method, info.binding, "ok" if error is None else "failed"))  # type: ignore[attr-defined]

        return end

    app.state.hooks.requests.extend([broken, noted])
    sock = bind_loopback()
    with caplog.at_level(logging.ERROR, "interlingua.hooks"), \
            live_server(app, sock=sock) as url:
        async with Client(url) as client:
            task = await client.send("hi")
    assert task.status.state.value == "completed"
    assert seen == [("SendMessage", "jsonrpc", "ok")]
    assert "a hook failed as its work began" in caplog.text
