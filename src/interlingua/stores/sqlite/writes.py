"""The SQLite store's task writes: a new task with its first events, and appends."""

from __future__ import annotations

import enum
import sqlite3
from collections.abc import Sequence
from typing import Final

from ...core.errors import ConcurrentModification, LifecycleError, task_not_found
from ...core.generation import last_of
from ...core.model import (
    Event,
    Message,
    PushConfig,
    Task,
    TaskState,
    TaskStatus,
)
from .. import _projection
from ..base import (
    MessageExists,
    MessageRecord,
    Scope,
    TaskExists,
    other_content,
)
from . import listed as _listed
from . import ownership as _own
from .connection import _Connection, _transaction
from .outbox import _put_config, _queue
from .reads import _KEPT_GENERATION, _generation
from .rows import (
    _blob,
    _encode,
    _history,
    _history_column,
    _ids,
    _insert_events,
    _kind_filter,
    _pack,
    _row_events,
    advance_row,
)

#: an append's setting of the task's generation (its parameters: the batch's
#: ``last_of`` twice, the new version). A batch that moves it not leaves it, and
#: it stays current if it was (the right side reads the row before the update).
_GENERATION = (", generation = COALESCE(?, generation), generation_at = CASE WHEN"
               " ? IS NOT NULL OR generation_at = version THEN ? END")


class _LookUp(enum.Enum):
    """``_create``'s ``other`` when nobody looked the message id up yet."""

    LOOK_UP = enum.auto()


_LOOK_UP: Final = _LookUp.LOOK_UP


def _check_lease(conn: _Connection, lease: int | None) -> None:
    """Raise LeaseLost unless the lease ``lease`` is live (None: no lease to check).

    Read once a group: the group commit's writes under one lease share the
    read, in the one transaction. The row changes in it only by a write of the
    leases (``_in_transaction``), which forgets it; no other process writes
    while the transaction holds the write lock from its BEGIN IMMEDIATE.
    """
    if lease is not None and lease != conn.lease_seen:
        _own.check_lease(conn, lease)
        conn.lease_seen = lease


def _not_looked_up(conn: _Connection, scope: Scope, message_id: str | None,
                   digest: bytes, claim: bytes) -> MessageRecord | None:
    """Another message under the id of a new task's message that nobody looked up
    (content ids; None: none); ``MessageExists`` when that very message was answered
    with a bare message (``message_replies``, which the tasks' unique key does not see)."""
    if message_id is None:
        return None
    found = _own.find_message(conn, scope, message_id, claim)
    if found is not None and found.reply is not None and (not claim or found.digest == claim):
        raise MessageExists(message_id, found)
    return found if claim else None


def record_reply(conn: _Connection, scope: Scope, message_id: str, digest: bytes,
                 claim: bytes, reply: bytes, now: str) -> None:
    with _transaction(conn):
        _own.record_reply(conn, scope, message_id, digest, claim, reply, now)


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
    push_dialect: str,
    digest: bytes,
    claim: bytes,
    lease: int | None,
    other: MessageRecord | _LookUp | None,
) -> tuple[int, bool]:
    """``other``: another message under ``message_id`` the caller found (None: none
    found), or ``_LOOK_UP``: to be looked for here."""
    metadata = None if created.metadata is None else _encode(created.metadata)
    ids = _ids(created.id, created.context_id)
    kept = _history_column(history, created.id, created.context_id)
    page, split = (None, None) if kept is None else _listed.listed(
        created.id, created.context_id, status, metadata, history)
    with _transaction(conn):
        _check_lease(conn, lease)
        # another message under the id (content ids: its key is the id and the
        # digest): if this one is written, it is a new message, which is said.
        # Not looked for again when the send has just looked (a query fewer).
        if other is _LOOK_UP:
            other = _not_looked_up(conn, scope, message_id, digest, claim)
        try:
            cur = conn.kept(
                "INSERT INTO tasks (tenant, owner, id, context_id, state, status, stamp,"
                " metadata, dialect, message_id, version, created_at, updated_at, digest,"
                " lease, history, history_at, listed, listed_split, listed_at, claim,"
                " generation, generation_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, NULLIF(?, x''), ?, ?, ?, ?, ?, NULLIF(?, x''), ?,"
                " NULLIF(?, x''), ?, NULLIF(?, x''), ?, ?, ?, ?, ?)"
                " ON CONFLICT (tenant, owner, id) DO NOTHING",
                (
                    scope.tenant,
                    scope.owner,
                    created.id,
                    created.context_id,
                    status.state.value,
                    _blob(_pack(_encode(status), ids)),
                    stamp,
                    _blob(metadata or b""),
                    dialect,
                    message_id,
                    len(events),
                    now,
                    now,
                    _blob(digest),
                    lease,
                    _blob(kept or b""),
                    len(events),
                    _blob(page or b""),
                    split,
                    len(events),
                    _blob(claim),
                    last_of(events),
                    len(events),
                ),
            )
        except sqlite3.IntegrityError:
            # the only other unique key: another task of the same message
            assert message_id is not None
            raise _own.message_taken(conn, scope, message_id, digest) from None
        if cur.rowcount == 0:
            raise TaskExists(f"task {created.id} already exists")
        pk = cur.lastrowid
        assert pk is not None
        _insert_events(conn, pk, 1, events, ids)
        for config in push_configs:
            _put_config(conn, pk, created.id, config, push_dialect, now)
        queued = _queue(conn, pk, 1, events) if push_configs else False
    if other is not None:
        assert message_id is not None
        other_content(message_id, other.task_id)
    return len(events), queued


def _append(
    conn: _Connection,
    scope: Scope,
    task_id: str,
    expected_version: int | None,
    events: Sequence[Event],
    now: str,
    lease: int | None,
    message: tuple[str, bytes, bytes] | None,
    if_generation: int | None = None,
) -> tuple[int, bool]:
    with _transaction(conn):
        # The lease, when not yet read in this group, is read by the row's own
        # statement (a statement fewer); so is whether the task has a push
        # config, in the transaction, so one another process added before it
        # is seen: most tasks have none, and then no look at their configs follows.
        unread = None if lease == conn.lease_seen else lease
        row = conn.kept(
            "SELECT pk, context_id, state, version, history, history_at, metadata,"
            " CASE WHEN listed_at = version THEN listed END, listed_split,"
            " EXISTS (SELECT 1 FROM push_configs c WHERE c.task_pk = tasks.pk),"
            " ? IS NULL OR EXISTS (SELECT 1 FROM leases WHERE epoch = ?) FROM tasks"
            " WHERE tenant = ? AND owner = ? AND id = ?",
            (unread, unread, scope.tenant, scope.owner, task_id),
        ).fetchone()
        if row is None or not row[10]:
            _check_lease(conn, lease)  # raises LeaseLost, saying which
            raise task_not_found(task_id)
        if unread is not None:
            conn.lease_seen = unread
        pk, context_id, state, version, history, history_at, metadata, page, split, pushed, _ = row
        if version != expected_version:
            if expected_version is not None:
                raise ConcurrentModification(
                    f"task {task_id} is at version {version}, not {expected_version}"
                )
            # at the version it is at (no other writer while this transaction holds
            # the write lock)
            _projection.as_stored(task_id, TaskState(state), _stored_generation(
                conn, pk, task_id, context_id), events, if_generation)
        if not events:
            return int(version), False
        ids = _ids(task_id, context_id)
        status_changed, status, history, messages = advance_row(
            task_id, context_id, state, events, history, history_at == version)
        page, split = _relisted(task_id, context_id, status if status_changed else None,
                                metadata, history, messages, page, split)
        if message is not None:
            _own.remember_message(conn, scope, pk, message)
        _insert_events(conn, pk, version + 1, events, ids)
        new_version = version + len(events)
        generation = last_of(events)
        if status_changed:
            conn.kept(
                "UPDATE tasks SET version = ?, state = ?, status = ?, stamp = ?, updated_at = ?,"
                " lease = COALESCE(?, lease), history = NULLIF(?, x''), history_at = ?,"
                " listed = NULLIF(?, x''),"
                f" listed_split = ?, listed_at = ?{_GENERATION} WHERE pk = ?",
                (
                    new_version,
                    status.state.value,
                    _blob(_pack(_encode(status), ids)),
                    _projection.sort_stamp(status, now),
                    now,
                    lease,
                    _blob(history or b""),
                    None if history is None else new_version,
                    _blob(page or b""),
                    split,
                    None if page is None else new_version,
                    generation,
                    generation,
                    new_version,
                    pk,
                ),
            )
        else:
            conn.kept(
                "UPDATE tasks SET version = ?, updated_at = ?, lease = COALESCE(?, lease),"
                " history = NULLIF(?, x''), history_at = ?, listed = NULLIF(?, x''),"
                f" listed_split = ?, listed_at = ?{_GENERATION} WHERE pk = ?",
                (new_version, now, lease, _blob(history or b""),
                 None if history is None else new_version, _blob(page or b""), split,
                 None if page is None else new_version, generation, generation,
                 new_version, pk),
            )
        queued = _queue(conn, pk, version + 1, events) if pushed else False
    return int(new_version), queued


def _stored_generation(conn: _Connection, pk: int, task_id: str, context_id: str) -> int:
    """The task's generation as stored: its row's, else its log's."""
    kept = conn.execute(f"SELECT {_KEPT_GENERATION} FROM tasks WHERE pk = ?",
                        (pk,)).fetchone()[0]
    return int(kept) if kept is not None else _generation(conn, pk, _ids(task_id, context_id))


def _relisted(task_id: str, context_id: str, status: TaskStatus | None, metadata: bytes | None,
              history: bytes | None, messages: list[Message] | None, page: bytes | None,
              split: int | None) -> tuple[bytes | None, int | None]:
    """The task's listing after an append: ``status`` when it changed, ``messages``
    when the history did, ``page`` the listing before (None when not current).
    None when the history is not kept (the log has it), or the listing was not
    current and the status did not change (the row does not hold it whole)."""
    if history is None or page is None or split is None:
        if history is None or status is None:
            return None, None
        # (a task written before the listing was kept, or by a process that
        # does not keep it: made whole again at its next status)
        if messages is None:
            messages = _history(history, task_id, context_id)
        return _listed.listed(task_id, context_id, status, metadata, messages)
    if status is None and messages is None:  # most appends: artifact chunks
        return page, split
    head = page[:split] if status is None else _listed.head(task_id, context_id, status, metadata)
    tail = page[split:] if messages is None else _listed.tail(messages)
    return head + tail, len(head)


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
