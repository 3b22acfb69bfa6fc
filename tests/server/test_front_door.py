"""A second binding in front of the same front door as JSON-RPC: the door does
authentication, owner scoping and dispatch once for every binding, so a binding
is framing only.

The binding here is deliberately tiny: ``GET /plain/tasks/{id}`` answers the
task as v1.0 JSON, and ``POST /plain/send`` sends a text; errors are
``{"code": …, "message": …}`` with the refusal's HTTP status.
"""

from __future__ import annotations

from typing import Any

import httpx
import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route

from interlingua import Agent, create_app
from interlingua.core.calls import GetTask, SendMessage
from interlingua.core.dialects import get_codec
from interlingua.core.errors import A2AError
from interlingua.core.model import Message, Role, TextPart
from interlingua.core.parts import new_id
from interlingua.server.auth import APIKeyAuth, AuthConfig
from interlingua.server.dispatch import FrontDoor, Inbound
from tests.live import bind_loopback, live_server, url_of

ALICE = {"X-API-Key": "alice-" + "a" * 20}
BOB = {"X-API-Key": "bob-" + "b" * 20}
V1 = get_codec("1.0")


def plain_binding(door: FrontDoor) -> Starlette:
    async def answer(request: Request, call: Any) -> Response:
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            result = await door.enter(Inbound(binding="plain", scope=request.scope,
                                              headers=headers, codec=V1, call=call))
        except A2AError as exc:
            status = (door.refusal(exc) or (exc.http_status, []))[0]
            return Response(msgspec.json.encode({"code": get_codec("1.0").code_of(exc),
                                                 "message": exc.message}), status_code=status)
        return Response(V1.encode_result(call, result), media_type="application/json")

    async def get_task(request: Request) -> Response:
        return await answer(request, GetTask(id=request.path_params["task_id"]))

    async def send(request: Request) -> Response:
        text = (await request.body()).decode()
        message = Message(message_id=new_id(), role=Role.USER, parts=[TextPart(text=text)])
        return await answer(request, SendMessage(message=message))

    return Starlette(routes=[Route("/tasks/{task_id}", get_task),
                             Route("/send", send, methods=["POST"])])


async def _echo(text: str) -> str:
    return text.upper()


def test_a_second_binding_shares_authentication_scoping_and_results() -> None:
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": ALICE["X-API-Key"],
                                                  "bob": BOB["X-API-Key"]})})
    sock = bind_loopback()
    a2a = create_app(Agent("Echo", "Echoes.", _echo), public_url=url_of(sock), auth=auth)
    host = Starlette(routes=[Mount("/plain", plain_binding(a2a.state.door)), Mount("/", a2a)],
                     lifespan=lambda app: a2a.router.lifespan_context(app))
    with live_server(host, sock=sock) as url, httpx.Client(timeout=10) as c:
        # sent over JSON-RPC, read over the plain binding: the same canonical task
        sent = c.post(url + "/", headers={**ALICE, "A2A-Version": "1.0"}, json={
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
                "messageId": new_id(), "role": "ROLE_USER", "parts": [{"text": "hi"}]}}})
        task = sent.json()["result"]["task"]
        got = c.get(f"{url}/plain/tasks/{task['id']}", headers=ALICE)
        assert got.status_code == 200
        assert got.json() == task
        # and the other way round
        made = c.post(url + "/plain/send", headers=ALICE, content=b"plain")
        assert made.status_code == 200
        made_id = made.json()["task"]["id"]
        again = c.post(url + "/", headers={**ALICE, "A2A-Version": "1.0"}, json={
            "jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": made_id}})
        assert again.json()["result"]["artifacts"][0]["parts"][0]["text"] == "PLAIN"
        # the door refuses the same way for both bindings
        anonymous = c.get(f"{url}/plain/tasks/{task['id']}")
        over_rpc = c.post(url + "/", headers={"A2A-Version": "1.0"}, json={
            "jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": task["id"]}})
        assert anonymous.status_code == over_rpc.status_code == 401
        assert anonymous.json()["code"] == over_rpc.json()["error"]["code"]
        foreign = c.get(f"{url}/plain/tasks/{task['id']}", headers=BOB)
        assert foreign.json()["code"] == -32001  # another owner's task: not found


async def test_a_call_prepared_by_admitted_is_admitted_once_when_entered() -> None:
    """A binding that looks at a call before it is made (``admitted``, then ``enter``)
    has its caller authenticated, and counted against the rate limit, once."""
    import pytest

    from interlingua.core.errors import TaskNotFound

    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": ALICE["X-API-Key"]})})
    door = create_app(Agent("Echo", "Echoes.", _echo), auth=auth, store="memory://").state.door
    security = door.security
    admitted: list[object] = []
    real = security.admit

    async def counted(scope: Any, headers: Any) -> Any:
        admitted.append(scope)
        return await real(scope, headers)

    await door.ensure_started()
    security.admit = counted  # type: ignore[method-assign]
    try:
        inbound = Inbound(binding="plain", scope={"type": "http"},
                          headers={"x-api-key": ALICE["X-API-Key"]}, codec=V1,
                          call=GetTask(id="no-such-task"))
        info = await door.admitted(inbound)
        assert info.principal == "alice" and inbound.request is info
        with pytest.raises(TaskNotFound):
            await door.enter(inbound)
    finally:
        del security.admit
        await door.engine.stop()
    assert len(admitted) == 1
