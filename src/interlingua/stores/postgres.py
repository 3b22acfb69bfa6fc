"""The PostgreSQL store (``postgresql://…``): one log shared by many replicas.

Rows are laid out as in the SQLite store (``sqlite.py``): a task row holds the
scalar projection, ``events`` holds runs of events as JSON, written once; the
task's own ids inside a payload are one-byte references. What differs is that
several processes write at once, each through a pool of connections:

* ``append`` locks the task row (``FOR UPDATE``) and compares its version, so
  of two concurrent writers the second finds the version moved on
  (``ConcurrentModification``) instead of overwriting;
* a write made under a lease takes a key-share lock on the lease row in its
  own transaction: a revocation (a ``DELETE`` of that row) waits for the write
  to commit, and a write after the revocation finds no row (``LeaseLost``);
* message ids are the primary key of ``messages``, so two replicas sending one
  message at once make one task;
* outbox heads are claimed with ``FOR UPDATE SKIP LOCKED``: replicas claiming
  together never take the same delivery, nor wait for each other.

Reads that need a task row and its events agree are one statement (one
snapshot) or one repeatable-read transaction.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import msgspec

from ..core.calls import ListTasks, ListTasksResult
from ..core.errors import ConcurrentModification, InvalidParams, TaskNotFound
from ..core.lifecycle import TERMINAL_STATES
from ..core.model import Event, PushConfig, Task, TaskState, TaskStatus
from . import _paging, _projection
from .base import (
    DEAD,
    PENDING,
    Delivery,
    Lease,
    LeaseLost,
    MessageExists,
    MessageRecord,
    PushConfigRecord,
    Scope,
    StoredEvent,
    StoreUnavailable,
    TaskExists,
    TaskRecord,
    UnfinishedTask,
    push_mode,
    wants_delivery,
)
from .postgres_schema import MIGRATIONS, SCHEMA_VERSION, PostgresSettings, parse_postgres_url
from .sqlite.rows import _Ids, _ids, _pack, _row_events, _runs, _unpack

__all__ = ["PostgresStore", "StoreUnavailable", "upgrade"]

_encode = msgspec.json.Encoder().encode
_push_config_decoder = msgspec.json.Decoder(PushConfig)
_status_decoder = msgspec.json.Decoder(TaskStatus)
_metadata_decoder = msgspec.json.Decoder(dict[str, Any])

_UNFINISHED = ["submitted", "working"]
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


def _connection_error(exc: BaseException) -> bool:
    return isinstance(exc, OSError | asyncpg.exceptions.PostgresConnectionError
                      | asyncpg.exceptions.InterfaceError
                      | asyncpg.exceptions.CannotConnectNowError
                      | asyncpg.exceptions.AdminShutdownError)


async def _keep_session(conn: asyncpg.Connection) -> None:
    """How the pool resets a connection given back: it has nothing to undo.

    The store leaves no state in a session: its locks are taken for a
    transaction (``FOR UPDATE``, ``pg_advisory_xact_lock``), its settings are
    ``SET LOCAL``, it listens to nothing and opens no cursor outside a
    transaction; a transaction left open is rolled back by asyncpg before this
    is called. asyncpg's default reset (``pg_advisory_unlock_all()``, ...)
    would cost every release a round trip to the server: two of the nine of a
    unary send."""


async def _migrate(conn: asyncpg.Connection, settings: PostgresSettings, *,
                   upgrade: bool) -> int:
    """Bring the schema to SCHEMA_VERSION (under an advisory lock); returns the
    version it had. With ``upgrade`` False, only check that it is current."""
    schema = settings.schema
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                           f"interlingua schema {schema}")
        exists = await conn.fetchval(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = $1"
            " AND table_name = 'schema_version'", schema)
        version = 0
        if exists:
            version = await conn.fetchval(f'SELECT version FROM "{schema}".schema_version')
        if version > SCHEMA_VERSION:
            raise RuntimeError(
                f"the database has schema version {version}; this version of interlingua "
                f"knows versions up to {SCHEMA_VERSION}")
        if version == SCHEMA_VERSION:
            return int(version)
        if not upgrade:
            raise RuntimeError(
                f"the database's schema is at version {version}, this version of interlingua "
                f"needs {SCHEMA_VERSION}: run 'interlingua db upgrade --store URL' "
                "(or drop migrate=0 from the URL)")
        await conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        await conn.execute(f'SET LOCAL search_path TO "{schema}"')
        if not exists:
            await conn.execute("CREATE TABLE schema_version (version integer NOT NULL)")
            await conn.execute("INSERT INTO schema_version VALUES (0)")
        for step in MIGRATIONS[version:]:
            for statement in step:
                await conn.execute(statement)
        await conn.execute("UPDATE schema_version SET version = $1", SCHEMA_VERSION)
    return int(version)


async def upgrade(url: str) -> tuple[int, int]:
    """Apply the migrations ``url``'s schema lacks; returns (before, after)."""
    settings = parse_postgres_url(url)
    try:
        conn = await asyncpg.connect(settings.dsn)
    except Exception as exc:
        if _connection_error(exc):
            raise StoreUnavailable(f"cannot reach PostgreSQL at {settings.where}: {exc}") from None
        raise
    try:
        before = await _migrate(conn, settings, upgrade=True)
    finally:
        await conn.close()
    return before, SCHEMA_VERSION


class PostgresStore:
    """Tasks and logs in a PostgreSQL database, shared by every replica."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.settings = parse_postgres_url(url)
        self.on_outbox: Callable[[], None] | None = None
        self._pool: asyncpg.Pool | None = None
        #: what /healthz reports (filled at open)
        self.effective: dict[str, Any] = {}

    @property
    def schema_version(self) -> int:
        return int(self.effective.get("schema_version", 0))

    @property
    def file_path(self) -> str | None:
        return None  # the data is the database server's

    def describe(self) -> dict[str, Any]:
        return dict(self.effective)

    async def owners_namespaced(self) -> bool:
        # This store came after task owners were keyed by scheme: every owner id
        # it holds was written keyed.
        return True

    async def namespace_owners(self, prefix: str) -> int:
        return 0

    async def open(self) -> None:
        if self._pool is not None:
            return
        s = self.settings
        server_settings = {"search_path": f'"{s.schema}"'}
        if "idle_in_transaction_session_timeout=" not in s.dsn:
            # Our transactions never wait on anything but the database, so one
            # left idle is a writer that stopped (a paused process): its session
            # is ended, and with it the locks others wait for (the fence of its
            # lease, its task rows).
            server_settings["idle_in_transaction_session_timeout"] = str(
                IDLE_IN_TRANSACTION_MS)
        try:
            pool = await asyncpg.create_pool(
                s.dsn, server_settings=server_settings, reset=_keep_session,
                **s.pool_options)
        except Exception as exc:
            if _connection_error(exc):
                raise StoreUnavailable(f"cannot reach PostgreSQL at {s.where}: {exc}") from None
            raise
        try:
            async with pool.acquire() as conn:
                await _migrate(conn, s, upgrade=s.migrate)
                server_version = await conn.fetchval("SHOW server_version")
        except BaseException:
            await pool.close()
            raise
        self._pool = pool
        self.effective = {"database": s.where, "schema": s.schema,
                          "schema_version": SCHEMA_VERSION, "server_version": server_version,
                          "pool_min_size": s.min_size, "pool_max_size": s.max_size}

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def __aenter__(self) -> PostgresStore:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @asynccontextmanager
    async def _conn(self) -> AsyncIterator[asyncpg.Connection]:
        pool = self._pool
        if pool is None:
            raise RuntimeError("the PostgreSQL store is not open: await store.open() first")
        try:
            async with pool.acquire() as conn:
                yield conn
        except Exception as exc:
            if _connection_error(exc):
                raise StoreUnavailable(
                    f"the task store (PostgreSQL at {self.settings.where}) is unavailable: "
                    f"{type(exc).__name__}") from exc
            raise

    @asynccontextmanager
    async def _tx(self, **options: Any) -> AsyncIterator[asyncpg.Connection]:
        async with self._conn() as conn, conn.transaction(**options):
            yield conn

    def _snapshot(self) -> Any:
        return self._tx(isolation="repeatable_read", readonly=True)

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
        probe = _projection.probe(created.id, created.context_id, created.status)
        _projection.advance(probe, events[1:])
        status = probe.status
        if any(not c.id for c in push_configs):
            raise ValueError("a stored push config needs its id")
        _no_nul(scope.tenant, scope.owner, created.id, created.context_id, message_id,
                *(c.id for c in push_configs))
        ids = _ids(created.id, created.context_id)
        metadata = None if created.metadata is None else _encode(created.metadata)
        async with self._tx() as conn:
            await _check_lease(conn, lease)
            pk = await conn.fetchval(
                "INSERT INTO tasks (tenant, owner, id, context_id, state, status, stamp,"
                " metadata, dialect, version, created_at, updated_at, lease)"
                " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12)"
                " ON CONFLICT (tenant, owner, id) DO NOTHING RETURNING pk",
                scope.tenant, scope.owner, created.id, created.context_id, status.state.value,
                _pack(_encode(status), ids), _projection.sort_stamp(status, now), metadata,
                dialect, len(events), now, lease)
            if pk is None:
                raise TaskExists(f"task {created.id} already exists")
            if message_id is not None:
                await _remember(conn, scope, pk, message_id, digest)
            await _insert_events(conn, pk, 1, events, ids)
            for config in push_configs:
                await _put_config(conn, pk, created.id, config, dialect, now)
            queued = await _queue(conn, pk, 1, events) if push_configs else False
        self._queued(queued)
        return len(events)

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
        _no_nul(scope.tenant, scope.owner, task_id, None if message is None else message[0])
        async with self._tx() as conn:
            # One statement locks the row, checks the fence (its key-share lock
            # taken in this transaction) and says whether the task has push configs.
            row = await conn.fetchrow(
                "SELECT t.pk, t.context_id, t.state, t.version,"
                " EXISTS (SELECT 1 FROM push_configs c WHERE c.task_pk = t.pk),"
                " $4::bigint IS NULL OR EXISTS (SELECT 1 FROM leases WHERE epoch = $4"
                "  FOR KEY SHARE)"
                " FROM tasks t WHERE t.tenant = $1 AND t.owner = $2 AND t.id = $3"
                " FOR UPDATE OF t",
                scope.tenant, scope.owner, task_id, lease)
            if row is None:
                await _check_lease(conn, lease)
                raise TaskNotFound(f"Task not found: {task_id}")
            pk, context_id, state, version, pushed, leased = row
            if not leased:
                raise LeaseLost(f"the lease of epoch {lease} was revoked")
            if version != expected_version:
                raise ConcurrentModification(
                    f"task {task_id} is at version {version}, not {expected_version}")
            if not events:
                return int(version)
            probe = _projection.probe(task_id, context_id, TaskStatus(state=TaskState(state)))
            status_changed = _projection.advance(probe, events)
            if message is not None:
                await _remember(conn, scope, pk, *message)
            ids = _ids(task_id, context_id)
            new_version = version + len(events)
            # the events and the task row in one statement
            runs = list(_runs(pk, version + 1, events, ids))
            insert = ("WITH logged AS (INSERT INTO events (task_pk, seq, kind, n, payload)"
                      " SELECT $1, * FROM unnest($2::integer[], $3::smallint[],"
                      " $4::integer[], $5::bytea[])) ")
            columns = ([r[1] for r in runs], [r[2] for r in runs], [r[3] for r in runs],
                       [r[4] for r in runs])
            if status_changed:
                status = probe.status
                await conn.execute(
                    insert + "UPDATE tasks SET version = $6, state = $7, status = $8,"
                    " stamp = $9, updated_at = $10, lease = COALESCE($11, lease) WHERE pk = $1",
                    pk, *columns, new_version, status.state.value,
                    _pack(_encode(status), ids), _projection.sort_stamp(status, now), now,
                    lease)
            else:
                await conn.execute(
                    insert + "UPDATE tasks SET version = $6, updated_at = $7,"
                    " lease = COALESCE($8, lease)"
                    " WHERE pk = $1", pk, *columns, new_version, now, lease)
            queued = await _queue(conn, pk, version + 1, events) if pushed else False
        self._queued(queued)
        return int(new_version)

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
        if "\x00" in task_id:
            return None
        async with self._conn() as conn:
            if history_length == 0 and not include_artifacts:
                row = await conn.fetchrow(
                    "SELECT context_id, status, metadata, dialect, version, created_at,"
                    " updated_at FROM tasks WHERE tenant = $1 AND owner = $2 AND id = $3",
                    scope.tenant, scope.owner, task_id)
                if row is None:
                    return None
                task = _row_task(task_id, row[0], row[1], row[2])
                first = row
            else:
                # one statement, one snapshot: the row and its events agree
                rows = await conn.fetch(
                    "SELECT t.context_id, t.status, t.metadata, t.dialect, t.version,"
                    " t.created_at, t.updated_at, e.n, e.payload FROM tasks t"
                    " JOIN events e ON e.task_pk = t.pk AND e.kind = ANY($4::smallint[])"
                    " WHERE t.tenant = $1 AND t.owner = $2 AND t.id = $3 ORDER BY e.seq",
                    scope.tenant, scope.owner, task_id,
                    _kinds(history_length != 0, include_artifacts))
                if not rows:
                    return None
                first = rows[0]
                task = _fold([(r[7], r[8]) for r in rows], _ids(task_id, first[0]),
                             history_length, include_artifacts)
        return TaskRecord(task=task, scope=scope, dialect=first[3], version=first[4],
                          created_at=first[5], updated_at=first[6])

    async def list_tasks(self, scope: Scope, query: ListTasks) -> ListTasksResult:
        _paging.check_query(query)
        fingerprint = _paging.filter_fingerprint(scope, query)
        cursor = _paging.decode_token(query.page_token, fingerprint) if query.page_token else None
        where = "tenant = $1 AND owner = $2"
        params: list[object] = [scope.tenant, scope.owner]
        if query.context_id is not None:
            _no_nul(query.context_id)
            params.append(query.context_id)
            where += f" AND context_id = ${len(params)}"
        if query.status is not None:
            params.append(query.status.value)
            where += f" AND state = ${len(params)}"
        if query.status_timestamp_after is not None:
            params.append(query.status_timestamp_after)
            where += f" AND stamp >= ${len(params)}"
        page_where, page_params = where, list(params)
        if cursor is not None:
            _no_nul(cursor.stamp, cursor.task_id)
            page_params += [cursor.stamp, cursor.task_id]
            n = len(page_params)
            page_where += f" AND (stamp, id) < (${n - 1}, ${n})"
        size = query.page_size
        history, artifacts = query.history_length != 0, query.include_artifacts
        async with self._snapshot() as conn:
            total = await conn.fetchval(f"SELECT count(*) FROM tasks WHERE {where}", *params)
            rows = await conn.fetch(
                "SELECT pk, id, context_id, status, metadata, stamp FROM tasks"
                f" WHERE {page_where} ORDER BY stamp DESC, id DESC LIMIT {size + 1:d}",
                *page_params)
            token = ""
            if len(rows) > size:
                del rows[size:]
                token = _paging.encode_token(fingerprint, _paging.Cursor(rows[-1][5], rows[-1][1]))
            if rows and (history or artifacts):
                logs: dict[int, list[tuple[int, bytes]]] = {row[0]: [] for row in rows}
                for pk, n, payload in await conn.fetch(
                        "SELECT task_pk, n, payload FROM events WHERE task_pk = ANY($1::bigint[])"
                        " AND kind = ANY($2::smallint[]) ORDER BY task_pk, seq",
                        list(logs), _kinds(history, artifacts)):
                    logs[pk].append((n, payload))
                tasks = [_fold(logs[row[0]], _ids(row[1], row[2]), query.history_length,
                               artifacts) for row in rows]
            else:
                tasks = [_row_task(row[1], row[2], row[3], row[4]) for row in rows]
        return ListTasksResult(tasks=tasks, next_page_token=token, page_size=len(tasks),
                               total_size=int(total))

    async def read_events(
        self, scope: Scope, task_id: str, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        wanted = -1 if limit is None else max(limit, 0)
        if "\x00" in task_id:
            raise TaskNotFound(f"Task not found: {task_id}")
        # From the row holding event after + 1 on (it may start before it); the
        # task row comes along even when no event does, in the same snapshot.
        row_limit = "" if wanted < 0 else f" LIMIT {wanted + 1:d}"
        async with self._conn() as conn:
            rows = await conn.fetch(
                "SELECT t.context_id, e.seq, e.n, e.payload FROM tasks t"
                " LEFT JOIN LATERAL (SELECT seq, n, payload FROM events"
                "  WHERE task_pk = t.pk AND seq >= COALESCE((SELECT max(seq) FROM events"
                "   WHERE task_pk = t.pk AND seq <= $4), 0)"
                f"  ORDER BY seq{row_limit}) e ON true"
                " WHERE t.tenant = $1 AND t.owner = $2 AND t.id = $3 ORDER BY e.seq",
                scope.tenant, scope.owner, task_id, after + 1)
        if not rows:
            raise TaskNotFound(f"Task not found: {task_id}")
        if wanted == 0:
            return []
        ids = _ids(task_id, rows[0][0])
        out: list[StoredEvent] = []
        for _, seq, n, payload in rows:
            if seq is None or seq + n - 1 <= after:
                continue
            for i, event in enumerate(_row_events(n, payload, ids)):
                if seq + i > after:
                    out.append(StoredEvent(seq + i, event))
            if 0 <= wanted <= len(out):
                del out[wanted:]
                break
        return out

    async def task_for_message(self, scope: Scope, message_id: str) -> str | None:
        found = await self.find_message(scope, message_id)
        return None if found is None else found.task_id

    async def find_message(self, scope: Scope, message_id: str) -> MessageRecord | None:
        if "\x00" in message_id:
            return None
        async with self._conn() as conn:
            return await _find_message(conn, scope, message_id)

    async def unfinished_tasks(self) -> list[UnfinishedTask]:
        async with self._conn() as conn:
            rows = await conn.fetch(
                "SELECT tenant, owner, id, context_id, state, version, lease FROM tasks"
                " WHERE state = ANY($1::text[])", _UNFINISHED)
        return [UnfinishedTask(Scope(tenant, owner), task_id, context_id, TaskState(state),
                               version, lease)
                for tenant, owner, task_id, context_id, state, version, lease in rows]

    async def purge_finished(self, before: str) -> int:
        async with self._conn() as conn:
            status = await conn.execute(
                "DELETE FROM tasks WHERE state = ANY($1::text[]) AND updated_at < $2",
                _TERMINAL, before)
        return _count(status)

    # ------------------------------------------------------------------ leases

    async def acquire_lease(self, holder: str, now: float) -> Lease:
        async with self._conn() as conn:
            epoch = await conn.fetchval(
                "INSERT INTO leases (holder, started, heartbeat) VALUES ($1, $2, $2)"
                " RETURNING epoch", holder, now)
        return Lease(int(epoch), holder, now, now)

    async def renew_lease(self, epoch: int, now: float) -> bool:
        async with self._conn() as conn:
            status = await conn.execute(
                "UPDATE leases SET heartbeat = $2 WHERE epoch = $1", epoch, now)
        return _count(status) == 1

    async def release_lease(self, epoch: int) -> None:
        async with self._conn() as conn:
            await conn.execute("DELETE FROM leases WHERE epoch = $1", epoch)

    async def live_leases(self) -> list[Lease]:
        async with self._conn() as conn:
            rows = await conn.fetch(
                "SELECT epoch, holder, started, heartbeat FROM leases ORDER BY epoch")
        return [Lease(int(e), h, float(s), float(b)) for e, h, s, b in rows]

    async def revoke_lease(self, epoch: int, *, unless_after: float | None = None) -> bool:
        # A write in flight under the lease holds its fence: the revocation waits
        # for it, but briefly. A writer that stopped mid-transaction (a paused
        # process) holds it until PostgreSQL ends its session (see open); until
        # then the lease is not revoked, and the caller tries again at its next look.
        try:
            async with self._tx() as conn:
                await conn.execute("SET LOCAL lock_timeout = '500ms'")
                if unless_after is None:
                    status = await conn.execute("DELETE FROM leases WHERE epoch = $1", epoch)
                else:
                    status = await conn.execute(
                        "DELETE FROM leases WHERE epoch = $1 AND heartbeat <= $2",
                        epoch, unless_after)
        except asyncpg.exceptions.LockNotAvailableError:
            return False
        return _count(status) == 1

    # ------------------------------------------------------------ push configs

    async def put_push_config(
        self, scope: Scope, task_id: str, config: PushConfig, *, dialect: str, now: str
    ) -> PushConfigRecord:
        _no_nul(config.id)
        async with self._tx() as conn:
            pk = await _task_pk(conn, scope, task_id)
            return await _put_config(conn, pk, task_id, config, dialect, now)

    async def get_push_config(
        self, scope: Scope, task_id: str, config_id: str
    ) -> PushConfigRecord | None:
        async with self._snapshot() as conn:
            pk = await _task_pk(conn, scope, task_id)
            if "\x00" in config_id:
                return None
            row = await conn.fetchrow(
                "SELECT dialect, config, created_at FROM push_configs"
                " WHERE task_pk = $1 AND id = $2", pk, config_id)
        return None if row is None else _config_record(*row)

    async def list_push_configs(self, scope: Scope, task_id: str) -> list[PushConfigRecord]:
        async with self._snapshot() as conn:
            pk = await _task_pk(conn, scope, task_id)
            rows = await conn.fetch(
                "SELECT dialect, config, created_at FROM push_configs WHERE task_pk = $1"
                " ORDER BY pk", pk)
        return [_config_record(*row) for row in rows]

    async def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> bool:
        async with self._tx() as conn:
            pk = await _task_pk(conn, scope, task_id)
            if "\x00" in config_id:
                return False
            status = await conn.execute(
                "DELETE FROM push_configs WHERE task_pk = $1 AND id = $2", pk, config_id)
        return _count(status) > 0

    # ------------------------------------------------------------------ outbox

    async def claim_deliveries(self, now: float, lease_until: float, limit: int) -> list[Delivery]:
        async with self._conn() as conn:
            rows = await conn.fetch(
                "WITH heads AS (SELECT o.pk FROM push_outbox o"
                f" WHERE {_PENDING_HEAD} AND o.next_at <= $1"
                " AND (o.claimed_until IS NULL OR o.claimed_until < $1)"
                " ORDER BY o.next_at, o.pk LIMIT $3 FOR UPDATE SKIP LOCKED)"
                " UPDATE push_outbox o SET claimed_until = $2 FROM heads, tasks t"
                f" WHERE o.pk = heads.pk AND t.pk = o.task_pk RETURNING {_DELIVERY_COLUMNS}",
                now, lease_until, max(limit, 0))
        deliveries = [_delivery(row) for row in rows]
        deliveries.sort(key=lambda d: (d.next_at, d.id))
        return deliveries

    async def next_delivery_at(self) -> float | None:
        async with self._conn() as conn:
            at = await conn.fetchval(
                "SELECT min(greatest(o.next_at, coalesce(o.claimed_until, 0)))"
                f" FROM push_outbox o WHERE {_PENDING_HEAD}")
        return None if at is None else float(at)

    async def delivery_done(self, delivery_id: int) -> None:
        async with self._conn() as conn:
            await conn.execute("DELETE FROM push_outbox WHERE pk = $1", delivery_id)

    async def delivery_failed(
        self, delivery_id: int, *, error: str, attempted_at: float, retry_at: float | None
    ) -> None:
        async with self._conn() as conn:
            await conn.execute(
                "UPDATE push_outbox SET attempts = attempts + 1, last_error = $1,"
                " last_attempt_at = $2, claimed_until = NULL, state = $3, next_at = $4"
                f" WHERE pk = $5 AND state = '{PENDING}'",
                error.replace("\x00", ""), attempted_at, DEAD if retry_at is None else PENDING,
                attempted_at if retry_at is None else retry_at, delivery_id)

    async def dead_deliveries(
        self, scope: Scope | None = None, task_id: str | None = None, limit: int = 100
    ) -> list[Delivery]:
        where = f"o.state = '{DEAD}'"
        params: list[object] = []
        if scope is not None:
            params += [scope.tenant, scope.owner]
            where += f" AND t.tenant = ${len(params) - 1} AND t.owner = ${len(params)}"
        if task_id is not None:
            params.append(task_id)
            where += f" AND t.id = ${len(params)}"
        params.append(max(limit, 0))
        async with self._conn() as conn:
            rows = await conn.fetch(
                f"SELECT {_DELIVERY_COLUMNS} FROM push_outbox o JOIN tasks t ON t.pk = o.task_pk"
                f" WHERE {where} ORDER BY o.pk LIMIT ${len(params)}", *params)
        return [_delivery(row) for row in rows]

    async def revive_delivery(self, delivery_id: int) -> bool:
        async with self._conn() as conn:
            status = await conn.execute(
                f"UPDATE push_outbox SET state = '{PENDING}', attempts = 0, next_at = 0,"
                f" claimed_until = NULL WHERE pk = $1 AND state = '{DEAD}'", delivery_id)
        revived = _count(status) > 0
        self._queued(revived)
        return revived

    async def release_claims(self) -> int:
        async with self._conn() as conn:
            status = await conn.execute(
                "UPDATE push_outbox SET claimed_until = NULL WHERE claimed_until IS NOT NULL")
        return _count(status)

    async def outbox_counts(self) -> dict[str, int]:
        counts = {PENDING: 0, DEAD: 0}
        async with self._conn() as conn:
            for state, n in await conn.fetch(
                    "SELECT state, count(*) FROM push_outbox GROUP BY state"):
                counts[state] = int(n)
        return counts


# --------------------------------------------------------------------- helpers


def _count(status: str) -> int:
    """The row count of a command tag such as ``UPDATE 3``."""
    return int(status.rsplit(" ", 1)[-1])


async def _check_lease(conn: asyncpg.Connection, lease: int | None) -> None:
    # The key-share lock makes a concurrent revocation wait for this transaction.
    if lease is not None and await conn.fetchval(
            "SELECT 1 FROM leases WHERE epoch = $1 FOR KEY SHARE", lease) is None:
        raise LeaseLost(f"the lease of epoch {lease} was revoked")


async def _find_message(conn: asyncpg.Connection, scope: Scope,
                        message_id: str) -> MessageRecord | None:
    row = await conn.fetchrow(
        "SELECT t.id, m.digest FROM messages m JOIN tasks t ON t.pk = m.task_pk"
        " WHERE m.tenant = $1 AND m.owner = $2 AND m.message_id = $3",
        scope.tenant, scope.owner, message_id)
    return None if row is None else MessageRecord(row[0], bytes(row[1] or b""))


async def _remember(conn: asyncpg.Connection, scope: Scope, pk: int, message_id: str,
                    digest: bytes) -> None:
    # A concurrent insert of the same id waits here for the other transaction;
    # if it committed, nothing is inserted and this write is refused (and undone).
    done = await conn.fetchval(
        "INSERT INTO messages (tenant, owner, message_id, task_pk, digest)"
        " VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING 1",
        scope.tenant, scope.owner, message_id, pk, digest or None)
    if done is None:
        found = await _find_message(conn, scope, message_id)
        raise MessageExists(message_id, found or MessageRecord(""))


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
        raise TaskNotFound(f"Task not found: {task_id}")
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
    " o.last_error, o.last_attempt_at"
)


def _delivery(row: Sequence[Any]) -> Delivery:
    pk, tenant, owner, task_id, config_id, seq, state, attempts, next_at, error, at = row
    return Delivery(id=pk, scope=Scope(tenant, owner), task_id=task_id, config_id=config_id,
                    seq=seq, state=state, attempts=attempts, next_at=next_at,
                    last_error=error, last_attempt_at=at)


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
            # Move a delivery nobody has tried yet on to the newest status.
            tail = await conn.fetchrow(
                "SELECT pk, attempts, claimed_until FROM push_outbox"
                f" WHERE task_pk = $1 AND config_id = $2 AND state = '{PENDING}'"
                " ORDER BY seq DESC LIMIT 1", pk, config_id)
            if tail is not None and tail[1] == 0 and tail[2] is None:
                await conn.execute("UPDATE push_outbox SET seq = $1 WHERE pk = $2",
                                   seqs[-1], tail[0])
                continue
            seqs = seqs[-1:]
        await conn.execute(
            "INSERT INTO push_outbox (task_pk, config_id, seq, state)"
            f" SELECT $1, $2, unnest($3::integer[]), '{PENDING}'", pk, config_id, seqs)
    return queued


def _row_task(task_id: str, context_id: str, status: bytes, metadata: bytes | None) -> Task:
    return Task(
        id=task_id,
        context_id=context_id,
        status=_status_decoder.decode(_unpack(status, _ids(task_id, context_id))),
        metadata=None if metadata is None else _metadata_decoder.decode(metadata),
    )


def _fold(rows: Sequence[tuple[int, bytes]], ids: _Ids, history_length: int | None,
          include_artifacts: bool) -> Task:
    task = _projection.fold(e for n, payload in rows for e in _row_events(n, payload, ids))
    task.history = _projection.trim_history(task.history, history_length)
    if not include_artifacts:
        task.artifacts = []
    return task
