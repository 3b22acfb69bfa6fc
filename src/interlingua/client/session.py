"""A conversation with one remote agent: ``client.session()``.

A ``Session`` carries what a conversation needs between calls: the context id
(every message of the session is sent in one context, the first the agent
gives) and the open task. A task that waits for input (``input-required``,
``auth-required``) is continued by the next ``send``; one that has ended leaves
the next ``send`` to start a new task in the same context; one still running
must be waited for (or canceled) first, and a ``send`` says so instead of
sending.

``start`` runs a turn in the background: the message is sent non-blocking and a
``Run`` is returned at once, which ``poll()`` reads again (``GetTask``) and
``wait()`` (or ``await run``) polls until the task ends or waits for input::

    async with Client(url) as client:
        chat = client.session()
        task = await chat.send("I'd like to book a flight.")   # input-required
        task = await chat.send("From JFK to LHR")              # the same task, completed
        run = await chat.start("And a hotel, please.")         # a new task, same context
        ...                                                    # do other work
        task = await run                                       # polled until it returns
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Generator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from ..core.lifecycle import INTERRUPTED_STATES, RETURN_STATES
from ..core.model import (
    TERMINAL_STATES,
    ArtifactUpdate,
    Message,
    Part,
    StatusUpdate,
    Task,
    TaskState,
    TaskStatus,
)
from .errors import ClientError

if TYPE_CHECKING:
    from .stream import StreamEvent

__all__ = ["Run", "Session"]

Content = Message | str | Part | Sequence[Part]


class Talks(Protocol):
    """What a session asks of its client (``Client``, or any with these calls, as
    ``Client`` takes them)."""

    @property
    def send(self) -> Callable[..., Awaitable[Task | Message]]: ...

    @property
    def stream(self) -> Callable[..., AsyncIterator[StreamEvent]]: ...

    @property
    def get_task(self) -> Callable[..., Awaitable[Task]]: ...

    @property
    def cancel(self) -> Callable[..., Awaitable[Task]]: ...


class Session:
    """A conversation with the agent of ``client``: its ``context_id`` (None until the
    agent gives one, or the one given) and its open ``task`` (the last task seen)."""

    def __init__(self, client: Talks, *, context_id: str | None = None,
                 task: Task | None = None) -> None:
        self.client = client
        self.context_id = context_id if context_id is not None else (
            task.context_id if task is not None else None)
        self.task = task

    @property
    def waiting(self) -> bool:
        """Whether the open task waits for the user's answer (the next ``send`` gives it)."""
        return self.task is not None and self.task.status.state in INTERRUPTED_STATES

    def _continuing(self) -> str | None:
        """The task the next message continues: the open task if it waits for input;
        None when there is none or it ended; ``ClientError`` while it still runs."""
        task = self.task
        if task is None or task.status.state in TERMINAL_STATES:
            return None
        if task.status.state in INTERRUPTED_STATES:
            return task.id
        raise ClientError(f"task {task.id} is still {task.status.state.value}: wait for it "
                          "(run.wait()) or cancel it (session.cancel()) before sending more")

    def _take(self, answer: Task | Message) -> None:
        if answer.context_id:
            self.context_id = answer.context_id
        if isinstance(answer, Task):
            self.task = answer

    async def send(self, message_or_text: Content, **options: Any) -> Task | Message:
        """``Client.send`` in this conversation: its context, and the open task if it
        waits for input. ``options`` as ``Client.send``'s (``blocking``, ``data`` ...)."""
        task_id = self._continuing()
        answer = await self.client.send(message_or_text, task_id=task_id,
                                        context_id=self.context_id, **options)
        self._take(answer)
        return answer

    async def stream(self, message_or_text: Content, **options: Any) -> AsyncGenerator[
            StreamEvent, None]:
        """``Client.stream`` in this conversation; the open task follows the events."""
        task_id = self._continuing()
        async for event in self.client.stream(message_or_text, task_id=task_id,
                                              context_id=self.context_id, **options):
            item = event.item
            if isinstance(item, (Task, Message)):
                self._take(item)
            elif isinstance(item, StatusUpdate | ArtifactUpdate):
                self._follow(item)
            yield event

    def _follow(self, item: StatusUpdate | ArtifactUpdate) -> None:
        """The open task after an update: a stream that opens with one (v0.1's, the
        mesh's, which send no task first) makes its task the open one, so that the
        next message continues it as it would after ``send``."""
        if item.context_id:
            self.context_id = item.context_id
        task = self.task
        if task is None or task.id != item.task_id:
            status = item.status if isinstance(item, StatusUpdate) \
                else TaskStatus(state=TaskState.WORKING)
            self.task = Task(id=item.task_id, context_id=item.context_id, status=status)
        elif isinstance(item, StatusUpdate):
            self.task = msgspec.structs.replace(task, status=item.status)

    async def start(self, message_or_text: Content, *, poll_interval: float = 0.5,
                    **options: Any) -> Run:
        """Send without waiting (``blocking=False``): a ``Run`` to poll or await."""
        answer = await self.send(message_or_text, blocking=False, **options)
        return Run(self, answer, poll_interval)

    async def cancel(self) -> Task | None:
        """Cancel the open task, if it has not ended (None if there is none)."""
        task = self.task
        if task is None or task.status.state in TERMINAL_STATES:
            return None
        self.task = await self.client.cancel(task.id)
        return self.task


class Run:
    """A turn running in the background (``Session.start``). ``answer`` is the latest
    answer read; ``done`` once it ended or waits for input (or was a bare message).
    ``poll()`` reads the task again; ``wait(timeout)``, or ``await run``, polls every
    ``poll_interval`` seconds until done."""

    def __init__(self, session: Session, answer: Task | Message, poll_interval: float) -> None:
        self.session = session
        self.answer = answer
        self.poll_interval = poll_interval

    @property
    def task_id(self) -> str | None:
        return self.answer.id if isinstance(self.answer, Task) else None

    @property
    def done(self) -> bool:
        answer = self.answer
        return not isinstance(answer, Task) or answer.status.state in RETURN_STATES

    async def poll(self) -> Task | Message:
        """The task as it stands now (``GetTask``); the session's open task too."""
        if isinstance(self.answer, Task) and not self.done:
            task = await self.session.client.get_task(self.answer.id)
            self.answer = task
            session = self.session
            if session.task is None or session.task.id == task.id:
                session._take(task)
        return self.answer

    async def wait(self, timeout: float | None = None) -> Task | Message:
        """Poll until done; ``TimeoutError`` after ``timeout`` seconds (the task runs on)."""
        async with asyncio.timeout(timeout):
            while not self.done:
                await asyncio.sleep(self.poll_interval)
                await self.poll()
        return self.answer

    def __await__(self) -> Generator[Any, None, Task | Message]:
        return self.wait().__await__()
