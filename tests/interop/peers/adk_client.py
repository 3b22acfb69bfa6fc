"""google-adk's ``RemoteA2aAgent``, run by ADK's ``InMemoryRunner``: one turn per
TEXT, all in one session, what the remote agent answered printed as JSON.

    .interop/py-google-adk-2.13.0/bin/python tests/interop/peers/adk_client.py URL TEXT...
    ... adk_client.py --serve      (many such runs in one process: ``pydriver.script``)

The agent is made from the card at ``URL/.well-known/agent-card.json``; every
event the runner yields is printed as one line ``{"author", "text", "error",
"task_id"}`` (``task_id``: the A2A task ADK says the event belongs to). Each run
makes its agent, runner and session anew.
"""

from __future__ import annotations

from typing import Any

from google.adk.agents.remote_a2a_agent import RemoteA2aAgent
from google.adk.runners import InMemoryRunner
from google.genai import types
from pydriver import script


async def run(argv: list[str]) -> list[dict[str, Any]]:
    url, *texts = argv
    remote = RemoteA2aAgent(name="remote", agent_card=f"{url}/.well-known/agent-card.json",
                            timeout=20)
    runner = InMemoryRunner(agent=remote, app_name="adk-client")
    try:
        session = await runner.session_service.create_session(app_name="adk-client",
                                                               user_id="user")
        lines = []
        for text in texts:
            message = types.Content(role="user", parts=[types.Part(text=text)])
            async for event in runner.run_async(user_id="user", session_id=session.id,
                                                new_message=message):
                said = ([p.text for p in (event.content.parts or []) if p.text]
                        if event.content else [])
                lines.append({"author": event.author, "text": " ".join(said),
                              "error": event.error_message,
                              "task_id": (event.custom_metadata or {}).get("a2a:task_id")})
        return lines
    finally:
        # the agent's own HTTP client, not left behind for the next run
        await remote.cleanup()


if __name__ == "__main__":
    script(run)
