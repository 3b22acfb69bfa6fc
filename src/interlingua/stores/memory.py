"""The in-process store (``memory://``): tests, demos, single short-lived processes.

Each task keeps its log and a live projection that every append folds into,
so reads cost a copy of the lists, not a replay. Readers get copies: a task a
caller holds never changes under it. Nothing awaits inside a method, so each
call is atomic with respect to the event loop.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from ..core.calls import ListTasks, ListTasksResult
from ..core.errors import ConcurrentModification, TaskNotFound
from ..core.lifecycle import TERMINAL_STATES
from ..core.model import Event, Task, TaskState
from . import _paging, _projection
from .base import Scope, StoredEvent, TaskExists, TaskRecord, UnfinishedTask

__all__ = ["MemoryStore"]

_UNFINISHED = frozenset({TaskState.SUBMITTED, TaskState.WORKING})


class _Entry:
    __slots__ = ("created_at", "dialect", "events", "message_id", "stamp", "task", "updated_at")

    def __init__(
        self,
        task: Task,
        events: list[StoredEvent],
        dialect: str,
        message_id: str | None,
        stamp: str,
        now: str,
    ) -> None:
        self.task = task  # the live projection: never handed out
        self.events = events
        self.dialect = dialect
        self.message_id = message_id
        self.stamp = stamp  # the listing key, see _projection.sort_stamp
        self.created_at = now
        self.updated_at = now

    @property
    def version(self) -> int:
        return len(self.events)


class MemoryStore:
    """Tasks and logs in dictionaries keyed by scope; gone when the process ends."""

    def __init__(self, url: str = "memory://") -> None:
        self.url = url
        self._tasks: dict[Scope, dict[str, _Entry]] = {}
        self._by_message: dict[tuple[Scope, str], str] = {}

    async def open(self) -> None:
        pass

    async def close(self) -> None:
        pass

    async def __aenter__(self) -> MemoryStore:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ writes

    async def create_task(
        self,
        scope: Scope,
        events: Sequence[Event],
        *,
        dialect: str,
        now: str,
        message_id: str | None = None,
    ) -> int:
        created = _projection.created_task(events)
        if self._entry(scope, created.id) is not None:
            raise TaskExists(f"task {created.id} already exists")
        task = _projection.fold(events)  # raises before anything is stored
        stored = [StoredEvent(seq, event) for seq, event in enumerate(events, 1)]
        stamp = _projection.sort_stamp(task.status, now)
        entry = _Entry(task, stored, dialect, message_id, stamp, now)
        self._tasks.setdefault(scope, {})[created.id] = entry
        if message_id is not None:
            self._by_message.setdefault((scope, message_id), created.id)
        return len(stored)

    async def append(
        self,
        scope: Scope,
        task_id: str,
        expected_version: int,
        events: Sequence[Event],
        *,
        now: str,
    ) -> int:
        entry = self._entry(scope, task_id)
        if entry is None:
            raise TaskNotFound(f"Task not found: {task_id}")
        if entry.version != expected_version:
            raise ConcurrentModification(
                f"task {task_id} is at version {entry.version}, not {expected_version}"
            )
        if not events:
            return entry.version
        task = entry.task
        # Validate the whole batch on a stand-in first: the live projection
        # must not be half-advanced when an event in the middle is refused.
        _projection.advance(_projection.probe(task.id, task.context_id, task.status), events)
        if _projection.advance(task, events):
            entry.stamp = _projection.sort_stamp(task.status, now)
        base = entry.version
        entry.events.extend(StoredEvent(base + i, e) for i, e in enumerate(events, 1))
        entry.updated_at = now
        return entry.version

    # ------------------------------------------------------------------- reads

    async def get_task(
        self,
        scope: Scope,
        task_id: str,
        *,
        history_length: int | None = None,
        include_artifacts: bool = True,
    ) -> TaskRecord | None:
        entry = self._entry(scope, task_id)
        if entry is None:
            return None
        return self._record(scope, entry, history_length, include_artifacts)

    async def list_tasks(self, scope: Scope, query: ListTasks) -> ListTasksResult:
        _paging.check_query(query)
        fingerprint = _paging.filter_fingerprint(scope, query)
        cursor = _paging.decode_token(query.page_token, fingerprint) if query.page_token else None
        after = query.status_timestamp_after
        matches = [
            e
            for e in self._tasks.get(scope, {}).values()
            if (query.context_id is None or e.task.context_id == query.context_id)
            and (query.status is None or e.task.status.state is query.status)
            and (after is None or e.stamp >= after)
        ]
        rest = matches if cursor is None else [e for e in matches if (e.stamp, e.task.id) < cursor]
        page = heapq.nlargest(query.page_size + 1, rest, key=lambda e: (e.stamp, e.task.id))
        token = ""
        if len(page) > query.page_size:
            del page[query.page_size :]
            last = page[-1]
            token = _paging.encode_token(fingerprint, _paging.Cursor(last.stamp, last.task.id))
        tasks = [
            _projection.view(e.task, query.history_length, query.include_artifacts) for e in page
        ]
        return ListTasksResult(
            tasks=tasks, next_page_token=token, page_size=len(tasks), total_size=len(matches)
        )

    async def read_events(
        self, scope: Scope, task_id: str, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        entry = self._entry(scope, task_id)
        if entry is None:
            raise TaskNotFound(f"Task not found: {task_id}")
        start = max(after, 0)  # seq n sits at index n - 1
        stop = None if limit is None else start + max(limit, 0)
        return entry.events[start:stop]

    async def task_for_message(self, scope: Scope, message_id: str) -> str | None:
        return self._by_message.get((scope, message_id))

    async def unfinished_tasks(self) -> list[UnfinishedTask]:
        return [
            UnfinishedTask(scope, tid, e.task.context_id, e.task.status.state, e.version)
            for scope, tasks in self._tasks.items()
            for tid, e in tasks.items()
            if e.task.status.state in _UNFINISHED
        ]

    async def purge_finished(self, before: str) -> int:
        count = 0
        for scope, tasks in list(self._tasks.items()):
            doomed = [
                tid
                for tid, e in tasks.items()
                if e.task.status.state in TERMINAL_STATES and e.updated_at < before
            ]
            for tid in doomed:
                entry = tasks.pop(tid)
                if entry.message_id is not None:
                    key = (scope, entry.message_id)
                    if self._by_message.get(key) == tid:
                        del self._by_message[key]
            count += len(doomed)
            if not tasks:
                del self._tasks[scope]
        return count

    # ----------------------------------------------------------------- helpers

    def _entry(self, scope: Scope, task_id: str) -> _Entry | None:
        tasks = self._tasks.get(scope)
        return None if tasks is None else tasks.get(task_id)

    @staticmethod
    def _record(
        scope: Scope, entry: _Entry, history_length: int | None, include_artifacts: bool
    ) -> TaskRecord:
        return TaskRecord(
            task=_projection.view(entry.task, history_length, include_artifacts),
            scope=scope,
            dialect=entry.dialect,
            version=entry.version,
            created_at=entry.created_at,
            updated_at=entry.updated_at,
        )
