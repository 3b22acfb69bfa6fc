"""Echo agent on the official ``a2a-sdk`` 0.3.x, the previous generation of the SDK.

Runs inside ``benchmarks/.venv-a2a-sdk-03`` (see ``benchmarks/setup.sh``). The 0.3 SDK
speaks only the v0.3 JSON-RPC dialect, so its unary request is ``message/send`` (role
``"user"``, ``kind``-tagged parts) instead of v1.0 ``SendMessage``; the work asked of it
is the same: a completed task with one artifact echoing the message text. The app is the
SDK's ``A2AStarletteApplication`` (JSON-RPC at ``/`` plus the agent card) over its default
request handler and in-memory task store. The message text ``idle`` gets the same idle
behaviour as interlingua's echo agent: the task, one ``working`` status update whose
message says ``idle``, then nothing until the task is canceled (``tasks/cancel``).
"""

from __future__ import annotations

import os

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentSkill, Part, TextPart
from a2a.utils import get_message_text, new_task
from echo_modes import IDLE_TEXT, chunks_asked, wait_forever
from starlette.applications import Starlette


class EchoExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        if message is None:
            raise ValueError("echo needs a message")
        task = context.current_task
        if task is None:
            task = new_task(message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        text = get_message_text(message)
        if text == IDLE_TEXT:
            await updater.start_work(updater.new_agent_message([Part(root=TextPart(text=text))]))
            # Held until the SDK cancels this execution (tasks/cancel or shutdown).
            await wait_forever()
            return
        chunks = chunks_asked(text)
        if chunks is None:
            await updater.add_artifact([Part(root=TextPart(text=text))])
            await updater.complete()
            return
        # ``stream N``: N chunks of one artifact, each its own event, then completed
        aid = None
        for n in range(chunks):
            part = Part(root=TextPart(text=f"chunk {n:04d} "))
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
        url=public_url,
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="echo", description="Echoes the text", tags=["echo"])],
    )


def create() -> Starlette:
    """App factory for ``uvicorn --factory``; the public URL comes from the environment."""
    card = agent_card(os.environ.get("BENCH_PUBLIC_URL", "http://127.0.0.1:8000/"))
    handler = DefaultRequestHandler(agent_executor=EchoExecutor(), task_store=InMemoryTaskStore())
    return A2AStarletteApplication(agent_card=card, http_handler=handler).build()
