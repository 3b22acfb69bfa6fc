"""A request's outcome in metrics and spans is what the caller was answered, the same
on every binding: a v0.3 card call answered with the public card is ``ok``, a gRPC
call its caller cancelled is no server error, v0.2's extended-card route is counted
as every other binding's card call, and a caller refused before anything was read is
told without a dialect on every binding."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import grpc
import httpx
import pytest

from interlingua import Agent, Context, create_app
from interlingua.bindings.grpc import add_grpc
from interlingua.core.parts import new_id
from interlingua.grpc_wire.protos import interlingua_a2a_v1_pb2 as pb03
from interlingua.grpc_wire.protos import interlingua_a2a_v1_pb2_grpc as rpc03
from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2 as pb1
from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2_grpc as rpc1
from interlingua.server.auth import APIKeyAuth, AuthConfig
from tests.live import bind_loopback, live_server, url_of
from tests.observability.spans import memory_provider, named
from tests.observability.test_metrics import _scrape

pytestmark = pytest.mark.timeout(30)

KEY = "a-key-of-twenty-chars"


async def _slow(ctx: Context) -> None:
    if ctx.text == "wait":
        await asyncio.sleep(5)
    await ctx.complete(ctx.text)


def _by(samples: dict[str, Any]) -> dict[tuple[str, str, str, str], float]:
    """(method, dialect, binding, outcome) -> requests counted."""
    return {(d["method"], d["dialect"], d["binding"], d["outcome"]): v
            for d, v in ((dict(k), v) for k, v in
                         samples.get("interlingua_requests_total", {}).items())}


def _served(agent: Agent, **kw: Any) -> Any:
    provider, exporter = memory_provider()
    sock = bind_loopback()
    app = create_app(agent, public_url=url_of(sock), metrics=True, tracing=provider,
                     freeze_gc=False, **kw)
    hub = add_grpc(app, "127.0.0.1:0")
    return app, sock, hub, exporter


def test_a_grpc_call_its_caller_gave_up_on_is_cancelled_not_an_internal_error() -> None:
    app, sock, hub, exporter = _served(Agent("Slow", "Waits.", _slow))
    with live_server(app, sock=sock) as url:
        with grpc.insecure_channel(f"127.0.0.1:{hub.port}") as channel:
            message = pb1.Message(message_id=new_id(), role=pb1.ROLE_USER,
                                  parts=[pb1.Part(text="wait")])
            with pytest.raises(grpc.RpcError) as caught:
                rpc1.A2AServiceStub(channel).SendMessage(
                    pb1.SendMessageRequest(message=message), timeout=0.5)
            assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        deadline = time.monotonic() + 5
        while not named(exporter.get_finished_spans(), "A2A SendMessage"):
            assert time.monotonic() < deadline, "the request's span never ended"
            time.sleep(0.02)
        by = _by(_scrape(url))
    assert by.get(("SendMessage", "1.0", "grpc", "Cancelled")) == 1, by
    assert not [k for k in by if k[3] == "InternalError"], by
    (span,) = named(exporter.get_finished_spans(), "A2A SendMessage")
    assert span.attributes["a2a.outcome"] == "Cancelled"
    assert span.status.is_unset


def test_v03_card_calls_answered_with_the_public_card_are_ok() -> None:
    app, sock, hub, exporter = _served(Agent("Echo", "Echoes.", _slow))
    with live_server(app, sock=sock) as url:
        answer = httpx.get(url + "/v1/card")
        assert answer.status_code == 200 and answer.json()["name"] == "Echo"
        with grpc.insecure_channel(f"127.0.0.1:{hub.port}") as channel:
            card = rpc03.A2AServiceStub(channel).GetAgentCard(pb03.GetAgentCardRequest())
        assert card.name == "Echo"
        by = _by(_scrape(url))
    assert by.get(("GetExtendedCard", "0.3", "rest", "ok")) == 1, by
    assert by.get(("GetExtendedCard", "0.3", "grpc", "ok")) == 1, by
    assert not [k for k in by if k[3] != "ok"], by
    spans = named(exporter.get_finished_spans(), "A2A GetExtendedCard")
    assert len(spans) == 2 and all(s.status.is_unset for s in spans)


def test_v02s_extended_card_route_is_counted_and_refusals_carry_no_dialect() -> None:
    """The same bad key on every binding: counted "unread" with no dialect; v0.2's
    extended-card route counted as the card call it is (here: none configured)."""
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": KEY})})
    app, sock, hub, _ = _served(Agent("Echo", "Echoes.", _slow), auth=auth)
    bad, good = {"X-API-Key": "not-the-key-at-all!!"}, {"X-API-Key": KEY}
    with live_server(app, sock=sock) as url:
        assert httpx.get(url + "/agent/authenticatedExtendedCard",
                         headers=bad).status_code == 401
        assert httpx.get(url + "/agent/authenticatedExtendedCard",
                         headers=good).status_code == 404
        body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}
        assert httpx.post(url + "/", json=body, headers={**bad, "A2A-Version": "1.0"}
                          ).status_code == 401
        assert httpx.get(url + "/tasks/t", headers=bad).status_code == 401
        with grpc.insecure_channel(f"127.0.0.1:{hub.port}") as channel:
            for stub, request in ((rpc1.A2AServiceStub(channel), pb1.GetTaskRequest(id="t")),
                                  (rpc03.A2AServiceStub(channel),
                                   pb03.GetTaskRequest(name="tasks/t"))):
                with pytest.raises(grpc.RpcError) as caught:
                    stub.GetTask(request, metadata=(("x-api-key", bad["X-API-Key"]),))
                assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        by = _by(_scrape(url))
    assert by.get(("unread", "", "jsonrpc", "Unauthenticated")) == 2, by
    assert by.get(("unread", "", "rest", "Unauthenticated")) == 1, by
    assert by.get(("unread", "", "grpc", "Unauthenticated")) == 2, by
    assert by.get(("GetExtendedCard", "0.3", "jsonrpc", "ExtendedCardNotConfigured")) == 1, by
    assert sum(by.values()) == 6, by


def test_a_task_read_refused_by_a_store_outage_is_counted_as_its_call(pg_url: str) -> None:
    """v0.3's tasks/get is decided by the task's own dialect, looked up in the store:
    when that lookup meets an outage, the 503 is counted as a GetTask of the dialect
    it was answered in, as REST's and v1.0's are, not as an unread request."""
    from tests.services import PG_PORT
    from tests.tcp_proxy import TcpProxy

    with TcpProxy(PG_PORT) as proxy:
        store = pg_url.replace(f":{PG_PORT}/", f":{proxy.port}/", 1) + "&command_timeout=1"
        app, sock, _, _ = _served(Agent("Echo", "Echoes.", _slow), store=store)
        with live_server(app, sock=sock) as url:
            proxy.cut()
            body = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "t"}}
            answer = httpx.post(url + "/", json=body, timeout=20)
            assert answer.status_code == 503, answer.text
            proxy.restore()
            by = _by(_scrape(url))
    assert [k for k in by if k[0] == "GetTask"] == [("GetTask", "0.3", "jsonrpc",
                                                     "StoreDown")], by
    assert not [k for k in by if k[0] == "unread"], by
