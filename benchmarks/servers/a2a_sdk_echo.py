"""Echo agent on the official ``a2a-sdk`` 1.x, the reference point of the benchmarks.

Runs inside ``benchmarks/.venv-a2a-sdk`` (see ``benchmarks/setup.sh``), never in the
project venv. The app is the SDK's own JSON-RPC route (v1.0 methods such as
``SendMessage``, selected by the ``A2A-Version: 1.0`` header) at ``/`` plus its agent
card route, over the SDK's default request handler and in-memory task store.

The executor does what interlingua's echo agent does: it creates the task from the user
message, adds one artifact whose single text part is the message text, and completes
the task, so a unary ``SendMessage`` returns a completed task with that artifact. The
message text ``idle`` gets the same idle behaviour as interlingua's echo agent: the task,
one ``working`` status update whose message says ``idle``, then nothing until the task is
canceled (``CancelTask``), so a streaming send stays open and quiet.
"""

from __future__ import annotations

import os

from a2a.helpers import get_message_text, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
)
from echo_modes import IDLE_TEXT, chunks_asked, wait_forever
from starlette.applications import Starlette


class EchoExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        if message is None:
            raise ValueError("echo needs a message")
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        text = get_message_text(message)
        if text == IDLE_TEXT:
            await updater.start_work(updater.new_agent_message([new_text_part(IDLE_TEXT)]))
            # Held until the SDK cancels this execution (CancelTask or shutdown).
            await wait_forever()
            return
        chunks = chunks_asked(text)
        if chunks is None:
            await updater.add_artifact([new_text_part(text)])
            await updater.complete()
            return
        # ``stream N``: N chunks of one artifact, each its own event, then completed
        aid = None
        for n in range(chunks):
            part = new_text_part(f"chunk {n:04d} ")
            if aid is None:
                aid = f"chunks-{task.id}"
                await updater.add_artifact([part], artifact_id=aid)
            else:
                await updater.add_artifact([part], artifact_id=aid, append=True)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        if context.task_id and context.context_id:
            await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def agent_card(public_url: str) -> AgentCard:
    return AgentCard(
        name="echo",
        description="Echo agent",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=public_url, protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="echo", description="Echoes the text", tags=["echo"])],
    )


def create() -> Starlette:
    """App factory for ``uvicorn --factory``; the public URL comes from the environment."""
    card = agent_card(os.environ.get("BENCH_PUBLIC_URL", "http://127.0.0.1:8000/"))
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [*create_jsonrpc_routes(handler, rpc_url="/"), *create_agent_card_routes(card)]
    return Starlette(routes=routes)
