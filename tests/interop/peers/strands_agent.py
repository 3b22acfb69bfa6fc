"""A strands-agents agent served by its ``A2AServer``, its model a stub.

    .interop/py-strands-agents-1.62.0/bin/python tests/interop/peers/strands_agent.py --port PORT

The model (a ``Model`` of ours) streams ``echo: <the last user text>`` as one
text block, so no model service is needed. Served by uvicorn on loopback.
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncGenerator
from typing import Any

import uvicorn
from strands import Agent
from strands.models.model import Model
from strands.multiagent.a2a import A2AServer


def _last_user_text(messages: Any) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            texts = [block["text"] for block in message.get("content", []) if "text" in block]
            if texts:
                return " ".join(texts)
    return ""


class EchoModel(Model):
    """A model that repeats the user: no network."""

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    def structured_output(self, output_model: Any, prompt: Any, system_prompt: Any = None,
                          **kwargs: Any) -> Any:
        raise NotImplementedError

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None,
                     **kwargs: Any) -> AsyncGenerator[Any, None]:
        text = f"echo: {_last_user_text(messages)}"
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockStart": {"start": {}}}
        yield {"contentBlockDelta": {"delta": {"text": text}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    opts = ap.parse_args()
    agent = Agent(model=EchoModel(), name="strands-echo",
                  description="Echoes the message (a stub model)", callback_handler=None)
    server = A2AServer(agent=agent, host="127.0.0.1", port=opts.port)
    uvicorn.run(server.to_starlette_app(), host="127.0.0.1", port=opts.port,
                log_level="warning")


if __name__ == "__main__":
    main()
