"""strands-agents' ``A2AAgent``: one ``invoke_async`` per TEXT on one agent object,
each result printed as a JSON line.

    .interop/py-strands-agents-1.62.0/bin/python tests/interop/peers/strands_client.py URL TEXT...

The agent reads the card at ``URL``; each printed ``{"text", "stop_reason"}`` is
what that call's result holds.
"""

from __future__ import annotations

import asyncio
import json
import sys

from strands.agent.a2a_agent import A2AAgent


async def main(url: str, *texts: str) -> None:
    agent = A2AAgent(endpoint=url, timeout=20)
    for text in texts:
        result = await agent.invoke_async(text)
        blocks = result.message.get("content", []) if result.message else []
        print(json.dumps({"text": " ".join(b["text"] for b in blocks if "text" in b),
                          "stop_reason": str(result.stop_reason)}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], *sys.argv[2:]))
