"""What an agent builder writes: the card's metadata plus an executor.

Two executor styles are supported:

* a plain function — ``async def echo(text: str) -> str``. Its parameter is
  the message text when annotated ``str``, otherwise the ``Message``. What it
  returns becomes the task's one artifact (text, data, bytes, parts), and the
  task completes. An async *generator* streams: each yielded value is appended
  to the artifact as a chunk. Returning a ``Message`` answers with that
  message instead of a task, when it comes within the server's grace (else
  it completes the task that was written meanwhile), or always with
  ``Agent(..., replies_with_messages=True)``.

* a context executor — ``async def run(ctx: Context) -> None`` — which drives
  the task itself: status updates, artifacts with append / last-chunk, asking
  for input, completing, failing, rejecting, or replying with a bare message.
  It is recognized by a parameter annotated ``Context`` (or named ``ctx``). If
  it returns without finishing the task (or asking for input), what it returns
  is the answer, as a plain function's is; returning nothing completes the task.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Any, get_type_hints

from ..core.model import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    Message,
    SecurityScheme,
)
from ..core.parts import as_parts
from .context import Context

__all__ = ["Agent", "Executor", "Skill", "default_skill"]

Executor = Callable[..., Any]
Skill = AgentSkill


class Agent:
    """An A2A agent: its card metadata and the executor that does the work.

    ``executor`` is a plain function of the message (its text when the parameter
    is annotated ``str``) whose return value, or each value a generator (async or
    not) yields, becomes the answer; or a context executor, ``async def run(ctx:
    Context)``, that drives the task itself: status updates, artifacts, asking for
    input, completing, failing, rejecting (a generator of the context streams what
    it yields, as a plain one does, and completes the task unless it ended it).

    The rest is what the card says: ``name``, ``description`` and ``version`` (the
    agent's own version), ``skills`` (none declared: the card lists one made from
    the name and description, ``default_skill``), ``provider``, the media types the agent takes
    and gives (``input_modes``, ``output_modes``), ``documentation_url``,
    ``icon_url`` and ``extensions``. ``streaming`` and ``push_notifications`` are
    the capabilities offered (push is off unless asked for). ``security_schemes``
    and ``security`` are declared in the card only: the server's ``AuthConfig``
    enforces credentials, and a scheme declared here that it does not enforce is
    refused (docs/security.md). ``extended_card`` is the extended card: an
    ``AgentCard``, or a function of the public card (and of the caller's principal,
    when it takes two arguments) returning one.

    ``accepts_messages_while_working``: a message sent to a task while its
    executor runs reaches the executor (``ctx.incoming()``) instead of being
    refused. ``replies_with_messages``: a new task is written only once the
    executor first speaks, so a bare ``Message`` answers however late it comes.
    """

    def __init__(
        self,
        name: str,
        description: str,
        executor: Executor,
        *,
        version: str = "1.0.0",
        skills: Sequence[AgentSkill] = (),
        provider: AgentProvider | None = None,
        input_modes: Sequence[str] = ("text/plain",),
        output_modes: Sequence[str] = ("text/plain",),
        streaming: bool = True,
        push_notifications: bool = False,
        documentation_url: str | None = None,
        icon_url: str | None = None,
        extensions: Sequence[AgentExtension] = (),
        security_schemes: dict[str, SecurityScheme] | None = None,
        security: Sequence[dict[str, list[str]]] = (),
        extended_card: Callable[..., AgentCard] | AgentCard | None = None,
        accepts_messages_while_working: bool = False,
        replies_with_messages: bool = False,
    ) -> None:
        if not isinstance(name, str) or not name.strip():
            # the card's one required name: clients list, and the mesh and the several
            # agents' host address, agents by it
            raise ValueError(f"an agent needs a name (its card's name), not {name!r}")
        self.name = name
        self.description = description
        self.version = version
        self.skills = list(skills)
        self.provider = provider
        self.input_modes = list(input_modes)
        self.output_modes = list(output_modes)
        self.streaming = streaming
        self.push_notifications = push_notifications
        self.documentation_url = documentation_url
        self.icon_url = icon_url
        self.extensions = list(extensions)
        self.security_schemes = dict(security_schemes or {})
        self.security = list(security)
        self.extended_card = extended_card
        #: a message sent to a working task reaches its executor (``ctx.incoming()``)
        #: instead of being refused
        self.accepts_messages_while_working = accepts_messages_while_working
        #: the executor may answer a new task's first message with a bare message
        #: however long it takes: no task is written until it first speaks (else
        #: a task is written ``submitted`` once the server's grace has passed,
        #: ``EngineConfig.submit_grace``, and a later bare message completes it)
        self.replies_with_messages = replies_with_messages
        self.executor = executor
        self._run = _adapt(executor)

    def run(self, ctx: Context) -> Awaitable[Any]:
        """Run the executor for one turn of a task (await the result).

        Not a coroutine of its own: the executor's is handed back, so a turn
        that waits holds one frame less.
        """
        return self._run(ctx)

    def card(self, interfaces: Sequence[AgentInterface]) -> AgentCard:
        return AgentCard(
            name=self.name,
            description=self.description,
            version=self.version,
            interfaces=list(interfaces),
            capabilities=AgentCapabilities(
                streaming=self.streaming,
                push_notifications=self.push_notifications,
                extended_card=self.extended_card is not None,
                state_transition_history=True,
                extensions=self.extensions,
            ),
            skills=self.skills or [default_skill(self.name, self.description)],
            default_input_modes=self.input_modes,
            default_output_modes=self.output_modes,
            provider=self.provider,
            documentation_url=self.documentation_url,
            icon_url=self.icon_url,
            security_schemes=self.security_schemes,
            security=self.security,
        )


def default_skill(name: str, description: str) -> AgentSkill:
    """The skill a card lists for an agent that declares none: the agent as a whole,
    its id and name the agent's name (what the MCP bridge names the agent's one tool),
    its description the agent's, tagged with the words of its name. (A card without
    skills is hidden from skill-based discovery, and checkers flag it.)"""
    words = list(dict.fromkeys(w for w in re.split(r"[^0-9a-z]+", name.lower()) if w))
    return AgentSkill(id=name.strip() or "agent", name=name, description=description,
                      tags=words or ["agent"])


def _adapt(fn: Executor) -> Callable[[Context], Awaitable[Any]]:
    if not callable(fn):
        raise TypeError(f"an agent's executor must be callable, not {type(fn).__name__}")
    if isinstance(fn, functools.partial):
        # what is left to give, and the annotations of the function it wraps (its own
        # __call__ takes *args: a Context executor was handed the message)
        target: Any = fn
        hinted: Any = fn.func
    else:
        target = hinted = fn if inspect.isfunction(fn) or inspect.ismethod(fn) \
            else getattr(fn, "__call__", fn)  # noqa: B004
    try:
        params = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        params = []
    try:
        hints = get_type_hints(hinted)
    except Exception:
        hints = {}
    first = params[0] if params else None
    hint = hints.get(first.name) if first is not None else None

    if first is not None and (hint is Context or first.name in ("ctx", "context")):
        if inspect.iscoroutinefunction(target):
            return fn

        async def run_ctx(ctx: Context) -> Any:
            out = fn(ctx)
            if inspect.isasyncgen(out) or inspect.isgenerator(out):
                # what it yields is the answer's chunks, as for a plain generator; the
                # task completes after the last unless the executor ended it itself
                await _chunks(ctx, out)
                return None
            return await out

        return run_ctx

    wants_text = hint is str

    async def run_plain(ctx: Context) -> None:
        arg = ctx.text if wants_text else ctx.message
        out = fn(arg) if first is not None else fn()
        if inspect.isasyncgen(out) or inspect.isgenerator(out):
            await _chunks(ctx, out)
            return
        if inspect.isawaitable(out):
            out = await out
        if ctx.finished:
            return
        if out is None:
            await ctx.complete()
        else:
            await answer(ctx, out)

    return run_plain


async def _chunks(ctx: Context, out: AsyncIterator[Any] | Iterator[Any]) -> None:
    """Each chunk a generator yields goes out as soon as it is yielded, as one artifact;
    the completed status that follows closes it. A plain generator runs on the event
    loop, as a plain function does."""
    chunks = out if isinstance(out, AsyncIterator) else _async(out)
    artifact_id = None
    async for chunk in chunks:
        if ctx.finished:
            break
        artifact_id = await ctx.artifact(
            chunk, artifact_id=artifact_id, append=artifact_id is not None)
    if not ctx.finished:
        await ctx.complete()


async def _async(chunks: Iterator[Any]) -> AsyncIterator[Any]:
    for chunk in chunks:
        yield chunk


async def answer(ctx: Context, out: Any) -> None:
    """Finish the task with what an executor returned: a ``Message`` as the reply,
    anything else as its last artifact (text, data, bytes, parts)."""
    if isinstance(out, Message):
        await ctx.reply(out)
    else:
        await ctx.complete(artifact=as_parts(out))
