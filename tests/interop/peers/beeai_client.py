"""beeai-framework's ``A2AAgent``: one ``run`` per TEXT on one agent object, each
result printed as a JSON line.

    .interop/py-beeai-framework-0.1.85/bin/python tests/interop/peers/beeai_client.py URL TEXT...
    ... beeai_client.py --serve      (many such runs in one process: ``pydriver.script``)

The agent reads the card at ``URL`` (a2a-sdk 0.3.26's client inside); each printed
``{"text", "task_id", "context_id", "state"}`` is what that call returned: the
answer's text and the task of the last event (``null`` when the answer was a
bare message). A call that fails prints ``{"error": ...}`` and ends the run. Each
run makes an agent (and memory) of its own.
"""

from __future__ import annotations

from typing import Any

from beeai_framework.adapters.a2a.agents.agent import A2AAgent
from beeai_framework.memory import UnconstrainedMemory
from pydriver import script


def _task_of(event: Any) -> dict[str, Any]:
    if isinstance(event, tuple):  # (task, update)
        task = event[0]
        return {"task_id": task.id, "context_id": task.context_id,
                "state": task.status.state.value}
    return {"task_id": event.task_id, "context_id": event.context_id, "state": None}


async def run(argv: list[str]) -> list[dict[str, Any]]:
    url, *texts = argv
    agent = A2AAgent(url=url, memory=UnconstrainedMemory())
    lines: list[dict[str, Any]] = []
    for text in texts:
        try:
            result = await agent.run(text)
        except Exception as exc:  # the peer's error, reported to the test
            lines.append({"error": f"{type(exc).__name__}: {exc}"})
            break
        lines.append({"text": result.last_message.text, **_task_of(result.event)})
    return lines


if __name__ == "__main__":
    script(run)
