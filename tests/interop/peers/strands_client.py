"""strands-agents' ``A2AAgent``: one message per run, its result printed as JSON.

    .interop/py-strands-agents-1.62.0/bin/python tests/interop/peers/strands_client.py URL TEXT

``invoke_async`` reads the card at ``URL`` and sends the message; the printed
``{"text", "stop_reason"}`` is what the agent result holds.
"""

from __future__ import annotations

import asyncio
import json
import sys

from strands.agent.a2a_agent import A2AAgent


async def main(url: str, text: str) -> None:
    result = await A2AAgent(endpoint=url, timeout=20).invoke_async(text)
    blocks = result.message.get("content", []) if result.message else []
    print(json.dumps({"text": " ".join(b["text"] for b in blocks if "text" in b),
                      "stop_reason": str(result.stop_reason)}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
