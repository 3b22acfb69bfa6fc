"""A pydantic-ai agent with a tool, served over A2A.

    pip install 'interlingua[pydantic-ai,openai]'
    python examples/pydantic_ai_agent.py --openai-base-url http://localhost:11434/v1 --model llama3.1
    interlingua stream http://localhost:8000 "How many words in 'the quick brown fox'?"

Loaded by ``interlingua serve examples/pydantic_ai_agent.py`` it reads
OPENAI_MODEL, OPENAI_BASE_URL and OPENAI_API_KEY. The card's skill is the
agent's tool; each tool call shows as a status update; the answer streams.
"""

from __future__ import annotations

import argparse
import os

from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from interlingua import Agent
from interlingua.adapters.pydantic_ai import agent as a2a_agent


def make_agent(model: str | None = None, base_url: str | None = None) -> Agent:
    base_url = base_url or os.environ.get("OPENAI_BASE_URL")
    # local model servers take any key
    key = os.environ.get("OPENAI_API_KEY") or ("unused" if base_url else None)
    helper = PydanticAgent(
        OpenAIChatModel(model or os.environ.get("OPENAI_MODEL", "gpt-4o-mini"),
                        provider=OpenAIProvider(base_url=base_url, api_key=key)),
        name="Writing helper",
        description="Answers questions about a text; counts its words exactly.",
        instructions="Use the word_count tool to count words; never count them yourself.",
    )

    @helper.tool_plain
    def word_count(text: str) -> int:
        """The number of words in a text."""
        return len(text.split())

    return a2a_agent(helper)


def main() -> None:
    from interlingua.cli.serve import serve

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--openai-base-url", help="the model server's API root (…/v1)")
    parser.add_argument("--model", help="the model's name [OPENAI_MODEL, else gpt-4o-mini]")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--store", default=None, help="sqlite:///PATH or memory://")
    args = parser.parse_args()
    serve(make_agent(args.model, args.openai_base_url), port=args.port, store=args.store,
          log_level="warning")


if __name__ == "__main__":
    main()
else:
    agent = make_agent()
