"""Task stores, chosen by URL: ``memory://``, ``sqlite:///path`` or ``postgresql://…``.

``open_store`` builds a store; ``await store.open()`` (or ``async with``)
connects it.
"""

from __future__ import annotations

from pathlib import Path

from ._shown import shown_url
from .base import (
    Lease,
    LeaseLost,
    MessageExists,
    MessageRecord,
    Scope,
    Store,
    StoredEvent,
    StoreUnavailable,
    TaskExists,
    TaskRecord,
    UnfinishedTask,
)
from .memory import MemoryStore
from .sqlite import SQLiteStore, parse_sqlite_url

__all__ = [
    "SUPPORTED_SCHEMES",
    "Lease",
    "LeaseLost",
    "MemoryStore",
    "MessageExists",
    "MessageRecord",
    "SQLiteStore",
    "Scope",
    "Store",
    "StoreUnavailable",
    "StoredEvent",
    "TaskExists",
    "TaskRecord",
    "UnfinishedTask",
    "data_file",
    "open_store",
    "shown_url",
]

SUPPORTED_SCHEMES = ("memory://", "sqlite:///path", "postgresql://user@host/database")


def data_file(url: str) -> Path | None:
    """The file a store URL keeps its data in (a SQLite database's); None for a
    store with no file of its own (memory, PostgreSQL, ``sqlite:///:memory:``)."""
    scheme, sep, _ = url.partition("://")
    if not (sep and scheme == "sqlite"):
        return None
    path = parse_sqlite_url(url).path
    return None if path in ("", ":memory:") else Path(path)


def open_store(url: str, *, migrate: bool = True) -> Store:
    """The store for ``url``, not yet opened (``await store.open()``, or ``async with``).
    With ``migrate`` False a SQLite or PostgreSQL store's schema is not brought up to
    date at open: one that is behind is refused (``SchemaMismatch``), as ``migrate=0``
    does (for a command that reads a store, which leaves upgrades to the operator).

    The URLs a store is chosen by, as ``create_app(store=...)``, ``interlingua serve
    --store`` and ``interlingua db upgrade --store`` take them:

    * ``memory://``: in this process only, gone when it ends (tests, demos).
    * ``sqlite:///relative/path.db`` (from the working directory),
      ``sqlite:////absolute/path.db`` or ``sqlite:///:memory:``. Options in the query:
      ``synchronous=normal|full|extra|off`` (default ``normal``: WAL, commits do not wait
      for the disk; ``full`` waits for fsync on every commit), ``busy_timeout=<ms>``
      (default 5000), how long a write waits for another process's write lock, up to
      2147483647 (past the wait, the write fails with ``StoreUnavailable``, answered 503
      to its caller), and ``thread=1`` (commits on the store's worker thread even at ``normal``;
      ``0`` by default). Any other option, or value, is refused.
    * ``postgresql://user:password@host:port/database`` (or ``postgres://``; needs the
      ``postgres`` extra). A URL that names no database (in its path, with ``dbname=``,
      or by ``PGDATABASE``) is refused. Options in the query: ``min_size`` and ``max_size`` of the
      connection pool (default 1 and 10), ``command_timeout`` (seconds; none by default),
      ``max_inactive_lifetime`` (seconds an idle pooled connection is kept, default 300),
      ``schema`` (the PostgreSQL schema of the tables, default ``interlingua``) and
      ``migrate=0`` (refuse a schema that is behind instead of bringing it up to date);
      any other option (``sslmode``, ``synchronous_commit`` ...) goes to the driver.

    Raises ``ValueError`` for a URL no store understands, or a bad option; the
    message names the supported schemes (and never repeats the URL, which may hold
    a password).
    """
    scheme, sep, _ = url.partition("://")
    if sep and scheme == "memory":
        return MemoryStore(url)
    if sep and scheme == "sqlite":
        return SQLiteStore(url, migrate=migrate)
    if sep and scheme in ("postgresql", "postgres"):
        # imported here: asyncpg is an optional dependency (the postgres extra)
        try:
            from .postgres import PostgresStore
        except ImportError:
            raise ValueError(
                "a postgresql:// store needs asyncpg: pip install 'interlingua[postgres]'"
            ) from None
        return PostgresStore(url, migrate=migrate)
    shown = f"{scheme}://" if sep else "a URL without a scheme"
    raise ValueError(
        f"unsupported store URL ({shown}): supported are {', '.join(SUPPORTED_SCHEMES)}"
    )
