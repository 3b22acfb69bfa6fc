"""A LangGraph graph as an A2A agent: it asks where you are going, then packs for you.

    pip install 'interlingua[langgraph]'
    interlingua serve examples/langgraph_agent.py
    interlingua send http://localhost:8000 "Help me pack"          # input-required: where to?
    interlingua send http://localhost:8000 "Oslo" --task-id TASK_ID # the graph resumes

The graph's ``interrupt()`` is A2A's ``input-required``; the answer resumes
it. Its state is kept per A2A context by the checkpointer (in memory here;
a durable saver keeps it across restarts); the list streams as it is written.
The nodes are plain functions: put a model call in any of them.
"""

from __future__ import annotations

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt

from interlingua import AgentSkill
from interlingua.adapters.langgraph import agent as a2a_agent

COLD = {"oslo", "reykjavik", "helsinki", "montreal", "anchorage"}


class Trip(MessagesState):
    destination: str


def ask_destination(state: Trip) -> dict[str, str]:
    return {"destination": str(interrupt("Where are you going?")).strip()}


def pack(state: Trip) -> dict[str, object]:
    writer = get_stream_writer()
    items = ["passport", "charger", "toothbrush"]
    items += ["warm coat", "gloves"] if state["destination"].lower() in COLD else ["sunscreen"]
    for item in items:
        writer(f"- {item}\n")  # streamed as it is written
    return {"messages": [{"role": "assistant",
                          "content": f"Have a good trip to {state['destination']}!"}]}


builder = StateGraph(Trip)
builder.add_node("ask_destination", ask_destination)
builder.add_node("pack", pack)
builder.add_edge(START, "ask_destination")
builder.add_edge("ask_destination", "pack")
builder.add_edge("pack", END)

agent = a2a_agent(
    builder.compile(checkpointer=InMemorySaver()),
    name="Packing list",
    description="Asks where you are going and writes your packing list.",
    skills=[AgentSkill(id="pack", name="Packing list",
                       description="A packing list for a destination.",
                       tags=["travel"], examples=["Help me pack"])],
)
