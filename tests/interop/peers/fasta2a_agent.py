"""A fasta2a agent made from a pydantic-ai agent, its model a stub.

    .interop/py-fasta2a-2.1.1/bin/python tests/interop/peers/fasta2a_agent.py --port PORT

The model (pydantic-ai's ``FunctionModel``) answers ``echo: <the last user
text>``, so no model service is needed; a text that begins with ``slow`` makes it
wait 30 s first (a task to cancel). Served by uvicorn on loopback.
"""

from __future__ import annotations

import argparse
import asyncio

import uvicorn
from fasta2a.pydantic_ai import agent_to_a2a
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel


def _last_text(messages: list[ModelMessage]) -> str:
    for message in reversed(messages):
        for part in getattr(message, "parts", []):
            if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                return part.content
    return ""


async def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    text = _last_text(messages)
    if text.startswith("slow"):
        await asyncio.sleep(30)  # a task to cancel
    return ModelResponse(parts=[TextPart(f"echo: {text}")])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    opts = ap.parse_args()
    agent = Agent(FunctionModel(answer), name="fasta2a-echo")
    app = agent_to_a2a(agent, url=f"http://127.0.0.1:{opts.port}",
                       description="Echoes the message (a stub model)")
    uvicorn.run(app, host="127.0.0.1", port=opts.port, log_level="warning")


if __name__ == "__main__":
    main()
