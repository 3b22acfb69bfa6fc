"""A compiled LangGraph graph as an A2A agent (``interlingua[langgraph]``).

    graph = builder.compile(checkpointer=InMemorySaver())
    a2a_agent = agent(graph, name="Planner", description="Plans trips.")

What maps to A2A:

* **history / state**: the graph's state is kept per A2A context and owner
  (callers who share a context id share no state) by its checkpointer. Its
  ``thread_id`` is the context id for a caller of no tenant and no authenticated
  principal, else the tenant, the context id and the owner (``Principal.owner``)
  joined by U+001F. A graph compiled without a checkpointer gets an in-memory
  one: state then lasts as long as the process; compile with a durable saver
  to keep it;
* **streaming**: a run begins with a ``working`` status; what nodes write with
  ``get_stream_writer()`` (tokens, say) and the assistant messages each node
  adds (the text of their text blocks, for a model that answers in content
  blocks; message objects, dicts or ``("ai", text)`` tuples) become chunks of
  one artifact for a caller that follows the task as a stream (the last marked
  ``lastChunk``), one part at the end for any other caller; each node that
  finishes is reported as a ``working`` status update naming it;
* **interrupts**: ``interrupt(value)`` in a node asks the caller
  (``input-required``, the value as text, or as a data part when it is not a
  string); the answer resumes the graph with ``Command(resume=answer)``, the
  answer being the value of its data part when it has one (a form's answer to a
  structured question), else its text;
* a node that raises fails the task with its message; cancelling the task
  cancels the run.

The input is ``{"messages": [{"role": "user", "content": text}]}`` (for
``MessagesState`` graphs) unless ``make_input(ctx)`` says otherwise; with
the default input, a message with no text (a file or data alone) is rejected,
saying so. Not mapped: files and images in messages, tool calls inside nodes (they are
the graph's own business), several pending interrupts at once (the first is
asked). A context's graph state (an owner's) is one thread, so one task of it
at a time may wait for input: while one does, a new task of the context is rejected,
saying which task to answer (or cancel) first.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from ..core.lifecycle import INTERRUPTED_STATES
from ..core.model import Role
from ..core.parts import data_part, get_data
from ..server.agent import Agent
from ..server.context import Context, TaskCanceled
from ._common import Answer, progress, refused_without_text, require, working

require("langgraph", "langgraph")

__all__ = ["agent", "make_executor"]

#: between the parts of an owned thread's id: no tenant or context id holds one
#: (ids hold no control character), so no two owners' ids meet, nor a bare context id
_APART = "\x1f"


def _thread_id(ctx: Context) -> str:
    """The graph's ``thread_id`` for the task's context: the context id alone for a
    caller of no tenant and no authenticated principal (as it always was); else the
    tenant, the context id and the owner, joined by U+001F."""
    scope = ctx.request.scope
    if not scope.tenant and not scope.owner:
        return ctx.context_id
    return _APART.join((scope.tenant, ctx.context_id, scope.owner))


def _default_input(ctx: Context) -> Any:
    return {"messages": [{"role": "user", "content": ctx.text}]}


def _assistant_texts(update: Any) -> list[str]:
    """The text of the assistant messages a node's update adds (in any of the forms
    LangGraph takes: message objects, dicts, ``("ai", text)`` tuples)."""
    from langchain_core.messages import convert_to_messages

    if not isinstance(update, dict):
        return []
    messages = update.get("messages")
    if messages is None:
        return []
    if not isinstance(messages, list):
        messages = [messages]
    texts: list[str] = []
    for m in messages:
        try:
            (message,) = convert_to_messages([m])
        except (ValueError, TypeError, NotImplementedError):
            continue  # not a message (a reducer's own value): no words of the model
        if message.type == "ai":
            text = _text_of(message.content)
            if text:
                texts.append(text)
    return texts


def _text_of(content: Any) -> str:
    """A message's text: its content, or the text of its text blocks (what chat models
    such as ChatAnthropic answer: text, tool use and thinking blocks in a list)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(b if isinstance(b, str) else str(b.get("text") or "")
                   for b in content
                   if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text"))


def make_executor(
    graph: Any,
    *,
    make_input: Callable[[Context], Any] = _default_input,
) -> Callable[[Context], Awaitable[None]]:
    """The context executor behind ``agent()``."""
    from langgraph.types import Command

    if getattr(graph, "checkpointer", None) is None:
        from langgraph.checkpoint.memory import InMemorySaver

        graph.checkpointer = InMemorySaver()

    async def run(ctx: Context) -> None:
        config = {"configurable": {"thread_id": _thread_id(ctx)}}
        state = await graph.aget_state(config)
        # The thread's question is this task's only when this turn answers it (the task
        # was waiting for input): a new task of the context starts afresh, though a
        # task canceled while it asked left its question in the thread (it was taken
        # as the answer to it)
        answers = sum(1 for m in ctx.task.history if m.role is Role.USER) > 1
        asked = bool(getattr(state, "interrupts", ()))
        if asked and not answers:
            waiting = await _waiting_task(ctx)
            if waiting is not None:
                # the thread holds that task's question: a new run would take its
                # place, and the answer to it would resume this task's question instead
                await ctx.reject(f"Task {waiting} of this context waits for an answer; "
                                 "answer or cancel it first, or start another context.")
                return
        graph_input: Any
        if answers and asked:
            # a data part answers as it is (a form's answer to a question that was data)
            data = get_data(ctx.message)
            if not data and await refused_without_text(ctx):
                return
            graph_input = Command(resume=data[0] if data else ctx.text)
        elif make_input is _default_input and await refused_without_text(ctx):
            return  # (an input of one's own may read what it likes of the message)
        else:
            graph_input = make_input(ctx)
        answer = Answer(ctx)

        async def drive() -> Any:
            async for mode, item in graph.astream(graph_input, config,
                                                  stream_mode=["updates", "custom"]):
                if mode == "custom":
                    if isinstance(item, str) and item:
                        await answer.add(item)
                    continue
                for node, update in item.items():
                    if node == "__interrupt__":
                        return update[0].value
                    await progress(ctx, f"{node} done", {"node": node})
                    for text in _assistant_texts(update):
                        await answer.add(text)
            return _NO_INTERRUPT

        await working(ctx)
        job = asyncio.ensure_future(drive())
        stop = asyncio.ensure_future(ctx.cancelled.wait())
        try:
            await asyncio.wait({job, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            if not job.done():  # the task was canceled: so is the run
                job.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await job
        if job.cancelled():
            return
        try:
            asked = job.result()
        except TaskCanceled:
            raise
        except Exception as exc:
            await answer.close()  # what was said before is kept
            await ctx.fail(f"The graph failed: {type(exc).__name__}: {exc}")
            return
        if asked is not _NO_INTERRUPT:
            await answer.close()
            await ctx.require_input(asked if isinstance(asked, str) else data_part(asked))
            return
        await answer.complete()

    return run


_NO_INTERRUPT = object()


async def _waiting_task(ctx: Context) -> str | None:
    """The id of another task of the context that waits for input (its question is
    the thread's), if there is one."""
    for task in await ctx.context_tasks():
        if task.status.state in INTERRUPTED_STATES:
            return task.id
    return None


def agent(graph: Any, *, name: str, description: str,
          make_input: Callable[[Context], Any] = _default_input, **agent_options: Any) -> Agent:
    """The interlingua ``Agent`` that runs the compiled ``graph`` for each turn."""
    return Agent(name=name, description=description,
                 executor=make_executor(graph, make_input=make_input), **agent_options)
