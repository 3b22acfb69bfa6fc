"""The SQLite store's task writes: a new task with its first events, and appends."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ...core.errors import ConcurrentModification, LifecycleError, TaskNotFound
from ...core.model import (
    Event,
    Message,
    PushConfig,
    Task,
    TaskStatus,
)
from .. import _projection
from ..base import (
    Scope,
    TaskExists,
)
from . import ownership as _own
from .connection import _Connection, _transaction
from .outbox import _put_config, _queue
from .rows import (
    _encode,
    _history_column,
    _ids,
    _insert_events,
    _kind_filter,
    _pack,
    _row_events,
    advance_row,
)


def _create(
    conn: _Connection,
    scope: Scope,
    created: Task,
    status: TaskStatus,
    history: list[Message],
    stamp: str,
    events: Sequence[Event],
    dialect: str,
    message_id: str | None,
    now: str,
    push_configs: Sequence[PushConfig],
    digest: bytes,
    lease: int | None,
) -> tuple[int, bool]:
    metadata = None if created.metadata is None else _encode(created.metadata)
    ids = _ids(created.id, created.context_id)
    with _transaction(conn):
        _own.check_lease(conn, lease)
        try:
            cur = conn.execute(
                "INSERT INTO tasks (tenant, owner, id, context_id, state, status, stamp,"
                " metadata, dialect, message_id, version, created_at, updated_at, digest,"
                " lease, history, history_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (tenant, owner, id) DO NOTHING",
                (
                    scope.tenant,
                    scope.owner,
                    created.id,
                    created.context_id,
                    status.state.value,
                    _pack(_encode(status), ids),
                    stamp,
                    metadata,
                    dialect,
                    message_id,
                    len(events),
                    now,
                    now,
                    digest or None,
                    lease,
                    _history_column(history, created.id, created.context_id),
                    len(events),
                ),
            )
        except sqlite3.IntegrityError:
            # the only other unique key: another task of the same message id
            assert message_id is not None
            raise _own.message_taken(conn, scope, message_id) from None
        if cur.rowcount == 0:
            raise TaskExists(f"task {created.id} already exists")
        pk = cur.lastrowid
        assert pk is not None
        _insert_events(conn, pk, 1, events, ids)
        for config in push_configs:
            _put_config(conn, pk, created.id, config, dialect, now)
        queued = _queue(conn, pk, 1, events) if push_configs else False
    return len(events), queued


def _append(
    conn: _Connection,
    scope: Scope,
    task_id: str,
    expected_version: int,
    events: Sequence[Event],
    now: str,
    lease: int | None,
    message: tuple[str, bytes] | None,
) -> tuple[int, bool]:
    with _transaction(conn):
        _own.check_lease(conn, lease)
        row = conn.execute(
            "SELECT pk, context_id, state, version, history, history_at FROM tasks"
            " WHERE tenant = ? AND owner = ? AND id = ?",
            (scope.tenant, scope.owner, task_id),
        ).fetchone()
        if row is None:
            raise TaskNotFound(f"Task not found: {task_id}")
        pk, context_id, state, version, history, history_at = row
        if version != expected_version:
            raise ConcurrentModification(
                f"task {task_id} is at version {version}, not {expected_version}"
            )
        if not events:
            return int(version), False
        ids = _ids(task_id, context_id)
        status_changed, status, history = advance_row(
            task_id, context_id, state, events, history, history_at == version)
        if message is not None:
            _own.remember_message(conn, scope, pk, message)
        _insert_events(conn, pk, version + 1, events, ids)
        new_version = version + len(events)
        if status_changed:
            conn.execute(
                "UPDATE tasks SET version = ?, state = ?, status = ?, stamp = ?, updated_at = ?,"
                " lease = COALESCE(?, lease), history = ?, history_at = ? WHERE pk = ?",
                (
                    new_version,
                    status.state.value,
                    _pack(_encode(status), ids),
                    _projection.sort_stamp(status, now),
                    now,
                    lease,
                    history,
                    None if history is None else new_version,
                    pk,
                ),
            )
        else:
            conn.execute(
                "UPDATE tasks SET version = ?, updated_at = ?, lease = COALESCE(?, lease),"
                " history = ?, history_at = ? WHERE pk = ?",
                (new_version, now, lease, history, None if history is None else new_version, pk),
            )
        queued = _queue(conn, pk, version + 1, events)
    return int(new_version), queued


def _fill_histories(conn: _Connection, batch: int = 500) -> int:
    """Give the tasks of a database from before schema version 7 their history
    column, folded from their logs; how many were filled.

    A batch a transaction, each read and written under the write lock, so a
    writer in another process never finds a half-made column. Rows left NULL
    (a process stopped half way, a history too long to keep) are still read
    right: from their log.
    """
    filled, last = 0, 0
    while True:
        with _transaction(conn):
            rows = conn.execute(
                "SELECT pk, id, context_id FROM tasks WHERE history_at IS NULL AND pk > ?"
                " ORDER BY pk LIMIT ?",
                (last, batch),
            ).fetchall()
            for pk, task_id, context_id in rows:
                ids = _ids(task_id, context_id)
                log = conn.execute(
                    f"SELECT n, payload FROM events WHERE task_pk = ?{_kind_filter(True, False)}"
                    " ORDER BY seq",
                    (pk,),
                )
                try:
                    task = _projection.fold(
                        e for n, payload in log for e in _row_events(n, payload, ids))
                except (ValueError, StopIteration, LifecycleError):
                    # a log that does not fold (DecodeError is a ValueError) is
                    # left to be read as before, not made to stop the store opening
                    continue
                history = _history_column(task.history, task_id, context_id)
                if history is not None:
                    conn.execute("UPDATE tasks SET history = ?, history_at = version WHERE pk = ?",
                                 (history, pk))
                    filled += 1
        if len(rows) < batch:
            return filled
        last = rows[-1][0]
