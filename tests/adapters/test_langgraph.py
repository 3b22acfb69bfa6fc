"""A LangGraph graph of plain-function nodes served over real HTTP."""

from __future__ import annotations

from pathlib import Path

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt

from interlingua import Client, DataPart, Message, Role, Task, TaskState, get_text
from interlingua.adapters.langgraph import agent
from interlingua.core.model import ArtifactUpdate, StatusUpdate
from interlingua.core.parts import new_id
from interlingua.server.auth import APIKeyAuth, AuthConfig
from tests.live import live_agent


def greeter() -> object:
    def ask(state: MessagesState) -> dict[str, object]:
        name = interrupt("What is your name?")
        writer = get_stream_writer()
        for piece in ("Hello", ", ", str(name)):
            writer(piece)
        return {}

    def count(state: MessagesState) -> dict[str, object]:
        return {"messages": [{"role": "assistant",
                              "content": f" ({len(state['messages'])} messages so far)"}]}

    g = StateGraph(MessagesState)
    g.add_node("ask", ask)
    g.add_node("count", count)
    g.add_edge(START, "ask")
    g.add_edge("ask", "count")
    g.add_edge("count", END)
    return g.compile(checkpointer=InMemorySaver())


async def test_interrupt_is_input_required_and_the_answer_resumes() -> None:
    with live_agent(agent(greeter(), name="Greeter", description="Greets.")) as url:
        async with Client(url) as c:
            asked = await c.send("hi")
            assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
            assert get_text(asked.status.message) == "What is your name?"  # type: ignore[arg-type]
            events = [e async for e in c.stream("Ada", task_id=asked.id,
                                                context_id=asked.context_id)]
            done = await c.get_task(asked.id)
            # state per context: a second task in the same context sees the earlier messages
            again = await c.send("hi again", context_id=asked.context_id)
            assert isinstance(again, Task)
            assert again.status.state is TaskState.INPUT_REQUIRED
            second = await c.send("Bob", task_id=again.id, context_id=again.context_id)
            assert isinstance(second, Task)
            assert get_text(second.artifacts[0], sep="") == "Hello, Bob (3 messages so far)"
    chunks = [e.item for e in events if isinstance(e.item, ArtifactUpdate)]
    assert [get_text(u.artifact) for u in chunks] == [
        "Hello", ", ", "Ada", " (1 messages so far)"]
    nodes = [u.metadata for u in (e.item for e in events)
             if isinstance(u, StatusUpdate) and u.metadata]
    assert nodes == [{"node": "ask"}, {"node": "count"}]
    assert done.status.state is TaskState.COMPLETED
    assert get_text(done.artifacts[0], sep="") == "Hello, Ada (1 messages so far)"


async def test_structured_interrupts_and_failures() -> None:
    def form(state: MessagesState) -> dict[str, object]:
        answer = interrupt({"fields": ["date", "seats"]})
        if answer == "boom":
            raise RuntimeError("the booking system is down")
        return {"messages": [{"role": "assistant", "content": "booked"}]}

    g = StateGraph(MessagesState)
    g.add_node("form", form)
    g.add_edge(START, "form")
    g.add_edge("form", END)
    graph = g.compile()  # no checkpointer: the adapter brings one
    with live_agent(agent(graph, name="Forms", description="Fills forms.")) as url:
        async with Client(url) as c:
            asked = await c.send("book")
            assert isinstance(asked, Task) and asked.status.message is not None
            part = asked.status.message.parts[0]
            assert isinstance(part, DataPart) and part.data == {"fields": ["date", "seats"]}
            failed = await c.send("boom", task_id=asked.id, context_id=asked.context_id)
    assert isinstance(failed, Task) and failed.status.state is TaskState.FAILED
    assert "the booking system is down" in get_text(failed.status.message)  # type: ignore[arg-type]


async def test_a_question_of_a_canceled_task_is_not_answered_by_the_next_task() -> None:
    """The graph's thread is the context: a task canceled while it asked leaves its
    question there, and the next task of the context was taken as the answer to it
    ("Hello, hi again"). A new task starts the graph afresh: it is asked again."""
    with live_agent(agent(greeter(), name="Greeter", description="Greets.")) as url:
        async with Client(url) as c:
            asked = await c.send("hi")
            assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
            await c.cancel(asked.id)
            again = await c.send("hi again", context_id=asked.context_id)
            assert isinstance(again, Task)
            assert again.status.state is TaskState.INPUT_REQUIRED, again.artifacts
            assert get_text(again.status.message) == "What is your name?"  # type: ignore[arg-type]
            done = await c.send("Cy", task_id=again.id, context_id=again.context_id)
            assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
            assert get_text(done.artifacts[0], sep="").startswith("Hello, Cy")


async def test_one_task_of_a_context_waits_for_input_at_a_time() -> None:
    """The context's thread holds one question: a second task started while the first
    waits is rejected, saying which to answer, and the first's answer is its own (it
    resumed the second's question, and the second could never be answered)."""
    with live_agent(agent(greeter(), name="Greeter", description="Greets.")) as url:
        async with Client(url) as c:
            first = await c.send("hi")
            assert isinstance(first, Task) and first.status.state is TaskState.INPUT_REQUIRED
            second = await c.send("hi too", context_id=first.context_id)
            assert isinstance(second, Task) and second.status.state is TaskState.REJECTED
            assert f"Task {first.id} of this context waits for an answer" in get_text(
                second.status.message)  # type: ignore[arg-type]
            done = await c.send("Ada", task_id=first.id, context_id=first.context_id)
            assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
            assert get_text(done.artifacts[0], sep="").startswith("Hello, Ada")
            after = await c.send("hi again", context_id=first.context_id)
            assert isinstance(after, Task) and after.status.state is TaskState.INPUT_REQUIRED


async def test_a_stream_goes_working_first_and_marks_its_last_chunk() -> None:
    """As the other adapters: a ``working`` status before the first chunk, the last
    chunk marked ``lastChunk``, and a blocking caller's answer one part (it got a part
    per token, which ``interlingua send`` printed a line each)."""
    def talk(state: MessagesState) -> dict[str, object]:
        writer = get_stream_writer()
        for piece in ("Packing", " a", " bag"):
            writer(piece)
        return {}

    g = StateGraph(MessagesState)
    g.add_node("talk", talk)
    g.add_edge(START, "talk")
    g.add_edge("talk", END)
    with live_agent(agent(g.compile(), name="Talker", description="Talks.")) as url:
        async with Client(url) as c:
            events = [e async for e in c.stream("hi")]
            task = await c.send("hi")
    seen = [e.item.status.state if isinstance(e.item, Task | StatusUpdate) else "chunk"
            for e in events]
    assert seen[:3] == [TaskState.SUBMITTED, TaskState.WORKING, "chunk"], seen
    chunks = [e.item for e in events if isinstance(e.item, ArtifactUpdate)]
    assert [get_text(u.artifact) for u in chunks] == ["Packing", " a", " bag"]
    assert [u.last_chunk for u in chunks] == [False, False, True]
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert [p.text for p in task.artifacts[0].parts] == ["Packing a bag"]  # type: ignore[union-attr]


def _data(data: object, task: Task | None = None) -> Message:
    return Message(message_id=new_id(), role=Role.USER, parts=[DataPart(data=data)],
                   task_id=task.id if task else None,
                   context_id=task.context_id if task else None)


async def test_a_data_answer_resumes_the_graph_with_its_value() -> None:
    """A structured question answered with a data part: the graph resumed with "" (the
    message's text), the data lost."""
    got: list[object] = []

    def form(state: MessagesState) -> dict[str, object]:
        got.append(interrupt({"fields": ["date", "seats"]}))
        return {"messages": [{"role": "assistant", "content": "booked"}]}

    g = StateGraph(MessagesState)
    g.add_node("form", form)
    g.add_edge(START, "form")
    g.add_edge("form", END)
    with live_agent(agent(g.compile(), name="Forms", description="Fills forms.")) as url:
        async with Client(url) as c:
            asked = await c.send("book")
            assert isinstance(asked, Task)
            done = await c.send(_data({"date": "2025-05-01", "seats": 2}, asked))
            again = await c.send("book", context_id=asked.context_id)
            assert isinstance(again, Task)
            said = await c.send("on Friday", task_id=again.id, context_id=again.context_id)
    assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
    assert isinstance(said, Task) and said.status.state is TaskState.COMPLETED
    assert got == [{"date": "2025-05-01", "seats": 2}, "on Friday"]


async def test_a_message_with_no_text_is_rejected_saying_so() -> None:
    """A new turn's input is the message's text: with none, the graph ran on an empty
    user message."""
    with live_agent(agent(greeter(), name="Greeter", description="Greets.")) as url:
        async with Client(url) as c:
            task = await c.send(_data({"name": "Ada"}))
    assert isinstance(task, Task) and task.status.state is TaskState.REJECTED
    assert get_text(task.status.message) == (  # type: ignore[arg-type]
        "This agent reads text; the message had none.")


async def test_an_answer_in_content_blocks_or_a_tuple_is_the_answer() -> None:
    """What chat models such as ChatAnthropic add (a list of content blocks) and a
    ``("ai", text)`` tuple were dropped: the task completed with no answer."""
    from langchain_core.messages import AIMessage

    def think(state: MessagesState) -> dict[str, object]:
        return {"messages": [AIMessage(content=[
            {"type": "text", "text": "Hello"},
            {"type": "tool_use", "id": "t1", "name": "look", "input": {}}])]}

    def say(state: MessagesState) -> dict[str, object]:
        return {"messages": [("ai", ", world")]}

    g = StateGraph(MessagesState)
    g.add_node("think", think)
    g.add_node("say", say)
    g.add_edge(START, "think")
    g.add_edge("think", "say")
    g.add_edge("say", END)
    with live_agent(agent(g.compile(), name="Blocks", description="Says it in blocks.")) as url:
        async with Client(url) as c:
            task = await c.send("hi")
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert [get_text(a, sep="") for a in task.artifacts] == ["Hello, world"]


def hearer() -> object:
    """A graph that answers with every user message of its thread."""
    def reply(state: MessagesState) -> dict[str, object]:
        heard = " | ".join(str(m.content) for m in state["messages"] if m.type == "human")
        return {"messages": [{"role": "assistant", "content": f"Heard: {heard}"}]}

    g = StateGraph(MessagesState)
    g.add_node("reply", reply)
    g.add_edge(START, "reply")
    g.add_edge("reply", END)
    return g.compile(checkpointer=InMemorySaver())


ALICE = {"X-API-Key": "alice-" + "a" * 20}
BOB = {"X-API-Key": "bob-" + "b" * 20}
TWO_USERS = AuthConfig(schemes={"key": APIKeyAuth({"alice": ALICE["X-API-Key"],
                                                   "bob": BOB["X-API-Key"]})})


def _answer(task: Task | Message) -> str:
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED, task
    return get_text(task.artifacts[0], sep="")


async def test_owners_who_share_a_context_id_have_threads_of_their_own(tmp_path: Path) -> None:
    """The graph's thread was the context id alone: another owner who sent in the same
    context (or, in v0.1, chose the same session id) was given the first owner's
    messages. Each owner's thread of a context lasts across its turns and restarts."""
    graph = hearer()  # (its checkpointer outlives the restart, as a durable one would)
    store = f"sqlite:///{tmp_path}/tasks.db"
    with live_agent(agent(graph, name="Hearer", description="Hears."), store=store,
                    auth=TWO_USERS) as url:
        async with Client(url, headers=ALICE) as alice, Client(url, headers=BOB) as bob, \
                Client(url, dialect="0.1", headers=ALICE) as alice_01, \
                Client(url, dialect="0.1", headers=BOB) as bob_01:
            first = await alice.send("my password is hunter2")
            assert isinstance(first, Task)
            assert _answer(await bob.send("hi", context_id=first.context_id)) == "Heard: hi"
            assert _answer(await alice_01.send("ALICE-42", context_id="session-1")) == (
                "Heard: ALICE-42")
            assert _answer(await bob_01.send("BOB-42", context_id="session-1")) == (
                "Heard: BOB-42")
    with live_agent(agent(graph, name="Hearer", description="Hears."), store=store,
                    auth=TWO_USERS) as url:
        async with Client(url, headers=ALICE) as alice:
            again = await alice.send("and more", context_id=first.context_id)
    assert _answer(again) == "Heard: my password is hunter2 | and more"


async def test_without_authentication_the_thread_is_the_context_id() -> None:
    """(So the state checkpointed for a context before stays the context's.)"""
    graph = hearer()
    with live_agent(agent(graph, name="Hearer", description="Hears.")) as url:
        async with Client(url) as c:
            task = await c.send("hello")
    assert isinstance(task, Task)
    state = graph.get_state({"configurable": {"thread_id": task.context_id}})  # type: ignore[attr-defined]
    assert [m.content for m in state.values["messages"]] == ["hello", "Heard: hello"]
