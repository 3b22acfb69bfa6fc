"""A google-adk agent served by ADK's own ``to_a2a``, its model a stub.

    .interop/py-google-adk-2.13.0/bin/python tests/interop/peers/adk_agent.py --port PORT

The model (a ``BaseLlm`` of ours) answers ``echo: <the last user text>``, so no
model service is needed. Served by uvicorn on loopback.
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncGenerator

import uvicorn
from google.adk.a2a.utils.agent_to_a2a import to_a2a
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types


def _last_user_text(request: LlmRequest) -> str:
    for content in reversed(request.contents):
        if content.role == "user":
            texts = [p.text for p in content.parts or [] if p.text]
            if texts:
                return " ".join(texts)
    return ""


class EchoModel(BaseLlm):
    """A model that repeats the user: no network."""

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        text = f"echo: {_last_user_text(llm_request)}"
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    opts = ap.parse_args()
    agent = LlmAgent(name="adk_echo", model=EchoModel(model="echo"),
                     description="Echoes the message (a stub model)",
                     instruction="Repeat the user's message.")
    app = to_a2a(agent, host="127.0.0.1", port=opts.port)
    uvicorn.run(app, host="127.0.0.1", port=opts.port, log_level="warning")


if __name__ == "__main__":
    main()
