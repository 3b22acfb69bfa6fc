"""strands-agents' ``A2AAgent``: one ``invoke_async`` per TEXT on one agent object,
each result printed as a JSON line.

    .interop/py-strands-agents-1.62.0/bin/python tests/interop/peers/strands_client.py URL TEXT...
    ... strands_client.py --serve      (many such runs in one process: ``pydriver.script``)

The agent reads the card at ``URL``; each printed ``{"text", "stop_reason"}`` is
what that call's result holds. Each run makes an agent of its own.
"""

from __future__ import annotations

from typing import Any

from pydriver import script
from strands.agent.a2a_agent import A2AAgent


async def run(argv: list[str]) -> list[dict[str, Any]]:
    url, *texts = argv
    agent = A2AAgent(endpoint=url, timeout=20)
    lines = []
    for text in texts:
        result = await agent.invoke_async(text)
        blocks = result.message.get("content", []) if result.message else []
        lines.append({"text": " ".join(b["text"] for b in blocks if "text" in b),
                      "stop_reason": str(result.stop_reason)})
    return lines


if __name__ == "__main__":
    script(run)
