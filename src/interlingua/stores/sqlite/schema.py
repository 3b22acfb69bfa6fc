"""The SQLite store's schema: its migrations, one per version, and the kinds of rows."""

from __future__ import annotations

from ...core.lifecycle import TERMINAL_STATES
from ...core.model import (
    ArtifactUpdate,
    HistoryAppended,
    StatusUpdate,
    TaskCreated,
)
from . import ownership as _own

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
    (
        # The task's history as a reader sees it (a JSON array of messages, see
        # rows._history_column), so that listing needs no fold of the log, and the
        # version it is current at: a write by a process that does not know the
        # column moves the version on, and readers then fold the log. NULL when it
        # grew past HISTORY_MAX: readers fold the log too.
        "ALTER TABLE tasks ADD COLUMN history BLOB",
        "ALTER TABLE tasks ADD COLUMN history_at INTEGER",
    ),
    (
        # The task as ListTasks answers with it, in v1.0 JSON (see listed.py):
        # where its tail starts, and the version it is current at. NULL, or
        # not current, when a reader must build the task from the other columns.
        "ALTER TABLE tasks ADD COLUMN listed BLOB",
        "ALTER TABLE tasks ADD COLUMN listed_split INTEGER",
        "ALTER TABLE tasks ADD COLUMN listed_at INTEGER",
    ),
    # A run of text chunks of one artifact is written as its first event and the
    # texts of the others (see rows._TEXT_RUN); rows written before read as ever.
    (),
    (
        # Start-up recovery and the lease heartbeat look for the unfinished tasks,
        # and only for them: an index of those alone is small, a finished task is
        # not in it, and a write that leaves the state as it was does not touch it
        # (the index it replaces held every task by its last write time, moved on
        # every write). Purging finds old finished tasks by each scope's state
        # index (reads._purge). The name stays, so that a process of an earlier
        # version still running on this database finds the index it names.
        "DROP INDEX tasks_lifecycle",
        "CREATE INDEX tasks_lifecycle ON tasks (state) WHERE state IN ('submitted', 'working')",
    ),
    _own.MESSAGE_KEY_MIGRATION,
    (
        # The task's generation (A2A 1.1: core/generation.py), so that a read of
        # the row alone has it, and the version it is current at: a write by a
        # process that does not know the column moves the version on, and readers
        # then read it from the last numbered row of the log (reads._generation).
        "ALTER TABLE tasks ADD COLUMN generation INTEGER",
        "ALTER TABLE tasks ADD COLUMN generation_at INTEGER",
    ),
    (
        # A delivery's nonce (stores/base.py, Delivery): random, fixed when it is
        # queued, so that its notification's id is unique across agents, scopes and
        # servers (a v0.1 task id is the client's). Rows queued before take one now;
        # a row a process of an earlier version queues takes one as it is written.
        "ALTER TABLE push_outbox ADD COLUMN nonce TEXT",
        "UPDATE push_outbox SET nonce = lower(hex(randomblob(16)))",
        """
        CREATE TRIGGER push_outbox_nonce AFTER INSERT ON push_outbox
        WHEN NEW.nonce IS NULL BEGIN
            UPDATE push_outbox SET nonce = lower(hex(randomblob(16))) WHERE pk = NEW.pk;
        END
        """,
    ),
    _own.REPLIES_MIGRATION,
    _own.LEASE_TIMEOUT_MIGRATION,
)
SCHEMA_VERSION = len(MIGRATIONS)
#: the version that added tasks.history: a database from before has it filled at open
HISTORY_VERSION = 7

_KIND: dict[type, int] = {TaskCreated: 0, StatusUpdate: 1, ArtifactUpdate: 2, HistoryAppended: 3}
#: as the partial indexes of both SQL stores say them (their last migrations), so
#: that a query's condition is seen to be theirs; a test keeps them in step
_UNFINISHED_SQL = "('submitted', 'working')"
_TERMINAL_SQL = "(" + ", ".join(sorted(f"'{s.value}'" for s in TERMINAL_STATES)) + ")"
