"""A beeai-framework ``RequirementAgent`` served by BeeAI's ``A2AServer``, its model a stub.

    .interop/py-beeai-framework-0.1.85/bin/python tests/interop/peers/beeai_agent.py --port PORT

The model (a ``ChatModel`` of ours, no network) answers by calling the agent's
``final_answer`` tool with ``echo: <the user texts of the conversation, joined by
" | ">``, so a second turn in the same context shows the first; a user text
that starts with ``slow`` makes it wait 30 s first (a task to cancel). BeeAI's
server (a2a-sdk 0.3.26 inside) speaks v0.3 over one binding: JSON-RPC, or with
``--protocol http_json`` HTTP+JSON, both on uvicorn at ``--port``; or with
``--protocol grpc`` gRPC at ``--grpc-port``, its card then served over HTTP at ``--port``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import AsyncGenerator
from typing import Any

from beeai_framework.adapters.a2a.serve.server import A2AServer, A2AServerConfig
from beeai_framework.agents.requirement import RequirementAgent
from beeai_framework.backend import AssistantMessage, ChatModel, UserMessage
from beeai_framework.backend.message import MessageToolCallContent
from beeai_framework.backend.types import ChatModelInput, ChatModelOutput
from beeai_framework.memory import UnconstrainedMemory


class EchoModel(ChatModel):
    """A model that repeats the conversation's user texts: no network."""

    @property
    def model_id(self) -> str:
        return "echo"

    @property
    def provider_id(self) -> Any:
        return "ollama"  # a provider name BeeAI knows; nothing is called

    async def _create(self, input: ChatModelInput, run: Any) -> ChatModelOutput:
        # the agent puts the turn it runs in its task template ("Your task: ...")
        texts = [m.text.rsplit("Your task: ", 1)[-1] for m in input.messages
                 if isinstance(m, UserMessage)]
        if texts and texts[-1].startswith("slow"):
            await asyncio.sleep(30)
        answer = "echo: " + " | ".join(texts)
        tools = [t.name for t in input.tools or []]
        if "final_answer" in tools:
            call = MessageToolCallContent(id="call-1", tool_name="final_answer",
                                          args=json.dumps({"response": answer}))
            return ChatModelOutput(output=[AssistantMessage([call])], finish_reason="tool_calls")
        return ChatModelOutput(output=[AssistantMessage(answer)], finish_reason="stop")

    async def _create_stream(self, input: ChatModelInput,
                             run: Any) -> AsyncGenerator[ChatModelOutput]:
        yield await self._create(input, run)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--protocol", default="jsonrpc", choices=["jsonrpc", "http_json", "grpc"])
    ap.add_argument("--grpc-port", type=int, help="with --protocol grpc: gRPC's port (the "
                    "card stays at --port)")
    opts = ap.parse_args()
    agent = RequirementAgent(llm=EchoModel(), memory=UnconstrainedMemory(), name="beeai-echo",
                             description="Echoes the conversation (a stub model)")
    server = A2AServer(config=A2AServerConfig(
        host="127.0.0.1", port=opts.grpc_port or opts.port, protocol=opts.protocol,
        agent_card_port=opts.port if opts.protocol == "grpc" else None))
    server.register(agent)
    server.serve()


if __name__ == "__main__":
    main()
