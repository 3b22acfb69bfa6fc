"""The SQLite store's reads: a task folded from its rows, listings, the log."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

import msgspec

from ...core.calls import ListTasks, ListTasksResult
from ...core.errors import task_not_found
from ...core.model import (
    Task,
    TaskState,
)
from .. import _paging, _projection
from ..base import (
    Scope,
    StoredEvent,
    TaskRecord,
    UnfinishedTask,
)
from .connection import _transaction
from .rows import (
    NUMBERED_KINDS,
    _Ids,
    _ids,
    _kind_filter,
    _row_events,
    _row_task,
    row_generation,
)
from .schema import _TERMINAL_SQL, _UNFINISHED_SQL


def _logs(
    conn: sqlite3.Connection, pks: list[int], history: bool, artifacts: bool
) -> dict[int, list[tuple[int, bytes]]]:
    """The rows a fold of each of these tasks needs, by task."""
    logs: dict[int, list[tuple[int, bytes]]] = {pk: [] for pk in pks}
    if pks:
        marks = ", ".join("?" * len(pks))
        cur = conn.execute(
            f"SELECT task_pk, n, payload FROM events WHERE task_pk IN ({marks})"
            f"{_kind_filter(history, artifacts)} ORDER BY task_pk, seq",
            pks,
        )
        for pk, n, payload in cur:
            logs[pk].append((n, payload))
    return logs


#: the task's generation as its row keeps it (NULL: not kept, or not current)
_KEPT_GENERATION = "CASE WHEN generation_at = version THEN generation END"

#: the row of the log holding a task's generation (rows.row_generation), for a
#: task whose row does not keep it: a walk back from the end of its log, which
#: nearly always stops at the last row
_LAST_NUMBERED = (f"SELECT kind, n, payload FROM events WHERE task_pk = ?"
                  f" AND kind IN {NUMBERED_KINDS} ORDER BY seq DESC LIMIT 1")


def _generation(conn: sqlite3.Connection, pk: int, ids: _Ids) -> int:
    """The task's generation, for a read that folds no artifact event."""
    row = conn.execute(_LAST_NUMBERED, (pk,)).fetchone()
    return 0 if row is None else row_generation(row, ids)


def _fold(
    rows: Iterable[tuple[int, bytes]],
    ids: _Ids,
    history_length: int | None,
    include_artifacts: bool,
) -> Task:
    task = _projection.fold(e for n, payload in rows for e in _row_events(n, payload, ids))
    # The fold made fresh objects, so trimming in place shares nothing.
    task.history = _projection.trim_history(task.history, history_length)
    if not include_artifacts:
        task.artifacts = []
    return task


def _get(
    conn: sqlite3.Connection,
    scope: Scope,
    task_id: str,
    history_length: int | None,
    include_artifacts: bool,
) -> TaskRecord | None:
    with _transaction(conn, "BEGIN"):
        row = conn.execute(
            "SELECT pk, context_id, status, metadata, dialect, version, created_at, updated_at,"
            f" {_KEPT_GENERATION} FROM tasks WHERE tenant = ? AND owner = ? AND id = ?",
            (scope.tenant, scope.owner, task_id),
        ).fetchone()
        if row is None:
            return None
        pk, context_id, status, metadata, dialect, version, created_at, updated_at, kept = row
        if history_length == 0 and not include_artifacts:
            task = _row_task(task_id, context_id, status, metadata)
        else:
            kinds = _kind_filter(history_length != 0, include_artifacts)
            cur = conn.execute(
                f"SELECT n, payload FROM events WHERE task_pk = ?{kinds} ORDER BY seq", (pk,)
            )
            task = _fold(cur, _ids(task_id, context_id), history_length, include_artifacts)
        if not include_artifacts:  # the fold saw no artifact event, or none at all
            task.generation = kept if kept is not None else max(
                task.generation, _generation(conn, pk, _ids(task_id, context_id)))
    return TaskRecord(
        task=task,
        scope=scope,
        dialect=dialect,
        version=version,
        created_at=created_at,
        updated_at=updated_at,
    )


def _list(
    conn: sqlite3.Connection,
    scope: Scope,
    query: ListTasks,
    fingerprint: bytes,
    cursor: _paging.Cursor | None,
) -> ListTasksResult:
    where = "tenant = ? AND owner = ?"
    params: list[object] = [scope.tenant, scope.owner]
    if query.context_id is not None:
        where += " AND context_id = ?"
        params.append(query.context_id)
    if query.status is not None:
        where += " AND state = ?"
        params.append(query.status.value)
    if query.status_timestamp_after is not None:
        where += " AND stamp >= ?"
        params.append(query.status_timestamp_after)
    page_where, page_params = where, list(params)
    if cursor is not None:
        page_where += " AND (stamp, id) < (?, ?)"
        page_params += [cursor.stamp, cursor.task_id]
    if query.context_id is None and query.status_timestamp_after is None:
        count_sql = "SELECT COALESCE(SUM(n), 0) FROM task_counts WHERE " + where
    else:
        count_sql = "SELECT COUNT(*) FROM tasks WHERE " + where
    size = query.page_size
    with _transaction(conn, "BEGIN"):
        total: int = conn.execute(count_sql, params).fetchone()[0]
        if query.v1_json and query.history_length is None and not query.include_artifacts:
            return _listed_page(conn, page_where, page_params, size, fingerprint, total)
        rows = conn.execute(
            f"{_TASK_ROWS} WHERE {page_where} ORDER BY stamp DESC, id DESC LIMIT ?",
            [*page_params, size + 1],
        ).fetchall()
        token = ""
        if len(rows) > size:
            del rows[size:]
            token = _paging.encode_token(fingerprint, _paging.Cursor(rows[-1][5], rows[-1][1]))
        tasks = _tasks_of(conn, rows, query.history_length, query.include_artifacts)
    return ListTasksResult(
        tasks=tasks, next_page_token=token, page_size=size, total_size=total
    )


#: a listed task's row: what ``_tasks_of`` builds it from
_TASK_ROWS = ("SELECT pk, id, context_id, status, metadata, stamp,"
              f" CASE WHEN history_at = version THEN history END, {_KEPT_GENERATION}"
              " FROM tasks")


def _tasks_of(
    conn: sqlite3.Connection, rows: list[Any], history_length: int | None, artifacts: bool
) -> list[Task]:
    """The tasks of ``_TASK_ROWS`` rows: from the row alone when it keeps what is
    asked for, else folded from the log."""
    if artifacts:
        logs = _logs(conn, [row[0] for row in rows], history_length != 0, artifacts)
    elif history_length != 0:
        # the row's history when it keeps one, else the log's
        logs = _logs(conn, [row[0] for row in rows if row[6] is None], True, False)
    else:
        logs = {}
    tasks = [
        _fold(logs[pk], _ids(task_id, context_id), history_length, artifacts)
        if pk in logs
        else _row_task(task_id, context_id, status, metadata,
                       None if history_length == 0 else history, history_length)
        for pk, task_id, context_id, status, metadata, _, history, _ in rows
    ]
    if not artifacts:  # the folds saw no artifact event, or there were none
        for task, row in zip(tasks, rows, strict=True):
            task.generation = row[7] if row[7] is not None else max(
                task.generation, _generation(conn, row[0], _ids(row[1], row[2])))
    return tasks


#: a page of kept listings, joined by SQLite into one JSON array: the rows
#: reach Python as one value instead of one tuple and one bytes object each.
#: group_concat joins them in the order the subquery gives them (its ORDER BY
#: ... LIMIT makes it a co-routine read in index order; test_sqlite_listing
#: checks the order). A task whose listing is not current stands in the array
#: as char(1) pk char(1): JSON holds no raw control character, so ``_spliced``
#: finds those places without parsing the rest.
_LISTED_PAGE = (
    "SELECT count(*), count(l),"
    " CAST('[' || group_concat(coalesce(l, char(1) || pk || char(1)), ',') || ']' AS BLOB)"
    " FROM (SELECT pk, CASE WHEN listed_at = version THEN listed END AS l FROM tasks"
    " WHERE {where} ORDER BY stamp DESC, id DESC LIMIT ?)"
)

#: after a full page: its last key, and whether a task follows it (a walk of
#: the listing index alone; keeping the least key in the aggregate above cost
#: more than this read)
_PAGE_END = ("SELECT stamp, id FROM tasks WHERE {where}"
             " ORDER BY stamp DESC, id DESC LIMIT 2 OFFSET ?")


def _listed_page(
    conn: sqlite3.Connection,
    where: str,
    params: list[object],
    size: int,
    fingerprint: bytes,
    total: int,
) -> ListTasksResult:
    """A page of tasks as their rows keep them in v1.0 JSON (listed.py); a task
    whose row has no current listing is built as ``_list`` builds it, in its place."""
    count, listed, joined = conn.execute(
        _LISTED_PAGE.format(where=where), [*params, size]).fetchone()
    token = ""
    if count == size:
        end = conn.execute(_PAGE_END.format(where=where), [*params, size - 1]).fetchall()
        if len(end) == 2:
            token = _paging.encode_token(fingerprint, _paging.Cursor(*end[0]))
    return ListTasksResult(
        tasks=[], next_page_token=token, page_size=size, total_size=total,
        encoded=msgspec.Raw(joined or b"[]") if listed == count else _spliced(conn, joined))


def _spliced(conn: sqlite3.Connection, joined: bytes) -> list[msgspec.Raw | Task]:
    """The page of ``_LISTED_PAGE`` with each stand-in replaced by its task, built
    from its row; each run of listings between them stays one piece of JSON."""
    pieces = joined[1:-1].split(b"\x01")  # listings, pk, listings, pk, ...
    pks = [int(pk) for pk in pieces[1::2]]
    found = conn.execute(
        f"{_TASK_ROWS} WHERE pk IN ({', '.join('?' * len(pks))})", pks).fetchall()
    built = dict(zip([row[0] for row in found], _tasks_of(conn, found, None, False),
                     strict=True))
    out: list[msgspec.Raw | Task] = []
    for i, piece in enumerate(pieces):
        if i % 2:
            out.append(built[int(piece)])
        elif run := piece.strip(b","):
            out.append(msgspec.Raw(run))
    return out


def _read_events(
    conn: sqlite3.Connection, scope: Scope, task_id: str, after: int, limit: int | None
) -> list[StoredEvent]:
    with _transaction(conn, "BEGIN"):
        row = conn.execute(
            "SELECT pk, context_id FROM tasks WHERE tenant = ? AND owner = ? AND id = ?",
            (scope.tenant, scope.owner, task_id),
        ).fetchone()
        if row is None:
            raise task_not_found(task_id)
        ids = _ids(task_id, row[1])
        wanted = -1 if limit is None else max(limit, 0)
        if wanted == 0:
            return []
        # from the row holding event after + 1 on (it may start before it)
        cur = conn.execute(
            "SELECT seq, n, payload FROM events WHERE task_pk = ?1 AND seq >= COALESCE("
            "(SELECT seq FROM events WHERE task_pk = ?1 AND seq <= ?2 ORDER BY seq DESC LIMIT 1),"
            " 0) ORDER BY seq",
            (row[0], after + 1),
        )
        out: list[StoredEvent] = []
        for seq, n, payload in cur:
            if seq + n - 1 <= after:
                continue
            for i, event in enumerate(_row_events(n, payload, ids)):
                if seq + i > after:
                    out.append(StoredEvent(seq + i, event))
            if 0 <= wanted <= len(out):
                del out[wanted:]
                break
        return out


def _unfinished(conn: sqlite3.Connection) -> list[UnfinishedTask]:
    # Named index: once PRAGMA optimize has seen a store where nearly every task
    # has finished (one of two states, as far as its statistics tell), the
    # planner expected half the table per state and read all of it instead,
    # on the event loop at every lease heartbeat (120 ms at 100,000 tasks).
    cur = conn.execute(
        "SELECT tenant, owner, id, context_id, state, version, lease"
        f" FROM tasks INDEXED BY tasks_lifecycle WHERE state IN {_UNFINISHED_SQL}"
    )
    return [
        UnfinishedTask(Scope(tenant, owner), task_id, context_id, TaskState(state), version,
                       lease)
        for tenant, owner, task_id, context_id, state, version, lease in cur
    ]


def _purge(conn: sqlite3.Connection, before: str) -> int:
    # Scope by scope, through its state index: each finished state's tasks in the
    # order of their status time (``stamp``). That is when the final status was
    # written, so not after the last write (``updated_at``, which decides); a
    # status stamped by a clock ahead of the writer's only keeps its task longer.
    deleted = 0
    with _transaction(conn):
        scopes = conn.execute("SELECT DISTINCT tenant, owner FROM task_counts").fetchall()
        for tenant, owner in scopes:
            # the events go with their task (ON DELETE CASCADE)
            cur = conn.execute(
                "DELETE FROM tasks INDEXED BY tasks_state WHERE tenant = ? AND owner = ?"
                f" AND state IN {_TERMINAL_SQL} AND stamp < ? AND updated_at < ?",
                (tenant, owner, before, before),
            )
            deleted += cur.rowcount
        conn.execute("DELETE FROM message_replies WHERE created_at < ?", (before,))
    return deleted
