"""A python-a2a agent: ``A2AServer`` with an echoing task handler, on its Flask server.

    .interop/py-python-a2a-0.5.10/bin/python tests/interop/peers/python_a2a_agent.py --port PORT

Completes every task with one text artifact, ``echo: <the message text>``.
"""

from __future__ import annotations

import argparse

from python_a2a import A2AServer, AgentCard, TaskState, TaskStatus, run_server


def _text(message: dict | None) -> str:
    message = message or {}
    content = message.get("content")
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return content["text"]
    for part in message.get("parts") or []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            return part["text"]
    return ""


class EchoAgent(A2AServer):
    def handle_task(self, task):  # type: ignore[no-untyped-def]
        task.artifacts = [{"parts": [{"type": "text", "text": f"echo: {_text(task.message)}"}]}]
        task.status = TaskStatus(state=TaskState.COMPLETED)
        return task


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    opts = ap.parse_args()
    card = AgentCard(name="python-a2a-echo", description="Echoes the message",
                     url=f"http://127.0.0.1:{opts.port}", version="1.0.0")
    run_server(EchoAgent(agent_card=card), host="127.0.0.1", port=opts.port)


if __name__ == "__main__":
    main()
