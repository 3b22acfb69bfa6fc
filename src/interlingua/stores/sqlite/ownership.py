"""The SQLite store's ownership records: leases (who runs a task's turn), message
ids (which message made or continued which task), and how task owners are keyed.

A lease row lives while its holder heartbeats; revoking or releasing one
deletes it, and ``AUTOINCREMENT`` keeps its epoch from ever being handed out
again. Every write made under a lease checks, inside its own transaction, that
the row is still there: that is the fence a revoked process's late writes meet.
"""

from __future__ import annotations

import sqlite3

from ..base import Lease, LeaseLost, MessageExists, MessageRecord, Scope

__all__ = [
    "MIGRATION",
    "OWNERS_MIGRATION",
    "acquire",
    "check_lease",
    "find_message",
    "live",
    "message_taken",
    "namespace_owners",
    "owners_namespaced",
    "release",
    "remember_message",
    "renew",
    "revoke",
]

# Schema version 5: leases, the task's owner and message digest, follow-up
# message ids, and one task per creating message id. Duplicates that older
# versions let in keep their rows, but only the earliest keeps the message id.
MIGRATION: tuple[str, ...] = (
    """
    CREATE TABLE leases (
        epoch      INTEGER PRIMARY KEY AUTOINCREMENT,
        holder     TEXT NOT NULL,
        started    REAL NOT NULL,
        heartbeat  REAL NOT NULL
    )
    """,
    "ALTER TABLE tasks ADD COLUMN lease INTEGER",  # epoch of its last writer's lease
    "ALTER TABLE tasks ADD COLUMN digest BLOB",  # of the creating message
    """
    UPDATE tasks SET message_id = NULL
    WHERE message_id IS NOT NULL AND pk NOT IN (
        SELECT MIN(pk) FROM tasks WHERE message_id IS NOT NULL
        GROUP BY tenant, owner, message_id)
    """,
    "DROP INDEX tasks_message",
    "CREATE UNIQUE INDEX tasks_message ON tasks (tenant, owner, message_id)"
    " WHERE message_id IS NOT NULL",
    """
    CREATE TABLE task_messages (
        tenant      TEXT NOT NULL,
        owner       TEXT NOT NULL,
        message_id  TEXT NOT NULL,
        task_pk     INTEGER NOT NULL REFERENCES tasks (pk) ON DELETE CASCADE,
        digest      BLOB,
        PRIMARY KEY (tenant, owner, message_id)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX task_messages_task ON task_messages (task_pk)",
)


# Schema version 6: task owners are keyed by scheme (``Principal.owner``). A store
# with no owned tasks yet is marked as keyed so; one with owners from before is
# re-keyed by the engine at start, when it knows the configured scheme.
OWNERS_MIGRATION: tuple[str, ...] = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    "INSERT INTO meta (key, value) SELECT 'owners', 'namespaced'"
    " WHERE NOT EXISTS (SELECT 1 FROM tasks WHERE owner != '')",
)


def owners_namespaced(conn: sqlite3.Connection) -> bool:
    row = conn.execute("SELECT value FROM meta WHERE key = 'owners'").fetchone()
    return row is not None and row[0] == "namespaced"


def namespace_owners(conn: sqlite3.Connection, prefix: str) -> int:
    if owners_namespaced(conn):
        return 0
    n = conn.execute("UPDATE tasks SET owner = ? || owner WHERE owner != ''", (prefix,)).rowcount
    for table in ("task_counts", "task_messages"):
        conn.execute(f"UPDATE {table} SET owner = ? || owner WHERE owner != ''", (prefix,))
    conn.execute("INSERT INTO meta (key, value) VALUES ('owners', 'namespaced')")
    return n


def check_lease(conn: sqlite3.Connection, lease: int | None) -> None:
    if lease is not None and conn.execute(
            "SELECT 1 FROM leases WHERE epoch = ?", (lease,)).fetchone() is None:
        raise LeaseLost(f"the lease of epoch {lease} was revoked")


def acquire(conn: sqlite3.Connection, holder: str, now: float) -> Lease:
    cur = conn.execute(
        "INSERT INTO leases (holder, started, heartbeat) VALUES (?, ?, ?)", (holder, now, now))
    assert cur.lastrowid is not None
    return Lease(cur.lastrowid, holder, now, now)


def renew(conn: sqlite3.Connection, epoch: int, now: float) -> bool:
    cur = conn.execute("UPDATE leases SET heartbeat = ? WHERE epoch = ?", (now, epoch))
    return cur.rowcount == 1


def release(conn: sqlite3.Connection, epoch: int) -> None:
    conn.execute("DELETE FROM leases WHERE epoch = ?", (epoch,))


def revoke(conn: sqlite3.Connection, epoch: int, unless_after: float | None) -> bool:
    if unless_after is None:
        cur = conn.execute("DELETE FROM leases WHERE epoch = ?", (epoch,))
    else:
        cur = conn.execute("DELETE FROM leases WHERE epoch = ? AND heartbeat <= ?",
                           (epoch, unless_after))
    return cur.rowcount == 1


def live(conn: sqlite3.Connection) -> list[Lease]:
    rows = conn.execute("SELECT epoch, holder, started, heartbeat FROM leases ORDER BY epoch")
    return [Lease(epoch, holder, started, heartbeat) for epoch, holder, started, heartbeat in rows]


#: the task a message id made (its first message), else the one it continued;
#: one statement, so a send's look-up is one read (the first arm's row comes first)
_FIND_MESSAGE = (
    "SELECT id, digest FROM tasks WHERE tenant = ?1 AND owner = ?2 AND message_id = ?3"
    " UNION ALL"
    " SELECT t.id, m.digest FROM task_messages m JOIN tasks t ON t.pk = m.task_pk"
    " WHERE m.tenant = ?1 AND m.owner = ?2 AND m.message_id = ?3"
    " LIMIT 1"
)


def find_message(conn: sqlite3.Connection, scope: Scope, message_id: str) -> MessageRecord | None:
    row = conn.execute(_FIND_MESSAGE, (scope.tenant, scope.owner, message_id)).fetchone()
    if row is None:
        return None
    return MessageRecord(str(row[0]), bytes(row[1] or b""))


def message_taken(conn: sqlite3.Connection, scope: Scope, message_id: str) -> MessageExists:
    """The error for a message id a write found taken (by a unique constraint)."""
    found = find_message(conn, scope, message_id)
    return MessageExists(message_id, found or MessageRecord(""))


def remember_message(conn: sqlite3.Connection, scope: Scope, pk: int,
                     message: tuple[str, bytes]) -> None:
    """Record a message id that continued the task ``pk``."""
    message_id, digest = message
    found = find_message(conn, scope, message_id)
    if found is not None:
        raise MessageExists(message_id, found)
    conn.execute(
        "INSERT INTO task_messages (tenant, owner, message_id, task_pk, digest)"
        " VALUES (?, ?, ?, ?, ?)",
        (scope.tenant, scope.owner, message_id, pk, digest),
    )
