"""The store: durable tasks and their event logs, scoped by tenant and owner.

Every call takes a ``Scope``: a task id (client-chosen in v0.1) or a repeated
messageId is only ever looked up within its tenant and owner, so two owners
never see or collide with each other's tasks.

A task row is the projection of its log. ``append`` writes the new events and
the projection's new status in one transaction, stating the version (the last
sequence number) it read: a stale write raises ``ConcurrentModification``
instead of overwriting, so a late ``completed`` never overwrites ``canceled``
written by another request or replica.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import msgspec

from ..core.calls import ListTasks, ListTasksResult
from ..core.model import Event, Task, TaskState

__all__ = [
    "Scope",
    "Store",
    "StoredEvent",
    "TaskExists",
    "TaskRecord",
    "UnfinishedTask",
]


class Scope(msgspec.Struct, frozen=True):
    """Who a task belongs to. ``owner`` is the authenticated principal ("" = anonymous)."""

    tenant: str = ""
    owner: str = ""


class TaskRecord(msgspec.Struct):
    task: Task
    scope: Scope
    #: the dialect the task was created in ("1.0", "0.3", "0.1", "sam", "tutorial")
    dialect: str
    #: the sequence number of the last event in the task's log
    version: int
    created_at: str
    updated_at: str


class StoredEvent(msgspec.Struct):
    seq: int
    event: Event
    #: per-dialect encodings of the event, filled by the first reader that
    #: encodes it so that every other reader of that dialect reuses the bytes
    encoded: dict[str, bytes] | None = None


class UnfinishedTask(msgspec.Struct):
    scope: Scope
    task_id: str
    context_id: str
    state: TaskState
    version: int


class TaskExists(Exception):
    """``create_task`` for an id that the scope already has."""


class Store(Protocol):
    """Persistence of tasks and their logs. Implementations: memory, sqlite."""

    url: str

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def create_task(
        self,
        scope: Scope,
        events: Sequence[Event],
        *,
        dialect: str,
        now: str,
        message_id: str | None = None,
    ) -> int:
        """Create a task from its first events (``events[0]`` is ``TaskCreated``).

        The events get sequence numbers 1..n; returns n, the task's version.
        ``message_id`` (the message that created it) is remembered for
        idempotent sends. Raises ``TaskExists`` if the scope has the id.
        """
        ...

    async def append(
        self,
        scope: Scope,
        task_id: str,
        expected_version: int,
        events: Sequence[Event],
        *,
        now: str,
    ) -> int:
        """Append events in one transaction; returns the new version.

        Raises ``ConcurrentModification`` if the task's version is not
        ``expected_version``, ``TaskNotFound`` if the scope has no such task.
        """
        ...

    async def get_task(
        self,
        scope: Scope,
        task_id: str,
        *,
        history_length: int | None = None,
        include_artifacts: bool = True,
    ) -> TaskRecord | None:
        """The task's projection; ``history_length`` keeps the last N messages
        (0 = none, None = all)."""
        ...

    async def list_tasks(self, scope: Scope, query: ListTasks) -> ListTasksResult:
        """Tasks of the scope, most recently updated first (status timestamp,
        then id), with an opaque keyset ``page_token``. Raises ``InvalidParams``
        for a page token it did not make or made for another filter.
        ``status_timestamp_after`` is inclusive and in canonical form."""
        ...

    async def read_events(
        self, scope: Scope, task_id: str, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        """Events with ``seq > after``, in order; ``TaskNotFound`` if the
        scope has no such task."""
        ...

    async def task_for_message(self, scope: Scope, message_id: str) -> str | None:
        """The id of the task that ``message_id`` created in this scope, if any."""
        ...

    async def unfinished_tasks(self) -> list[UnfinishedTask]:
        """Tasks of every scope in ``submitted`` or ``working`` (for start-up recovery)."""
        ...

    async def purge_finished(self, before: str) -> int:
        """Delete tasks in a terminal state last updated before ``before``
        (with their logs); returns how many."""
        ...
