"""The SQLite store's ownership records: leases (who runs a task's turn), message
ids (which message made or continued which task), and how task owners are keyed.

A lease row lives while its holder heartbeats; revoking or releasing one
deletes it, and ``AUTOINCREMENT`` keeps its epoch from ever being handed out
again. Every write made under a lease checks, inside its own transaction, that
the row is still there: that is the fence a revoked process's late writes meet.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any, Protocol

from ..base import Lease, LeaseLost, MessageExists, MessageRecord, Scope, stored_message_record


class _Connection(Protocol):
    """The store's connection (connection._Connection, which imports this module
    through schema.py): ``kept`` runs a statement on its kept cursor."""

    kept: Callable[..., sqlite3.Cursor]

    def execute(self, sql: str, parameters: Any = ..., /) -> sqlite3.Cursor: ...

__all__ = [
    "LEASE_TIMEOUT_MIGRATION",
    "MESSAGE_KEY_MIGRATION",
    "MIGRATION",
    "OWNERS_MIGRATION",
    "REPLIES_MIGRATION",
    "acquire",
    "check_lease",
    "find_message",
    "live",
    "message_taken",
    "namespace_owners",
    "owners_namespaced",
    "record_reply",
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


# Schema version 11: a message is keyed by its id and a claim: its digest (a
# message id reused for other content is another message), or b"" where the id
# alone names it (strict mode, a message without a digest, and the rows a
# process of an older version writes). Rows from before take their digest.
# SQLite cannot change a primary key: task_messages is made anew.
MESSAGE_KEY_MIGRATION: tuple[str, ...] = (
    "ALTER TABLE tasks ADD COLUMN claim BLOB NOT NULL DEFAULT x''",
    "UPDATE tasks SET claim = digest WHERE message_id IS NOT NULL AND digest IS NOT NULL",
    "DROP INDEX tasks_message",
    "CREATE UNIQUE INDEX tasks_message ON tasks (tenant, owner, message_id, claim)"
    " WHERE message_id IS NOT NULL",
    """
    CREATE TABLE task_messages_claimed (
        tenant      TEXT NOT NULL,
        owner       TEXT NOT NULL,
        message_id  TEXT NOT NULL,
        task_pk     INTEGER NOT NULL REFERENCES tasks (pk) ON DELETE CASCADE,
        digest      BLOB,
        claim       BLOB NOT NULL DEFAULT x'',
        PRIMARY KEY (tenant, owner, message_id, claim)
    ) WITHOUT ROWID
    """,
    "INSERT INTO task_messages_claimed (tenant, owner, message_id, task_pk, digest, claim)"
    " SELECT tenant, owner, message_id, task_pk, digest, COALESCE(digest, x'')"
    " FROM task_messages",
    "DROP TABLE task_messages",
    "ALTER TABLE task_messages_claimed RENAME TO task_messages",
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


def namespace_owners(conn: sqlite3.Connection, owner_of: Callable[[str], str]) -> int:
    if owners_namespaced(conn):
        return 0
    # the auth's function, not a prefix: an id may be escaped in its owner
    conn.create_function("owner_of", 1, owner_of, deterministic=True)
    n = conn.execute("UPDATE tasks SET owner = owner_of(owner) WHERE owner != ''").rowcount
    for table in ("task_counts", "task_messages"):
        conn.execute(f"UPDATE {table} SET owner = owner_of(owner) WHERE owner != ''")
    conn.execute("INSERT INTO meta (key, value) VALUES ('owners', 'namespaced')")
    return n


def check_lease(conn: _Connection, lease: int | None) -> None:
    if lease is not None and conn.kept(
            "SELECT 1 FROM leases WHERE epoch = ?", (lease,)).fetchone() is None:
        raise LeaseLost(f"the lease of epoch {lease} was revoked")


def acquire(conn: sqlite3.Connection, holder: str, now: float, timeout: float | None) -> Lease:
    cur = conn.execute("INSERT INTO leases (holder, started, heartbeat, timeout)"
                       " VALUES (?, ?, ?, ?)", (holder, now, now, timeout))
    assert cur.lastrowid is not None
    return Lease(cur.lastrowid, holder, now, now, timeout)


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
    rows = conn.execute(
        "SELECT epoch, holder, started, heartbeat, timeout FROM leases ORDER BY epoch")
    return [Lease(*row) for row in rows]


#: a task a message id made or continued (the task it made before one it
#: continued), else the bare message it was answered with: one statement, so a
#: send's look-up of a new id is one read
_FIND_MESSAGE = (
    "SELECT id, digest, NULL FROM tasks WHERE tenant = ?1 AND owner = ?2 AND message_id = ?3"
    " UNION ALL"
    " SELECT t.id, m.digest, NULL FROM task_messages m JOIN tasks t ON t.pk = m.task_pk"
    " WHERE m.tenant = ?1 AND m.owner = ?2 AND m.message_id = ?3"
    " UNION ALL"
    " SELECT '', digest, reply FROM message_replies"
    " WHERE tenant = ?1 AND owner = ?2 AND message_id = ?3"
    " LIMIT 1"
)
#: the task (or reply) that holds a message id under a claim (see MESSAGE_KEY_MIGRATION)
_CLAIMED = (
    "SELECT id, digest, NULL FROM tasks WHERE tenant = ?1 AND owner = ?2 AND message_id = ?3"
    " AND claim = ?4"
    " UNION ALL"
    " SELECT t.id, m.digest, NULL FROM task_messages m JOIN tasks t ON t.pk = m.task_pk"
    " WHERE m.tenant = ?1 AND m.owner = ?2 AND m.message_id = ?3 AND m.claim = ?4"
    " UNION ALL"
    " SELECT '', digest, reply FROM message_replies"
    " WHERE tenant = ?1 AND owner = ?2 AND message_id = ?3 AND claim = ?4"
    " LIMIT 1"
)

# Schema version 14: messages answered with a bare message (no task), keyed as a
# creating message is, with that answer (a Message, JSON) and when it was given
# (purged with the finished tasks).
REPLIES_MIGRATION: tuple[str, ...] = (
    """
    CREATE TABLE message_replies (
        tenant      TEXT NOT NULL,
        owner       TEXT NOT NULL,
        message_id  TEXT NOT NULL,
        claim       BLOB NOT NULL,
        digest      BLOB,
        reply       BLOB NOT NULL,
        created_at  TEXT NOT NULL,
        PRIMARY KEY (tenant, owner, message_id, claim)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX message_replies_age ON message_replies (created_at)",
)

# Schema version 15: a lease's holder's own timeout (``Lease.timeout``), by which the
# others judge its silence. NULL in the leases taken before: judged as they were, by
# each judge's own.
LEASE_TIMEOUT_MIGRATION: tuple[str, ...] = (
    "ALTER TABLE leases ADD COLUMN timeout REAL",
)

def _record(row: tuple[object, ...] | None) -> MessageRecord | None:
    if row is None:
        return None
    return stored_message_record(str(row[0]), row[1], row[2])  # type: ignore[arg-type]


def _check_unclaimed(conn: _Connection, scope: Scope, message_id: str, claim: bytes) -> None:
    """``MessageExists`` when a task or a reply holds the message's key already."""
    found = _record(conn.execute(
        _CLAIMED, (scope.tenant, scope.owner, message_id, claim)).fetchone())
    if found is not None:
        raise MessageExists(message_id, found)


def record_reply(conn: _Connection, scope: Scope, message_id: str, digest: bytes,
                 claim: bytes, reply: bytes, now: str) -> None:
    """Record a message answered with ``reply`` (under a write transaction)."""
    _check_unclaimed(conn, scope, message_id, claim)
    conn.execute(
        "INSERT INTO message_replies (tenant, owner, message_id, claim, digest, reply,"
        " created_at) VALUES (?, ?, ?, ?, NULLIF(?, x''), ?, ?)",
        (scope.tenant, scope.owner, message_id, claim, digest, reply, now))


def find_message(conn: _Connection, scope: Scope, message_id: str,
                 digest: bytes = b"") -> MessageRecord | None:
    """The one recorded with ``digest`` as its claim, else any."""
    found = _record(conn.kept(
        _FIND_MESSAGE, (scope.tenant, scope.owner, message_id)).fetchone())
    if found is not None and digest and found.digest != digest:
        # the id has several messages, perhaps: the one of this content, if any
        exact = _record(conn.execute(
            _CLAIMED, (scope.tenant, scope.owner, message_id, digest)).fetchone())
        if exact is not None:
            return exact
    return found


def message_taken(conn: _Connection, scope: Scope, message_id: str,
                  digest: bytes) -> MessageExists:
    """The error for a message a write found taken (by a unique constraint)."""
    found = find_message(conn, scope, message_id, digest)
    return MessageExists(message_id, found or MessageRecord(""))


def remember_message(conn: _Connection, scope: Scope, pk: int,
                     message: tuple[str, bytes, bytes]) -> None:
    """Record a message (its id, digest and claim) that continued the task ``pk``."""
    message_id, digest, claim = message
    _check_unclaimed(conn, scope, message_id, claim)
    conn.execute(
        "INSERT INTO task_messages (tenant, owner, message_id, task_pk, digest, claim)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (scope.tenant, scope.owner, message_id, pk, digest, claim),
    )
