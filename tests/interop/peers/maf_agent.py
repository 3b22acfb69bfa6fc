"""A Microsoft Agent Framework agent served over A2A by its ``A2AExecutor``, its
chat client a stub.

    .interop/py-agent-framework-a2a-1.0.0b261022/bin/python tests/interop/peers/maf_agent.py \
        --port PORT [--no-stream]

The chat client (a ``BaseChatClient`` of ours) answers ``echo: <the last user
text>``, so no model service is needed; for a text starting with ``slow`` it
waits 30 s first (a task to cancel). Hosted as the package documents it: the
executor under a2a-sdk's ``DefaultRequestHandler``, JSON-RPC at ``/``, served by
uvicorn on loopback. ``--no-stream``: the executor's default, non-streaming
mode (the answer as a ``working`` status message); by default it streams (the
answer as an artifact).
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

import uvicorn
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from agent_framework import (
    Agent,
    BaseChatClient,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    Message,
    ResponseStream,
)
from agent_framework_a2a import A2AExecutor
from starlette.applications import Starlette


def _last_user_text(messages: Sequence[Message]) -> str:
    for message in reversed(messages):
        if message.role == "user" and message.text:
            return message.text
    return ""


class EchoChatClient(BaseChatClient):
    """A chat client that repeats the user: no network."""

    def _inner_get_response(self, *, messages: Sequence[Message], stream: bool,
                            options: Any, **kwargs: Any) -> Any:
        said = _last_user_text(messages)
        text = f"echo: {said}"

        async def wait() -> None:
            if said.startswith("slow"):
                await asyncio.sleep(30)

        if stream:
            async def updates() -> AsyncIterator[ChatResponseUpdate]:
                await wait()
                yield ChatResponseUpdate(role="assistant", contents=[Content.from_text(text)],
                                         message_id="echo-reply")

            return ResponseStream(updates(), finalizer=ChatResponse.from_updates)

        async def answer() -> ChatResponse:
            await wait()
            return ChatResponse(messages=[Message(role="assistant", contents=[text])])

        return answer()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--no-stream", action="store_true")
    opts = ap.parse_args()
    agent = Agent(client=EchoChatClient(), name="maf-echo",
                  description="Echoes the message (a stub chat client)")
    card = AgentCard(
        name="maf-echo", description="Echoes the message (a stub chat client)",
        version="1.0.0", default_input_modes=["text"], default_output_modes=["text"],
        capabilities=AgentCapabilities(streaming=True),
        supported_interfaces=[AgentInterface(url=f"http://127.0.0.1:{opts.port}/",
                                             protocol_binding="JSONRPC",
                                             protocol_version="1.0")],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes the message.",
                           tags=["echo"])],
    )
    handler = DefaultRequestHandler(agent_executor=A2AExecutor(agent, stream=not opts.no_stream),
                                    task_store=InMemoryTaskStore(), agent_card=card)
    app = Starlette(routes=[*create_agent_card_routes(card),
                            *create_jsonrpc_routes(handler, "/")])
    uvicorn.run(app, host="127.0.0.1", port=opts.port, log_level="warning")


if __name__ == "__main__":
    main()
