"""A pydantic-ai ``Agent`` as an A2A agent.

    from pydantic_ai import Agent as PydanticAgent
    from interlingua.adapters.pydantic_ai import agent

    assistant = PydanticAgent("openai:gpt-4o", name="Assistant", description="Helps.")
    a2a_agent = agent(assistant)          # serve it: interlingua serve file.py:a2a_agent

``pip install 'interlingua[pydantic-ai]'``. What maps to A2A:

* **history**: the A2A context is the conversation: each run gets the
  context's earlier turns (user messages, answers and the agent's approval
  questions, read from the task store, so they survive restarts) as its
  ``message_history``;
* **streaming**: a run begins with a ``working`` status; text the model streams
  becomes chunks of one artifact for a caller that follows the task as a stream
  (the last marked ``lastChunk``), one part at the end for any other caller;
  what the model says before its tool calls is kept in the answer, a blank line
  apart from what it says next (as the OpenAI adapter answers);
* **tools**: each tool call shows as a ``working`` status update naming the
  tool (its arguments in the metadata); the card's skills are the agent's
  tools, with their descriptions;
* **structured output**: an ``output_type`` other than ``str`` answers with a
  data part (the output as JSON);
* **approvals**: a tool with ``requires_approval=True`` (and ``DeferredToolRequests``
  among the output types) asks the caller (``input-required``: "Approve ...?
  (yes/no)"); "yes" runs the tool, anything else declines it, and the run goes
  on. The call shows as a ``working`` status update when it runs (not while it
  waits, nor when declined). The run waiting for the answer is kept in this
  process's memory: after a restart the task fails, saying so;
* model errors and usage limits fail the task with a readable message;
  cancelling the task cancels the run.

Not mapped: earlier turns' tool calls and results (the history carries
their text only), external (deferred) tool calls, files and images in
messages (text parts only: a message with no text at all is rejected, saying so).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterable, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..core.model import AgentSkill, Role
from ..core.parts import agent_message, data_part
from ..server.agent import Agent
from ..server.context import Context
from ..stores.base import Scope
from ._common import (
    ROUNDS_APART,
    Answer,
    Turn,
    conversation,
    error_detail,
    progress,
    refused_without_text,
    require,
    working,
)

if TYPE_CHECKING:
    import pydantic_ai

__all__ = ["agent", "make_executor", "skills_of"]

require("pydantic_ai", "pydantic-ai")


def skills_of(pai_agent: pydantic_ai.Agent[Any, Any]) -> list[AgentSkill]:
    """One skill per function tool of the agent (name and description from the tool)."""
    skills: list[AgentSkill] = []
    for toolset in pai_agent.toolsets:
        tools = getattr(toolset, "tools", None)
        if not isinstance(tools, dict):
            continue  # MCP servers and other dynamic toolsets list their tools only when run
        for name, tool in tools.items():
            skills.append(AgentSkill(id=name, name=name.replace("_", " ").capitalize(),
                                     description=getattr(tool, "description", None) or name,
                                     tags=["tool"]))
    return skills


def _needing_approval(pai_agent: pydantic_ai.Agent[Any, Any]) -> frozenset[str]:
    """The names of the agent's tools made with ``requires_approval=True``."""
    names: set[str] = set()
    for toolset in pai_agent.toolsets:
        tools = getattr(toolset, "tools", None)
        if isinstance(tools, dict):  # (as skills_of reads them)
            names.update(n for n, t in tools.items() if getattr(t, "requires_approval", False))
    return frozenset(names)


def _history(turns: Sequence[Turn]) -> list[Any]:
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

    out: list[Any] = []
    for turn in turns:
        if turn.role == "user":
            out.append(ModelRequest(parts=[UserPromptPart(content=turn.text)]))
        else:
            out.append(ModelResponse(parts=[TextPart(content=turn.text)]))
    return out


def _jsonable(output: Any) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(type(output)).dump_python(output, mode="json")


def make_executor(
    pai_agent: pydantic_ai.Agent[Any, Any],
    *,
    deps: Callable[[Context], Any] | None = None,
    run_options: dict[str, Any] | None = None,
) -> Callable[[Context], Awaitable[None]]:
    """The context executor behind ``agent()`` (to wrap in an agent of one's own)."""
    from pydantic_ai import DeferredToolRequests, DeferredToolResults, ToolDenied
    from pydantic_ai.exceptions import AgentRunError, ModelHTTPError, UserError
    from pydantic_ai.messages import (
        FunctionToolCallEvent,
        PartDeltaEvent,
        PartStartEvent,
        TextPart,
        TextPartDelta,
    )

    #: runs waiting for the caller to approve tool calls, by the task's scope and id
    #: (in v0.1 a caller names its new task's id: another owner's task may share it)
    waiting: dict[tuple[Scope, str], tuple[list[Any], list[str]]] = {}
    #: the tools whose calls wait for an approval: shown when they run, not when asked for
    needs_approval = _needing_approval(pai_agent)

    async def entered_run(prompt: str | None, on_events: Any, options: dict[str, Any]) -> Any:
        # Entered for the run: the model's HTTP connections are closed when no
        # run needs them, on the loop that opened them (none is left open at
        # shutdown), as the OpenAI adapter's client per turn.
        async with pai_agent:
            return await pai_agent.run(prompt, event_stream_handler=on_events, **options)

    async def run(ctx: Context) -> None:
        key = (ctx.request.scope, ctx.task_id)
        if await refused_without_text(ctx):
            waiting.pop(key, None)  # (the task ends: its question with it)
            return
        options = dict(run_options or {})
        resumed = waiting.pop(key, None)
        #: the calls this run was told to make (the others of tools in ``needs_approval``
        #: are deferred, or declined, and never run)
        approved: frozenset[str] = frozenset()
        if resumed is not None:
            messages, call_ids = resumed
            yes = ctx.text.strip().lower().rstrip(".!") in _YES
            if yes:
                approved = frozenset(call_ids)
            decision: Any = True if yes else ToolDenied(f"The user declined: {ctx.text}")
            prompt: str | None = None
            options["message_history"] = messages
            options["deferred_tool_results"] = DeferredToolResults(
                approvals=dict.fromkeys(call_ids, decision))
        elif _asked_approval(ctx):
            await ctx.fail("The approval this task waited for was lost when the agent "
                           "restarted; please ask again.")
            return
        else:
            turns = await conversation(ctx)
            prompt = ctx.text
            if turns and turns[-1].role == "user":
                prompt = turns.pop().text
            options["message_history"] = _history(turns)
        answer = Answer(ctx)

        async def on_events(_: Any, events: AsyncIterable[Any]) -> None:
            # (called once per model request, with its events, and once per round of
            # tool calls)
            said = False
            async for event in events:
                text = ""
                if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                    text = event.part.content
                elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                    text = event.delta.content_delta
                if text:
                    if not said and answer.said:
                        # what an earlier round said ("Let me check.") is a paragraph
                        # of its own, as the OpenAI adapter keeps it
                        await answer.add(ROUNDS_APART)
                    said = True
                    await answer.add(text)
                elif isinstance(event, FunctionToolCallEvent) and (
                        event.part.tool_name not in needs_approval
                        or event.part.tool_call_id in approved):
                    await progress(ctx, f"Calling {event.part.tool_name}", {
                        "tool": event.part.tool_name, "arguments": event.part.args_as_dict()})

        if deps is not None:
            options["deps"] = deps(ctx)
        await working(ctx)  # the model is asked
        job = asyncio.ensure_future(entered_run(prompt, on_events, options))
        stop = asyncio.ensure_future(ctx.cancelled.wait())
        try:
            await asyncio.wait({job, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            if not job.done():  # the task was canceled: so is the run
                job.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await job
        if not job.done() or job.cancelled():
            return
        try:
            result = job.result()
        except ModelHTTPError as exc:
            await answer.close()  # what the model said before the error is kept
            await ctx.fail(f"The model server answered {exc.status_code}: {error_detail(exc)}")
            return
        except (AgentRunError, UserError) as exc:
            await answer.close()
            await ctx.fail(f"The agent could not answer: {exc}")
            return
        output = result.output
        if not isinstance(output, str) and answer.sent:
            # the chunks a streaming caller got end; a caller that did not stream gets
            # the data alone (the text said was that data's JSON, or the question's lead)
            await answer.close()
        if isinstance(output, DeferredToolRequests):
            if output.calls or not output.approvals:
                await ctx.fail("The agent deferred tool calls to an outside caller, "
                               "which this adapter does not do.")
                return
            if len(waiting) >= _MAX_WAITING:  # the oldest question is forgotten
                waiting.pop(next(iter(waiting)))
            waiting[key] = (result.all_messages(),
                            [c.tool_call_id for c in output.approvals])
            asks = "; ".join(f"{c.tool_name}({json.dumps(c.args_as_dict())})"
                             for c in output.approvals)
            await ctx.require_input(agent_message(
                f"Approve {asks}? (yes/no)", task_id=ctx.task_id, context_id=ctx.context_id,
                metadata={"approval": [c.tool_name for c in output.approvals]}))
            return
        if isinstance(output, str):
            if answer.said:
                # every round's text, as a streaming caller got it (the output is
                # the last round's alone)
                await answer.complete()
            else:
                await ctx.complete(artifact=output, name="answer")
        else:
            await ctx.complete(artifact=data_part(_jsonable(output)), name="output")

    return run


_YES = frozenset({"yes", "y", "ok", "okay", "approve", "approved", "sure", "go ahead"})
_MAX_WAITING = 10_000


def _asked_approval(ctx: Context) -> bool:
    """The task's last agent message asked for an approval (so this is its answer)."""
    for message in reversed(ctx.task.history):
        if message.role is Role.AGENT:
            return "approval" in (message.metadata or {})
    return False


def agent(
    pai_agent: pydantic_ai.Agent[Any, Any],
    *,
    name: str | None = None,
    description: str | None = None,
    deps: Callable[[Context], Any] | None = None,
    run_options: dict[str, Any] | None = None,
    **agent_options: Any,
) -> Agent:
    """The interlingua ``Agent`` that runs ``pai_agent`` for each turn.

    The card's name and description default to the pydantic-ai agent's, its
    skills to the agent's tools. ``deps(ctx)`` makes the run's dependencies
    from the turn's context (the caller's principal, headers, ...);
    ``run_options`` go to every ``run`` (``model_settings``, ``usage_limits``,
    ...); ``agent_options`` to ``Agent``.
    """
    from pydantic_ai import DeferredToolRequests

    agent_name = name or pai_agent.name
    if not agent_name:
        raise ValueError("the agent needs a name: give name=, or name the pydantic-ai Agent")
    agent_options.setdefault("skills", skills_of(pai_agent))
    if pai_agent.output_type not in (str, [str, DeferredToolRequests]):
        agent_options.setdefault("output_modes", ["application/json"])
    return Agent(
        name=agent_name,
        description=description or pai_agent.description or f"The {agent_name} agent.",
        executor=make_executor(pai_agent, deps=deps, run_options=run_options),
        **agent_options,
    )
