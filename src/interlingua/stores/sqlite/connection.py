"""The SQLite store's connection: its URL and settings, migrations applied at open,
transactions and group commits."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple, ParamSpec, TypeVar
from urllib.parse import parse_qsl, unquote

import msgspec

from ..base import SchemaMismatch, StoreDamaged, StoreUnavailable, schema_behind
from .checkpoint import WRITER_THRESHOLD_FRAMES
from .schema import MIGRATIONS, SCHEMA_VERSION

P = ParamSpec("P")
T = TypeVar("T")

DEFAULT_BUSY_TIMEOUT_MS = 5000
#: SQLite keeps busy_timeout in a C int: a larger PRAGMA value sets it to 0
MAX_BUSY_TIMEOUT_MS = 2**31 - 1
_ON = ("1", "true", "yes", "on")
_OFF = ("0", "false", "no", "off")
_SYNCHRONOUS = {"off": 0, "normal": 1, "full": 2, "extra": 3}
_SYNCHRONOUS_NAMES = {level: name for name, level in _SYNCHRONOUS.items()}

# ------------------------------------------------------------------------- URL


class SQLiteSettings(NamedTuple):
    path: str
    synchronous: str
    busy_timeout_ms: int
    threaded: bool = False


def folder_refusal(url: str, path: str) -> str | None:
    """Why ``url`` (its ``path`` read) is no store: it names a folder (SQLite would make
    a file of the folder's name; several agents take a folder, one file each)."""
    if not path.endswith("/"):
        return None
    return (f"the SQLite store {url} names a folder; a store is one file "
            f"(sqlite:///{path}tasks.db): a folder is for several agents, each its "
            "{name}.db in it")


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
            flag = value.lower()
            if flag not in _ON and flag not in _OFF:
                raise ValueError(f"thread={value!r} in {url!r}: use 1 or 0")
            threaded = flag in _ON
        elif key == "busy_timeout":
            # ASCII digits (str.isdigit() also takes "²", which int() refuses), up to
            # what SQLite holds: past it, SQLite would wait not at all
            if not (value.isascii() and value.isdigit()
                    and int(value) <= MAX_BUSY_TIMEOUT_MS):
                raise ValueError(f"busy_timeout={value!r} in {url!r}: give milliseconds,"
                                 f" at most {MAX_BUSY_TIMEOUT_MS}")
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
    #: ``execute`` on a cursor kept for the connection's life, for a statement
    #: whose outcome is read at once (a row of a look-up by key, a write's
    #: rowcount): the connection's own ``execute`` makes a cursor each time, and
    #: registers and frees it, about 1,500 instructions a statement
    kept: Callable[..., sqlite3.Cursor]
    #: inside a group commit, whether each write gets a savepoint (see _write_group)
    savepoints: bool = True
    #: event payload bytes written, all told (a measure of the WAL's growth)
    payload_bytes: int = 0
    #: the schema version the database had when this connection opened it
    migrated_from: int = 0
    #: the lease found live in the group transaction open now, if any (see
    #: writes._check_lease); None outside a group
    lease_seen: int | None = None
    #: what a write that found the database locked says (see unavailable)
    busy_text: str = "the task store (SQLite) is busy"
    #: the store, as said of a call that met a damaged page (see unavailable)
    where: str = "the task store (SQLite)"


def _connect(settings: SQLiteSettings, url: str = "", *,
             migrate: bool = True) -> tuple[_Connection, dict[str, Any]]:
    """An open, migrated connection and its effective settings (without ``migrate``, a
    schema that is behind is refused, naming ``url``)."""
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
    conn.kept = conn.cursor().execute
    conn.busy_text = (f"the task store (SQLite at {settings.path}) is busy: another process "
                      f"has held its write lock for over busy_timeout ({settings.busy_timeout_ms}"
                      " ms)")
    conn.where = f"the task store (SQLite at {settings.path})"
    try:
        # busy_timeout first, so that switching to WAL waits out another writer
        conn.execute(f"PRAGMA busy_timeout = {settings.busy_timeout_ms:d}")
        # 2 KiB pages for a new database (an existing one keeps its own): a commit
        # appends every page it touched to the WAL, and a task write touches a
        # dozen, so smaller pages cost less per write; rows still fit on their
        # page (1 KiB pages spill). Figures: docs/architecture.md.
        conn.execute(f"PRAGMA page_size = {_PAGE_SIZE:d}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(f"PRAGMA synchronous = {_SYNCHRONOUS[settings.synchronous]:d}")
        conn.execute("PRAGMA foreign_keys = ON")
        # 64 MiB of page cache instead of 2: message ids chosen by clients are
        # often random, so that index's inserts touch pages all over.
        conn.execute("PRAGMA cache_size = -65536")
        # Checkpoints run on a thread of their own (checkpoint.py); the
        # writer's own is the backstop, at a larger WAL.
        conn.execute(f"PRAGMA wal_autocheckpoint = {WRITER_THRESHOLD_FRAMES:d}")
        conn.migrated_from = _migrate(conn, url, upgrade=migrate)
        return conn, _read_settings(conn)
    except BaseException:
        conn.close()
        raise


def _migrate(conn: sqlite3.Connection, url: str = "", *, upgrade: bool = True) -> int:
    """Bring the schema up to date; the version it had. With ``upgrade`` False, only
    check that it is current (a schema behind is refused naming ``url``, the store's)."""
    with _transaction(conn):
        version: int = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise SchemaMismatch(
                f"the database has schema version {version}; this version of interlingua "
                f"knows versions up to {SCHEMA_VERSION}"
            )
        if version < SCHEMA_VERSION and not upgrade:
            raise schema_behind(version, SCHEMA_VERSION, url)
        for step in MIGRATIONS[version:]:
            for statement in step:
                conn.execute(statement)
        if version != SCHEMA_VERSION:
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION:d}")
    return version


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


class _transaction:  # a function to its callers: ``with _transaction(conn):``
    """A write transaction (or, with ``begin="BEGIN"``, a read snapshot).

    Inside a group commit (a transaction already open, see ``_write_group``)
    it is a savepoint instead, when the group asks for one: a failed write is
    then undone without touching the others of its group.

    A class, not a generator under ``contextmanager``: every task write enters
    one, and this makes three calls where that made seven.
    """

    __slots__ = ("_begin", "_conn", "_nested", "_savepoint")

    def __init__(self, conn: sqlite3.Connection, begin: str = "BEGIN IMMEDIATE") -> None:
        self._conn = conn
        self._begin = begin

    def __enter__(self) -> None:
        conn = self._conn
        self._nested = conn.in_transaction
        if self._nested:
            self._savepoint = getattr(conn, "savepoints", True)
            if self._savepoint:
                conn.execute("SAVEPOINT one_write")
            return
        conn.execute(self._begin)

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        conn = self._conn
        if self._nested:
            if not self._savepoint:
                return
            if kind is not None:
                conn.execute("ROLLBACK TO one_write")
            conn.execute("RELEASE one_write")
            return
        if kind is None:
            conn.execute("COMMIT")
        elif conn.in_transaction:
            conn.rollback()


#: SQLITE_BUSY, SQLITE_LOCKED: another connection holds the lock asked for
_LOCK_CODES = (5, 6)
#: SQLITE_CORRUPT, SQLITE_NOTADB: the file's pages are not the database's
_DAMAGE_CODES = (11, 26)
#: SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN: the disk or the system
#: refuses the file's writes (a full disk, a file made read-only, a failing device)
_REFUSED_CODES = (8, 10, 13, 14)


class StoreBusy(StoreUnavailable):
    """Another process held the database's lock past busy_timeout."""


class StoreRefused(StoreUnavailable):
    """The disk or the system refused the database's file a write or a read (full,
    read-only, an I/O error): a call may succeed once the operator has seen to it."""


def is_locked(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite finding the lock it asked for held by another connection."""
    return (isinstance(exc, sqlite3.OperationalError)
            and getattr(exc, "sqlite_errorcode", 0) & 0xFF in _LOCK_CODES)


def is_damaged(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite finding the database's file damaged."""
    return (isinstance(exc, sqlite3.DatabaseError)
            and getattr(exc, "sqlite_errorcode", 0) & 0xFF in _DAMAGE_CODES)


def is_refused(exc: BaseException) -> bool:
    """Whether ``exc`` is the disk or the system refusing the database's file."""
    return (isinstance(exc, sqlite3.DatabaseError)
            and getattr(exc, "sqlite_errorcode", 0) & 0xFF in _REFUSED_CODES)


def unavailable(conn: _Connection, exc: BaseException) -> BaseException:
    """``exc``, or ``StoreBusy`` when it says that another process held the
    database's lock past busy_timeout, ``StoreDamaged`` when it found the file
    damaged, or a stored row that does not read back (a write reads the row it
    changes), ``StoreRefused`` when the disk refused it (full, read-only): a caller
    is told the store is unavailable (503), as when a store cannot be reached, and
    the log says why in a line, rather than an internal error with a traceback for
    each request."""
    if isinstance(exc, msgspec.DecodeError):
        return unreadable(conn, exc)
    if is_locked(exc):
        down: StoreUnavailable = StoreBusy(conn.busy_text)
    elif is_damaged(exc):
        down = StoreDamaged(f"{conn.where} is damaged: {exc}")
    elif is_refused(exc):
        down = StoreRefused(f"{conn.where} refused: {exc}")
    else:
        return exc
    down.__cause__ = exc
    return down


def unreadable(conn: _Connection, exc: Exception) -> StoreDamaged:
    """A stored row that does not read back (its bytes overwritten where SQLite's
    own checks do not look): the file is damaged, as SQLite says when they do."""
    down = StoreDamaged(f"{conn.where} is damaged: a stored row does not read back ({exc})")
    down.__cause__ = exc
    return down


def _group_locked(outcomes: list[tuple[bool, Any]]) -> bool:
    # a group whose transaction could not begin: every write failed alike, none applied
    return (bool(outcomes) and not outcomes[0][0] and isinstance(outcomes[0][1], StoreBusy)
            and outcomes[-1][1] is outcomes[0][1])


def _pauses(deadline: float) -> Iterator[float]:
    """The sleeps between tries at a locked database (doubling, up to 50 ms), for as
    long as one more fits before ``deadline`` (``time.monotonic``)."""
    pause = 0.002
    while time.monotonic() + pause <= deadline:
        yield pause
        pause = min(pause * 2, 0.05)


def waiting(deadline: float, call: Callable[[], T]) -> T:
    """``call()`` on the store's worker thread, run again while another process holds
    the database's lock, until ``deadline``: the wait SQLite's busy_timeout would
    make, off the event loop (see SQLiteStore._run)."""
    for pause in _pauses(deadline):
        try:
            return call()
        except sqlite3.OperationalError as exc:
            if not is_locked(exc):
                raise
        time.sleep(pause)
    return call()


def write_group_waiting(conn: _Connection,
                        writes: Sequence[tuple[Callable[..., Any], tuple[Any, ...]]],
                        deadline: float) -> list[tuple[bool, Any]]:
    """``_write_group``, begun again while another process holds the write lock,
    until ``deadline``: as ``waiting``, for a group."""
    for pause in _pauses(deadline):
        outcomes = _write_group(conn, writes)
        if not _group_locked(outcomes):
            return outcomes
        time.sleep(pause)
    return _write_group(conn, writes)


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
        conn.kept("BEGIN IMMEDIATE")
        for fn, args in writes:
            try:
                outcomes.append((True, fn(conn, *args)))
            except Exception as exc:
                if not savepoints:
                    conn.rollback()
                    return [(False, unavailable(conn, exc))] if len(writes) == 1 else None
                outcomes.append((False, unavailable(conn, exc)))
        conn.kept("COMMIT")
    except BaseException as exc:
        if conn.in_transaction:
            conn.rollback()
        return [(False, unavailable(conn, exc))] * len(writes)
    finally:
        conn.savepoints = True
        conn.lease_seen = None
    return outcomes



def _in_transaction(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn(conn, ...)`` as one write transaction (a savepoint inside a group)."""

    def write(conn: _Connection, *args: Any) -> T:
        conn.lease_seen = None  # a write of the leases, perhaps: read them again
        with _transaction(conn):
            return fn(conn, *args)

    return write


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
    except sqlite3.DatabaseError:
        # Only statistics: optimize reads, then writes in one statement, so
        # another process's commit in between makes it fail at once (a stale
        # snapshot is not retried by busy_timeout); a damaged file fails it too
        # ("database disk image is malformed"). Closing must not.
        pass
    finally:
        conn.close()
