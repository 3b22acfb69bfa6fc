"""The context an executor gets for one turn of a task."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Coroutine, Mapping, Sequence
from typing import Any, Protocol

import msgspec

from ..core.errors import LifecycleError
from ..core.lifecycle import RETURN_STATES
from ..core.model import (
    Artifact,
    ArtifactUpdate,
    Event,
    Message,
    Metadata,
    Role,
    StatusUpdate,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)
from ..core.output import InvalidOutput, message_fault, output_fault, text_fault
from ..core.parts import as_parts, get_text, new_id
from ..signals import LazyEvent
from ..stores.base import Scope

__all__ = ["Context", "RequestInfo", "TaskCanceled"]


class TaskCanceled(Exception):
    """Raised in an executor that tries to emit after its task was canceled."""


class RequestInfo:
    """Who asked and how: the principal, tenant, headers and requested extensions,
    the dialect and the binding (``jsonrpc``, ``rest``, ``grpc``, ``mqtt``; empty for
    a call made in process)."""

    __slots__ = ("binding", "dialect", "extensions", "headers", "minor", "owner", "principal",
                 "streaming", "tenant")

    def __init__(
        self,
        principal: str = "",
        tenant: str = "",
        headers: Mapping[str, str] | None = None,
        extensions: Sequence[str] = (),
        dialect: str = "1.0",
        streaming: bool = False,
        owner: str | None = None,
        binding: str = "",
        minor: str | None = None,
    ) -> None:
        self.principal = principal
        #: the key the caller's tasks are stored under (``Principal.owner``)
        self.owner = principal if owner is None else owner
        #: the caller follows the task as a stream (so chunking the answer pays off)
        self.streaming = streaming
        self.tenant = tenant
        # ``is None``, not truth: a request's headers would be asked their length
        self.headers: Mapping[str, str] = headers if headers is not None else {}
        #: the extensions the caller asked for (a tuple: most ask for none, and
        #: the empty one is shared)
        self.extensions: tuple[str, ...] = tuple(extensions)
        self.dialect = dialect
        #: the later minor version of ``dialect`` the caller asked for (A2A 1.1,
        #: draft: "1.1"), else None: what a push config it registers is fed in
        self.minor = minor
        self.binding = binding

    @property
    def scope(self) -> Scope:
        """Where the caller's tasks are stored: its tenant and owner."""
        if not self.tenant and not self.owner:
            return _ANONYMOUS  # shared: every running task holds its scope
        return Scope(tenant=self.tenant, owner=self.owner)


#: the scope of every call from no tenant by no authenticated principal
_ANONYMOUS = Scope()
#: read by every turn that completes: a plain name, not the enum member's look-up
#: through its metaclass's hook (Python 3.11)
_COMPLETED = TaskState.COMPLETED


class _Sink(Protocol):
    task: Task

    @property
    def max_nesting(self) -> int:
        """The levels the agent's data and metadata may nest (core/output.py)."""

    def emit(self, events: Sequence[Event], *, wait: bool = True) -> Awaitable[None]: ...

    def queue(self, artifact: Artifact, append: bool,
              last_chunk: bool) -> Awaitable[None] | None: ...

    async def reply(self, message: Message) -> None: ...

    async def context_tasks(self) -> list[Task]: ...

    def now(self) -> str: ...


class Context:
    """One turn of a task, as its executor sees it.

    ``message`` is the message that started this turn (the first message, or
    the user's answer after ``input-required``); ``task`` is the task so far.
    Every emitting method is committed to the task's log before it returns.
    An executor that asked for input returns; the user's answer starts a new
    turn with a new context.
    """

    #: the v0.1 index (position in the task) of each artifact this turn began, and
    #: the least index its next new one takes: those still queued are not in the
    #: task yet, so its length alone would give two of them one index (class
    #: attributes until the turn adds one: no cost for a turn that adds none)
    _indexes: dict[str, int] | None = None
    _next_index = 0

    def __init__(
        self,
        sink: _Sink,
        message: Message,
        request: RequestInfo,
        deadline: float | None = None,
        cancelled: asyncio.Event | None = None,
        inbox: asyncio.Queue[Message] | None = None,
    ) -> None:
        self._sink = sink
        self.message = message
        self.request = request
        #: loop time (``asyncio.get_running_loop().time()``) by which the turn must end
        self.deadline = deadline
        self.cancelled = cancelled or LazyEvent()
        #: True once this turn completed, failed, was rejected, asked for input or
        #: replied (an attribute, not a property: every turn's end reads it)
        self.finished = False
        self._inbox = inbox
        #: artifact ids this turn has emitted, by name, and the last one
        self._emitted: dict[str | None, str] = {}
        self._emitted_last: str | None = None
        #: the id ``artifact`` handed back last for a chunk it only queued, finished
        self._queued: asyncio.Future[str] | None = None
        self._queued_id: str | None = None

    # ----------------------------------------------------------------- reading

    @property
    def task(self) -> Task:
        return self._sink.task

    @property
    def task_id(self) -> str:
        return self._sink.task.id

    @property
    def context_id(self) -> str:
        return self._sink.task.context_id

    @property
    def text(self) -> str:
        """The text parts of ``message``, joined by newlines."""
        parts = self.message.parts
        if len(parts) == 1 and type(parts[0]) is TextPart:  # most messages: no call more
            return parts[0].text
        return get_text(self.message)

    @property
    def principal(self) -> str:
        return self.request.principal

    @property
    def headers(self) -> Mapping[str, str]:
        return self.request.headers

    @property
    def extensions(self) -> list[str]:
        return list(self.request.extensions)

    @property
    def state(self) -> TaskState:
        return self._sink.task.status.state

    async def context_tasks(self) -> list[Task]:
        """The earlier tasks of this task's context (same owner), oldest first."""
        return await self._sink.context_tasks()

    # ------------------------------------------------ messages while working

    def _messages(self) -> asyncio.Queue[Message]:
        if self._inbox is None:
            raise RuntimeError("this agent takes no messages while it works: create it with "
                               "Agent(..., accepts_messages_while_working=True)")
        return self._inbox

    async def next_message(self, timeout: float | None = None) -> Message | None:
        """The next message sent to this task while it works (already in its history);
        None if none came within ``timeout`` seconds."""
        inbox = self._messages()
        if timeout is None:
            return await inbox.get()
        try:
            async with asyncio.timeout(timeout):
                return await inbox.get()
        except TimeoutError:
            return None

    async def incoming(self) -> AsyncIterator[Message]:
        """The messages sent to this task while it works, as they come (``async for``)."""
        inbox = self._messages()
        while True:
            yield await inbox.get()

    # ---------------------------------------------------------------- emitting

    def _status(self, state: TaskState, content: Any, metadata: Metadata | None) -> StatusUpdate:
        task = self._sink.task
        message = None
        if content is not None:
            message = self._own(content, task.id) if isinstance(content, Message) else Message(
                message_id=new_id(),
                role=Role.AGENT,
                parts=as_parts(content),
                task_id=task.id,
                context_id=task.context_id,
            )
        update = StatusUpdate(
            task_id=task.id,
            context_id=task.context_id,
            status=TaskStatus(state=state, message=message, timestamp=self._sink.now()),
            metadata=metadata,
        )
        if message is not None or metadata is not None:
            self._check([update])
        return update

    def _check(self, events: Sequence[Event]) -> None:
        """Raise ``InvalidOutput`` for what no store or binding could carry of ``events``
        (core/output.py). Every event an agent makes comes this way, but the plain
        ASCII text the quick paths check themselves."""
        fault = output_fault(events, self._sink.max_nesting)
        if fault is not None:
            raise InvalidOutput(fault)

    async def update(
        self, content: Any = None, *, state: TaskState = TaskState.WORKING,
        metadata: Metadata | None = None,
    ) -> None:
        """Report progress: a status update (``working`` by default) with an optional message."""
        if self.finished:
            # after asking for input the task waits for the user: progress would set it
            # working again with nothing running (the lifecycle lets a new turn do so)
            raise LifecycleError(
                f"task {self.task_id}: this turn has ended ({self.state.value}); an "
                "agent reports nothing after it completes, fails or asks for input")
        # Progress need not be waited for; a final or interrupting state is.
        final = state in RETURN_STATES
        await self._sink.emit([self._status(state, content, metadata)], wait=final)

    working = update

    def artifact(
        self,
        content: Any,
        *,
        artifact_id: str | None = None,
        name: str | None = None,
        description: str | None = None,
        append: bool = False,
        last_chunk: bool = False,
        metadata: Metadata | None = None,
    ) -> Awaitable[str]:
        """Add an artifact, or a chunk of one (``append=True``); await it for the
        artifact id.

        An appended chunk goes to the artifact ``artifact_id`` names or, without
        one, to the task's last artifact named ``name`` (its last artifact, when
        ``name`` is None); when there is none yet, the chunk starts it.
        """
        # plain text (a stream's chunks): checked here, the rest by _check
        if type(content) is str and metadata is None and description is None:
            plain = True
            if not content.isascii() or (name is not None and not name.isascii()):
                _check_texts((content, "artifact.parts[0].text"), (name, "artifact.name"))
        else:
            plain = False
        sink = self._sink
        task = sink.task
        if append and artifact_id is None:
            # this turn's chunks may still be queued, not yet in the task: its own first
            artifact_id = (self._emitted.get(name) if name is not None else self._emitted_last) \
                or _last_named(task, name)
            # nothing to continue: this chunk is the first of a new artifact
            append = artifact_id is not None
        aid = artifact_id or new_id()
        # (the last one answers for no name: no entry of None is read)
        if name is not None:
            self._emitted[name] = aid
        self._emitted_last = aid
        # The chunks of a streaming agent come through here: plain text and the
        # artifact added last are the quick cases, and the fields go by position.
        arts = task.artifacts
        if arts and arts[-1].artifact_id == aid:
            index = len(arts) - 1  # the artifact a stream's chunks continue: its id kept
        else:
            index = self._index_of(arts, aid)
            if plain and not aid.isascii():  # an id the agent gave (new_id's are ASCII)
                _check_texts((aid, "artifact.artifact_id"))
        if plain:
            # the sink makes the chunk (with its generation) and queues it:
            # emit(wait=False), with no coroutine when queued
            waiting = sink.queue(Artifact(aid, [TextPart(content)], name, None, None,
                                          None, index), append, last_chunk)
        else:  # data, metadata, a description
            events = [ArtifactUpdate(task.id, task.context_id, Artifact(
                aid, as_parts(content), name, description, metadata, None, index),
                append, last_chunk)]
            self._check(events)
            waiting = sink.emit(events, wait=False)
        if waiting is not None:
            return self._written(waiting, aid)
        # Only queued (the bulk of a stream's chunks): no coroutine made and run, a
        # finished future of the id instead, one for a run of chunks of one artifact.
        done = self._queued
        if done is None or self._queued_id is not aid:
            done = self._queued = asyncio.get_running_loop().create_future()
            done.set_result(aid)
            self._queued_id = aid
        return done

    def _index_of(self, arts: list[Artifact], aid: str) -> int:
        """The v0.1 index of artifact ``aid``: the one this turn gave it, else its
        position in the task (``arts``), else (a new one) the next."""
        indexes = self._indexes
        if indexes is None:
            indexes = self._indexes = {}
        else:
            index = indexes.get(aid)
            if index is not None:
                return index
        for i, a in enumerate(arts):
            if a.artifact_id == aid:
                return i
        index = indexes[aid] = max(len(arts), self._next_index)
        self._next_index = index + 1
        return index

    @staticmethod
    async def _written(waiting: Awaitable[None], aid: str) -> str:
        await waiting
        return aid

    async def _end(self, state: TaskState, content: Any, artifact: Any, name: str | None,
                   metadata: Metadata | None) -> None:
        events: list[Event] = []
        task = self._sink.task
        if artifact is not None:
            plain = type(artifact) is str
            events.append(
                ArtifactUpdate(
                    task_id=task.id,
                    context_id=task.context_id,
                    # a new id is no artifact's yet: this one goes last, after
                    # those of the turn still queued
                    artifact=Artifact(artifact_id=new_id(), parts=[TextPart(artifact)]
                                      if plain else as_parts(artifact), name=name,
                                      index=max(len(task.artifacts), self._next_index)),
                    last_chunk=True,
                )
            )
            # plain ASCII text (every unary answer of a plain function's): no call
            if not (plain and artifact.isascii() and name is None):
                self._check(events)
        events.append(self._status(state, content, metadata))
        # One transaction for the final artifact and the final status.
        await self._sink.emit(events)
        self.finished = True

    # The ends below hand back _end's coroutine (await it): no frame of their own,
    # and every turn ends through one of them.

    def complete(
        self, content: Any = None, *, artifact: Any = None, name: str | None = None,
        metadata: Metadata | None = None,
    ) -> Coroutine[Any, Any, None]:
        """Finish the task: an optional status message and an optional last artifact."""
        return self._end(_COMPLETED, content, artifact, name, metadata)

    def fail(self, content: Any = None, *, metadata: Metadata | None = None
             ) -> Coroutine[Any, Any, None]:
        return self._end(TaskState.FAILED, content, None, None, metadata)

    def reject(self, content: Any = None, *, metadata: Metadata | None = None
               ) -> Coroutine[Any, Any, None]:
        return self._end(TaskState.REJECTED, content, None, None, metadata)

    def require_input(self, content: Any, *, metadata: Metadata | None = None
                      ) -> Coroutine[Any, Any, None]:
        """Ask the user for more input (``input-required``); then return from the executor."""
        return self._end(TaskState.INPUT_REQUIRED, content, None, None, metadata)

    def require_auth(self, content: Any, *, metadata: Metadata | None = None
                     ) -> Coroutine[Any, Any, None]:
        """Ask for a credential (``auth-required``); then return from the executor."""
        return self._end(TaskState.AUTH_REQUIRED, content, None, None, metadata)

    async def reply(self, content: Any) -> None:
        """Answer with a bare message instead of a task.

        Allowed as the first and only thing a new task's executor does, before
        the task was written: within the server's grace
        (``EngineConfig.submit_grace``), or at any time for an agent made with
        ``replies_with_messages=True``. Otherwise (later, after the grace, or
        when the caller needs a task, e.g. a non-blocking send) the message
        becomes the completed task's status message.
        """
        task = self._sink.task
        message = self._own(content, None) if isinstance(content, Message) else Message(
            message_id=new_id(),
            role=Role.AGENT,
            parts=as_parts(content),
            context_id=task.context_id,
        )
        fault = message_fault(message, self._sink.max_nesting, "reply")
        if fault is not None:
            raise InvalidOutput(fault)
        await self._sink.reply(message)
        self.finished = True


    def _own(self, message: Message, task_id: str | None) -> Message:
        """A ``Message`` the agent gives, as the agent's in this task: its role the
        agent's, its context and task this task's (``task_id``; None for a bare
        reply, whose task is never written), and an id of its own when it is the
        caller's message handed back. (It went out as given: a "user" message, or one
        naming another context or task, as the agent's answer.)"""
        context_id = self._sink.task.context_id
        if (message.role is Role.AGENT and message.context_id == context_id
                and message.task_id == task_id
                and message.message_id != self.message.message_id):
            return message
        mid = message.message_id
        return msgspec.structs.replace(
            message, role=Role.AGENT, context_id=context_id, task_id=task_id,
            message_id=new_id() if mid == self.message.message_id else mid)


def _check_texts(*texts: tuple[str | None, str]) -> None:
    """A chunk's texts (each with the member it is), as ``_check`` would (core/output.py)."""
    for value, where in texts:
        fault = None if value is None else text_fault(value, where)
        if fault is not None:
            raise InvalidOutput(fault)


def _last_named(task: Task, name: str | None) -> str | None:
    """The id of the task's last artifact named ``name`` (the last, for None)."""
    for art in reversed(task.artifacts):
        if name is None or art.name == name:
            return art.artifact_id
    return None
