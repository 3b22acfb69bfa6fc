"""A resume point given twice with different values (two ``Last-Event-ID`` headers, or
two ``last-event-id`` metadata values) is refused as invalid params on every binding:
the last one was taken, and the events between the two were skipped."""

from __future__ import annotations

import grpc
import httpx
import pytest

from interlingua import Agent, create_app
from interlingua.bindings.grpc import add_grpc
from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2 as pb1
from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2_grpc as rpc1
from tests.live import bind_loopback, live_server, url_of

pytestmark = pytest.mark.timeout(30)


async def _three(text: str) -> str:
    return text


def test_two_resume_points_are_refused_on_every_binding() -> None:
    sock = bind_loopback()
    app = create_app(Agent("Echo", "Echoes.", _three), public_url=url_of(sock),
                     freeze_gc=False)
    hub = add_grpc(app, "127.0.0.1:0")
    with live_server(app, sock=sock) as url:
        sent = httpx.post(url + "/", headers={"A2A-Version": "1.0"}, json={
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
                "messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}}).json()
        task_id = sent["result"]["task"]["id"]
        twice = [("A2A-Version", "1.0"), ("Last-Event-ID", "1"), ("Last-Event-ID", "2")]
        with httpx.stream("POST", url + "/", headers=twice, json={
                "jsonrpc": "2.0", "id": 2, "method": "SubscribeToTask",
                "params": {"id": task_id}}) as answer:
            body = answer.read().decode()
        assert '"code":-32602' in body and "'1, 2'" in body, body
        for route in (f"/tasks/{task_id}:subscribe", f"/v1/tasks/{task_id}:subscribe"):
            with httpx.stream("GET", url + route, headers=twice) as answer:
                assert answer.status_code in (400, 422), (route, answer.read())
                assert "'1, 2'" in answer.read().decode(), route
        with grpc.insecure_channel(f"127.0.0.1:{hub.port}") as channel:
            with pytest.raises(grpc.RpcError) as refused:
                list(rpc1.A2AServiceStub(channel).SubscribeToTask(
                    pb1.SubscribeToTaskRequest(id=task_id),
                    metadata=(("last-event-id", "1"), ("last-event-id", "2"))))
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "'1, 2'" in (refused.value.details() or "")
        # the same value twice is that value (a proxy may repeat a header)
        same = [("A2A-Version", "1.0"), ("Last-Event-ID", "1"), ("Last-Event-ID", "1")]
        with httpx.stream("POST", url + "/", headers=same, json={
                "jsonrpc": "2.0", "id": 3, "method": "SubscribeToTask",
                "params": {"id": task_id}}) as answer:
            assert "-32602" not in answer.read().decode()
