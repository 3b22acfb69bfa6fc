"""beeai-framework's ``A2AAgent``: one ``run`` per TEXT on one agent object, each
result printed as a JSON line.

    .interop/py-beeai-framework-0.1.85/bin/python tests/interop/peers/beeai_client.py URL TEXT...

The agent reads the card at ``URL`` (a2a-sdk 0.3.26's client inside); each printed
``{"text", "task_id", "context_id", "state"}`` is what that call returned: the
answer's text and the task of the last event (``null`` when the answer was a
bare message). A call that fails prints ``{"error": ...}`` and ends the run.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from beeai_framework.adapters.a2a.agents.agent import A2AAgent
from beeai_framework.memory import UnconstrainedMemory


def _task_of(event: Any) -> dict[str, Any]:
    if isinstance(event, tuple):  # (task, update)
        task = event[0]
        return {"task_id": task.id, "context_id": task.context_id,
                "state": task.status.state.value}
    return {"task_id": event.task_id, "context_id": event.context_id, "state": None}


async def main(url: str, *texts: str) -> None:
    agent = A2AAgent(url=url, memory=UnconstrainedMemory())
    for text in texts:
        try:
            result = await agent.run(text)
        except Exception as exc:  # the peer's error, reported to the test
            print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}), flush=True)
            return
        print(json.dumps({"text": result.last_message.text, **_task_of(result.event)}),
              flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], *sys.argv[2:]))
