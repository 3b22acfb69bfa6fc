"""Any OpenAI-compatible chat model as an A2A agent.

    from interlingua.adapters.openai import chat_agent
    agent = chat_agent("llama3.1", base_url="http://localhost:11434/v1", system="Be brief.")

Works with every server that speaks the chat-completions API (hosted APIs,
vLLM, llama.cpp's server, Ollama), through the official ``openai`` library
(``pip install 'interlingua[openai]'``).

What maps to A2A:

* **history**: the conversation is the A2A context: each turn sends the
  context's earlier tasks (user messages and answers, read from the task
  store) and the system prompt, so it survives restarts;
* **streaming**: a turn begins with a ``working`` status; the answer streams
  as chunks of one artifact when the message was sent with a streaming request
  (each chunk sent when the next arrives, so the last is marked ``lastChunk``);
  otherwise, a subscriber's too, it is one part at the end (each chunk would be
  a part of the stored answer, which no stream reader needed);
* **tools**: function tools (``interlingua.tools`` makes A2A agents into
  them); each call shows as a ``working`` status update; what the model says
  before its calls is kept in the answer, a blank line apart from what it says next;
* the model server's errors fail the task with a readable message;
  cancelling the task stops reading from the model.

Not mapped: images and files (only the text parts of messages reach the
model; a message with no text at all is rejected, saying so), structured
output, and asking the user for input mid-answer.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..core.model import AgentSkill
from ..core.output import InvalidOutput
from ..core.urls import bare_url
from ..server.agent import Agent
from ..server.context import Context
from ..tools import RemoteAgent
from ._common import (
    ROUNDS_APART,
    Answer,
    conversation,
    error_detail,
    progress,
    refused_without_text,
    require,
    working,
)

if TYPE_CHECKING:
    from openai import AsyncOpenAI, AsyncStream
    from openai.types.chat import ChatCompletionChunk
    from openai.types.chat.chat_completion_chunk import ChoiceDelta

__all__ = ["DEFAULT_TIMEOUT", "FunctionTool", "chat_agent", "make_executor"]

require("openai", "openai")


class FunctionTool(Protocol):
    """A tool the model may call: its chat-completions definition and the call itself."""

    async def definition(self) -> dict[str, Any]:
        """``{"type": "function", "function": {"name", "description", "parameters"}}``."""
        ...

    async def __call__(self, arguments: str) -> str:
        """Run the tool with the model's JSON arguments; the answer goes back to the model."""
        ...


def _key(base_url: str | None, api_key: str | None) -> str:
    key = api_key or os.environ.get("OPENAI_API_KEY")
    if not key:
        if not (base_url or os.environ.get("OPENAI_BASE_URL")):
            raise ValueError(
                "no API key: set OPENAI_API_KEY, or give a base URL for a local model server"
            )
        key = "unused"  # local servers (Ollama, llama.cpp, vLLM) take any key
    return key


def _client(base_url: str | None, api_key: str | None, max_retries: int,
            timeout: float) -> AsyncOpenAI:
    from openai import AsyncOpenAI, Timeout

    # ``timeout`` bounds each wait (for the connection, for the next piece of the
    # answer), not the whole answer, which may stream for minutes
    waits = Timeout(timeout, connect=min(timeout, _CONNECT_TIMEOUT))
    return AsyncOpenAI(api_key=_key(base_url, api_key), base_url=base_url,
                       max_retries=max_retries, timeout=waits)


#: seconds to wait for a connection to the model server (a server that is up answers fast)
_CONNECT_TIMEOUT = 10.0
#: seconds a model server may stay silent (before the first token, or between two)
DEFAULT_TIMEOUT = 120.0


def make_executor(
    model: str,
    client: AsyncOpenAI | Callable[[], AsyncOpenAI],
    *,
    system: str | None = None,
    tools: Sequence[FunctionTool] = (),
    max_tool_rounds: int = 8,
    options: dict[str, Any] | None = None,
) -> Callable[[Context], Awaitable[None]]:
    """The context executor behind ``chat_agent`` (to wrap in an agent of one's own).

    ``client`` is a client to use (and close) as one sees fit, or a factory
    called for a client of each turn's own, closed when the turn ends.
    """
    import openai

    async def run(ctx: Context) -> None:
        if await refused_without_text(ctx):
            return
        if not callable(client):
            await turn(ctx, client)
            return
        # A client per turn: its connections belong to the loop serving the
        # turn and are closed with it (nothing is left open at shutdown).
        async with client() as own:
            await turn(ctx, own)

    async def turn(ctx: Context, client: AsyncOpenAI) -> None:
        messages: list[dict[str, Any]] = []
        if system:
            messages.append({"role": "system", "content": system})
        messages.extend({"role": t.role, "content": t.text} for t in await conversation(ctx))
        definitions, usable = [], []
        for t in tools:
            try:
                definitions.append(await t.definition())
            except Exception as exc:  # one tool out of reach: the others still serve
                await progress(ctx, f"A tool is left out: {type(exc).__name__}: {exc}",
                               {"tool_unavailable": True})
                continue
            usable.append(t)
        _names_apart(definitions, usable)
        by_name = {d["function"]["name"]: t for d, t in zip(definitions, usable, strict=True)}
        if len(by_name) < len(definitions):
            # the model could call only one of them, by a name that means either
            names = [d["function"]["name"] for d in definitions]
            twice = sorted({n for n in names if names.count(n) > 1})
            await ctx.fail(f"Two tools are named {', '.join(map(repr, twice))}: a model "
                           "calls a tool by its name, so each needs a name of its own.")
            return
        extra: dict[str, Any] = dict(options or {})
        if definitions:
            extra["tools"] = definitions
        answer = Answer(ctx)

        async def end(fail: str | None = None) -> None:
            if fail is not None:
                await answer.close()  # what the model said before the error is kept
                await ctx.fail(fail)
            elif not answer.text:
                # (a server that answers 200 with nothing)
                await ctx.fail("The model server's answer held no text.")
            else:
                await answer.complete()

        #: the model server answered once: a connection error after that is a drop
        reached = False
        await working(ctx)  # the model is asked
        try:
            for rounds_run in range(max_tool_rounds + 1):
                # typed loosely: the messages are plain dicts, and options pass through
                completions: Any = client.chat.completions
                reached = False
                stream: AsyncStream[ChatCompletionChunk] = await completions.create(
                    model=model, messages=messages, stream=True, **extra)
                reached = True
                calls: dict[int, dict[str, str]] = {}
                round_text: list[str] = []
                async for delta in _deltas(stream):
                    if ctx.cancelled.is_set():
                        await stream.close()
                        return
                    if delta.content:
                        if not round_text and answer.said:
                            # what an earlier round said ("Let me check.") is a
                            # paragraph of its own, not glued to this round's words
                            await answer.add(ROUNDS_APART)
                        round_text.append(delta.content)
                        await answer.add(delta.content)
                    for call in delta.tool_calls or ():
                        slot = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                        if call.id:
                            slot["id"] = call.id
                        if call.function is not None:
                            slot["name"] += call.function.name or ""
                            slot["arguments"] += call.function.arguments or ""
                if not calls:
                    break
                if rounds_run == max_tool_rounds:  # none left: these calls are not run
                    await end(f"The model kept calling tools after {max_tool_rounds} rounds.")
                    return
                messages.append({
                    "role": "assistant",
                    "content": "".join(round_text) or None,
                    "tool_calls": [{"id": c["id"], "type": "function",
                                    "function": {"name": c["name"], "arguments": c["arguments"]}}
                                   for c in calls.values()],
                })
                for c in calls.values():
                    await progress(ctx, f"Calling {c['name']}",
                                   {"tool": c["name"], "arguments": c["arguments"]})
                    messages.append({"role": "tool", "tool_call_id": c["id"],
                                     "content": await _call(by_name, c["name"], c["arguments"])})
        except openai.APIConnectionError as exc:
            await end(_unreached(exc, bare_url(str(client.base_url)), reached, client.timeout))
            return
        except openai.APIStatusError as exc:
            await end(f"The model server answered {exc.status_code}: {error_detail(exc)}")
            return
        except openai.OpenAIError as exc:
            await end(f"The model server's answer could not be used: {exc}")
            return
        except (ValueError, TypeError, AttributeError, KeyError, IndexError) as exc:
            if isinstance(exc, InvalidOutput):  # the agent's own output, refused: not the model's
                raise
            # a stream the library could not read (no JSON, members of the wrong kind)
            await end(f"The model server's answer could not be read: "
                      f"{type(exc).__name__}: {exc}")
            return
        await end()

    return run


async def _deltas(stream: AsyncStream[ChatCompletionChunk]) -> AsyncIterator[ChoiceDelta]:
    """What each chunk of the answer adds; from a server that ignored ``stream`` and
    answered one ``chat.completion`` (some gateways and small servers do), its
    message as one delta."""
    from openai.types.chat.chat_completion_chunk import ChoiceDelta

    response = stream.response
    if "text/event-stream" not in response.headers.get("content-type", "text/event-stream"):
        body = json.loads(await response.aread())
        message = body["choices"][0]["message"] if body.get("choices") else {}
        calls = [{**c, "index": i} for i, c in enumerate(message.get("tool_calls") or ())]
        yield ChoiceDelta.model_validate({"content": message.get("content"),
                                          "tool_calls": calls or None})
        return
    async for chunk in stream:
        if chunk.choices:
            yield chunk.choices[0].delta


def _names_apart(definitions: list[dict[str, Any]], tools: list[FunctionTool]) -> None:
    """Remote agents whose cards share a name (two deployments of one agent) get
    ``name_2`` …, as ``interlingua mcp`` names skills alike; other tools keep theirs."""
    pairs = list(zip(definitions, tools, strict=True))
    # a name given is kept wherever its tool is listed: a card's name gives way to it
    taken = {d["function"]["name"] for d, t in pairs
             if not isinstance(t, RemoteAgent) or t.named}
    for definition, tool in pairs:
        if isinstance(tool, RemoteAgent):
            function = definition["function"]
            function["name"] = tool.name_among(function["name"], taken)


async def _call(by_name: dict[str, FunctionTool], name: str, arguments: str) -> str:
    tool = by_name.get(name)
    if tool is None:
        return f"error: there is no tool named {name!r}"
    try:
        return await tool(arguments)
    except Exception as exc:  # the model is told, and may try otherwise
        return f"error: {type(exc).__name__}: {exc}"


def _unreached(exc: Exception, url: str, reached: bool, timeout: object) -> str:
    """Why the model server could not be heard: never reached, a connection lost
    mid-answer, or silence past the timeout."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        # (the library's cause, by its name: the openai library's HTTP client may be
        # another package than the httpx this one imports)
        if type(exc.__cause__).__name__ == "ConnectTimeout":
            limit = getattr(timeout, "connect", None)
            within = f" within {limit:g} s" if isinstance(limit, int | float) else ""
            return f"The model server at {url} could not be reached: no connection{within}."
        # (the timeout is each read's, not the whole answer's: long answers go on)
        read = getattr(timeout, "read", timeout)
        waited = f" for {read:g} s" if isinstance(read, int | float) else ""
        return f"The model server at {url} sent nothing{waited}: it timed out."
    if reached:
        return f"The connection to the model server at {url} was lost: {exc}"
    return f"The model server at {url} could not be reached: {exc}"


def chat_agent(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    system: str | None = None,
    name: str | None = None,
    description: str | None = None,
    tools: Sequence[FunctionTool] = (),
    client: AsyncOpenAI | None = None,
    max_retries: int = 2,
    timeout: float = DEFAULT_TIMEOUT,
    max_tool_rounds: int = 8,
    options: dict[str, Any] | None = None,
    **agent_options: Any,
) -> Agent:
    """An agent that answers with ``model`` on an OpenAI-compatible server.

    ``base_url`` is the server's API root (``http://localhost:11434/v1``);
    without it the ``openai`` library's default (``OPENAI_BASE_URL`` or the
    OpenAI API). ``api_key`` defaults to ``OPENAI_API_KEY``. ``options`` go to
    every ``chat.completions.create`` call (``temperature``, ...);
    ``agent_options`` to ``Agent`` (``skills``, ``version``, ...).
    ``max_tool_rounds`` is how many rounds of tool calls a turn may run: a model
    that asks for more after them fails the task, those calls not run.
    ``timeout`` is how many seconds the model server may stay silent (before
    its first token, or between two: a long answer streams on) before the try
    fails; a try that fails so, or cannot connect, is made again ``max_retries``
    times before the task fails saying why.
    """
    if not model:
        raise ValueError("a model name is needed")
    if client is None:
        _key(base_url, api_key)  # refuse a bad configuration now, not at the first turn
    executor = make_executor(
        model, client or (lambda: _client(base_url, api_key, max_retries, timeout)), system=system, tools=tools,
                             max_tool_rounds=max_tool_rounds, options=options)
    agent_options.setdefault("skills", [AgentSkill(
        id="chat", name="Chat", description=description or f"Converses using {model}.",
        tags=["chat", "llm"])])
    return Agent(name=name or model,
                 description=description or f"A chat agent backed by the model {model}.",
                 executor=executor, **agent_options)
