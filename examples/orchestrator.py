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

Delegating from a program, without a model, is a conversation with the agent
(``client.session()``, ``delegate`` below): the session keeps the context and
the open task, so an answer to the agent's question continues its task, and the
first message runs in the background while the program polls it::

    interlingua serve examples/flight_booking.py --port 8001 &
    python examples/orchestrator.py --agent http://localhost:8001 \
        --ask "I'd like to book a flight." --ask "From JFK to LHR on October 10th"
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Sequence

from interlingua import Agent, Client, Message, Task, get_text
from interlingua.tools import RemoteAgent

SYSTEM = ("You coordinate other agents. Use the tools to ask them; answer with what they "
          "said, briefly. Never make up an answer a tool could give.")
DEFAULT_AGENTS = "http://localhost:8001,http://localhost:8002"


def make_agent(agent_urls: Sequence[str], model: str | None = None,
               base_url: str | None = None) -> Agent:
    from interlingua.adapters.openai import chat_agent

    return chat_agent(
        model or os.environ.get("OPENAI_MODEL", "gpt-4o-mini"),
        base_url=base_url,
        system=SYSTEM,
        name="Orchestrator",
        description="Answers by delegating to the agents it knows.",
        tools=[RemoteAgent(url) for url in agent_urls],
    )


def _said(answer: Task | Message) -> str:
    if isinstance(answer, Message):
        return get_text(answer)
    status = answer.status
    text = get_text(status.message) if status.message is not None else ""
    return f"task {answer.id} [{status.state.value}] {text}"


async def delegate(url: str, messages: Sequence[str], *, poll_interval: float = 0.2) -> list[str]:
    """Tell the agent at ``url`` each of ``messages`` in one conversation; what it said
    to each. The first runs in the background, polled until it returns (done, or a
    question); each next one answers the question or starts the next task."""
    said: list[str] = []
    async with Client(url) as client:
        session = client.session()
        run = await session.start(messages[0], poll_interval=poll_interval)
        while not run.done:  # the program could do other work between polls
            await run.poll()
            await asyncio.sleep(poll_interval)
        said.append(_said(run.answer))
        for message in messages[1:]:
            said.append(_said(await session.send(message)))  # continues a task that asked
    return said


def main() -> None:
    from interlingua.cli.serve import serve

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--openai-base-url", help="the model server's API root (…/v1)")
    parser.add_argument("--model", help="the model's name [OPENAI_MODEL, else gpt-4o-mini]")
    parser.add_argument("--agent", action="append", metavar="URL",
                        help=f"an A2A agent to delegate to (repeatable) [{DEFAULT_AGENTS}]")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--store", default=None, help="sqlite:///PATH or memory://")
    parser.add_argument("--ask", action="append", metavar="TEXT",
                        help="no model: say this to the first --agent in one conversation "
                             "(repeatable) and print its answers")
    args = parser.parse_args()
    if args.ask:
        url = (args.agent or DEFAULT_AGENTS.split(","))[0]
        for line in asyncio.run(delegate(url, args.ask)):
            print(line)
        return
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
