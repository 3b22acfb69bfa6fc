"""The SQLite store (``sqlite:///path``): the durable default of one process.

Schema: ``tasks`` has one row per task holding only the scalar projection
(state, status, listing stamp, metadata, version, timestamps, dialect);
``events`` holds the log, one JSON-encoded row per event, written once and
never rewritten. History and artifacts are not copied onto the task row: a
reader that asks for them folds the events of the kinds it needs, and one that
does not reads the task row alone.

JSON rather than msgpack because whatever a peer sent as JSON (integers beyond
64 bits in metadata, say) must be storable, and JSON is that superset.

sqlite3 blocks, so every call runs on one dedicated worker thread with one
connection: writes are serialized without a lock and the event loop never
waits on the disk. Each write is a ``BEGIN IMMEDIATE`` transaction that
re-reads the version, so another process writing the same file is caught by
``ConcurrentModification`` too. Multi-statement reads run in one read
transaction (a WAL snapshot), so a task row and its events always agree.
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Concatenate, NamedTuple, ParamSpec, TypeVar
from urllib.parse import parse_qsl, unquote

import msgspec

from ..core.calls import ListTasks, ListTasksResult
from ..core.errors import ConcurrentModification, TaskNotFound
from ..core.lifecycle import TERMINAL_STATES
from ..core.model import (
    ArtifactUpdate,
    Event,
    HistoryAppended,
    StatusUpdate,
    Task,
    TaskCreated,
    TaskState,
    TaskStatus,
)
from . import _paging, _projection
from .base import Scope, StoredEvent, TaskExists, TaskRecord, UnfinishedTask

__all__ = ["SCHEMA_VERSION", "SQLiteSettings", "SQLiteStore", "parse_sqlite_url"]

P = ParamSpec("P")
T = TypeVar("T")

DEFAULT_BUSY_TIMEOUT_MS = 5000
_SYNCHRONOUS = {"off": 0, "normal": 1, "full": 2, "extra": 3}
_SYNCHRONOUS_NAMES = {level: name for name, level in _SYNCHRONOUS.items()}

# ---------------------------------------------------------------------- schema

# MIGRATIONS[n] takes a database from schema version n to n + 1
# (``PRAGMA user_version`` holds the version).
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """
        CREATE TABLE tasks (
            pk          INTEGER PRIMARY KEY,
            tenant      TEXT NOT NULL,
            owner       TEXT NOT NULL,
            id          TEXT NOT NULL,
            context_id  TEXT NOT NULL,
            state       TEXT NOT NULL,
            status      BLOB NOT NULL,   -- TaskStatus, JSON
            stamp       TEXT NOT NULL,   -- listing key: status timestamp, else write time
            metadata    BLOB,            -- JSON object, NULL when the task has none
            dialect     TEXT NOT NULL,
            message_id  TEXT,            -- the message that created the task
            version     INTEGER NOT NULL,
            created_at  TEXT NOT NULL,
            updated_at  TEXT NOT NULL,
            UNIQUE (tenant, owner, id)
        )
        """,
        "CREATE INDEX tasks_recent ON tasks (tenant, owner, stamp, id)",
        "CREATE INDEX tasks_context ON tasks (tenant, owner, context_id, stamp, id)",
        "CREATE INDEX tasks_state ON tasks (tenant, owner, state, stamp, id)",
        "CREATE INDEX tasks_message ON tasks (tenant, owner, message_id)"
        " WHERE message_id IS NOT NULL",
        # start-up recovery and purging look across scopes by state
        "CREATE INDEX tasks_lifecycle ON tasks (state, updated_at)",
        # ListTasks reports how many tasks match; counting a large scope's index
        # on every page would cost time linear in its size, so the unfiltered
        # and state-filtered totals are kept here by triggers.
        """
        CREATE TABLE task_counts (
            tenant  TEXT NOT NULL,
            owner   TEXT NOT NULL,
            state   TEXT NOT NULL,
            n       INTEGER NOT NULL,
            PRIMARY KEY (tenant, owner, state)
        ) WITHOUT ROWID
        """,
        """
        CREATE TRIGGER tasks_counted AFTER INSERT ON tasks BEGIN
            INSERT INTO task_counts (tenant, owner, state, n)
            VALUES (NEW.tenant, NEW.owner, NEW.state, 1)
            ON CONFLICT (tenant, owner, state) DO UPDATE SET n = n + 1;
        END
        """,
        """
        CREATE TRIGGER tasks_uncounted AFTER DELETE ON tasks BEGIN
            UPDATE task_counts SET n = n - 1
            WHERE tenant = OLD.tenant AND owner = OLD.owner AND state = OLD.state;
        END
        """,
        """
        CREATE TRIGGER tasks_recounted AFTER UPDATE OF state ON tasks
        WHEN OLD.state IS NOT NEW.state BEGIN
            UPDATE task_counts SET n = n - 1
            WHERE tenant = OLD.tenant AND owner = OLD.owner AND state = OLD.state;
            INSERT INTO task_counts (tenant, owner, state, n)
            VALUES (NEW.tenant, NEW.owner, NEW.state, 1)
            ON CONFLICT (tenant, owner, state) DO UPDATE SET n = n + 1;
        END
        """,
        """
        CREATE TABLE events (
            task_pk  INTEGER NOT NULL REFERENCES tasks (pk) ON DELETE CASCADE,
            seq      INTEGER NOT NULL,
            kind     INTEGER NOT NULL,   -- see _KIND
            payload  BLOB NOT NULL,      -- Event, JSON with its union tag
            PRIMARY KEY (task_pk, seq)
        ) WITHOUT ROWID
        """,
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)

_KIND: dict[type, int] = {TaskCreated: 0, StatusUpdate: 1, ArtifactUpdate: 2, HistoryAppended: 3}
_UNFINISHED_SQL = "('submitted', 'working')"
_TERMINAL_SQL = "(" + ", ".join(sorted(f"'{s.value}'" for s in TERMINAL_STATES)) + ")"

_encode = msgspec.json.Encoder().encode
_event_decoder = msgspec.json.Decoder(Event)
_status_decoder = msgspec.json.Decoder(TaskStatus)
_metadata_decoder = msgspec.json.Decoder(dict[str, Any])


def _kind_filter(history: bool, artifacts: bool) -> str:
    """The events a fold needs: creation and status always (status drives the
    lifecycle checks and may carry a history message), the rest when asked."""
    if history and artifacts:
        return ""
    kinds = [0, 1] + ([3] if history else []) + ([2] if artifacts else [])
    return f" AND kind IN ({', '.join(map(str, kinds))})"


# ------------------------------------------------------------------------- URL


class SQLiteSettings(NamedTuple):
    path: str
    synchronous: str
    busy_timeout_ms: int
    threaded: bool = False


def parse_sqlite_url(url: str) -> SQLiteSettings:
    """``sqlite:///relative.db``, ``sqlite:////absolute.db`` or ``sqlite:///:memory:``,
    with optional ``?synchronous=normal|full|extra|off&busy_timeout=<ms>``."""
    prefix = "sqlite:///"
    if not url.startswith(prefix):
        raise ValueError(f"a SQLite store URL starts with {prefix}, got {url!r}")
    raw_path, _, query = url[len(prefix) :].partition("?")
    path = unquote(raw_path)
    if not path:
        raise ValueError(
            f"the SQLite store URL {url!r} names no file: "
            "use sqlite:///relative.db, sqlite:////absolute.db or sqlite:///:memory:"
        )
    synchronous = "normal"
    busy_timeout = DEFAULT_BUSY_TIMEOUT_MS
    threaded = False
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key == "synchronous":
            synchronous = value.lower()
            if synchronous not in _SYNCHRONOUS:
                raise ValueError(
                    f"synchronous={value!r} in {url!r}: use one of {', '.join(_SYNCHRONOUS)}"
                )
        elif key == "thread":
            threaded = value.lower() in ("1", "true", "yes", "on")
        elif key == "busy_timeout":
            if not value.isdigit():
                raise ValueError(f"busy_timeout={value!r} in {url!r}: give milliseconds")
            busy_timeout = int(value)
        else:
            raise ValueError(
                f"unknown option {key!r} in {url!r}: the SQLite store takes "
                "synchronous, busy_timeout and thread"
            )
    return SQLiteSettings(path, synchronous, busy_timeout, threaded)


# ------------------------------------------------------------------ connection


def _connect(settings: SQLiteSettings) -> tuple[sqlite3.Connection, dict[str, Any]]:
    """An open, migrated connection and its effective settings."""
    if settings.path != ":memory:":
        Path(settings.path).parent.mkdir(parents=True, exist_ok=True)
    # isolation_level=None: we issue BEGIN/COMMIT ourselves.
    conn = sqlite3.connect(
        settings.path, isolation_level=None, check_same_thread=False, cached_statements=256
    )
    try:
        # busy_timeout first, so that switching to WAL waits out another writer
        conn.execute(f"PRAGMA busy_timeout = {settings.busy_timeout_ms:d}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(f"PRAGMA synchronous = {_SYNCHRONOUS[settings.synchronous]:d}")
        conn.execute("PRAGMA foreign_keys = ON")
        _migrate(conn)
        return conn, _read_settings(conn)
    except BaseException:
        conn.close()
        raise


def _migrate(conn: sqlite3.Connection) -> None:
    with _transaction(conn):
        version: int = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise RuntimeError(
                f"the database has schema version {version}; this version of interlingua "
                f"knows versions up to {SCHEMA_VERSION}"
            )
        for step in MIGRATIONS[version:]:
            for statement in step:
                conn.execute(statement)
        if version != SCHEMA_VERSION:
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION:d}")


def _read_settings(conn: sqlite3.Connection) -> dict[str, Any]:
    def pragma(name: str) -> Any:
        return conn.execute(f"PRAGMA {name}").fetchone()[0]

    return {
        "journal_mode": str(pragma("journal_mode")).lower(),
        "synchronous": _SYNCHRONOUS_NAMES.get(pragma("synchronous"), "unknown"),
        "busy_timeout_ms": int(pragma("busy_timeout")),
        "foreign_keys": bool(pragma("foreign_keys")),
        "schema_version": int(pragma("user_version")),
    }


@contextmanager
def _transaction(conn: sqlite3.Connection, begin: str = "BEGIN IMMEDIATE") -> Iterator[None]:
    """A write transaction (or, with ``begin="BEGIN"``, a read snapshot)."""
    conn.execute(begin)
    try:
        yield
    except BaseException:
        if conn.in_transaction:
            conn.rollback()
        raise
    conn.execute("COMMIT")


# --------------------------------------------------------------- worker calls
# Each runs on the store's thread with its connection.


def _create(
    conn: sqlite3.Connection,
    scope: Scope,
    created: Task,
    status: TaskStatus,
    stamp: str,
    events: Sequence[Event],
    dialect: str,
    message_id: str | None,
    now: str,
) -> int:
    metadata = None if created.metadata is None else _encode(created.metadata)
    with _transaction(conn):
        cur = conn.execute(
            "INSERT INTO tasks (tenant, owner, id, context_id, state, status, stamp, metadata,"
            " dialect, message_id, version, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (tenant, owner, id) DO NOTHING",
            (
                scope.tenant,
                scope.owner,
                created.id,
                created.context_id,
                status.state.value,
                _encode(status),
                stamp,
                metadata,
                dialect,
                message_id,
                len(events),
                now,
                now,
            ),
        )
        if cur.rowcount == 0:
            raise TaskExists(f"task {created.id} already exists")
        pk = cur.lastrowid
        conn.executemany(
            "INSERT INTO events (task_pk, seq, kind, payload) VALUES (?, ?, ?, ?)",
            [(pk, seq, _KIND[type(e)], _encode(e)) for seq, e in enumerate(events, 1)],
        )
    return len(events)


def _append(
    conn: sqlite3.Connection,
    scope: Scope,
    task_id: str,
    expected_version: int,
    events: Sequence[Event],
    now: str,
) -> int:
    with _transaction(conn):
        row = conn.execute(
            "SELECT pk, context_id, state, version FROM tasks"
            " WHERE tenant = ? AND owner = ? AND id = ?",
            (scope.tenant, scope.owner, task_id),
        ).fetchone()
        if row is None:
            raise TaskNotFound(f"Task not found: {task_id}")
        pk, context_id, state, version = row
        if version != expected_version:
            raise ConcurrentModification(
                f"task {task_id} is at version {version}, not {expected_version}"
            )
        if not events:
            return int(version)
        # The lifecycle checks read only the state, so the stored status need
        # not be decoded; a status update in the batch brings its own.
        probe = _projection.probe(task_id, context_id, TaskStatus(state=TaskState(state)))
        status_changed = _projection.advance(probe, events)
        conn.executemany(
            "INSERT INTO events (task_pk, seq, kind, payload) VALUES (?, ?, ?, ?)",
            [(pk, version + i, _KIND[type(e)], _encode(e)) for i, e in enumerate(events, 1)],
        )
        new_version = version + len(events)
        if status_changed:
            status = probe.status
            conn.execute(
                "UPDATE tasks SET version = ?, state = ?, status = ?, stamp = ?, updated_at = ?"
                " WHERE pk = ?",
                (
                    new_version,
                    status.state.value,
                    _encode(status),
                    _projection.sort_stamp(status, now),
                    now,
                    pk,
                ),
            )
        else:
            conn.execute(
                "UPDATE tasks SET version = ?, updated_at = ? WHERE pk = ?",
                (new_version, now, pk),
            )
    return int(new_version)


def _row_task(task_id: str, context_id: str, status: bytes, metadata: bytes | None) -> Task:
    """The task from its row alone: what a fold gives with no history and no artifacts."""
    return Task(
        id=task_id,
        context_id=context_id,
        status=_status_decoder.decode(status),
        metadata=None if metadata is None else _metadata_decoder.decode(metadata),
    )


def _fold(payloads: Iterable[bytes], history_length: int | None, include_artifacts: bool) -> Task:
    task = _projection.fold(_event_decoder.decode(p) for p in payloads)
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
            "SELECT pk, context_id, status, metadata, dialect, version, created_at, updated_at"
            " FROM tasks WHERE tenant = ? AND owner = ? AND id = ?",
            (scope.tenant, scope.owner, task_id),
        ).fetchone()
        if row is None:
            return None
        pk, context_id, status, metadata, dialect, version, created_at, updated_at = row
        if history_length == 0 and not include_artifacts:
            task = _row_task(task_id, context_id, status, metadata)
        else:
            kinds = _kind_filter(history_length != 0, include_artifacts)
            cur = conn.execute(
                f"SELECT payload FROM events WHERE task_pk = ?{kinds} ORDER BY seq", (pk,)
            )
            task = _fold((p for (p,) in cur), history_length, include_artifacts)
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
        rows = conn.execute(
            "SELECT pk, id, context_id, status, metadata, stamp FROM tasks"
            f" WHERE {page_where} ORDER BY stamp DESC, id DESC LIMIT ?",
            [*page_params, size + 1],
        ).fetchall()
        token = ""
        if len(rows) > size:
            del rows[size:]
            token = _paging.encode_token(fingerprint, _paging.Cursor(rows[-1][5], rows[-1][1]))
        history, artifacts = query.history_length != 0, query.include_artifacts
        if rows and (history or artifacts):
            logs: dict[int, list[bytes]] = {row[0]: [] for row in rows}
            marks = ", ".join("?" * len(rows))
            cur = conn.execute(
                f"SELECT task_pk, payload FROM events WHERE task_pk IN ({marks})"
                f"{_kind_filter(history, artifacts)} ORDER BY task_pk, seq",
                list(logs),
            )
            for pk, payload in cur:
                logs[pk].append(payload)
            tasks = [_fold(logs[row[0]], query.history_length, artifacts) for row in rows]
        else:
            tasks = [_row_task(row[1], row[2], row[3], row[4]) for row in rows]
    return ListTasksResult(
        tasks=tasks, next_page_token=token, page_size=len(tasks), total_size=total
    )


def _read_events(
    conn: sqlite3.Connection, scope: Scope, task_id: str, after: int, limit: int | None
) -> list[StoredEvent]:
    with _transaction(conn, "BEGIN"):
        row = conn.execute(
            "SELECT pk FROM tasks WHERE tenant = ? AND owner = ? AND id = ?",
            (scope.tenant, scope.owner, task_id),
        ).fetchone()
        if row is None:
            raise TaskNotFound(f"Task not found: {task_id}")
        cur = conn.execute(
            "SELECT seq, payload FROM events WHERE task_pk = ? AND seq > ? ORDER BY seq LIMIT ?",
            (row[0], after, -1 if limit is None else max(limit, 0)),
        )
        return [StoredEvent(seq, _event_decoder.decode(payload)) for seq, payload in cur]


def _task_for_message(conn: sqlite3.Connection, scope: Scope, message_id: str) -> str | None:
    row = conn.execute(
        "SELECT id FROM tasks WHERE tenant = ? AND owner = ? AND message_id = ?"
        " ORDER BY pk LIMIT 1",
        (scope.tenant, scope.owner, message_id),
    ).fetchone()
    return None if row is None else str(row[0])


def _unfinished(conn: sqlite3.Connection) -> list[UnfinishedTask]:
    cur = conn.execute(
        "SELECT tenant, owner, id, context_id, state, version FROM tasks"
        f" WHERE state IN {_UNFINISHED_SQL}"
    )
    return [
        UnfinishedTask(Scope(tenant, owner), task_id, context_id, TaskState(state), version)
        for tenant, owner, task_id, context_id, state, version in cur
    ]


def _purge(conn: sqlite3.Connection, before: str) -> int:
    with _transaction(conn):
        # the events go with their task (ON DELETE CASCADE)
        cur = conn.execute(
            f"DELETE FROM tasks WHERE state IN {_TERMINAL_SQL} AND updated_at < ?", (before,)
        )
    return cur.rowcount


def _close(conn: sqlite3.Connection) -> None:
    try:
        conn.execute("PRAGMA optimize")
    finally:
        conn.close()


# ----------------------------------------------------------------------- store


class SQLiteStore:
    """Tasks and logs in one SQLite file (or ``:memory:``), WAL mode.

    After ``open()`` the effective settings, read back from SQLite, are in
    ``journal_mode`` ("wal"; "memory" for ``:memory:``), ``synchronous``
    ("normal" by default, "full" with ``?synchronous=full``), ``busy_timeout_ms``,
    ``foreign_keys`` and ``schema_version``.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self.settings = parse_sqlite_url(url)
        self.path = self.settings.path
        self.journal_mode = ""
        self.synchronous = ""
        self.busy_timeout_ms = 0
        self.foreign_keys = False
        self.schema_version = 0
        self._pool: ThreadPoolExecutor | None = None
        self._conn: sqlite3.Connection | None = None
        # Calls run on the event loop's thread unless a commit waits for fsync
        # (synchronous=full/extra); see _run. ``?thread=1`` forces the worker.
        self._inline = self.settings.synchronous in ("normal", "off") and not self.settings.threaded

    async def open(self) -> None:
        if self._pool is not None:
            return
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="interlingua-sqlite")
        loop = asyncio.get_running_loop()
        try:
            conn, effective = await loop.run_in_executor(pool, _connect, self.settings)
        except BaseException:
            pool.shutdown(wait=False)
            raise
        self._pool, self._conn = pool, conn
        self.journal_mode = effective["journal_mode"]
        self.synchronous = effective["synchronous"]
        self.busy_timeout_ms = effective["busy_timeout_ms"]
        self.foreign_keys = effective["foreign_keys"]
        self.schema_version = effective["schema_version"]

    async def close(self) -> None:
        pool, conn = self._pool, self._conn
        if pool is None or conn is None:
            return
        self._pool = self._conn = None
        try:
            # queued behind any call still running, which thus completes first
            await asyncio.get_running_loop().run_in_executor(pool, _close, conn)
        finally:
            pool.shutdown(wait=True)

    async def __aenter__(self) -> SQLiteStore:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def pragmas(self) -> dict[str, Any]:
        """The settings as SQLite reports them now, from the live connection."""
        return await self._run(_read_settings)

    async def _run(
        self,
        fn: Callable[Concatenate[sqlite3.Connection, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        pool, conn = self._pool, self._conn
        if pool is None or conn is None:
            raise RuntimeError("the SQLite store is not open: await store.open() first")
        if self._inline:
            # Measured: a commit without fsync takes ~20-40 µs, handing it to the
            # worker thread and back costs ~70 µs of CPU more; so when commits do
            # not wait for the disk (synchronous=normal/off) they run right here.
            return fn(conn, *args, **kwargs)
        call = functools.partial(fn, conn, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(pool, call)

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
        # Validate the batch and find the task's status before touching the disk.
        probe = _projection.probe(created.id, created.context_id, created.status)
        _projection.advance(probe, events[1:])
        stamp = _projection.sort_stamp(probe.status, now)
        return await self._run(
            _create, scope, created, probe.status, stamp, events, dialect, message_id, now
        )

    async def append(
        self,
        scope: Scope,
        task_id: str,
        expected_version: int,
        events: Sequence[Event],
        *,
        now: str,
    ) -> int:
        return await self._run(_append, scope, task_id, expected_version, events, now)

    # ------------------------------------------------------------------- reads

    async def get_task(
        self,
        scope: Scope,
        task_id: str,
        *,
        history_length: int | None = None,
        include_artifacts: bool = True,
    ) -> TaskRecord | None:
        _projection.check_history_length(history_length)
        return await self._run(_get, scope, task_id, history_length, include_artifacts)

    async def list_tasks(self, scope: Scope, query: ListTasks) -> ListTasksResult:
        _paging.check_query(query)
        fingerprint = _paging.filter_fingerprint(scope, query)
        cursor = _paging.decode_token(query.page_token, fingerprint) if query.page_token else None
        return await self._run(_list, scope, query, fingerprint, cursor)

    async def read_events(
        self, scope: Scope, task_id: str, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        return await self._run(_read_events, scope, task_id, after, limit)

    async def task_for_message(self, scope: Scope, message_id: str) -> str | None:
        return await self._run(_task_for_message, scope, message_id)

    async def unfinished_tasks(self) -> list[UnfinishedTask]:
        return await self._run(_unfinished)

    async def purge_finished(self, before: str) -> int:
        return await self._run(_purge, before)
