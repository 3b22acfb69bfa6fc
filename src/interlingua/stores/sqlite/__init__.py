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

from .connection import SQLiteSettings, parse_sqlite_url
from .schema import SCHEMA_VERSION
from .store import SQLiteStore

__all__ = ["SCHEMA_VERSION", "SQLiteSettings", "SQLiteStore", "parse_sqlite_url"]
