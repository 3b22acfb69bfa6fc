"""Agent on the official Python SDK 0.3 (``a2a-sdk`` 0.3.x), for interlingua's client.

    python py_agent_v03.py --port PORT [--grpc-port GRPC_PORT]

Runs with the interpreter of an ``a2a-sdk`` 0.3.x venv: the SDK's
``A2ARESTFastAPIApplication`` (v0.3 HTTP+JSON under ``/rest``, named in the
card's ``additionalInterfaces``) with the routes of its
``A2AStarletteApplication`` (v0.3 JSON-RPC at ``/`` plus the card) added, over
one default request handler, in-memory task store and in-memory push-config
store, under uvicorn on 127.0.0.1. With ``--grpc-port`` the same handler is also
served by the SDK's ``GrpcHandler`` (``a2a.v1.A2AService``) on a ``grpc.aio``
server at 127.0.0.1:GRPC_PORT, named in the card's ``additionalInterfaces``
(the SDK has the grpc extra). It behaves as every agent of these tests does
(``tests/interop/agent.py`` tells how).
"""

from __future__ import annotations

import argparse
import asyncio
import uuid

import grpc
import uvicorn
from a2a.grpc import a2a_pb2_grpc
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2ARESTFastAPIApplication, A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Part,
    Role,
    TextPart,
)
from a2a.utils import get_message_text, new_agent_text_message, new_task


def text(value: str) -> Part:
    return Part(root=TextPart(text=value))


class InteropExecutor(AgentExecutor):
    def __init__(self) -> None:
        self.cancelled: dict[str, asyncio.Event] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        if message is None:
            raise ValueError("a message is needed")
        said = get_message_text(message)
        if said.startswith("reply"):
            await event_queue.enqueue_event(new_agent_text_message(
                f"re: {said}", context_id=message.context_id))
            return
        task = context.current_task
        continued = task is not None
        if task is None:
            task = new_task(message)
            await event_queue.enqueue_event(task)
        up = TaskUpdater(event_queue, task.id, task.context_id)
        words = said.split()
        verb = words[0] if words else ""
        if verb == "stream":
            n = int(words[1]) if len(words) > 1 else 3
            await up.start_work(up.new_agent_message([text("streaming")]))
            aid = str(uuid.uuid4())
            for i in range(n):
                await up.add_artifact([text(f"chunk {i};")], artifact_id=aid, name="stream.txt",
                                      append=i > 0, last_chunk=i == n - 1)
            await up.complete(up.new_agent_message([text("done")]))
        elif verb == "slow":
            event = self.cancelled.setdefault(task.id, asyncio.Event())
            await up.start_work(up.new_agent_message([text("waiting")]))
            try:
                await asyncio.wait_for(event.wait(), 30)
            except TimeoutError:
                await up.complete(up.new_agent_message([text("woke up")]))
        elif verb == "book":
            await up.requires_input(up.new_agent_message([text("Where to?")]), final=True)
        elif continued:
            first = next(m for m in task.history or [] if m.role == Role.user)
            await up.add_artifact([text(f"{get_message_text(first)} -> {said}")],
                                  name="booking", last_chunk=True)
            await up.complete()
        else:
            await up.add_artifact(list(message.parts), name="echo", last_chunk=True)
            await up.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        if context.task_id and context.context_id:
            self.cancelled.setdefault(context.task_id, asyncio.Event()).set()
            await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def agent_card(url: str, grpc_address: str | None = None) -> AgentCard:
    grpc_interfaces = ([] if grpc_address is None
                       else [AgentInterface(url=grpc_address, transport="GRPC")])
    return AgentCard(
        name="Interop (a2a-sdk 0.3)",
        description="Echoes, streams, waits and asks, for the interoperability tests.",
        version="1.0.0",
        url=url,
        preferred_transport="JSONRPC",
        additional_interfaces=[AgentInterface(url=url.rstrip("/") + "/rest",
                                              transport="HTTP+JSON"),
                               *grpc_interfaces],
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain", "application/json", "application/octet-stream"],
        default_output_modes=["text/plain", "application/json", "application/octet-stream"],
        skills=[AgentSkill(id="interop", name="interop", description="Interop behaviours",
                           tags=["test"])],
    )


async def serve(port: int, grpc_port: int | None) -> None:
    grpc_address = None if grpc_port is None else f"127.0.0.1:{grpc_port}"
    handler = DefaultRequestHandler(
        agent_executor=InteropExecutor(),
        task_store=InMemoryTaskStore(),
        push_config_store=InMemoryPushNotificationConfigStore(),
    )
    card = agent_card(f"http://127.0.0.1:{port}/", grpc_address)
    app = A2ARESTFastAPIApplication(agent_card=card, http_handler=handler).build(rpc_url="/rest")
    A2AStarletteApplication(agent_card=card, http_handler=handler).add_routes_to_app(app)
    server = None
    if grpc_address is not None:
        server = grpc.aio.server()
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(card, handler), server)
        server.add_insecure_port(grpc_address)
        await server.start()
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
    opts = ap.parse_args()
    asyncio.run(serve(opts.port, opts.grpc_port))


if __name__ == "__main__":
    main()
