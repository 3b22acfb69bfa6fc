"""A LangGraph graph served by langgraph-api (its in-memory runtime), A2A at ``/a2a/echo``.

    .interop/py-langgraph-api-0.16.7/bin/python tests/interop/peers/langgraph_agent.py --port PORT

The graph has one node that answers ``echo: <the last message's text>``: no
model service. ``langgraph_api.cli.run_server`` is what ``langgraph dev`` runs.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph


def _echo(state: MessagesState) -> dict[str, Any]:
    last = state["messages"][-1] if state["messages"] else None
    text = last.text if last is not None and hasattr(last, "text") else ""
    if callable(text):
        text = text()
    return {"messages": [AIMessage(content=f"echo: {text}")]}


builder = StateGraph(MessagesState)
builder.add_node("echo", _echo)
builder.add_edge(START, "echo")
builder.add_edge("echo", END)
graph = builder.compile()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    opts = ap.parse_args()
    from langgraph_api.cli import run_server

    os.environ.setdefault("LANGGRAPH_AUTH_TYPE", "noop")
    run_server(host="127.0.0.1", port=opts.port, graphs={"echo": f"{__file__}:graph"},
               open_browser=False, server_level="WARNING")


if __name__ == "__main__":
    main()
