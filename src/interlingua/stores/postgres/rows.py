"""Helpers of the PostgreSQL store: rows to records, the statements writes share."""


from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import asyncpg
import msgspec

from ...core.errors import InvalidParams, task_not_found
from ...core.lifecycle import TERMINAL_STATES
from ...core.model import Event, PushConfig, Task, TaskStatus
from .. import _projection
from ..base import (
    PENDING,
    Delivery,
    LeaseLost,
    MessageExists,
    MessageRecord,
    PushConfigRecord,
    Scope,
    delivery_nonce,
    push_mode,
    stored_message_record,
    wants_delivery,
)
from ..sqlite.rows import _Ids, _row_events, _runs

_encode = msgspec.json.Encoder().encode
_push_config_decoder = msgspec.json.Decoder(PushConfig)
_status_decoder = msgspec.json.Decoder(TaskStatus)
_metadata_decoder = msgspec.json.Decoder(dict[str, Any])

#: how long PostgreSQL lets a session of the store sit idle inside a transaction
IDLE_IN_TRANSACTION_MS = 5000
_TERMINAL = sorted(s.value for s in TERMINAL_STATES)


def _kinds(history: bool, artifacts: bool) -> list[int]:
    """The event kinds a fold needs (see sqlite._kind_filter)."""
    return [0, 1] + ([3] if history else []) + ([2] if artifacts else [])


def _no_nul(*texts: str | None) -> None:
    # PostgreSQL text cannot hold NUL; a peer's id with one is refused plainly.
    for text in texts:
        if text is not None and "\x00" in text:
            raise InvalidParams("Invalid params: ids must not contain the NUL character")


#: what PostgreSQL says when it answers but takes no session, or no write, of the
#: store for now: an outage of the store (503, try again), not a fault of the call
_DOWN = (
    OSError,  # no answer, a connection refused or cut (TimeoutError too)
    asyncpg.exceptions.InterfaceError,
    asyncpg.exceptions.PostgresConnectionError,  # class 08
    asyncpg.exceptions.InsufficientResourcesError,  # 53: too many connections, disk full
    asyncpg.exceptions.OperatorInterventionError,  # 57: shutdown, starting, db dropped
    asyncpg.exceptions.InvalidAuthorizationSpecificationError,  # 28: the role refused
    asyncpg.exceptions.InvalidCatalogNameError,  # 3D000: the database is gone
    asyncpg.exceptions.ReadOnlySQLTransactionError,  # 25006: read-only, a hot standby
    # a pooled session whose backend was ended while it sat idle: its protocol is left
    # mid-operation ("cannot switch to state …; another operation is in progress")
    asyncpg.exceptions.InternalClientError,
)


def _store_down(exc: BaseException, *, connecting: bool = False) -> bool:
    """Whether ``exc`` says the store's database is out of reach or refuses the store
    for now (the one rule of ``Database.open`` and of every call after it).
    ``connecting``: ``exc`` ended the making of a session, where a database that
    takes no connections (``ALLOW_CONNECTIONS false``) says 55000; inside a session
    that class says a lock not had (``lock_timeout``), which is the caller's."""
    if isinstance(exc, _DOWN):
        return True
    return connecting and type(exc) is asyncpg.exceptions.ObjectNotInPrerequisiteStateError



def _count(status: str) -> int:
    """The row count of a command tag such as ``UPDATE 3``."""
    return int(status.rsplit(" ", 1)[-1])


async def _check_lease(conn: asyncpg.Connection, lease: int | None) -> None:
    # The key-share lock makes a concurrent revocation wait for this transaction.
    if lease is not None and await conn.fetchval(
            "SELECT 1 FROM leases WHERE epoch = $1 FOR KEY SHARE", lease) is None:
        raise LeaseLost(f"the lease of epoch {lease} was revoked")


#: a task a message id made or continued: the one recorded with the digest $4, else
#: one recorded without a digest, else any (the caller compares digests)
#: (a row with no task is a message answered with a bare message, ``reply``)
_FIND_MESSAGE = (
    "SELECT COALESCE(t.id, ''), m.digest, m.reply FROM messages m"
    " LEFT JOIN tasks t ON t.pk = m.task_pk"
    " WHERE m.tenant = $1 AND m.owner = $2 AND m.message_id = $3"
    " ORDER BY CASE WHEN m.digest = $4 THEN 0 WHEN m.digest IS NULL THEN 1 ELSE 2 END"
    " LIMIT 1"
)


async def _find_message(conn: asyncpg.Connection, scope: Scope, message_id: str,
                        digest: bytes = b"") -> MessageRecord | None:
    row = await conn.fetchrow(_FIND_MESSAGE, scope.tenant, scope.owner, message_id, digest)
    return None if row is None else stored_message_record(*row)


async def _remember(conn: asyncpg.Connection, scope: Scope, pk: int, message_id: str,
                    digest: bytes, claim: bytes) -> str | None:
    """Record the message; the task of another message under its id, if there is
    one (content ids)."""
    # A concurrent insert of the same message waits here for the other transaction;
    # if it committed, nothing is inserted and this write is refused (and undone).
    # The other message is the one seen as the statement began.
    done = await conn.fetchrow(
        "INSERT INTO messages (tenant, owner, message_id, task_pk, digest, claim)"
        " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING"
        " (SELECT t.id FROM messages m JOIN tasks t ON t.pk = m.task_pk"
        "  WHERE $6 <> ''::bytea AND m.tenant = $1 AND m.owner = $2 AND m.message_id = $3"
        "  AND m.claim <> $6 LIMIT 1)",
        scope.tenant, scope.owner, message_id, pk, digest or None, claim)
    if done is None:
        found = await _find_message(conn, scope, message_id, digest)
        raise MessageExists(message_id, found or MessageRecord(""))
    other: str | None = done[0]
    return other


async def _insert_events(conn: asyncpg.Connection, pk: int, first_seq: int,
                         events: Sequence[Event], ids: _Ids) -> None:
    rows = list(_runs(pk, first_seq, events, ids))
    if len(rows) == 1:
        await conn.execute(
            "INSERT INTO events (task_pk, seq, kind, n, payload) VALUES ($1, $2, $3, $4, $5)",
            *rows[0])
        return
    # one statement for every run
    await conn.execute(
        "INSERT INTO events (task_pk, seq, kind, n, payload) SELECT $1, * FROM"
        " unnest($2::integer[], $3::smallint[], $4::integer[], $5::bytea[])",
        pk, [r[1] for r in rows], [r[2] for r in rows], [r[3] for r in rows],
        [r[4] for r in rows])


async def _task_pk(conn: asyncpg.Connection, scope: Scope, task_id: str) -> int:
    pk = None if "\x00" in task_id else await conn.fetchval(
        "SELECT pk FROM tasks WHERE tenant = $1 AND owner = $2 AND id = $3",
        scope.tenant, scope.owner, task_id)
    if pk is None:
        raise task_not_found(task_id)
    return int(pk)


async def _put_config(conn: asyncpg.Connection, pk: int, task_id: str, config: PushConfig,
                      dialect: str, now: str) -> PushConfigRecord:
    if not config.id:
        raise ValueError("a stored push config needs its id")
    config = msgspec.structs.replace(config, task_id=task_id)
    created_at = await conn.fetchval(
        "INSERT INTO push_configs (task_pk, id, dialect, config, created_at)"
        " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (task_pk, id) DO UPDATE SET"
        " dialect = excluded.dialect, config = excluded.config RETURNING created_at",
        pk, config.id, dialect, _encode(config), now)
    return PushConfigRecord(config=config, dialect=dialect, created_at=created_at)


def _config_record(dialect: str, config: bytes, created_at: str) -> PushConfigRecord:
    return PushConfigRecord(config=_push_config_decoder.decode(config), dialect=dialect,
                            created_at=created_at)


_PENDING_HEAD = (
    f"o.state = '{PENDING}' AND NOT EXISTS (SELECT 1 FROM push_outbox p"
    " WHERE p.task_pk = o.task_pk AND p.config_id = o.config_id"
    f" AND p.state = '{PENDING}' AND p.seq < o.seq)"
)
_DELIVERY_COLUMNS = (
    "o.pk, t.tenant, t.owner, t.id, o.config_id, o.seq, o.state, o.attempts, o.next_at,"
    " o.last_error, o.last_attempt_at, o.nonce"
)


def _delivery(row: Sequence[Any]) -> Delivery:
    pk, tenant, owner, task_id, config_id, seq, state, attempts, next_at, error, at, nonce = row
    return Delivery(id=pk, scope=Scope(tenant, owner), task_id=task_id, config_id=config_id,
                    seq=seq, state=state, attempts=attempts, next_at=next_at,
                    last_error=error, last_attempt_at=at, nonce=nonce or "")


async def _queue(conn: asyncpg.Connection, pk: int, first_seq: int,
                 events: Sequence[Event]) -> bool:
    """Queue the deliveries the task's configs want for ``events`` (inside the
    caller's transaction); True if any was queued."""
    configs = await conn.fetch("SELECT id, dialect FROM push_configs WHERE task_pk = $1", pk)
    queued = False
    for config_id, dialect in configs:
        mode = push_mode(dialect)
        seqs = [seq for seq, e in enumerate(events, first_seq) if wants_delivery(mode, e)]
        if not seqs:
            continue
        queued = True
        if mode == "task":
            # Move a delivery nobody has tried yet on to the newest status. The tail is
            # locked as it is read, and moved only if still unclaimed: a dispatcher's
            # claim of it (another transaction) is waited for, and then the newest
            # status queues behind the claimed one, which goes out as it was claimed.
            tail = await conn.fetchrow(
                "SELECT pk, attempts, claimed_until FROM push_outbox"
                f" WHERE task_pk = $1 AND config_id = $2 AND state = '{PENDING}'"
                " ORDER BY seq DESC LIMIT 1 FOR UPDATE", pk, config_id)
            if tail is not None and tail[1] == 0 and tail[2] is None:
                moved = await conn.execute(
                    "UPDATE push_outbox SET seq = $1 WHERE pk = $2 AND attempts = 0"
                    " AND claimed_until IS NULL", seqs[-1], tail[0])
                if moved == "UPDATE 1":
                    continue
            seqs = seqs[-1:]
        await conn.execute(
            "INSERT INTO push_outbox (task_pk, config_id, seq, state, nonce)"
            f" SELECT $1, $2, s, '{PENDING}', n FROM unnest($3::integer[], $4::text[]) AS u (s, n)",
            pk, config_id, seqs, [delivery_nonce() for _ in seqs])
    return queued


def _fold(rows: Sequence[tuple[int, bytes]], ids: _Ids, history_length: int | None,
          include_artifacts: bool) -> Task:
    task = _projection.fold(e for n, payload in rows for e in _row_events(n, payload, ids))
    task.history = _projection.trim_history(task.history, history_length)
    if not include_artifacts:
        task.artifacts = []
    return task
