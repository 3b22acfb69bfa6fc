"""A chat agent backed by any OpenAI-compatible model server, in a few lines.

    pip install 'interlingua[openai]'
    python examples/chat_openai.py --openai-base-url http://localhost:11434/v1 --model llama3.1
    interlingua stream http://localhost:8000 "Why is the sky blue?"

The same agent without this file: ``interlingua serve --openai-model llama3.1
--openai-base-url http://localhost:11434/v1``. Loaded by ``interlingua serve
examples/chat_openai.py`` it reads OPENAI_MODEL, OPENAI_BASE_URL and OPENAI_API_KEY.
Each A2A context is one conversation: send with the context id of an earlier
answer to go on with it.
"""

from __future__ import annotations

import argparse
import os

from interlingua import Agent
from interlingua.adapters.openai import chat_agent

SYSTEM = "You are a helpful assistant. Answer briefly."


def make_agent(model: str | None = None, base_url: str | None = None) -> Agent:
    return chat_agent(
        model or os.environ.get("OPENAI_MODEL", "gpt-4o-mini"),
        base_url=base_url,
        system=SYSTEM,
        name="Chat",
        description="Answers questions and keeps the conversation going.",
    )


def main() -> None:
    from interlingua.cli.serve import serve

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--openai-base-url", help="the model server's API root (…/v1)")
    parser.add_argument("--model", help="the model's name [OPENAI_MODEL, else gpt-4o-mini]")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--store", default=None, help="sqlite:///PATH or memory://")
    args = parser.parse_args()
    try:
        agent = make_agent(args.model, args.openai_base_url)
    except ValueError as exc:
        parser.error(str(exc))
    serve(agent, port=args.port, store=args.store, log_level="warning")


if __name__ == "__main__":
    main()
else:
    agent = make_agent()
