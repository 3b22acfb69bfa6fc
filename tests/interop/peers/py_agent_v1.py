"""Agent on the official Python SDK 1.x (``a2a-sdk`` 1.x), for interlingua's client.

    python py_agent_v1.py --port PORT [--grpc-port GRPC_PORT]

Runs with the interpreter of an ``a2a-sdk`` 1.x venv (with its grpc extra): the
SDK's JSON-RPC route at ``/`` and its HTTP+JSON routes under ``/rest`` (each in
v1.0, plus the SDK's own v0.3 compatibility layer) and card route over its
default request handler, in-memory task store and in-memory push-config store,
under uvicorn on 127.0.0.1. With ``--grpc-port`` the same handler is also served
over gRPC on a ``grpc.aio`` server at 127.0.0.1:GRPC_PORT: the SDK's
``GrpcHandler`` (``lf.a2a.v1.A2AService``, v1.0) and its v0.3 compatibility
handler ``CompatGrpcHandler`` (``a2a.v1.A2AService``), both named in the card.
It behaves as every agent of these tests does (``tests/interop/agent.py`` tells
how).
"""

from __future__ import annotations

import argparse
import asyncio
import uuid
from typing import Any

import grpc
import uvicorn
from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc
from a2a.compat.v0_3.grpc_handler import CompatGrpcHandler
from a2a.helpers import get_message_text, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2_grpc
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Role,
    TaskState,
)
from starlette.applications import Starlette


class InteropExecutor(AgentExecutor):
    def __init__(self) -> None:
        self.cancelled: dict[str, asyncio.Event] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        if message is None:
            raise ValueError("a message is needed")
        text = get_message_text(message)
        if text.startswith("reply"):
            await event_queue.enqueue_event(Message(
                message_id=str(uuid.uuid4()), role=Role.ROLE_AGENT,
                context_id=message.context_id, parts=[new_text_part(f"re: {text}")]))
            return
        task = context.current_task
        continued = task is not None
        if task is None:
            task = new_task_from_user_message(message)
            await event_queue.enqueue_event(task)
        up = TaskUpdater(event_queue, task.id, task.context_id)
        words = text.split()
        verb = words[0] if words else ""
        if verb == "stream":
            n = int(words[1]) if len(words) > 1 else 3
            await up.start_work(up.new_agent_message([new_text_part("streaming")]))
            aid = str(uuid.uuid4())
            for i in range(n):
                await up.add_artifact([new_text_part(f"chunk {i};")], artifact_id=aid,
                                      name="stream.txt", append=i > 0, last_chunk=i == n - 1)
            await up.complete(up.new_agent_message([new_text_part("done")]))
        elif verb == "slow":
            event = self.cancelled.setdefault(task.id, asyncio.Event())
            await up.start_work(up.new_agent_message([new_text_part("waiting")]))
            try:
                await asyncio.wait_for(event.wait(), 30)
            except TimeoutError:
                await up.complete(up.new_agent_message([new_text_part("woke up")]))
        elif verb == "book":
            await up.requires_input(up.new_agent_message([new_text_part("Where to?")]))
        elif continued:
            first = next(m for m in task.history if m.role == Role.ROLE_USER)
            await up.add_artifact([new_text_part(f"{get_message_text(first)} -> {text}")],
                                  name="booking", last_chunk=True)
            await up.complete()
        else:
            await up.add_artifact(list(message.parts), name="echo", last_chunk=True)
            await up.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        if context.task_id and context.context_id:
            self.cancelled.setdefault(context.task_id, asyncio.Event()).set()
            await TaskUpdater(event_queue, context.task_id, context.context_id).update_status(
                TaskState.TASK_STATE_CANCELED)


def agent_card(url: str, grpc_address: str | None = None) -> AgentCard:
    rest = url.rstrip("/") + "/rest"
    grpc_interfaces = [] if grpc_address is None else [
        AgentInterface(url=grpc_address, protocol_binding="GRPC", protocol_version="1.0"),
        AgentInterface(url=grpc_address, protocol_binding="GRPC", protocol_version="0.3"),
    ]
    return AgentCard(
        name="Interop (a2a-sdk 1.x)",
        description="Echoes, streams, waits and asks, for the interoperability tests.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="0.3"),
            AgentInterface(url=rest, protocol_binding="HTTP+JSON", protocol_version="1.0"),
            AgentInterface(url=rest, protocol_binding="HTTP+JSON", protocol_version="0.3"),
            *grpc_interfaces,
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain", "application/json", "application/octet-stream"],
        default_output_modes=["text/plain", "application/json", "application/octet-stream"],
        skills=[AgentSkill(id="interop", name="interop", description="Interop behaviours",
                           tags=["test"])],
    )


def _key_required(app: Any, key: str) -> Any:
    """The SDK leaves authentication to the application: the usual ASGI check, a call
    without the ``X-API-Key`` header is HTTP 401 (the card stays public)."""

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and \
                dict(scope["headers"]).get(b"x-api-key") != key.encode():
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"text/plain"),
                                    (b"www-authenticate", b"ApiKey")]})
            await send({"type": "http.response.body", "body": b"Unauthorized"})
            return
        await app(scope, receive, send)

    return guarded


async def serve(port: int, grpc_port: int | None, api_key: str | None = None) -> None:
    grpc_address = None if grpc_port is None else f"127.0.0.1:{grpc_port}"
    card = agent_card(f"http://127.0.0.1:{port}/", grpc_address)
    handler = DefaultRequestHandler(
        agent_executor=InteropExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=InMemoryPushNotificationConfigStore(),
    )
    # REST last: its routes end with a catch-all mount, `/{tenant}`, at the root
    # whatever the prefix, which would take the card's path.
    routes = [*create_jsonrpc_routes(handler, rpc_url="/", enable_v0_3_compat=True),
              *create_agent_card_routes(card),
              *create_rest_routes(handler, enable_v0_3_compat=True, path_prefix="/rest")]
    server = None
    if grpc_address is not None:
        server = grpc.aio.server()
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
        a2a_v0_3_pb2_grpc.add_A2AServiceServicer_to_server(CompatGrpcHandler(handler), server)
        server.add_insecure_port(grpc_address)
        await server.start()
    app: Any = Starlette(routes=routes)
    if api_key is not None:
        app = _key_required(app, api_key)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    try:
        await uvicorn.Server(config).serve()
    finally:
        if server is not None:
            await server.stop(1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--grpc-port", type=int)
    ap.add_argument("--api-key", help="answer HTTP 401 to calls without this X-API-Key")
    opts = ap.parse_args()
    asyncio.run(serve(opts.port, opts.grpc_port, opts.api_key))


if __name__ == "__main__":
    main()
