"""google-adk's ``RemoteA2aAgent``, run by ADK's ``InMemoryRunner``: one message
per run, what the remote agent answered printed as JSON.

    .interop/py-google-adk-2.13.0/bin/python tests/interop/peers/adk_client.py URL TEXT

The agent is made from the card at ``URL/.well-known/agent-card.json``; every
event the runner yields is printed as one line ``{"author", "text", "error"}``.
"""

from __future__ import annotations

import asyncio
import json
import sys

from google.adk.agents.remote_a2a_agent import RemoteA2aAgent
from google.adk.runners import InMemoryRunner
from google.genai import types


async def main(url: str, text: str) -> None:
    remote = RemoteA2aAgent(name="remote", agent_card=f"{url}/.well-known/agent-card.json",
                            timeout=20)
    runner = InMemoryRunner(agent=remote, app_name="adk-client")
    session = await runner.session_service.create_session(app_name="adk-client",
                                                           user_id="user")
    message = types.Content(role="user", parts=[types.Part(text=text)])
    async for event in runner.run_async(user_id="user", session_id=session.id,
                                        new_message=message):
        texts = [p.text for p in (event.content.parts or []) if p.text] if event.content else []
        print(json.dumps({"author": event.author, "text": " ".join(texts),
                          "error": event.error_message}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
