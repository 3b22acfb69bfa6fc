"""What the adapters share: importing an extra, and a context's conversation so far."""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

import msgspec

from ..core.model import Metadata, Role, Task, TaskState
from ..core.parts import agent_message, get_data, get_text
from ..server.context import Context

__all__ = ["NO_TEXT", "ROUNDS_APART", "Answer", "Turn", "conversation", "error_detail", "progress",
           "refused_without_text", "require", "working"]


def require(module: str, extra: str) -> ModuleType:
    """Import ``module``, or say which extra to install (an ImportError, no traceback noise)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"this adapter needs {module!r}: pip install 'interlingua[{extra}]' ({exc})"
        ) from None


async def progress(ctx: Context, text: str, metadata: Metadata) -> None:
    """A ``working`` update that says what the agent is doing; its message is marked
    as progress, so it never reaches a model as part of the conversation."""
    note = agent_message(text, task_id=ctx.task_id, context_id=ctx.context_id,
                         metadata={"progress": True})
    await ctx.update(note, metadata=metadata)


def error_detail(exc: Any) -> str:
    """What a model server's error answer says: its ``message``, else its body as JSON."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error, str):
            return error
        return json.dumps(error, default=str)[:500]
    if isinstance(body, str) and body:
        return body[:500]
    return str(getattr(exc, "message", exc))


#: why a turn whose message has no text is rejected (a file or data alone)
NO_TEXT = "This agent reads text; the message had none."


async def refused_without_text(ctx: Context) -> bool:
    """Reject the turn when its message has no text (files or data alone: a model would
    be asked with an empty prompt, as if the user had said nothing); True if it was."""
    if ctx.text:
        return False
    await ctx.reject(NO_TEXT)
    return True


async def working(ctx: Context) -> None:
    """Say the task is working (once: a turn that answers a question already is)."""
    if ctx.state is not TaskState.WORKING:
        await ctx.update()


#: between the text of two rounds of an answer (a round's text, then tool calls, then the next)
ROUNDS_APART = "\n\n"


class Answer:
    """The text a model says, as the task's ``answer`` artifact.

    A caller that sent the message with a streaming request gets it as chunks of
    one artifact, each sent when the next comes, so that the last is marked
    ``lastChunk``. Any other caller (a subscriber to a task sent otherwise too)
    gets it whole, one part, at the end: each chunk is a part of the stored
    artifact (a part per token made ``interlingua send`` print a line each).
    """

    def __init__(self, ctx: Context, name: str = "answer") -> None:
        self._ctx = ctx
        self._name = name
        self._streaming = ctx.request.streaming
        self._said: list[str] = []
        #: the latest chunk, sent when the next one comes, or as the last at the end
        self._held: str | None = None
        self._id: str | None = None

    @property
    def text(self) -> str:
        """All that was said so far."""
        return _joined("".join(self._said))

    @property
    def said(self) -> bool:
        """Something was said (``text`` is not empty)."""
        return bool(self._said)

    @property
    def sent(self) -> bool:
        """Some of it went out as chunks (the rest goes with ``close``)."""
        return self._id is not None or self._held is not None

    async def add(self, text: str) -> None:
        if not text:
            return
        self._said.append(text)  # (kept as it comes: an error keeps it)
        if not self._streaming:
            return
        held = self._held
        if held is None:
            self._held = text
        elif _HIGH_SURROGATE <= held[-1] <= _LAST_HIGH:
            self._held = held + text  # half of a character the next chunk completes
        else:
            await self._chunk(held, last=False)
            self._held = text

    async def close(self) -> None:
        """End the artifact: the held chunk goes as the last one, or, when nothing
        went out yet, what was said goes as one part (a failure keeps it so)."""
        if self._held is not None:
            held, self._held = self._held, None
            await self._chunk(held, last=True)
        elif self._id is None and self._said:
            await self._chunk("".join(self._said), last=True)

    async def complete(self) -> None:
        """Complete the task with the answer (in the same write, when it is one part)."""
        if self.sent:
            await self.close()
            await self._ctx.complete()
        elif self._said:
            await self._ctx.complete(artifact=self.text, name=self._name)
        else:
            await self._ctx.complete()

    async def _chunk(self, text: str, *, last: bool) -> None:
        self._id = await self._ctx.artifact(_joined(text), artifact_id=self._id,
                                            append=self._id is not None, last_chunk=last,
                                            name=self._name)


_HIGH_SURROGATE, _LAST_HIGH = "\ud800", "\udbff"


def _joined(text: str) -> str:
    """``text`` with the halves of characters a model server sent in two chunks (JSON's
    ``\\ud83d`` then ``\\ude00``) made one; a half alone becomes U+FFFD."""
    if text.isascii() or not any("\ud800" <= ch <= "\udfff" for ch in text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of a conversation, as chat models see it."""

    role: Literal["user", "assistant"]
    text: str


#: how a task that did not answer ends: its status message says why, to the user
_UNANSWERED = frozenset({TaskState.FAILED, TaskState.REJECTED, TaskState.CANCELED})


#: the metadata keys that mark an adapter's question (pydantic-ai's approvals): the
#: agent's turn ends with it, and the caller's answer comes next
QUESTION_KEYS = ("approval",)


def _agents(task: Task) -> set[str]:
    """The ids of the questions in ``task``'s history that the agent asked.

    Who wrote a message of the history is not recorded: the caller's messages and
    the agent's status messages share the list, each with the role its writer gave,
    and a caller may claim the agent's role (and its marks). So the history is read
    by turns: its first message is the caller's, and so is the one after each
    question that ended an agent's turn; the messages between are the agent's (no
    one else writes while its turn runs). Only a question found so, in the agent's
    turn, is the agent's: a caller's message that claims to be one is the user's.
    (A question asked without such a mark, by an executor of one's own around an
    adapter's, is not seen to end the agent's turn: it stays the user's, and a
    caller's answer to it that claims the mark would pass as the agent's.)
    """
    ours: set[str] = set()
    callers_turn = True
    for message in task.history:
        if callers_turn:
            callers_turn = False
        elif message.role is Role.AGENT and any(
                k in (message.metadata or {}) for k in QUESTION_KEYS):
            ours.add(message.message_id)
            callers_turn = True
    return ours


def _turns_of(task: Task, *, answered: bool) -> list[Turn]:
    turns: list[Turn] = []
    status = task.status
    # a failure's words ("the model server answered 500") are the server's, not the
    # model's: never handed to a model as what it said
    said_why = status.message.message_id \
        if status.state in _UNANSWERED and status.message is not None else None
    # The agent's words are its status message (no caller sets a status), its
    # questions (``_agents``) and its artifacts (below): every other message is the
    # user's, whatever its role, so that no caller can put words in the model's mouth.
    ours = _agents(task)
    if status.message is not None and status.message.role is Role.AGENT:
        ours.add(status.message.message_id)
    for message in task.history:
        text = get_text(message)
        if not text or (message.metadata or {}).get("progress") \
                or message.message_id == said_why:
            continue
        turns.append(Turn("assistant" if message.message_id in ours else "user", text))
    if answered:
        # An adapter's answer is the task's artifacts (the status message, if
        # any, is already in the history).
        answer = "".join(get_text(a, sep="") + "".join(
            msgspec.json.encode(d).decode() for d in get_data(a)) for a in task.artifacts)
        if answer:
            turns.append(Turn("assistant", answer))
    return turns


async def conversation(ctx: Context) -> list[Turn]:
    """The context's earlier tasks and this task so far, oldest first, as text turns.

    Read from the task store, so the history survives restarts and is the
    same on every replica; tasks of other owners are never included.
    """
    turns: list[Turn] = []
    for task in await ctx.context_tasks():
        turns.extend(_turns_of(task, answered=True))
    turns.extend(_turns_of(ctx.task, answered=False))
    if not turns or turns[-1].text != ctx.text:
        # the turn's own message, in case the history does not end with it yet
        if ctx.text:
            turns.append(Turn("user", ctx.text))
    return turns
