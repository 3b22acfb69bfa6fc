"""A CrewAI agent that delegates its task to a remote A2A agent (its ``A2AClientConfig``).

    .interop/py-crewai-1.15.30/bin/python tests/interop/peers/crewai_client.py [--polling] URL TEXT...

A one-task crew whose agent has ``a2a=A2AClientConfig(endpoint=URL's card)``. Its model
(a ``BaseLLM`` of ours, no network) plays the part CrewAI gives a model: asked whether
to delegate, it sends the first TEXT to the remote agent; when the remote agent asks
for input, it sends the next TEXT (CrewAI keeps the task and context ids between turns).
``trust_remote_completion_status`` makes the remote agent's completed answer the
task's result, printed as ``{"result": ...}``. CrewAI follows the remote task by
streaming (its default, ``message/stream``); ``--polling`` makes it send without
blocking and poll with ``tasks/get`` (``PollingConfig``). Telemetry is off (the network is closed).

    ... crewai_client.py --serve

serves many such runs in one process (``pydriver.script``), each with a crew of its own.
"""

from __future__ import annotations

import os

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")

import argparse
import asyncio
import json
from typing import Any

from crewai import Agent, Crew, Task
from crewai.a2a import A2AClientConfig
from crewai.a2a.updates import PollingConfig, StreamingConfig
from crewai.a2a.utils import agent_card
from crewai.llms.base_llm import BaseLLM
from pydriver import script


class ScriptedLLM(BaseLLM):
    """Each call that decides on delegation sends the next of ``texts`` to ``endpoint``;
    with none left, it ends the delegation with ``done``."""

    endpoint: str = ""
    texts: list[str] = []
    said: int = 0

    def call(self, messages: Any, tools: Any = None, callbacks: Any = None,
             available_functions: Any = None, from_task: Any = None, from_agent: Any = None,
             response_model: Any = None) -> str:
        if self.said < len(self.texts):
            self.said += 1
            return json.dumps({"a2a_ids": [self.endpoint], "message": self.texts[self.said - 1],
                               "is_a2a": True})
        return json.dumps({"a2a_ids": [], "message": "done", "is_a2a": False})

    def supports_function_calling(self) -> bool:
        return False


def _forget_cards() -> None:
    """CrewAI keeps the cards it read for the life of the process: each run reads its
    remote agent's card anew, as a run by hand does."""
    agent_card._fetch_agent_card_cached.cache_clear()
    asyncio.run(agent_card._afetch_agent_card_cached.cache.clear())


def run(argv: list[str]) -> list[dict[str, Any]]:
    ap = argparse.ArgumentParser()
    ap.add_argument("--polling", action="store_true")
    ap.add_argument("url")
    ap.add_argument("texts", nargs="+")
    opts = ap.parse_args(argv)
    _forget_cards()
    texts = opts.texts
    endpoint = opts.url.rstrip("/") + "/.well-known/agent-card.json"
    updates = PollingConfig(interval=0.2, timeout=30) if opts.polling else StreamingConfig()
    llm = ScriptedLLM(model="scripted", endpoint=endpoint, texts=list(texts))
    agent = Agent(role="Coordinator", goal="Delegate the task", backstory="A stub for tests",
                  llm=llm, verbose=False,
                  a2a=A2AClientConfig(endpoint=endpoint, timeout=30, max_turns=4,
                                      trust_remote_completion_status=True,
                                      updates=updates))
    task = Task(description=texts[0], expected_output="the remote agent's answer", agent=agent)
    out = Crew(agents=[agent], tasks=[task], verbose=False).kickoff()
    return [{"result": out.raw}]


if __name__ == "__main__":
    script(run)
