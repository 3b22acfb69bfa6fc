"""The SQLite store (``sqlite:///path``): the durable default of one process.

Schema: ``tasks`` has one row per task holding only the scalar projection
(state, status, listing stamp, metadata, version, timestamps, dialect);
``events`` holds the log as JSON, written once and never rewritten: a row per
run of consecutive events of one kind (a hundred artifact chunks written
together are one row), found by its first ``seq``. History and artifacts are
not copied onto the task row: a reader that asks for them folds the events of
the kinds it needs, and one that does not reads the task row alone.

Push configs sit in ``push_configs`` and the deliveries still owed in
``push_outbox``, both hanging off their task (deleted with it). A write that
appends events queues its deliveries in the same transaction.

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
    PushConfig,
    StatusUpdate,
    Task,
    TaskCreated,
    TaskState,
    TaskStatus,
)
from . import _paging, _projection
from . import sqlite_ownership as _own
from .base import (
    DEAD,
    PENDING,
    Delivery,
    Lease,
    MessageRecord,
    PushConfigRecord,
    Scope,
    StoredEvent,
    TaskExists,
    TaskRecord,
    UnfinishedTask,
    push_mode,
    wants_delivery,
)
from .sqlite_checkpoint import WRITER_THRESHOLD_FRAMES, WalCheckpointer

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
    (
        # pk keeps the registration order; a replaced config keeps its row
        """
        CREATE TABLE push_configs (
            pk          INTEGER PRIMARY KEY,
            task_pk     INTEGER NOT NULL REFERENCES tasks (pk) ON DELETE CASCADE,
            id          TEXT NOT NULL,
            dialect     TEXT NOT NULL,
            config      BLOB NOT NULL,   -- PushConfig, JSON
            created_at  TEXT NOT NULL,
            UNIQUE (task_pk, id)
        )
        """,
        """
        CREATE TABLE push_outbox (
            pk               INTEGER PRIMARY KEY,
            task_pk          INTEGER NOT NULL,
            config_id        TEXT NOT NULL,
            seq              INTEGER NOT NULL,
            state            TEXT NOT NULL,     -- 'pending' | 'dead'
            attempts         INTEGER NOT NULL DEFAULT 0,
            next_at          REAL NOT NULL DEFAULT 0,
            claimed_until    REAL,
            last_error       TEXT,
            last_attempt_at  REAL,
            FOREIGN KEY (task_pk, config_id) REFERENCES push_configs (task_pk, id)
                ON DELETE CASCADE
        )
        """,
        # a (task, config) queue in order, and the queue heads by due time
        "CREATE INDEX push_outbox_queue ON push_outbox (task_pk, config_id, state, seq)",
        "CREATE INDEX push_outbox_due ON push_outbox (state, next_at)",
    ),
    (
        # A row holds a run of consecutive events of one kind, ``seq`` the first
        # and ``n`` how many: a payload of one event is that event, of more a
        # JSON array of them (see _runs).
        "ALTER TABLE events ADD COLUMN n INTEGER NOT NULL DEFAULT 1",
    ),
    # Event payloads and statuses name their own task and context by reference
    # (see _pack); the tables are as they were, and rows written before read as ever.
    (),
    _own.MIGRATION,
    _own.OWNERS_MIGRATION,
)
SCHEMA_VERSION = len(MIGRATIONS)

_KIND: dict[type, int] = {TaskCreated: 0, StatusUpdate: 1, ArtifactUpdate: 2, HistoryAppended: 3}
_UNFINISHED_SQL = "('submitted', 'working')"
_TERMINAL_SQL = "(" + ", ".join(sorted(f"'{s.value}'" for s in TERMINAL_STATES)) + ")"

_encode = msgspec.json.Encoder().encode
_event_decoder = msgspec.json.Decoder(Event)
_events_decoder = msgspec.json.Decoder(list[Event])
_push_config_decoder = msgspec.json.Decoder(PushConfig)
_status_decoder = msgspec.json.Decoder(TaskStatus)
_metadata_decoder = msgspec.json.Decoder(dict[str, Any])

#: events in one row at most. A fast executor's chunks arrive by the hundred,
#: and one row for a run of them costs a third of one row each (measured: 1.0
#: against 3.5 µs of CPU per event, and a quarter fewer bytes in the WAL).
RUN_MAX = 256


# A stored event names its task and context again and again: the event does, and
# every message in it (an idle task's two events hold eight such ids in ~800
# bytes). In the rows of that task each is written as a one-byte reference, a
# control character that JSON text never holds raw, and put back when read:
# events take about a third less room in the log, the WAL and the page cache.
# Rows with no references (written before) read the same way.
_TASK_REF = b'"\x01"'
_CONTEXT_REF = b'"\x02"'

_Ids = tuple[bytes, bytes]


def _ids(task_id: str, context_id: str) -> _Ids:
    """The task's and the context's ids as JSON strings, as they appear in payloads."""
    return _encode(task_id), _encode(context_id)


def _pack(data: bytes, ids: _Ids) -> bytes:
    # Exact both ways: ``data`` has no raw control bytes, so every reference
    # in the result is one this made, and _unpack undoes them in reverse order.
    return data.replace(ids[0], _TASK_REF).replace(ids[1], _CONTEXT_REF)


def _unpack(data: bytes, ids: _Ids) -> bytes:
    return data.replace(_CONTEXT_REF, ids[1]).replace(_TASK_REF, ids[0])


def _runs(
    pk: int, first_seq: int, events: Sequence[Event], ids: _Ids
) -> Iterator[tuple[int, int, int, int, bytes]]:
    """The rows for ``events`` numbered from ``first_seq``: one per run of
    consecutive events of one kind, at most RUN_MAX long."""
    start, count = 0, len(events)
    while start < count:
        kind = _KIND[type(events[start])]
        end = start + 1
        limit = min(count, start + RUN_MAX)
        while end < limit and _KIND[type(events[end])] == kind:
            end += 1
        n = end - start
        payload = _encode(events[start]) if n == 1 else _encode(events[start:end])
        yield pk, first_seq + start, kind, n, _pack(payload, ids)
        start = end


def _row_events(n: int, payload: bytes, ids: _Ids) -> list[Event]:
    payload = _unpack(payload, ids)
    return [_event_decoder.decode(payload)] if n == 1 else _events_decoder.decode(payload)


def _insert_events(
    conn: _Connection, pk: int, first_seq: int, events: Sequence[Event], ids: _Ids
) -> None:
    rows = list(_runs(pk, first_seq, events, ids))
    conn.executemany(
        "INSERT INTO events (task_pk, seq, kind, n, payload) VALUES (?, ?, ?, ?, ?)", rows
    )
    conn.payload_bytes += sum(len(row[4]) for row in rows)


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


_PAGE_SIZE = 2048


class _Connection(sqlite3.Connection):
    #: inside a group commit, whether each write gets a savepoint (see _write_group)
    savepoints: bool = True
    #: event payload bytes written, all told (a measure of the WAL's growth)
    payload_bytes: int = 0


def _connect(settings: SQLiteSettings) -> tuple[_Connection, dict[str, Any]]:
    """An open, migrated connection and its effective settings."""
    if settings.path != ":memory:":
        Path(settings.path).parent.mkdir(parents=True, exist_ok=True)
    # isolation_level=None: we issue BEGIN/COMMIT ourselves.
    conn = sqlite3.connect(
        settings.path,
        isolation_level=None,
        check_same_thread=False,
        cached_statements=256,
        factory=_Connection,
    )
    try:
        # busy_timeout first, so that switching to WAL waits out another writer
        conn.execute(f"PRAGMA busy_timeout = {settings.busy_timeout_ms:d}")
        # 2 KiB pages for a new database (an existing one keeps its own): a commit
        # appends every page it touched to the WAL, and a task write touches a
        # dozen; with half-size pages a stored task cost ~20% less CPU, measured,
        # while rows still fit on their page (1 KiB pages spilled and doubled the file).
        conn.execute(f"PRAGMA page_size = {_PAGE_SIZE:d}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(f"PRAGMA synchronous = {_SYNCHRONOUS[settings.synchronous]:d}")
        conn.execute("PRAGMA foreign_keys = ON")
        # 64 MiB of page cache instead of 2: message ids chosen by clients are
        # often random, so that index's inserts touch pages all over.
        conn.execute("PRAGMA cache_size = -65536")
        # Checkpoints run on a thread of their own (sqlite_checkpoint.py); the
        # writer's own is the backstop, at a larger WAL.
        conn.execute(f"PRAGMA wal_autocheckpoint = {WRITER_THRESHOLD_FRAMES:d}")
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
        "cache_size_kib": -int(pragma("cache_size")),
        "page_size": int(pragma("page_size")),
        "wal_autocheckpoint": int(pragma("wal_autocheckpoint")),
        "schema_version": int(pragma("user_version")),
    }


@contextmanager
def _transaction(conn: sqlite3.Connection, begin: str = "BEGIN IMMEDIATE") -> Iterator[None]:
    """A write transaction (or, with ``begin="BEGIN"``, a read snapshot).

    Inside a group commit (a transaction already open, see ``_write_group``)
    it is a savepoint instead, when the group asks for one: a failed write is
    then undone without touching the others of its group.
    """
    if conn.in_transaction:
        if not getattr(conn, "savepoints", True):
            yield
            return
        conn.execute("SAVEPOINT one_write")
        try:
            yield
        except BaseException:
            conn.execute("ROLLBACK TO one_write")
            conn.execute("RELEASE one_write")
            raise
        conn.execute("RELEASE one_write")
        return
    conn.execute(begin)
    try:
        yield
    except BaseException:
        if conn.in_transaction:
            conn.rollback()
        raise
    conn.execute("COMMIT")


def _write_group(
    conn: _Connection, writes: Sequence[tuple[Callable[..., Any], tuple[Any, ...]]]
) -> list[tuple[bool, Any]]:
    """Run several writes in one transaction: one commit for all (group commit).

    Each write keeps its own outcome (a value, or the exception it raised);
    if the transaction itself fails (it cannot begin, or commit), every write
    fails with that error.

    The group first runs without a savepoint per write (two statements each,
    about a tenth of a stored task's CPU); writes seldom fail, and when one
    does, the whole group is rolled back and run again with savepoints.
    """
    outcomes = _run_group(conn, writes, savepoints=False)
    if outcomes is None:
        outcomes = _run_group(conn, writes, savepoints=True)
        assert outcomes is not None  # with savepoints a failed write keeps its outcome
    return outcomes


def _run_group(
    conn: _Connection,
    writes: Sequence[tuple[Callable[..., Any], tuple[Any, ...]]],
    *,
    savepoints: bool,
) -> list[tuple[bool, Any]] | None:
    """One group transaction. Without savepoints a failed write may have left
    part of itself, so everything is rolled back: None (run again with
    savepoints), or that write's failure when it was alone."""
    outcomes: list[tuple[bool, Any]] = []
    conn.savepoints = savepoints  # read by _transaction
    try:
        conn.execute("BEGIN IMMEDIATE")
        for fn, args in writes:
            try:
                outcomes.append((True, fn(conn, *args)))
            except Exception as exc:
                if not savepoints:
                    conn.rollback()
                    return [(False, exc)] if len(writes) == 1 else None
                outcomes.append((False, exc))
        conn.execute("COMMIT")
    except BaseException as exc:
        if conn.in_transaction:
            conn.rollback()
        return [(False, exc)] * len(writes)
    finally:
        conn.savepoints = True
    return outcomes


# --------------------------------------------------------------- worker calls
# Each runs on the store's thread with its connection.


def _in_transaction(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn(conn, ...)`` as one write transaction (a savepoint inside a group)."""

    def write(conn: sqlite3.Connection, *args: Any) -> T:
        with _transaction(conn):
            return fn(conn, *args)

    return write


def _create(
    conn: _Connection,
    scope: Scope,
    created: Task,
    status: TaskStatus,
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
                " lease) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
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
            return int(version), False
        # The lifecycle checks read only the state, so the stored status need
        # not be decoded; a status update in the batch brings its own.
        probe = _projection.probe(task_id, context_id, TaskStatus(state=TaskState(state)))
        status_changed = _projection.advance(probe, events)
        if message is not None:
            _own.remember_message(conn, scope, pk, message)
        ids = _ids(task_id, context_id)
        _insert_events(conn, pk, version + 1, events, ids)
        new_version = version + len(events)
        if status_changed:
            status = probe.status
            conn.execute(
                "UPDATE tasks SET version = ?, state = ?, status = ?, stamp = ?, updated_at = ?,"
                " lease = ? WHERE pk = ?",
                (
                    new_version,
                    status.state.value,
                    _pack(_encode(status), ids),
                    _projection.sort_stamp(status, now),
                    now,
                    lease,
                    pk,
                ),
            )
        else:
            conn.execute(
                "UPDATE tasks SET version = ?, updated_at = ?, lease = ? WHERE pk = ?",
                (new_version, now, lease, pk),
            )
        queued = _queue(conn, pk, version + 1, events)
    return int(new_version), queued


# ------------------------------------------------------------------ push configs


def _task_pk(conn: sqlite3.Connection, scope: Scope, task_id: str) -> int:
    row = conn.execute(
        "SELECT pk FROM tasks WHERE tenant = ? AND owner = ? AND id = ?",
        (scope.tenant, scope.owner, task_id),
    ).fetchone()
    if row is None:
        raise TaskNotFound(f"Task not found: {task_id}")
    return int(row[0])


def _put_config(
    conn: sqlite3.Connection, pk: int, task_id: str, config: PushConfig, dialect: str, now: str
) -> PushConfigRecord:
    if not config.id:
        raise ValueError("a stored push config needs its id")
    config = msgspec.structs.replace(config, task_id=task_id)
    conn.execute(
        "INSERT INTO push_configs (task_pk, id, dialect, config, created_at)"
        " VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT (task_pk, id) DO UPDATE SET dialect = excluded.dialect,"
        " config = excluded.config",
        (pk, config.id, dialect, _encode(config), now),
    )
    created_at = conn.execute(
        "SELECT created_at FROM push_configs WHERE task_pk = ? AND id = ?", (pk, config.id)
    ).fetchone()[0]
    return PushConfigRecord(config=config, dialect=dialect, created_at=created_at)


def _config_record(dialect: str, config: bytes, created_at: str) -> PushConfigRecord:
    return PushConfigRecord(
        config=_push_config_decoder.decode(config), dialect=dialect, created_at=created_at
    )


def _put_push_config(
    conn: sqlite3.Connection,
    scope: Scope,
    task_id: str,
    config: PushConfig,
    dialect: str,
    now: str,
) -> PushConfigRecord:
    with _transaction(conn):
        return _put_config(conn, _task_pk(conn, scope, task_id), task_id, config, dialect, now)


def _get_push_config(
    conn: sqlite3.Connection, scope: Scope, task_id: str, config_id: str
) -> PushConfigRecord | None:
    with _transaction(conn, "BEGIN"):
        row = conn.execute(
            "SELECT dialect, config, created_at FROM push_configs WHERE task_pk = ? AND id = ?",
            (_task_pk(conn, scope, task_id), config_id),
        ).fetchone()
    return None if row is None else _config_record(*row)


def _list_push_configs(
    conn: sqlite3.Connection, scope: Scope, task_id: str
) -> list[PushConfigRecord]:
    with _transaction(conn, "BEGIN"):
        cur = conn.execute(
            "SELECT dialect, config, created_at FROM push_configs WHERE task_pk = ? ORDER BY pk",
            (_task_pk(conn, scope, task_id),),
        )
        return [_config_record(*row) for row in cur]


def _delete_push_config(
    conn: sqlite3.Connection, scope: Scope, task_id: str, config_id: str
) -> bool:
    with _transaction(conn):
        # its deliveries go with it (ON DELETE CASCADE)
        cur = conn.execute(
            "DELETE FROM push_configs WHERE task_pk = ? AND id = ?",
            (_task_pk(conn, scope, task_id), config_id),
        )
    return cur.rowcount > 0


# ------------------------------------------------------------------------ outbox

_PENDING_HEAD = (
    f"o.state = '{PENDING}' AND NOT EXISTS (SELECT 1 FROM push_outbox p"
    " WHERE p.task_pk = o.task_pk AND p.config_id = o.config_id"
    f" AND p.state = '{PENDING}' AND p.seq < o.seq)"
)
_DELIVERY_COLUMNS = (
    "o.pk, t.tenant, t.owner, t.id, o.config_id, o.seq, o.state, o.attempts, o.next_at,"
    " o.last_error, o.last_attempt_at"
)


def _delivery(row: Sequence[Any]) -> Delivery:
    pk, tenant, owner, task_id, config_id, seq, state, attempts, next_at, error, at = row
    return Delivery(
        id=pk,
        scope=Scope(tenant, owner),
        task_id=task_id,
        config_id=config_id,
        seq=seq,
        state=state,
        attempts=attempts,
        next_at=next_at,
        last_error=error,
        last_attempt_at=at,
    )


def _queue(conn: sqlite3.Connection, pk: int, first_seq: int, events: Sequence[Event]) -> bool:
    """Queue the deliveries the task's configs want for ``events`` (inside the
    caller's transaction); True if any was queued."""
    configs = conn.execute(
        "SELECT id, dialect FROM push_configs WHERE task_pk = ?", (pk,)
    ).fetchall()
    queued = False
    for config_id, dialect in configs:
        mode = push_mode(dialect)
        seqs = [seq for seq, e in enumerate(events, first_seq) if wants_delivery(mode, e)]
        if not seqs:
            continue
        queued = True
        if mode == "task":
            # Move a delivery nobody has tried yet on to the newest status.
            tail = conn.execute(
                "SELECT pk, attempts, claimed_until FROM push_outbox"
                f" WHERE task_pk = ? AND config_id = ? AND state = '{PENDING}'"
                " ORDER BY seq DESC LIMIT 1",
                (pk, config_id),
            ).fetchone()
            if tail is not None and tail[1] == 0 and tail[2] is None:
                conn.execute("UPDATE push_outbox SET seq = ? WHERE pk = ?", (seqs[-1], tail[0]))
                continue
            seqs = seqs[-1:]
        conn.executemany(
            "INSERT INTO push_outbox (task_pk, config_id, seq, state) VALUES (?, ?, ?, ?)",
            [(pk, config_id, seq, PENDING) for seq in seqs],
        )
    return queued


def _claim(conn: sqlite3.Connection, now: float, lease_until: float, limit: int) -> list[Delivery]:
    with _transaction(conn):
        rows = conn.execute(
            f"SELECT {_DELIVERY_COLUMNS} FROM push_outbox o JOIN tasks t ON t.pk = o.task_pk"
            f" WHERE {_PENDING_HEAD} AND o.next_at <= ?"
            " AND (o.claimed_until IS NULL OR o.claimed_until < ?)"
            " ORDER BY o.next_at, o.pk LIMIT ?",
            (now, now, max(limit, 0)),
        ).fetchall()
        conn.executemany(
            "UPDATE push_outbox SET claimed_until = ? WHERE pk = ?",
            [(lease_until, row[0]) for row in rows],
        )
    return [_delivery(row) for row in rows]


def _next_delivery_at(conn: sqlite3.Connection) -> float | None:
    row = conn.execute(
        "SELECT MIN(MAX(o.next_at, COALESCE(o.claimed_until, 0))) FROM push_outbox o"
        f" WHERE {_PENDING_HEAD}"
    ).fetchone()
    return None if row[0] is None else float(row[0])


def _delivery_done(conn: sqlite3.Connection, delivery_id: int) -> None:
    with _transaction(conn):
        conn.execute("DELETE FROM push_outbox WHERE pk = ?", (delivery_id,))


def _delivery_failed(
    conn: sqlite3.Connection,
    delivery_id: int,
    error: str,
    attempted_at: float,
    retry_at: float | None,
) -> None:
    with _transaction(conn):
        conn.execute(
            "UPDATE push_outbox SET attempts = attempts + 1, last_error = ?,"
            " last_attempt_at = ?, claimed_until = NULL, state = ?, next_at = ?"
            f" WHERE pk = ? AND state = '{PENDING}'",
            (
                error,
                attempted_at,
                DEAD if retry_at is None else PENDING,
                attempted_at if retry_at is None else retry_at,
                delivery_id,
            ),
        )


def _dead(
    conn: sqlite3.Connection, scope: Scope | None, task_id: str | None, limit: int
) -> list[Delivery]:
    where = f"o.state = '{DEAD}'"
    params: list[object] = []
    if scope is not None:
        where += " AND t.tenant = ? AND t.owner = ?"
        params += [scope.tenant, scope.owner]
    if task_id is not None:
        where += " AND t.id = ?"
        params.append(task_id)
    cur = conn.execute(
        f"SELECT {_DELIVERY_COLUMNS} FROM push_outbox o JOIN tasks t ON t.pk = o.task_pk"
        f" WHERE {where} ORDER BY o.pk LIMIT ?",
        [*params, max(limit, 0)],
    )
    return [_delivery(row) for row in cur]


def _revive(conn: sqlite3.Connection, delivery_id: int) -> bool:
    with _transaction(conn):
        cur = conn.execute(
            f"UPDATE push_outbox SET state = '{PENDING}', attempts = 0, next_at = 0,"
            f" claimed_until = NULL WHERE pk = ? AND state = '{DEAD}'",
            (delivery_id,),
        )
    return cur.rowcount > 0


def _release_claims(conn: sqlite3.Connection) -> int:
    with _transaction(conn):
        cur = conn.execute(
            "UPDATE push_outbox SET claimed_until = NULL WHERE claimed_until IS NOT NULL"
        )
    return cur.rowcount


def _outbox_counts(conn: sqlite3.Connection) -> dict[str, int]:
    counts = {PENDING: 0, DEAD: 0}
    for state, n in conn.execute("SELECT state, COUNT(*) FROM push_outbox GROUP BY state"):
        counts[state] = n
    return counts


def _row_task(task_id: str, context_id: str, status: bytes, metadata: bytes | None) -> Task:
    """The task from its row alone: what a fold gives with no history and no artifacts."""
    return Task(
        id=task_id,
        context_id=context_id,
        status=_status_decoder.decode(_unpack(status, _ids(task_id, context_id))),
        metadata=None if metadata is None else _metadata_decoder.decode(metadata),
    )


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
                f"SELECT n, payload FROM events WHERE task_pk = ?{kinds} ORDER BY seq", (pk,)
            )
            task = _fold(cur, _ids(task_id, context_id), history_length, include_artifacts)
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
            logs: dict[int, list[tuple[int, bytes]]] = {row[0]: [] for row in rows}
            marks = ", ".join("?" * len(rows))
            cur = conn.execute(
                f"SELECT task_pk, n, payload FROM events WHERE task_pk IN ({marks})"
                f"{_kind_filter(history, artifacts)} ORDER BY task_pk, seq",
                list(logs),
            )
            for pk, n, payload in cur:
                logs[pk].append((n, payload))
            tasks = [_fold(logs[row[0]], _ids(row[1], row[2]), query.history_length, artifacts)
                     for row in rows]
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
            "SELECT pk, context_id FROM tasks WHERE tenant = ? AND owner = ? AND id = ?",
            (scope.tenant, scope.owner, task_id),
        ).fetchone()
        if row is None:
            raise TaskNotFound(f"Task not found: {task_id}")
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
    cur = conn.execute(
        "SELECT tenant, owner, id, context_id, state, version, lease FROM tasks"
        f" WHERE state IN {_UNFINISHED_SQL}"
    )
    return [
        UnfinishedTask(Scope(tenant, owner), task_id, context_id, TaskState(state), version,
                       lease)
        for tenant, owner, task_id, context_id, state, version, lease in cur
    ]


def _purge(conn: sqlite3.Connection, before: str) -> int:
    with _transaction(conn):
        # the events go with their task (ON DELETE CASCADE)
        cur = conn.execute(
            f"DELETE FROM tasks WHERE state IN {_TERMINAL_SQL} AND updated_at < ?", (before,)
        )
    return cur.rowcount


def _pages_written(conn: _Connection) -> int:
    """Pages this connection has added to the WAL, roughly (it has no counter of
    its own): one a changed row, and its event payloads' bytes, since a run of
    events is one row of many pages."""
    return conn.total_changes + conn.payload_bytes // _PAGE_SIZE


def _finish_checkpoint(conn: sqlite3.Connection) -> None:
    try:
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    except sqlite3.Error:
        pass  # the writes are committed; the next checkpoint copies these frames


def _close(conn: sqlite3.Connection) -> None:
    try:
        conn.execute("PRAGMA optimize")
    except sqlite3.OperationalError:
        # Only statistics: optimize reads, then writes in one statement, so
        # another process's commit in between makes it fail at once (a stale
        # snapshot is not retried by busy_timeout). Closing must not.
        pass
    finally:
        conn.close()


# ----------------------------------------------------------------------- store


class SQLiteStore:
    """Tasks and logs in one SQLite file (or ``:memory:``), WAL mode.

    After ``open()`` the effective settings, read back from SQLite, are in
    ``journal_mode`` ("wal"; "memory" for ``:memory:``), ``synchronous``
    ("normal" by default, "full" with ``?synchronous=full``), ``busy_timeout_ms``,
    ``foreign_keys`` and ``schema_version``; ``effective`` holds all of them
    (with ``cache_size_kib`` and ``page_size``) as a dict, as ``/healthz`` reports.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self.settings = parse_sqlite_url(url)
        self.path = self.settings.path
        #: the settings read back from the database at open() (empty before)
        self.effective: dict[str, Any] = {}
        self._pool: ThreadPoolExecutor | None = None
        self._conn: _Connection | None = None
        self.on_outbox: Callable[[], None] | None = None
        # Calls run on the event loop's thread unless a commit waits for fsync
        # (synchronous=full/extra); see _run. ``?thread=1`` forces the worker.
        self._inline = self.settings.synchronous in ("normal", "off") and not self.settings.threaded
        # group commit: writes waiting for the next transaction
        self._writes: list[tuple[Callable[..., Any], tuple[Any, ...], asyncio.Future[Any]]] = []
        self._write_scheduled = False
        self._write_lock = asyncio.Lock()
        self._flushers: set[asyncio.Task[None]] = set()
        #: background WAL checkpoints (a file in WAL mode only)
        self.checkpointer: WalCheckpointer | None = None
        self._pages_seen = 0

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
        self.effective = effective
        if effective["journal_mode"] == "wal":
            self.checkpointer = WalCheckpointer(self.path, self.settings.busy_timeout_ms)
        self._pages_seen = _pages_written(conn)

    @property
    def file_path(self) -> str | None:
        return None if self.path in ("", ":memory:") else self.path

    def describe(self) -> dict[str, Any]:
        return dict(self.effective)

    @property
    def journal_mode(self) -> str:
        return str(self.effective.get("journal_mode", ""))

    @property
    def synchronous(self) -> str:
        return str(self.effective.get("synchronous", ""))

    @property
    def busy_timeout_ms(self) -> int:
        return int(self.effective.get("busy_timeout_ms", 0))

    @property
    def foreign_keys(self) -> bool:
        return bool(self.effective.get("foreign_keys", False))

    @property
    def schema_version(self) -> int:
        return int(self.effective.get("schema_version", 0))

    async def close(self) -> None:
        pool, conn = self._pool, self._conn
        if pool is None or conn is None:
            return
        self._pool = self._conn = None
        checkpointer, self.checkpointer = self.checkpointer, None
        try:
            if checkpointer is not None:
                # before the writer's close, which (as the last connection)
                # checkpoints what is left and removes the WAL
                await asyncio.to_thread(checkpointer.close)
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

    async def _write(self, fn: Callable[..., T], *args: Any) -> T:
        """A task write, committed together with the others queued meanwhile.

        Writes that arrive while the loop is busy (many requests at once) share
        one transaction: one commit, and one WAL append, for all of them.
        """
        if self._pool is None or self._conn is None:
            raise RuntimeError("the SQLite store is not open: await store.open() first")
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Any] = loop.create_future()
        self._writes.append((fn, args, fut))
        if not self._write_scheduled:
            self._write_scheduled = True
            if self._inline:
                # One loop turn later than the next: the requests that arrived
                # with this one are then further along and join the same commit
                # (measured at 16 concurrent sends: 15 writes a commit instead of 7,
                # 7% less CPU per send; the wait is a few microseconds).
                loop.call_soon(loop.call_soon, self._flush_writes_inline)
            else:
                task = loop.create_task(self._flush_writes_threaded())
                self._flushers.add(task)
                task.add_done_callback(self._flushers.discard)
        result: T = await fut
        return result

    def _take_writes(self) -> list[tuple[Callable[..., Any], tuple[Any, ...], asyncio.Future[Any]]]:
        writes, self._writes = self._writes, []
        self._write_scheduled = False
        return writes

    @staticmethod
    def _settle(writes: list[tuple[Any, Any, asyncio.Future[Any]]],
                outcomes: list[tuple[bool, Any]]) -> None:
        for (_, _, fut), (ok, value) in zip(writes, outcomes, strict=True):
            if fut.done():
                continue
            if ok:
                fut.set_result(value)
            else:
                fut.set_exception(value)

    def _flush_writes_inline(self) -> None:
        writes = self._take_writes()
        conn = self._conn
        if conn is None:
            error = RuntimeError("the SQLite store was closed")
            self._settle(writes, [(False, error)] * len(writes))
            return
        self._settle(writes, _write_group(conn, [(fn, args) for fn, args, _ in writes]))
        if self._committed(conn):
            _finish_checkpoint(conn)

    def _committed(self, conn: _Connection) -> bool:
        """Tell the checkpointer what was written; True: checkpoint on the writer now."""
        if self.checkpointer is None:
            return False
        seen = _pages_written(conn)
        pages, self._pages_seen = seen - self._pages_seen, seen
        return self.checkpointer.wrote(pages)

    async def _flush_writes_threaded(self) -> None:
        # Writes queued while this group is on the worker thread form the next group.
        async with self._write_lock:
            writes = self._take_writes()
            pool, conn = self._pool, self._conn
            if pool is None or conn is None:
                error = RuntimeError("the SQLite store was closed")
                self._settle(writes, [(False, error)] * len(writes))
                return
            call = functools.partial(_write_group, conn, [(fn, args) for fn, args, _ in writes])
            outcomes = await asyncio.get_running_loop().run_in_executor(pool, call)
            self._settle(writes, outcomes)
            if self._committed(conn):
                await asyncio.get_running_loop().run_in_executor(pool, _finish_checkpoint, conn)

    # ------------------------------------------------------------------ writes

    async def create_task(
        self,
        scope: Scope,
        events: Sequence[Event],
        *,
        dialect: str,
        now: str,
        message_id: str | None = None,
        push_configs: Sequence[PushConfig] = (),
        digest: bytes = b"",
        lease: int | None = None,
    ) -> int:
        created = _projection.created_task(events)
        # Validate the batch and find the task's status before touching the disk.
        probe = _projection.probe(created.id, created.context_id, created.status)
        _projection.advance(probe, events[1:])
        stamp = _projection.sort_stamp(probe.status, now)
        if any(not c.id for c in push_configs):
            raise ValueError("a stored push config needs its id")
        version, queued = await self._write(
            _create,
            scope,
            created,
            probe.status,
            stamp,
            events,
            dialect,
            message_id,
            now,
            push_configs,
            digest,
            lease,
        )
        self._queued(queued)
        return version

    async def append(
        self,
        scope: Scope,
        task_id: str,
        expected_version: int,
        events: Sequence[Event],
        *,
        now: str,
        lease: int | None = None,
        message: tuple[str, bytes] | None = None,
    ) -> int:
        version, queued = await self._write(_append, scope, task_id, expected_version, events,
                                            now, lease, message)
        self._queued(queued)
        return version

    def _queued(self, queued: bool) -> None:
        if queued and self.on_outbox is not None:
            self.on_outbox()

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
        found = await self.find_message(scope, message_id)
        return None if found is None else found.task_id

    async def find_message(self, scope: Scope, message_id: str) -> MessageRecord | None:
        return await self._run(_own.find_message, scope, message_id)

    async def acquire_lease(self, holder: str, now: float) -> Lease:
        return await self._write(_in_transaction(_own.acquire), holder, now)

    async def renew_lease(self, epoch: int, now: float) -> bool:
        return await self._write(_in_transaction(_own.renew), epoch, now)

    async def release_lease(self, epoch: int) -> None:
        await self._write(_in_transaction(_own.release), epoch)

    async def live_leases(self) -> list[Lease]:
        return await self._run(_own.live)

    async def owners_namespaced(self) -> bool:
        return await self._run(_own.owners_namespaced)

    async def namespace_owners(self, prefix: str) -> int:
        return await self._write(_in_transaction(_own.namespace_owners), prefix)

    async def revoke_lease(self, epoch: int, *, unless_after: float | None = None) -> bool:
        return await self._write(_in_transaction(_own.revoke), epoch, unless_after)

    async def unfinished_tasks(self) -> list[UnfinishedTask]:
        return await self._run(_unfinished)

    async def purge_finished(self, before: str) -> int:
        return await self._run(_purge, before)

    # ------------------------------------------------------------ push configs

    async def put_push_config(
        self, scope: Scope, task_id: str, config: PushConfig, *, dialect: str, now: str
    ) -> PushConfigRecord:
        return await self._run(_put_push_config, scope, task_id, config, dialect, now)

    async def get_push_config(
        self, scope: Scope, task_id: str, config_id: str
    ) -> PushConfigRecord | None:
        return await self._run(_get_push_config, scope, task_id, config_id)

    async def list_push_configs(self, scope: Scope, task_id: str) -> list[PushConfigRecord]:
        return await self._run(_list_push_configs, scope, task_id)

    async def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> bool:
        return await self._run(_delete_push_config, scope, task_id, config_id)

    # ------------------------------------------------------------------ outbox

    async def claim_deliveries(self, now: float, lease_until: float, limit: int) -> list[Delivery]:
        return await self._run(_claim, now, lease_until, limit)

    async def next_delivery_at(self) -> float | None:
        return await self._run(_next_delivery_at)

    async def delivery_done(self, delivery_id: int) -> None:
        await self._run(_delivery_done, delivery_id)

    async def delivery_failed(
        self, delivery_id: int, *, error: str, attempted_at: float, retry_at: float | None
    ) -> None:
        await self._run(_delivery_failed, delivery_id, error, attempted_at, retry_at)

    async def dead_deliveries(
        self, scope: Scope | None = None, task_id: str | None = None, limit: int = 100
    ) -> list[Delivery]:
        return await self._run(_dead, scope, task_id, limit)

    async def revive_delivery(self, delivery_id: int) -> bool:
        revived = await self._run(_revive, delivery_id)
        self._queued(revived)
        return revived

    async def release_claims(self) -> int:
        return await self._run(_release_claims)

    async def outbox_counts(self) -> dict[str, int]:
        return await self._run(_outbox_counts)
