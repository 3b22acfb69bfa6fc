"""A CrewAI agent served over A2A the way crewai 1.15 offers it, its model a stub.

    .interop/py-crewai-1.15.30/bin/python tests/interop/peers/crewai_agent.py --port PORT

CrewAI's server side is three pieces of its own on a2a-sdk 0.3 (its dependency): an
``Agent`` with ``a2a=A2AServerConfig(...)`` gets ``to_agent_card(url)``, and
``crewai.a2a.utils.task.execute`` / ``cancel`` run an A2A request on the agent. The
``AgentExecutor`` below only hands the SDK's calls to those two; the SDK's
``A2AStarletteApplication`` serves JSON-RPC at the path the config names (``/a2a``).

The model (a ``BaseLLM`` of ours) answers ``echo: <the task>`` (a task that starts
with ``slow`` first takes ``--slow`` seconds, 3 by default), so no model service is
needed; telemetry is off (the network is closed).
"""

from __future__ import annotations

import os

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")

import argparse
import asyncio
import re
import time
from typing import Any

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore
from crewai import Agent
from crewai.a2a import A2AServerConfig
from crewai.a2a.utils.task import cancel, execute
from crewai.llms.base_llm import BaseLLM


def _task_text(messages: Any) -> str:
    """The task's description in CrewAI's prompt ("Current Task: ...")."""
    text = messages if isinstance(messages, str) else "\n".join(
        str(m.get("content", "")) for m in messages if m.get("role") == "user")
    found = re.search(r"Current Task: (.*?)(?:\n|$)", text)
    return found.group(1).strip() if found else text.strip()


class EchoLLM(BaseLLM):
    """A model that repeats the task: no network."""

    #: how long a task that starts with "slow" takes
    slow: float = 3.0

    def call(self, messages: Any, tools: Any = None, callbacks: Any = None,
             available_functions: Any = None, from_task: Any = None, from_agent: Any = None,
             response_model: Any = None) -> str:
        text = _task_text(messages)
        if text.startswith("slow"):
            time.sleep(self.slow)
        return f"echo: {text}"

    async def acall(self, messages: Any, tools: Any = None, callbacks: Any = None,
                    available_functions: Any = None, from_task: Any = None,
                    from_agent: Any = None, response_model: Any = None) -> str:
        text = _task_text(messages)
        if text.startswith("slow"):
            await asyncio.sleep(self.slow)
        return f"echo: {text}"

    def supports_function_calling(self) -> bool:
        return False


class CrewExecutor(AgentExecutor):
    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await execute(self.agent, context, event_queue)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await cancel(context, event_queue)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--slow", type=float, default=3.0)
    opts = ap.parse_args()
    config = A2AServerConfig(name="crewai-echo", description="Echoes the message (a stub model)")
    agent = Agent(role="Echo", goal="Repeat what the user says", backstory="A stub for tests",
                  llm=EchoLLM(model="echo", slow=opts.slow), a2a=config, verbose=False)
    rpc_path = config.transport.jsonrpc.rpc_path
    card = agent.to_agent_card(f"http://127.0.0.1:{opts.port}{rpc_path}")
    handler = DefaultRequestHandler(agent_executor=CrewExecutor(agent),
                                    task_store=InMemoryTaskStore())
    app = A2AStarletteApplication(agent_card=card, http_handler=handler).build(
        agent_card_url=config.transport.jsonrpc.agent_card_path, rpc_url=rpc_path)
    uvicorn.run(app, host="127.0.0.1", port=opts.port, log_level="warning")


if __name__ == "__main__":
    main()
