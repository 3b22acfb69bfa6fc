"""Remote A2A agents as tools for an orchestrating LLM.

    from interlingua.tools import RemoteAgent

    flights = RemoteAgent("http://localhost:8001")
    # an OpenAI-compatible chat agent that delegates:
    chat_agent("gpt-4o", tools=[flights])                    # interlingua.adapters.openai
    # a pydantic-ai agent that delegates:
    PydanticAgent("openai:gpt-4o", tools=[flights.pydantic_ai_tool()])
    # any other loop over chat completions:
    definition = await flights.definition()                  # {"type": "function", ...}
    answer = await flights(tool_call.function.arguments)     # -> text for the model

The tool's name and description come from the agent's card (read when the
tool is first offered), unless given. A call is a blocking send; the answer
is the task's artifacts as text (data as JSON). When the agent asks a
question (``input-required``) the model is told the question and the task
id to answer it with, in a further call with ``task_id``. A call canceled (the
orchestrator's task was) cancels the task it started.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import msgspec

from .client import AgentTimeout, CardNotFound, Client, ClientError, TaskNotSettled
from .client.messages import make_message
from .client.transport import DEFAULT_TIMEOUT
from .clients import AnyClient, client_for
from .core import lifecycle
from .core.errors import A2AError
from .core.model import (
    AgentCard,
    Artifact,
    FilePart,
    Message,
    Part,
    PushConfig,
    Task,
    TaskState,
)
from .core.parts import get_data, get_text
from .core.urls import bare_url

if TYPE_CHECKING:
    import pydantic_ai

__all__ = ["RemoteAgent"]

log = logging.getLogger("interlingua.tools")

#: seconds to wait for the task of a message sent again after a timeout (to learn its id)
RETRY_WAIT = 1.0

#: what a tool call's parameters are, as a model is told (here and by ``interlingua mcp``)
MESSAGE_ABOUT = "What to ask or tell the agent."
TASK_ID_ABOUT = "Only to answer a question the agent asked: its task id."

_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "message": {"type": "string", "description": MESSAGE_ABOUT},
        "task_id": {"type": "string", "description": TASK_ID_ABOUT},
    },
    "required": ["message"],
}


def _tool_name(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]+", "_", text).strip("_")[:64] or "agent"


def unique_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name_2``, ``name_3`` … when it is taken already (kept to 64
    characters), now taken too: a model calls a tool by its name, and a server or
    a framework keeps one tool per name."""
    found, n = name, 1
    while found in taken:
        n += 1
        suffix = f"_{n}"
        found = name[:64 - len(suffix)] + suffix
    taken.add(found)
    return found


#: per orchestrating pydantic-ai agent (by id, dropped with it), each remote agent's
#: tool name in it: remote agents whose cards share a name get ``name_2`` …
_NAMES_IN: dict[int, dict[RemoteAgent, str]] = {}


def _names_in(agent: object) -> dict[RemoteAgent, str]:
    names = _NAMES_IN.get(id(agent))
    if names is None:
        names = _NAMES_IN[id(agent)] = {}
        weakref.finalize(agent, _NAMES_IN.pop, id(agent), None)
    return names


class RemoteAgent:
    """An A2A agent at ``url``, callable as a tool. ``client_options`` go to its client (``client_for``)."""

    def __init__(self, url: str, *, name: str | None = None, description: str | None = None,
                 **client_options: Any) -> None:
        self.url = url
        self._name = name
        #: a name given is kept; one from the card gives way to another tool's (``name_2``)
        self._named = name is not None
        self._description = description
        self._options = client_options
        self.card: AgentCard | None = None

    async def describe(self) -> tuple[str, str]:
        """The tool's name and description, reading the card once if either is missing."""
        if self._name is None or self._description is None:
            if self.card is None:
                async with client_for(self.url, **self._options) as client:
                    try:
                        self.card = await client.get_card()
                    except CardNotFound:
                        if self._options.get("dialect") is None:
                            raise
                        # an endpoint spoken to in a given dialect needs no card
                        self._name = self._name or self._host_name()
                        self._description = (self._description
                                             or f"Ask the agent at {bare_url(self.url)}.")
                        return self._name, self._description
            card = self.card
            if self._name is None:
                self._name = _tool_name(card.name)
            if self._description is None:
                # a skill that only restates the agent (the one a card without skills
                # is given) adds nothing to the description
                skills = "; ".join(f"{s.name}: {s.description}" for s in card.skills
                                   if s.description != card.description)
                self._description = f"Ask the agent {card.name!r}: {card.description}" + (
                    f" Skills: {skills}" if skills else "")
        return self._name, self._description

    def _host_name(self) -> str:
        return _tool_name(bare_url(self.url).split("//")[-1])

    @property
    def named(self) -> bool:
        """Its name was given (kept), not read from the card (which gives way)."""
        return self._named

    def name_among(self, name: str, taken: set[str]) -> str:
        """``name`` (from ``describe``) among the tools offered with it: a name from the
        card gives way to one taken (``name_2``), as ``interlingua mcp`` names skills."""
        if self._named:
            taken.add(name)
            return name
        return unique_name(name, taken)

    async def ask(self, message: str, *, task_id: str | None = None) -> str:
        """Send ``message`` (blocking) and answer as text for a model. A call canceled
        (its orchestrator's task was) cancels the task the message started."""
        timeout = self._options.get("timeout", DEFAULT_TIMEOUT)
        msg = make_message(message, task_id=task_id)
        started: list[str] = []
        try:
            async with client_for(self.url, **self._options) as client:
                answer = await cancelling(
                    client, msg, send_within(client, msg, None, timeout,
                                             seen=lambda task: started.append(task.id)),
                    lambda: started[-1] if started else None)
        except TaskNotSettled as exc:
            return f"error: {still_working(exc, timeout)}"
        except (ClientError, A2AError) as exc:
            return f"error: the agent could not be asked: {exc}"
        if isinstance(answer, Message):
            return _text(answer)
        return _task_text(answer)

    # -------------------------------------------- OpenAI function tools

    async def definition(self) -> dict[str, Any]:
        """The chat-completions function-tool definition."""
        name, description = await self.describe()
        return {"type": "function",
                "function": {"name": name, "description": description,
                             "parameters": _PARAMETERS}}

    async def __call__(self, arguments: str) -> str:
        """Call with the model's JSON arguments (``{"message": ..., "task_id": ...}``)."""
        try:
            args = json.loads(arguments or "{}")
            message = args["message"]
            task_id = args.get("task_id") or None
            if not isinstance(message, str) or not (task_id is None or isinstance(task_id, str)):
                raise TypeError
        except (ValueError, KeyError, TypeError, AttributeError):
            return 'error: the arguments must be {"message": "...", "task_id": "..." (optional)}'
        return await self.ask(message, task_id=task_id)

    # -------------------------------------------------- pydantic-ai tools

    def pydantic_ai_tool(self) -> pydantic_ai.Tool[Any]:
        """The agent as a pydantic-ai ``Tool`` (named and described from its card when first offered)."""
        from dataclasses import replace

        from pydantic_ai import Tool

        async def ask(message: str, task_id: str | None = None) -> str:
            """Ask the agent.

            Args:
                message: What to ask or tell the agent.
                task_id: Only to answer a question the agent asked: its task id.
            """
            return await self.ask(message, task_id=task_id)

        async def prepare(ctx: Any, tool_def: Any) -> Any:
            try:
                name, description = await self.describe()
            except (ClientError, A2AError) as exc:
                # one agent out of reach: the turn goes on without it, as chat_agent's does
                log.warning("the agent at %s is left out of the tools: %s", self.url, exc)
                return None
            agent = getattr(ctx, "agent", None)  # the orchestrator
            if agent is not None:
                names = _names_in(agent)
                if self not in names:
                    names[self] = self.name_among(name, set(names.values()))
                name = names[self]
            return replace(tool_def, name=name, description=description)

        return Tool(ask, name=self._name or self._host_name(), prepare=prepare)


async def send_within(client: AnyClient, message: Message | str, task_id: str | None,
                      timeout: float | None,
                      seen: Callable[[Task], None] | None = None, *,
                      history_length: int | None = None,
                      push: PushConfig | None = None) -> Task | Message:
    """A send answered within ``timeout``; past it, ``TaskNotSettled`` with the task the
    message started when the agent has said which, else ``AgentTimeout``. ``seen`` is
    told the task as soon as the agent names it (for a caller that may cancel it).
    ``history_length`` and ``push`` go with the send, as ``Client.send`` takes them."""
    msg = make_message(message, task_id=task_id)
    if timeout is None or not isinstance(client, Client):  # (a mesh client follows none)
        return await _blocking_within(client, msg, timeout, history_length=history_length,
                                      push=push)
    # Sent without waiting, then followed: the task is known from the first answer, so
    # that a timeout (or a cancel) names it without sending the message again, which an
    # agent that does not recognise a repeated message id takes as a new task.
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    try:
        async with asyncio.timeout(timeout):
            first = await client.send(msg, blocking=False, history_length=history_length,
                                      push=push)
    except TimeoutError:
        raise AgentTimeout(f"the agent did not answer within {timeout:g} s") from None
    if not isinstance(first, Task) or first.status.state in lifecycle.RETURN_STATES:
        return first
    if seen is not None:
        seen(first)
    try:
        async with asyncio.timeout(max(deadline - loop.time(), 0)):
            return await client.settle(first, history_length)
    except TimeoutError:
        # the task as it is now (the first answer's may be "submitted" still), named
        latest = first
        with contextlib.suppress(ClientError, A2AError, TimeoutError):
            async with asyncio.timeout(RETRY_WAIT):
                latest = await client.get_task(first.id, history_length=0)
        raise TaskNotSettled(f"task {latest.id} is still {latest.status.state.value}",
                             latest) from None


#: seconds a call that was canceled waits for the agent to cancel the task it started
CANCEL_WAIT = 5.0

T = TypeVar("T")


async def cancelling(client: AnyClient, message: Message, answer: Awaitable[T],
                     started: Callable[[], str | None]) -> T:
    """``answer`` (the agent's to ``message``). When the call is canceled, so is the task
    the message started (``started`` names it, once the agent has): it would work on
    for nobody. The answer to a question leaves its task be, as the call found it."""
    try:
        return await answer
    except anyio.get_cancelled_exc_class():
        if message.task_id is None:
            # shielded: the cancel that stops this call (an anyio scope's too) does not
            # stop this one
            with anyio.move_on_after(CANCEL_WAIT, shield=True):
                await cancel_started(client, message, started())
        raise


async def cancel_started(client: AnyClient, message: Message, task_id: str | None) -> None:
    """Cancel the task ``message`` started. Not yet named by the agent: asked for by
    sending the message again only of a client that could not follow it (a mesh
    client, whose agents keep message ids), not of an agent that might take the
    message again as a new task."""
    with contextlib.suppress(ClientError, A2AError):
        if task_id is None and not isinstance(client, Client):
            started = await _started(client, message)
            task_id = started.id if started is not None else None
        if task_id is not None:
            await client.cancel(task_id)


async def _blocking_within(client: AnyClient, msg: Message, timeout: float | None, *,
                           history_length: int | None = None,
                           push: PushConfig | None = None) -> Task | Message:
    """A blocking send within ``timeout`` (a client that cannot follow a task itself:
    past the timeout the task is asked for by sending the message again, which an
    agent that keeps message ids answers with the task it started)."""
    try:
        async with asyncio.timeout(timeout):
            return await client.send(msg, history_length=history_length, push=push)
    except TaskNotSettled:
        raise
    except (TimeoutError, AgentTimeout) as exc:
        started = await _started(client, msg)
        if started is not None:
            raise TaskNotSettled(f"task {started.id} is still {started.status.state.value}",
                                 started) from None
        if isinstance(exc, AgentTimeout):
            raise
        raise AgentTimeout(f"the agent did not answer within {timeout:g} s") from None


async def _started(client: AnyClient, msg: Message) -> Task | None:
    """The task a message sent before started, by sending it again (same id) without
    waiting: an agent that took it answers with that task, still running there."""
    with contextlib.suppress(ClientError, A2AError, TimeoutError):
        async with asyncio.timeout(RETRY_WAIT):
            started = await client.send(msg, blocking=False, history_length=0)
            return started if isinstance(started, Task) else None
    return None


def still_working(exc: TaskNotSettled, timeout: float | None) -> str:
    """A task still running at the timeout, by its id, for whoever picks it up."""
    task = exc.task
    if not isinstance(task, Task):
        return str(exc)
    within = "" if timeout is None else f"no answer within {timeout:g} s; "
    return (f"{within}the agent's task {task.id!r} is still {task.status.state.value} "
            "(it was not canceled: its answer can be read later by its id)")


def _file_note(part: FilePart) -> str:
    """A file the agent answered with, named for a model (which cannot see it)."""
    about = [part.media_type or "a file"]
    if part.raw is not None:
        about.append(f"{len(part.raw)} bytes")
    if part.uri is not None:
        about.append(f"at {part.uri}")
    name = f"{part.filename!r} " if part.filename else ""
    return f"[file {name}({', '.join(about)})]"


def _parts_text(source: Message | Artifact | Sequence[Part]) -> str:
    """Text and data as they are, each file named."""
    parts = source if isinstance(source, Sequence) else source.parts
    said = get_text(parts, sep="") + "".join(
        msgspec.json.encode(d).decode() for d in get_data(parts))
    files = [_file_note(p) for p in parts if isinstance(p, FilePart)]
    return "\n".join(filter(None, (said, *files)))


def _text(message: Message) -> str:
    return _parts_text(message)


def _task_text(task: Task) -> str:
    answer = "\n".join(filter(None, (_parts_text(a) for a in task.artifacts)))
    said = _text(task.status.message) if task.status.message is not None else ""
    state = task.status.state
    if state in (TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED):
        return (f"The agent asks: {said or '(no question given)'} "
                f"(to answer, call again with task_id={task.id!r})")
    if state in (TaskState.FAILED, TaskState.REJECTED, TaskState.CANCELED):
        return f"The agent's task ended {state.value}: {said or answer or 'no reason given'}"
    return "\n".join(filter(None, (answer, said))) or "(the agent answered nothing)"
