"""Microsoft Agent Framework's ``A2AAgent``: one ``run`` per TEXT, all in one
``AgentSession``, what each run gave printed as one JSON line.

    .interop/py-agent-framework-a2a-1.0.0b261022/bin/python tests/interop/peers/maf_client.py \
        [--binding JSONRPC|HTTP+JSON|GRPC] URL MODE TEXT...
    ... maf_client.py --serve      (many such runs in one process: ``pydriver.script``)

MODE: ``run`` (a blocking ``run``), ``stream`` (``run(stream=True)``) or
``background`` (``run(background=True)``, then ``poll_task`` with its continuation
token until the token is gone). The agent is made from the card the SDK's
``A2ACardResolver`` reads at ``URL``, as the package's samples do; ``url:`` before
the URL makes it from the URL alone (``A2AAgent(url=...)``, no card read).
``--binding``: the one binding the agent may pick from the card
(``supported_protocol_bindings``; its default is JSON-RPC).

Each line: ``{"text", "input_requested", "context_id", "task_id", "task_state",
"polls"}``: the text of the run's messages, whether the remote agent asked for
input, the session's A2A state after the run, and (background) how many polls ran
before the task settled. Each run makes its agent and session anew.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

import httpx
from a2a.client import A2ACardResolver
from a2a.types import TaskState
from agent_framework import AgentResponse, AgentSession
from agent_framework_a2a import A2AAgent
from pydriver import script


async def _agent(target: str, binding: str) -> A2AAgent:
    if target.startswith("url:"):
        return A2AAgent(url=target.removeprefix("url:"), timeout=20,
                        supported_protocol_bindings=[binding])
    async with httpx.AsyncClient() as http:
        card = await A2ACardResolver(http, target).get_agent_card()
    return A2AAgent(agent_card=card, timeout=20, supported_protocol_bindings=[binding])


async def _background(agent: A2AAgent, text: str, session: AgentSession) -> tuple[Any, int]:
    response = await agent.run(text, session=session, background=True)
    polls = 0
    # polled until the task settles or asks for input (still in progress for the token)
    while (response.continuation_token is not None and not response.user_input_requests
           and polls < 100):
        await asyncio.sleep(0.1)
        response = await agent.poll_task(response.continuation_token)
        polls += 1
    return response, polls


def _line(response: AgentResponse, session: AgentSession, polls: int) -> dict[str, Any]:
    state = session.service_session_id if isinstance(session.service_session_id, dict) else {}
    task_state = state.get("task_state")
    return {
        "text": " ".join(m.text for m in response.messages if m.text),
        "input_requested": bool(response.user_input_requests),
        "context_id": state.get("context_id"), "task_id": state.get("task_id"),
        "task_state": TaskState.Name(task_state) if task_state is not None else None,
        "polls": polls,
    }


async def _runs(target: str, mode: str, texts: list[str], binding: str) -> list[dict[str, Any]]:
    agent = await _agent(target, binding)
    session = agent.create_session()
    lines = []
    async with agent:
        for text in texts:
            polls = 0
            if mode == "stream":
                stream = agent.run(text, session=session, stream=True)
                async for _ in stream:
                    pass
                response = await stream.get_final_response()
            elif mode == "background":
                response, polls = await _background(agent, text, session)
            else:
                response = await agent.run(text, session=session)
            lines.append(_line(response, session, polls))
    return lines


async def run(argv: list[str]) -> list[Any]:
    ap = argparse.ArgumentParser()
    ap.add_argument("--binding", default="JSONRPC")
    ap.add_argument("target")
    ap.add_argument("mode", choices=["run", "stream", "background"])
    ap.add_argument("texts", nargs="+")
    opts = ap.parse_args(argv)
    return await _runs(opts.target, opts.mode, opts.texts, opts.binding)


if __name__ == "__main__":
    script(run)
