"""An LLM that delegates to other A2A agents: each agent is a tool the model may call.

    pip install 'interlingua[openai]'
    interlingua serve examples/flight_booking.py --port 8001 &
    interlingua serve examples/support_tickets.py --port 8002 &
    python examples/orchestrator.py --openai-base-url http://localhost:11434/v1 --model llama3.1 \\
        --agent http://localhost:8001 --agent http://localhost:8002
    interlingua stream http://localhost:8000 "Which IT tickets do I have open?"

Each tool is named and described from its agent's card; the calls show as
status updates of the orchestrator's task. Loaded by ``interlingua serve
examples/orchestrator.py`` it reads OPENAI_MODEL, OPENAI_BASE_URL, OPENAI_API_KEY
and AGENT_URLS (comma-separated).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

from interlingua import Agent
from interlingua.adapters.openai import chat_agent
from interlingua.tools import RemoteAgent

SYSTEM = ("You coordinate other agents. Use the tools to ask them; answer with what they "
          "said, briefly. Never make up an answer a tool could give.")
DEFAULT_AGENTS = "http://localhost:8001,http://localhost:8002"


def make_agent(agent_urls: Sequence[str], model: str | None = None,
               base_url: str | None = None) -> Agent:
    return chat_agent(
        model or os.environ.get("OPENAI_MODEL", "gpt-4o-mini"),
        base_url=base_url,
        system=SYSTEM,
        name="Orchestrator",
        description="Answers by delegating to the agents it knows.",
        tools=[RemoteAgent(url) for url in agent_urls],
    )


def main() -> None:
    from interlingua.cli.serve import serve

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--openai-base-url", help="the model server's API root (…/v1)")
    parser.add_argument("--model", help="the model's name [OPENAI_MODEL, else gpt-4o-mini]")
    parser.add_argument("--agent", action="append", metavar="URL",
                        help=f"an A2A agent to delegate to (repeatable) [{DEFAULT_AGENTS}]")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--store", default=None, help="sqlite:///PATH or memory://")
    args = parser.parse_args()
    try:
        agent = make_agent(args.agent or DEFAULT_AGENTS.split(","), args.model,
                           args.openai_base_url)
    except ValueError as exc:
        parser.error(str(exc))
    serve(agent, port=args.port, store=args.store, log_level="warning")


if __name__ == "__main__":
    main()
else:
    agent = make_agent(os.environ.get("AGENT_URLS", DEFAULT_AGENTS).split(","))
