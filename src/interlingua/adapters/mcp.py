"""The MCP bridge, both directions, with the official ``mcp`` SDK (``interlingua[mcp]``).

An A2A agent as an MCP server (``interlingua mcp URL``, or ``mcp_server(url)``):
one MCP tool per skill of the agent's card (one tool named after the agent
when the card lists none). A tool call is a send that waits for the task to
finish or to ask for input; while it runs, each status message and artifact
chunk is reported as MCP progress (a chunk by its text, on one line and cut
short). The result is the task's artifacts as
text (data as JSON); a question (``input-required``) is returned with the
task id, which the next call passes as ``task_id`` to answer it; a failed,
rejected or canceled task, or an unreachable agent, is a tool error.

An MCP server's tools as an A2A agent (``mcp_agent(server)``): its card's
skills are the tools; a message whose data part is
``{"tool": NAME, "arguments": {...}}`` calls that tool (a text message calls
the only tool, or a tool taking one string, with the text); the tool's
content becomes the artifact, its structured content a data part, an error a
failed task. ``mcp_tools(server)`` gives the same tools as function tools for
``interlingua.adapters.openai.chat_agent``, so a model chooses among them.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import re
from collections.abc import Sequence
from typing import Annotated, Any

import msgspec

from ..client import AgentTimeout, CardNotFound, ClientError, TaskNotSettled
from ..client.assembler import ArtifactAssembler
from ..client.messages import make_message
from ..client.stream import StreamEvent
from ..client.transport import DEFAULT_TIMEOUT
from ..clients import AnyClient, client_for
from ..core.errors import A2AError
from ..core.lifecycle import RETURN_STATES
from ..core.model import (
    AgentCard,
    AgentSkill,
    ArtifactUpdate,
    FilePart,
    Message,
    Part,
    StatusUpdate,
    Task,
    TaskState,
    TextPart,
)
from ..core.parts import data_part, get_data, get_text
from ..core.urls import bare_url
from ..server.agent import Agent
from ..server.context import Context as A2AContext
from ..tools import (
    MESSAGE_ABOUT,
    TASK_ID_ABOUT,
    _parts_text,
    _task_text,
    _text,
    cancelling,
    send_within,
    still_working,
    unique_name,
)
from ._common import progress, require

require("mcp", "mcp")

from mcp import Client as MCPClient  # noqa: E402
from mcp import StdioServerParameters  # noqa: E402
from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.types import (  # noqa: E402
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)
from pydantic import Field  # noqa: E402  (a dependency of the mcp SDK)

__all__ = ["MCPFunctionTool", "mcp_agent", "mcp_server", "mcp_tools", "server_for_card"]

#: what ``mcp_agent`` and ``mcp_tools`` connect to: a streamable HTTP URL, a
#: command to launch (stdio), or an in-process ``MCPServer``
MCPTarget = str | StdioServerParameters | MCPServer


def _tool_name(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]+", "_", text).strip("_")[:64] or "agent"


# ------------------------------------------------------ A2A agent -> MCP server


async def mcp_server(url: str, **client_options: Any) -> MCPServer:
    """An MCP server whose tools are the skills of the A2A agent at ``url`` (its card is
    read now; with a ``dialect`` and no card there, one tool named after its host)."""
    async with client_for(url, **client_options) as client:
        try:
            card = await client.get_card()
        except CardNotFound:
            if client_options.get("dialect") is None:
                raise
            # an endpoint spoken to in a given dialect needs no card, as ``send`` speaks to it
            card = _no_card(url)
    return server_for_card(url, card, **client_options)


def _no_card(url: str) -> AgentCard:
    """What stands for the card of an agent that serves none: its host's name, no
    streaming (a blocking send, which every agent answers)."""
    shown = bare_url(url)
    return AgentCard(name=_tool_name(shown.split("//")[-1].split("/")[0]),
                     description=f"Ask the agent at {shown}.", version="", interfaces=[])


def server_for_card(url: str, card: AgentCard, **client_options: Any) -> MCPServer:
    """``mcp_server`` for a card already read."""
    server: MCPServer = MCPServer(name=card.name, description=card.description,
                                  version=card.version or "")
    skills = card.skills or [AgentSkill(id=card.name, name=card.name,
                                        description=card.description, tags=[])]
    streaming = bool(card.capabilities.streaming)
    taken: set[str] = set()
    for skill in skills:
        description = skill.description or skill.name
        if skill.examples:
            description += " Examples: " + "; ".join(skill.examples)
        # ids may make one tool name ("a b" and "a_b", ids past 64 characters), and
        # the server keeps one tool per name: the others' skills would be lost
        name = unique_name(_tool_name(skill.id), taken)
        server.add_tool(_skill_tool(url, name, streaming, client_options),
                        name=name, title=skill.name, description=description)
    return server


def _skill_tool(url: str, name: str, streaming: bool, options: dict[str, Any]) -> Any:
    timeout: float | None = options.get("timeout", DEFAULT_TIMEOUT)

    # (the result's text is its structured output, as for a tool answering a string;
    # the parameters are described by Field: the SDK reads no docstring)
    async def call(message: Annotated[str, Field(description=MESSAGE_ABOUT)], ctx: Context,
                   task_id: Annotated[str | None, Field(description=TASK_ID_ABOUT)] = None,
                   ) -> Annotated[CallToolResult, str]:
        """Send a message to the agent."""
        try:
            async with client_for(url, **options) as client:
                answer = await _asked(client, make_message(message, task_id=task_id),
                                      ctx, streaming, timeout)
        except TaskNotSettled as exc:
            raise ToolError(f"the agent at {url}: {still_working(exc, timeout)}") from None
        except (ClientError, A2AError) as exc:
            raise ToolError(f"the agent at {url} could not be asked: {exc}") from None
        if isinstance(answer, Message):
            return _result(_text(answer), answer.parts)
        task = answer
        if task.status.state in (TaskState.FAILED, TaskState.REJECTED, TaskState.CANCELED):
            raise ToolError(_task_text(task))
        return _result(_task_text(task), _answer_parts(task))

    call.__name__ = name
    return call


async def _asked(client: AnyClient, message: Message, ctx: Context, streaming: bool,
                 timeout: float | None) -> Task | Message:
    """The agent's answer, within ``timeout``. A task the call started is canceled
    when the call is (the MCP client's user stopped it): it would work on for nobody."""
    streamed = _Streamed()
    answer = _follow(client, message, ctx, timeout, streamed) if streaming else send_within(
        client, message, None, timeout, seen=lambda task: setattr(streamed, "task_id", task.id))
    return await cancelling(client, message, answer, lambda: streamed.task_id)


class _Streamed:
    """The task as a stream has told it so far."""

    def __init__(self) -> None:
        self.task_id: str | None = None
        self.task: Task | None = None
        self._artifacts = ArtifactAssembler()

    def feed(self, event: StreamEvent) -> None:
        item = event.item
        self.task_id = event.task_id or self.task_id
        self._artifacts.feed(event)
        if isinstance(item, Task):
            self.task = item
        elif isinstance(item, StatusUpdate):
            self.task = Task(id=item.task_id, context_id=item.context_id, status=item.status) \
                if self.task is None else msgspec.structs.replace(self.task, status=item.status)

    def as_told(self) -> Task | None:
        if self.task is None:
            return None
        return msgspec.structs.replace(self.task, artifacts=self._artifacts.artifacts)


async def _follow(client: AnyClient, message: Message, ctx: Context, timeout: float | None,
                  streamed: _Streamed) -> Task | Message:
    """Stream the task, reporting its progress, within ``timeout``; the task as it ended
    (or the bare answer). The stream's own word on the end is taken: an agent that keeps
    no tasks answers no ``GetTask``, which is asked only when the stream ended short."""
    steps = 0
    try:
        async with asyncio.timeout(timeout):
            async for event in client.stream(message):
                item = event.item
                if isinstance(item, Message):
                    return item
                streamed.feed(event)
                note = None
                if isinstance(item, StatusUpdate) and item.status.message is not None:
                    note = get_text(item.status.message)
                elif isinstance(item, ArtifactUpdate):
                    note = _chunk_note(item)
                if note:
                    steps += 1
                    await ctx.report_progress(steps, None, note)
    except (TimeoutError, AgentTimeout):
        told = streamed.as_told()
        if told is None:
            raise AgentTimeout(f"the agent did not answer within {timeout:g} s") from None
        raise TaskNotSettled(f"task {told.id} is still {told.status.state.value}",
                             told) from None
    told = streamed.as_told()
    if told is not None and told.status.state in RETURN_STATES:
        return told
    if streamed.task_id is None:
        raise ClientError("the agent's stream ended without a task")
    return await client.get_task(streamed.task_id)


def _answer_parts(task: Task) -> list[Part]:
    """The parts of a finished task's answer (none for a question: its text is all)."""
    if task.status.state in (TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED):
        return []
    said = task.status.message.parts if task.status.message is not None else []
    return [p for a in task.artifacts for p in a.parts] + list(said)


def _result(text: str, parts: Sequence[Part]) -> CallToolResult:
    """The answer as text (files named in it), then its files as MCP content."""
    content: list[ContentBlock] = [TextContent(type="text", text=text)]
    content.extend(c for c in map(_file_content, parts) if c is not None)
    return CallToolResult(content=content, structured_content={"result": text})


def _file_content(part: Part) -> ContentBlock | None:
    """A file part as MCP content: an image or audio as such, a file by URL as a
    resource link; another file given inline is left to the text that names it."""
    if not isinstance(part, FilePart):
        return None
    media = part.media_type or ""
    if part.raw is not None:
        data = base64.b64encode(part.raw).decode()
        if media.startswith("image/"):
            return ImageContent(type="image", data=data, mime_type=media)
        if media.startswith("audio/"):
            return AudioContent(type="audio", data=data, mime_type=media)
        return None
    if part.uri is not None:
        return ResourceLink(type="resource_link", name=part.filename or part.uri,
                            uri=part.uri, mime_type=part.media_type)
    return None


#: the longest progress message an artifact chunk makes (MCP clients show one line)
NOTE_CHARS = 200


def _chunk_note(update: ArtifactUpdate) -> str | None:
    """An artifact chunk as a progress message: its text on one line, cut short;
    a chunk of data or files is named by its artifact; blank text says nothing."""
    artifact = update.artifact
    line = " ".join(get_text(artifact, sep=" ").split())
    if not line:
        if all(isinstance(p, TextPart) for p in artifact.parts):
            return None
        return f"artifact {artifact.name or artifact.artifact_id}"
    return line if len(line) <= NOTE_CHARS else line[:NOTE_CHARS - 1].rstrip() + "…"


# ------------------------------------------------------ MCP server -> A2A agent


async def _list_tools(target: MCPTarget) -> list[Any]:
    async with MCPClient(target) as client:
        return list((await client.list_tools()).tools)


def _content_parts(result: Any) -> list[Part]:
    """A tool's content as A2A parts: its texts as one, then what else it gave as
    files (an image, audio, a resource embedded or linked), in its order."""
    texts = [c.text for c in result.content if isinstance(c, TextContent)]
    parts: list[Part] = [TextPart(text="\n".join(texts))] if texts else []
    for c in result.content:
        if not isinstance(c, TextContent):
            parts.append(_content_file(c))
    return parts


def _content_file(content: Any) -> Part:
    """One non-text content block as a file part (a note when it cannot be one)."""
    if isinstance(content, ImageContent | AudioContent):
        raw = _decoded(content.data)
        if raw is not None:
            return FilePart(raw=raw, media_type=content.mime_type)
    elif isinstance(content, ResourceLink):
        return FilePart(uri=content.uri, media_type=content.mime_type, filename=content.name)
    elif isinstance(content, EmbeddedResource):
        resource = content.resource
        name = resource.uri.rstrip("/").rsplit("/", 1)[-1] or None
        if not isinstance(resource, BlobResourceContents):
            return FilePart(raw=resource.text.encode(),
                            media_type=resource.mime_type or "text/plain", filename=name)
        raw = _decoded(resource.blob)
        if raw is not None:
            return FilePart(raw=raw, media_type=resource.mime_type, filename=name)
    return TextPart(text=f"[{getattr(content, 'type', 'content')} that could not be read]")


def _decoded(data: str) -> bytes | None:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


class MCPFunctionTool:
    """One tool of an MCP server as a function tool (``interlingua.adapters.openai``)."""

    def __init__(self, target: MCPTarget, tool: Any) -> None:
        self.target = target
        self.tool = tool

    async def definition(self) -> dict[str, Any]:
        return {"type": "function", "function": {
            "name": self.tool.name, "description": self.tool.description or self.tool.name,
            "parameters": self.tool.input_schema}}

    async def __call__(self, arguments: str) -> str:
        try:
            args = json.loads(arguments or "{}")
        except (ValueError, RecursionError):  # (RecursionError: nested too deeply)
            return "error: the arguments are not JSON"
        async with MCPClient(self.target) as client:
            result = await client.call_tool(self.tool.name, args)
        # what is not text (an image) is named: a model told nothing would think nothing came
        text = _parts_text(_content_parts(result))
        if result.structured_content is not None and not text:
            text = json.dumps(result.structured_content)
        return f"error: {text}" if result.is_error else text


async def mcp_tools(target: MCPTarget) -> list[MCPFunctionTool]:
    """The MCP server's tools, as function tools a chat model may call."""
    return [MCPFunctionTool(target, t) for t in await _list_tools(target)]


async def mcp_agent(target: MCPTarget, *, name: str | None = None,
                    description: str | None = None, **agent_options: Any) -> Agent:
    """An A2A agent that calls the MCP server's tools (listed now, for the card's skills).

    Each call opens its own MCP session (for a command: a process of its own).
    """
    tools = {t.name: t for t in await _list_tools(target)}
    if not tools:
        raise ValueError("the MCP server offers no tools")

    async def run(ctx: A2AContext) -> None:
        picked = _pick(ctx, tools)
        if isinstance(picked, str):
            await ctx.reject(picked)
            return
        tool, args = picked
        await progress(ctx, f"Calling {tool}", {"tool": tool, "arguments": args})
        try:
            async with MCPClient(target) as client:
                result = await client.call_tool(tool, args)
        except Exception as exc:  # the MCP server failed or went away: the task says so
            await ctx.fail(f"The MCP tool {tool} could not be called: {exc}")
            return
        parts = _content_parts(result)
        if result.is_error:
            await ctx.fail(_parts_text(parts) or f"The MCP tool {tool} failed.")
            return
        if result.structured_content is not None:
            parts.append(data_part(result.structured_content))
        await ctx.complete(artifact=parts or "", name=tool)

    agent_options.setdefault("skills", [
        AgentSkill(id=t.name, name=t.title or t.name, description=t.description or t.name,
                   tags=["mcp"]) for t in tools.values()])
    agent_options.setdefault("input_modes", ["text/plain", "application/json"])
    return Agent(name=name or "MCP tools",
                 description=description or "Calls tools: " + ", ".join(tools),
                 executor=run, **agent_options)


def _pick(ctx: A2AContext, tools: dict[str, Any]) -> tuple[str, dict[str, Any]] | str:
    """The tool and arguments a message asks for, or why it asks for none."""
    for data in get_data(ctx.message):
        if isinstance(data, dict) and "tool" in data:
            tool, args = data["tool"], data.get("arguments", {})
            if not isinstance(tool, str) or tool not in tools:  # (a list is no key)
                return f"No tool named {tool!r}; the tools are: {', '.join(tools)}."
            if not isinstance(args, dict):
                return "The arguments must be a JSON object."
            return tool, args
    text = ctx.text
    takes_text = [name for name, t in tools.items() if _one_string(t.input_schema)]
    candidates = list(tools) if len(tools) == 1 else takes_text
    if len(candidates) == 1 and text:
        tool = tools[candidates[0]]
        params = list(tool.input_schema.get("properties") or {})
        return candidates[0], ({params[0]: text} if params else {})
    return ('Say which tool to call with a data part {"tool": NAME, "arguments": {...}}; '
            f"the tools are: {', '.join(tools)}.")


def _one_string(schema: dict[str, Any]) -> bool:
    props = schema.get("properties") or {}
    return len(props) == 1 and next(iter(props.values())).get("type") == "string"


