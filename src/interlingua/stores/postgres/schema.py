"""The PostgreSQL store's schema, its versions, and the URL's own options.

``MIGRATIONS[n]`` takes a schema from version n to n + 1. They run at start
(or by ``interlingua db upgrade``) in one transaction that first takes an
advisory lock named after the schema, so replicas starting at once apply each
step exactly once and the others wait, then find nothing left to do.

Text the store sorts or compares (ids, timestamps) uses the "C" collation:
byte order, which for UTF-8 is code point order, as every other store sorts.
Event payloads, statuses, metadata and push configs are JSON in ``bytea``,
written and read as the bytes msgspec makes (no parsing by the server).
"""

from __future__ import annotations

import os
import re
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "PostgresSettings", "parse_postgres_url"]

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """
        CREATE TABLE leases (
            epoch      bigserial PRIMARY KEY,   -- a sequence: never handed out twice
            holder     text NOT NULL,
            started    double precision NOT NULL,
            heartbeat  double precision NOT NULL
        )
        """,
        """
        CREATE TABLE tasks (
            pk          bigserial PRIMARY KEY,
            tenant      text COLLATE "C" NOT NULL,
            owner       text COLLATE "C" NOT NULL,
            id          text COLLATE "C" NOT NULL,
            context_id  text COLLATE "C" NOT NULL,
            state       text NOT NULL,
            status      bytea NOT NULL,           -- TaskStatus, JSON
            stamp       text COLLATE "C" NOT NULL, -- listing key: status timestamp, else write time
            metadata    bytea,                    -- JSON object, NULL when the task has none
            dialect     text NOT NULL,
            version     integer NOT NULL,
            created_at  text COLLATE "C" NOT NULL,
            updated_at  text COLLATE "C" NOT NULL,
            lease       bigint,                   -- epoch of its last writer's lease
            UNIQUE (tenant, owner, id)
        )
        """,
        # ListTasks pages by keyset on these (newest first: scanned backwards)
        "CREATE INDEX tasks_recent ON tasks (tenant, owner, stamp, id)",
        "CREATE INDEX tasks_context ON tasks (tenant, owner, context_id, stamp, id)",
        "CREATE INDEX tasks_state ON tasks (tenant, owner, state, stamp, id)",
        # recovery and purging look across scopes by state
        "CREATE INDEX tasks_lifecycle ON tasks (state, updated_at)",
        # Every message id that created or continued a task, once per scope: the
        # primary key is what makes concurrent sends of one message one task.
        """
        CREATE TABLE messages (
            tenant      text COLLATE "C" NOT NULL,
            owner       text COLLATE "C" NOT NULL,
            message_id  text COLLATE "C" NOT NULL,
            task_pk     bigint NOT NULL REFERENCES tasks (pk) ON DELETE CASCADE,
            digest      bytea,
            PRIMARY KEY (tenant, owner, message_id)
        )
        """,
        "CREATE INDEX messages_task ON messages (task_pk)",
        # A row holds a run of consecutive events of one kind: ``seq`` the
        # first, ``n`` how many (the payload is then a JSON array).
        """
        CREATE TABLE events (
            task_pk  bigint NOT NULL REFERENCES tasks (pk) ON DELETE CASCADE,
            seq      integer NOT NULL,
            kind     smallint NOT NULL,
            n        integer NOT NULL,
            payload  bytea NOT NULL,
            PRIMARY KEY (task_pk, seq)
        )
        """,
        """
        CREATE TABLE push_configs (
            pk          bigserial PRIMARY KEY,   -- keeps the registration order
            task_pk     bigint NOT NULL REFERENCES tasks (pk) ON DELETE CASCADE,
            id          text COLLATE "C" NOT NULL,
            dialect     text NOT NULL,
            config      bytea NOT NULL,
            created_at  text NOT NULL,
            UNIQUE (task_pk, id)
        )
        """,
        """
        CREATE TABLE push_outbox (
            pk               bigserial PRIMARY KEY,
            task_pk          bigint NOT NULL,
            config_id        text COLLATE "C" NOT NULL,
            seq              integer NOT NULL,
            state            text NOT NULL,
            attempts         integer NOT NULL DEFAULT 0,
            next_at          double precision NOT NULL DEFAULT 0,
            claimed_until    double precision,
            last_error       text,
            last_attempt_at  double precision,
            FOREIGN KEY (task_pk, config_id) REFERENCES push_configs (task_pk, id)
                ON DELETE CASCADE
        )
        """,
        "CREATE INDEX push_outbox_queue ON push_outbox (task_pk, config_id, state, seq)",
        "CREATE INDEX push_outbox_due ON push_outbox (state, next_at)",
    ),
    (
        # the task's history as a reader sees it and the version it is current
        # at, as the SQLite store keeps them (stores/sqlite/schema.py): listing
        # needs no fold; NULL, or a version behind (a writer of an older
        # version of interlingua), = fold the log
        "ALTER TABLE tasks ADD COLUMN history bytea",
        "ALTER TABLE tasks ADD COLUMN history_at integer",
    ),
    # A run of text chunks of one artifact is written as its first event and the
    # texts of the others (stores/sqlite/rows.py, _TEXT_RUN); rows written
    # before read as ever.
    (),
    (
        # Recovery and the lease heartbeat look for the unfinished tasks, purging
        # for the old finished ones: an index for each, of those tasks alone, and
        # neither names the last write time (``updated_at``). The index they
        # replace did, so no write of a task could be a heap-only (HOT) update,
        # which leaves every index alone: PostgreSQL allows one only when no
        # indexed column changes. A write of artifact chunks now changes none.
        # Purging goes by the status time (``stamp``), then the last write. The
        # first keeps its name, so that a replica of an earlier version still
        # running finds the unfinished tasks by it.
        "DROP INDEX tasks_lifecycle",
        "CREATE INDEX tasks_lifecycle ON tasks (state) WHERE state IN ('submitted', 'working')",
        "CREATE INDEX tasks_finished ON tasks (stamp)"
        " WHERE state IN ('canceled', 'completed', 'failed', 'rejected')",
    ),
    (
        # A message is keyed by its id and a claim: its digest (a message id reused
        # for other content is another message), or '' where the id alone names it
        # (strict mode, a message without a digest, and the rows a replica of an
        # older version writes). Rows from before take their digest.
        "ALTER TABLE messages ADD COLUMN claim bytea NOT NULL DEFAULT ''::bytea",
        "UPDATE messages SET claim = digest WHERE digest IS NOT NULL",
        "ALTER TABLE messages DROP CONSTRAINT messages_pkey",
        "ALTER TABLE messages ADD PRIMARY KEY (tenant, owner, message_id, claim)",
    ),
    (
        # The task's generation (A2A 1.1), so that a read of the row alone has it,
        # and the version it is current at (a replica of an older version moves the
        # version on; readers then read it from the log), as the SQLite store keeps it.
        "ALTER TABLE tasks ADD COLUMN generation bigint",
        "ALTER TABLE tasks ADD COLUMN generation_at integer",
    ),
    (
        # A delivery's nonce (stores/base.py, Delivery): random, fixed when it is
        # queued, so that its notification's id is unique across agents, scopes and
        # servers (a v0.1 task id is the client's). The default (volatile: one value
        # per row) gives the rows queued before one, and the rows a replica of an
        # earlier version queues.
        "ALTER TABLE push_outbox ADD COLUMN nonce text NOT NULL"
        " DEFAULT md5(random()::text || clock_timestamp()::text)",
    ),
    (
        # A message answered with a bare message (no task) is kept under its key as
        # a row with no task, with that answer (a Message, JSON) and when it was
        # given (purged with the finished tasks): the primary key keeps it from
        # a task's creation for the same message, and the reverse.
        "ALTER TABLE messages ALTER COLUMN task_pk DROP NOT NULL",
        "ALTER TABLE messages ADD COLUMN reply bytea",
        "ALTER TABLE messages ADD COLUMN created_at text",
    ),
    (
        # A lease's holder's own timeout (stores/base.py, Lease), by which the others
        # judge its silence; NULL in the leases taken before (judged by each judge's own).
        "ALTER TABLE leases ADD COLUMN timeout double precision",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


class PostgresSettings(NamedTuple):
    #: what asyncpg connects with (the URL without the options below)
    dsn: str
    #: the PostgreSQL schema (namespace) holding the tables
    schema: str
    min_size: int
    max_size: int
    #: seconds a statement may take (None: no limit)
    command_timeout: float | None
    #: seconds an idle pooled connection is kept
    max_inactive_lifetime: float
    #: apply migrations at open (else refuse a schema that is behind)
    migrate: bool

    @property
    def pool_options(self) -> dict[str, Any]:
        return {
            "min_size": self.min_size,
            "max_size": self.max_size,
            "command_timeout": self.command_timeout,
            "max_inactive_connection_lifetime": self.max_inactive_lifetime,
        }

    @property
    def where(self) -> str:
        """host:port/database, for messages (never the password); a Unix socket's
        host is its directory."""
        return _where(self.dsn)


def _where(dsn: str) -> str:
    # As asyncpg reads the URL: a host in it wins, else host= and port= of the
    # query, else PGHOST and PGPORT; the database is the path, else dbname=.
    parts = urlsplit(dsn)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    database = unquote(parts.path[1:]) if parts.path else (
        query.get("dbname") or query.get("database") or "")
    if parts.hostname:
        host = parts.hostname
        if ":" in host:  # an IPv6 address, written as in a URL
            host = f"[{host}]"
        return f"{host}:{parts.port or 5432}/{database}"
    hosts = (query.get("host") or os.environ.get("PGHOST") or "localhost").split(",")
    ports = (query.get("port") or os.environ.get("PGPORT") or str(parts.port or 5432)).split(",")
    if len(ports) != len(hosts):
        ports = ports[:1] * len(hosts)
    servers = ",".join(f"{h}:{p}" for h, p in zip(hosts, ports, strict=True))
    return f"{servers}/{database}"


def _check_database(path: str, query: str) -> None:
    """A ValueError when the URL names no database: libpq would pick one (the one named
    after the user), and the store's tables would be made there unseen."""
    named = dict(parse_qsl(query, keep_blank_values=True))
    if unquote(path.lstrip("/")) or named.get("dbname") or named.get("database") \
            or os.environ.get("PGDATABASE"):
        return
    raise ValueError("the PostgreSQL store URL names no database: give it as "
                     "postgresql://USER@HOST/DB (or with ?dbname=DB)")


def parse_postgres_url(url: str) -> PostgresSettings:
    """``postgresql://user:password@host:port/database`` with options of the pool
    (``min_size``, ``max_size``, ``command_timeout``, ``max_inactive_lifetime``),
    of the store (``schema``, default ``interlingua``; ``migrate=0`` to refuse
    a schema that is behind instead of upgrading it), and of libpq that asyncpg
    understands (``sslmode`` and so on), which are passed on."""
    scheme, sep, _ = url.partition("://")
    if not sep or scheme not in ("postgresql", "postgres"):
        raise ValueError("a PostgreSQL store URL starts with postgresql://")
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 (urllib checks the port when it is read)
    except ValueError:
        # (the URL is not shown: it may hold a password)
        raise ValueError("the PostgreSQL store URL's port is not a number from 0 to 65535") \
            from None
    _check_database(parts.path, parts.query)
    passed: list[tuple[str, str]] = []
    options: dict[str, str] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key in ("schema", "min_size", "max_size", "command_timeout",
                   "max_inactive_lifetime", "migrate"):
            options[key] = value
        else:
            passed.append((key, value))
    schema = options.get("schema", "interlingua")
    if not _SCHEMA_NAME.fullmatch(schema):
        raise ValueError(f"schema={schema!r}: use lower-case letters, digits and _ "
                         "(up to 63, not starting with a digit)")

    def count(key: str, default: int, least: int) -> int:
        value = options.get(key)
        if value is None:
            return default
        # (ASCII digits: str.isdigit() also takes "²", which int() refuses)
        if not (value.isascii() and value.isdigit()) or int(value) < least:
            raise ValueError(f"{key}={value!r} in the PostgreSQL store URL: give a whole "
                             f"number of at least {least}")
        return int(value)

    def seconds(key: str, default: float | None) -> float | None:
        value = options.get(key)
        if value is None:
            return default
        try:
            parsed = float(value)
        except ValueError:
            parsed = -1.0
        if not parsed > 0:
            raise ValueError(f"{key}={value!r} in the PostgreSQL store URL: give seconds (> 0)")
        return parsed

    min_size = count("min_size", 1, 0)
    max_size = count("max_size", 10, 1)
    if min_size > max_size:
        raise ValueError(f"min_size={min_size} is above max_size={max_size} "
                         "in the PostgreSQL store URL")
    migrate_text = options.get("migrate", "1").lower()
    if migrate_text not in _TRUE + _FALSE:
        raise ValueError(f"migrate={options['migrate']!r} in the PostgreSQL store URL: use 1 or 0")
    inactive = seconds("max_inactive_lifetime", 300.0)
    assert inactive is not None
    dsn = urlunsplit(("postgresql", parts.netloc, parts.path, urlencode(passed), ""))
    return PostgresSettings(
        dsn=dsn,
        schema=schema,
        min_size=min_size,
        max_size=max_size,
        command_timeout=seconds("command_timeout", None),
        max_inactive_lifetime=inactive,
        migrate=migrate_text in _TRUE,
    )
