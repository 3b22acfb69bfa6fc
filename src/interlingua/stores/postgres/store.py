"""The PostgreSQL store's tasks, logs, message ids and leases."""


from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import asyncpg

from ...core.calls import ListTasks, ListTasksResult
from ...core.errors import ConcurrentModification, task_not_found
from ...core.generation import last_of
from ...core.model import Event, Message, PushConfig, TaskState, TaskStatus
from .. import _paging, _projection
from ..base import (
    Lease,
    LeaseLost,
    MessageExists,
    MessageRecord,
    Scope,
    StoredEvent,
    TaskExists,
    TaskRecord,
    UnfinishedTask,
    other_content,
    stored_message_record,
)
from ..holders import session_tag
from ..sqlite.rows import (
    NUMBERED_KINDS,
    _history_column,
    _Ids,
    _ids,
    _pack,
    _row_events,
    _row_task,
    _runs,
    advance_row,
    row_generation,
)
from ..sqlite.schema import _TERMINAL_SQL, _UNFINISHED_SQL
from .connection import reads_rows
from .outbox import Outbox
from .rows import (
    _FIND_MESSAGE,
    _TERMINAL,
    _check_lease,
    _count,
    _encode,
    _fold,
    _insert_events,
    _kinds,
    _no_nul,
    _put_config,
    _queue,
    _remember,
)

log = logging.getLogger("interlingua.stores")

# The whole of create_task for a task without push configs (see _create_at_once).
_CREATE_AT_ONCE = (
    "WITH fence AS (SELECT $12::bigint IS NULL OR EXISTS (SELECT 1 FROM leases"
    "  WHERE epoch = $12 FOR KEY SHARE) AS ok),"
    " task AS (INSERT INTO tasks (tenant, owner, id, context_id, state, status, stamp,"
    "  metadata, dialect, version, created_at, updated_at, lease, history, history_at,"
    "  generation, generation_at)"
    "  SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12, $13, $10, $21, $10"
    "  FROM fence WHERE ok"
    "  ON CONFLICT (tenant, owner, id) DO NOTHING RETURNING pk),"
    " message AS (INSERT INTO messages (tenant, owner, message_id, task_pk, digest, claim)"
    "  SELECT $1, $2, $14, pk, $15, $20 FROM task WHERE $14::text IS NOT NULL),"
    " logged AS (INSERT INTO events (task_pk, seq, kind, n, payload)"
    "  SELECT task.pk, e.* FROM task, unnest($16::integer[], $17::smallint[],"
    "  $18::integer[], $19::bytea[]) AS e)"
    " SELECT (SELECT pk FROM task), (SELECT ok FROM fence),"
    # another message under the id (content ids), seen as the statement began:
    # this one, if written, is a new message, which is said
    "  (SELECT t.id FROM messages m JOIN tasks t ON t.pk = m.task_pk"
    "   WHERE $20 <> ''::bytea AND m.tenant = $1 AND m.owner = $2 AND m.message_id = $14"
    "   AND m.claim <> $20 LIMIT 1)"
)

# An append to a task at a known version, without push configs (see _append_at_once).
_APPEND_TEMPLATE = (
    "WITH task AS (UPDATE tasks SET version = $7, updated_at = $8,"
    " lease = COALESCE($9, lease), history_at = CASE WHEN history_at = $6 THEN $7::integer END,"
    " generation = COALESCE($10::bigint, generation), generation_at = CASE WHEN"
    " $10::bigint IS NOT NULL OR generation_at = $6 THEN $7::integer END{set}"
    " WHERE pk = $1 AND version = $6"
    " AND NOT EXISTS (SELECT 1 FROM push_configs c WHERE c.task_pk = $1)"
    " AND ($9::bigint IS NULL OR EXISTS (SELECT 1 FROM leases WHERE epoch = $9"
    "  FOR KEY SHARE)) RETURNING pk),"
    " logged AS (INSERT INTO events (task_pk, seq, kind, n, payload)"
    "  SELECT task.pk, e.* FROM task, unnest($2::integer[], $3::smallint[],"
    "  $4::integer[], $5::bytea[]) AS e)"
    " SELECT count(*) FROM task"
)
# formatted once: the statement text is also asyncpg's cache key
_APPEND_STATUS_AT_ONCE = _APPEND_TEMPLATE.format(set=", state = $11, status = $12, stamp = $13")
_APPEND_AT_ONCE = _APPEND_TEMPLATE.format(set="")
# A message id's look-up as one row, found or not (GroupCommit's statements return one).
_FIND_MESSAGE_ROW = f"SELECT f.* FROM (SELECT) one LEFT JOIN LATERAL ({_FIND_MESSAGE}) f ON true"
#: the tasks whose last write this process remembers (the oldest is forgotten first)
_WRITTEN_KEPT = 4096


async def _logs(conn: asyncpg.Connection, pks: list[int], history: bool,
                artifacts: bool) -> dict[int, list[tuple[int, bytes]]]:
    """The rows a fold of each of these tasks needs, by task."""
    logs: dict[int, list[tuple[int, bytes]]] = {pk: [] for pk in pks}
    if pks:
        for pk, n, payload in await conn.fetch(
                "SELECT task_pk, n, payload FROM events WHERE task_pk = ANY($1::bigint[])"
                " AND kind = ANY($2::smallint[]) ORDER BY task_pk, seq",
                pks, _kinds(history, artifacts)):
            logs[pk].append((n, payload))
    return logs


#: the row holding a task's generation (sqlite.rows.row_generation), of the task
#: named ``t.pk``: a walk back from the end of its log, which nearly always
#: stops at the last row
_LAST_NUMBERED = ("SELECT kind, n, payload FROM events WHERE task_pk = t.pk"
                  f" AND kind IN {NUMBERED_KINDS} ORDER BY seq DESC LIMIT 1")


#: the task's generation as its row keeps it (NULL: not kept, or not current)
_KEPT_GENERATION = "CASE WHEN generation_at = version THEN generation END"
_KEPT_GENERATION_T = "CASE WHEN t.generation_at = t.version THEN t.generation END"


async def _generation_of(conn: asyncpg.Connection, pk: int, task_id: str,
                         context_id: str) -> int:
    """The generation of a task whose row does not keep it, from its log."""
    end = (await _generations(conn, [pk])).get(pk)
    return 0 if end is None else row_generation(end, _ids(task_id, context_id))


async def _generations(conn: asyncpg.Connection, pks: list[int]) -> dict[int, Any]:
    """The row holding the generation of each of these tasks (kind, n, payload)."""
    rows = await conn.fetch(
        "SELECT t.pk, g.kind, g.n, g.payload FROM unnest($1::bigint[]) AS t(pk)"
        f" CROSS JOIN LATERAL ({_LAST_NUMBERED}) g", pks) if pks else []
    return {row[0]: row[1:] for row in rows}


class PostgresStore(Outbox):
    """Tasks and logs in a PostgreSQL database, shared by every replica."""

    # ------------------------------------------------------------------ writes

    @reads_rows
    async def create_task(
        self,
        scope: Scope,
        events: Sequence[Event],
        *,
        dialect: str,
        now: str,
        message_id: str | None = None,
        push_configs: Sequence[PushConfig] = (),
        push_dialect: str | None = None,
        digest: bytes = b"",
        lease: int | None = None,
        strict: bool = False,
        looked_up: bool = False,
        other_found: MessageRecord | None = None,
    ) -> int:
        created = _projection.created_task(events)
        probe = _projection.probe(created.id, created.context_id, created.status)
        probe.history = list(created.history)  # the history the row keeps
        _projection.advance_probe(probe, events[1:])
        status = probe.status
        if any(not c.id for c in push_configs):
            raise ValueError("a stored push config needs its id")
        _no_nul(scope.tenant, scope.owner, created.id, created.context_id, message_id,
                *(c.id for c in push_configs))
        ids = _ids(created.id, created.context_id)
        metadata = None if created.metadata is None else _encode(created.metadata)
        row = (scope.tenant, scope.owner, created.id, created.context_id, status.state.value,
               _pack(_encode(status), ids), _projection.sort_stamp(status, now), metadata,
               dialect, len(events), now, lease,
               _history_column(probe.history, created.id, created.context_id))
        claim = b"" if strict else digest
        if not push_configs:
            pk = await self._create_at_once(scope, row, message_id, digest, claim, events, ids)
            self._wrote((scope.tenant, scope.owner, created.id), pk, created.context_id,
                        status.state, len(events))
            return len(events)
        other = None
        async with self._tx() as conn:
            await _check_lease(conn, lease)
            pk = await conn.fetchval(
                "INSERT INTO tasks (tenant, owner, id, context_id, state, status, stamp,"
                " metadata, dialect, version, created_at, updated_at, lease, history,"
                " history_at, generation, generation_at)"
                " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12, $13, $10,"
                " $14, $10) ON CONFLICT (tenant, owner, id) DO NOTHING RETURNING pk",
                *row, last_of(events))
            if pk is None:
                raise TaskExists(f"task {created.id} already exists")
            if message_id is not None:
                other = await _remember(conn, scope, pk, message_id, digest, claim)
            await _insert_events(conn, pk, 1, events, ids)
            for config in push_configs:
                await _put_config(conn, pk, created.id, config, push_dialect or dialect, now)
            queued = await _queue(conn, pk, 1, events)
        self._queued(queued)
        if other is not None:
            assert message_id is not None
            other_content(message_id, other)
        return len(events)

    async def _create_at_once(self, scope: Scope, row: tuple[Any, ...], message_id: str | None,
                              digest: bytes, claim: bytes, events: Sequence[Event],
                              ids: _Ids) -> int:
        """A new task without push configs in one statement, committed with the
        other sends' statements of the moment (``GroupCommit``).

        One round trip instead of six (begin, fence, task, message id, events,
        commit): a unary send's whole write. Each part only happens when the
        ones before it did; a message id another send holds makes the statement
        fail as a whole, so nothing of it is written.
        """
        runs = list(_runs(0, 1, events, ids))
        args = (*row, message_id, digest or None, [r[1] for r in runs], [r[2] for r in runs],
                [r[3] for r in runs], [r[4] for r in runs], claim, last_of(events))
        try:
            pk, fenced, other = await self._group.row(_CREATE_AT_ONCE, args)
        except asyncpg.UniqueViolationError:
            # only the message id can collide (the task's own conflict inserts nothing)
            if message_id is None:
                raise
            found = await self.find_message(scope, message_id, digest)
            raise MessageExists(message_id, found or MessageRecord("")) from None
        if not fenced:
            raise LeaseLost(f"the lease of epoch {row[11]} was revoked")
        if pk is None:
            raise TaskExists(f"task {row[2]} already exists")
        if other is not None:
            assert message_id is not None
            other_content(message_id, other)
        return int(pk)

    @reads_rows
    async def append(
        self,
        scope: Scope,
        task_id: str,
        expected_version: int | None,
        events: Sequence[Event],
        *,
        now: str,
        lease: int | None = None,
        message: tuple[str, bytes] | None = None,
        strict: bool = False,
        if_generation: int | None = None,
    ) -> int:
        _no_nul(scope.tenant, scope.owner, task_id, None if message is None else message[0])
        key = (scope.tenant, scope.owner, task_id)
        known = self._written.get(key)
        # the short way does not read the row, so not its history either
        if (known is not None and known[3] == expected_version and message is None and events
                and not _projection.adds_messages(events)
                and await self._append_at_once(key, known, events, now, lease)):
            return expected_version + len(events)
        self._written.pop(key, None)
        async with self._tx() as conn:
            # One statement locks the row, checks the fence (its key-share lock
            # taken in this transaction) and says whether the task has push configs.
            row = await conn.fetchrow(
                "SELECT t.pk, t.context_id, t.state, t.version, t.history, t.history_at,"
                " EXISTS (SELECT 1 FROM push_configs c WHERE c.task_pk = t.pk),"
                " $4::bigint IS NULL OR EXISTS (SELECT 1 FROM leases WHERE epoch = $4"
                "  FOR KEY SHARE)"
                " FROM tasks t WHERE t.tenant = $1 AND t.owner = $2 AND t.id = $3"
                " FOR UPDATE OF t",
                scope.tenant, scope.owner, task_id, lease)
            if row is None:
                await _check_lease(conn, lease)
                raise task_not_found(task_id)
            pk, context_id, state, version, history, history_at, pushed, leased = row
            if not leased:
                raise LeaseLost(f"the lease of epoch {lease} was revoked")
            if version != expected_version:
                if expected_version is not None:
                    raise ConcurrentModification(
                        f"task {task_id} is at version {version}, not {expected_version}")
                # at the version it is at (the row is locked until the commit)
                kept = await conn.fetchval(f"SELECT {_KEPT_GENERATION} FROM tasks WHERE pk = $1",
                                           pk)
                _projection.as_stored(task_id, TaskState(state), int(kept) if kept is not None
                                      else await _generation_of(conn, pk, task_id, context_id),
                                      events, if_generation)
            if not events:
                return int(version)
            status_changed, status, history, _ = advance_row(
                task_id, context_id, state, events, history, history_at == version)
            if message is not None:
                await _remember(conn, scope, pk, *message, b"" if strict else message[1])
            ids = _ids(task_id, context_id)
            new_version = version + len(events)
            history_at = None if history is None else new_version
            # the events and the task row in one statement
            runs = list(_runs(pk, version + 1, events, ids))
            insert = ("WITH logged AS (INSERT INTO events (task_pk, seq, kind, n, payload)"
                      " SELECT $1, * FROM unnest($2::integer[], $3::smallint[],"
                      " $4::integer[], $5::bytea[])) ")
            columns = ([r[1] for r in runs], [r[2] for r in runs], [r[3] for r in runs],
                       [r[4] for r in runs])
            # (the generation: as _APPEND_TEMPLATE sets it, from the batch's last)
            generation = last_of(events)
            if status_changed:
                await conn.execute(
                    insert + "UPDATE tasks SET version = $6, state = $7, status = $8,"
                    " stamp = $9, updated_at = $10, lease = COALESCE($11, lease),"
                    " history = $12, history_at = $13,"
                    " generation = COALESCE($14::bigint, generation), generation_at = CASE"
                    " WHEN $14::bigint IS NOT NULL OR generation_at = version THEN $6::integer END"
                    " WHERE pk = $1",
                    pk, *columns, new_version, status.state.value,
                    _pack(_encode(status), ids), _projection.sort_stamp(status, now), now,
                    lease, history, history_at, generation)
            else:
                await conn.execute(
                    insert + "UPDATE tasks SET version = $6, updated_at = $7,"
                    " lease = COALESCE($8, lease), history = $9, history_at = $10,"
                    " generation = COALESCE($11::bigint, generation), generation_at = CASE"
                    " WHEN $11::bigint IS NOT NULL OR generation_at = version THEN $6::integer END"
                    " WHERE pk = $1", pk, *columns, new_version, now, lease, history,
                    history_at, generation)
            queued = await _queue(conn, pk, version + 1, events) if pushed else False
        if not pushed:
            self._wrote(key, pk, context_id, status.state, int(new_version))
        self._queued(queued)
        return int(new_version)

    async def _append_at_once(self, key: tuple[str, str, str], known: tuple[int, str, str, int],
                              events: Sequence[Event], now: str, lease: int | None) -> bool:
        """Append to a task this process wrote last, in one statement.

        One round trip instead of four (begin, lock and read the row, write,
        commit). The row is not read: this process knows its state at the
        version it wrote, and the statement writes only if the row is still at
        that version, still has no push configs and the lease still stands.
        False if it wrote nothing: the caller then takes the long way, which
        says why.
        """
        pk, context_id, state, version = known
        probe = _projection.probe(key[2], context_id, TaskStatus(state=TaskState(state)))
        status_changed = _projection.advance_probe(probe, events)
        status = probe.status
        ids = _ids(key[2], context_id)
        runs = list(_runs(pk, version + 1, events, ids))
        new_version = version + len(events)
        columns = ([r[1] for r in runs], [r[2] for r in runs], [r[3] for r in runs],
                   [r[4] for r in runs])
        args: tuple[Any, ...]
        if status_changed:
            statement = _APPEND_STATUS_AT_ONCE
            args = (pk, *columns, version, new_version, now, lease, last_of(events),
                    status.state.value, _pack(_encode(status), ids),
                    _projection.sort_stamp(status, now))
        else:
            statement = _APPEND_AT_ONCE
            args = (pk, *columns, version, new_version, now, lease, last_of(events))
        written = (await self._group.row(statement, args))[0]
        if not written:
            return False
        self._wrote(key, pk, context_id, status.state, new_version)
        return True

    def _wrote(self, key: tuple[str, str, str], pk: int, context_id: str, state: TaskState,
               version: int) -> None:
        self._written.pop(key, None)
        if state.value in _TERMINAL:
            return  # nothing more is written to it
        if len(self._written) >= _WRITTEN_KEPT:
            del self._written[next(iter(self._written))]
        self._written[key] = (pk, context_id, state.value, version)

    # ------------------------------------------------------------------- reads

    @reads_rows
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
                first = await conn.fetchrow(
                    "SELECT context_id, status, metadata, dialect, version, created_at,"
                    f" updated_at, pk, {_KEPT_GENERATION} FROM tasks"
                    " WHERE tenant = $1 AND owner = $2 AND id = $3",
                    scope.tenant, scope.owner, task_id)
                if first is None:
                    return None
                task = _row_task(task_id, first[0], first[1], first[2])
            else:
                # one statement, one snapshot: the row and its events agree
                rows = await conn.fetch(
                    "SELECT t.context_id, t.status, t.metadata, t.dialect, t.version,"
                    f" t.created_at, t.updated_at, t.pk, {_KEPT_GENERATION_T},"
                    " e.n, e.payload FROM tasks t"
                    " JOIN events e ON e.task_pk = t.pk AND e.kind = ANY($4::smallint[])"
                    " WHERE t.tenant = $1 AND t.owner = $2 AND t.id = $3 ORDER BY e.seq",
                    scope.tenant, scope.owner, task_id,
                    _kinds(history_length != 0, include_artifacts))
                if not rows:
                    return None
                first = rows[0]
                task = _fold([(r[9], r[10]) for r in rows], _ids(task_id, first[0]),
                             history_length, include_artifacts)
            if not include_artifacts:  # the fold saw no artifact event, or none at all
                task.generation = first[8] if first[8] is not None else max(
                    task.generation, await _generation_of(conn, first[7], task_id, first[0]))
        return TaskRecord(task=task, scope=scope, dialect=first[3], version=first[4],
                          created_at=first[5], updated_at=first[6])

    @reads_rows
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
                "SELECT pk, id, context_id, status, metadata, stamp,"
                f" CASE WHEN history_at = version THEN history END, {_KEPT_GENERATION}"
                f" FROM tasks WHERE {page_where} ORDER BY stamp DESC, id DESC"
                f" LIMIT {size + 1:d}", *page_params)
            token = ""
            if len(rows) > size:
                del rows[size:]
                token = _paging.encode_token(fingerprint, _paging.Cursor(rows[-1][5], rows[-1][1]))
            if artifacts:
                logs = await _logs(conn, [row[0] for row in rows], history, artifacts)
            elif history:
                # the row's history when it keeps one, else the log's
                logs = await _logs(conn, [row[0] for row in rows if row[6] is None], True, False)
            else:
                logs = {}
            # the folds see no artifact event, or there are none: the row keeps
            # the generation, else the log has it
            numbered = {} if artifacts else await _generations(
                conn, [row[0] for row in rows if row[7] is None])
        tasks = [
            _fold(logs[pk], _ids(task_id, context_id), query.history_length, artifacts)
            if pk in logs
            else _row_task(task_id, context_id, status, metadata,
                           kept if history else None, query.history_length)
            for pk, task_id, context_id, status, metadata, _, kept, _ in rows
        ]
        if not artifacts:  # the folds saw no artifact event: the row's, else the log's
            for task, row in zip(tasks, rows, strict=True):
                if row[7] is not None:
                    task.generation = row[7]
                elif (end := numbered.get(row[0])) is not None:
                    task.generation = max(task.generation,
                                          row_generation(end, _ids(row[1], row[2])))
        return ListTasksResult(tasks=tasks, next_page_token=token, page_size=size,
                               total_size=int(total))

    @reads_rows
    async def read_events(
        self, scope: Scope, task_id: str, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        wanted = -1 if limit is None else max(limit, 0)
        if "\x00" in task_id:
            raise task_not_found(task_id)
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
            raise task_not_found(task_id)
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

    @reads_rows
    async def find_message(self, scope: Scope, message_id: str,
                           digest: bytes = b"") -> MessageRecord | None:
        if "\x00" in message_id:
            return None
        # a send's look-up: committed (as a read) with the sends' writes of the moment
        task_id, found, reply = await self._group.row(
            _FIND_MESSAGE_ROW, (scope.tenant, scope.owner, message_id, digest))
        return None if task_id is None else stored_message_record(task_id, found, reply)

    async def record_reply(self, scope: Scope, message_id: str, digest: bytes,
                           reply: Message, *, now: str, strict: bool = False) -> None:
        _no_nul(scope.tenant, scope.owner, message_id)
        async with self._conn() as conn:
            # (a message key another send holds, for a task or a reply: nothing inserted)
            done = await conn.fetchval(
                "INSERT INTO messages (tenant, owner, message_id, task_pk, digest, claim,"
                " reply, created_at) VALUES ($1, $2, $3, NULL, $4, $5, $6, $7)"
                " ON CONFLICT DO NOTHING RETURNING true",
                scope.tenant, scope.owner, message_id, digest or None,
                b"" if strict else digest, _encode(reply), now)
        if done is None:
            found = await self.find_message(scope, message_id, digest)
            raise MessageExists(message_id, found or MessageRecord(""))

    async def unfinished_tasks(self) -> list[UnfinishedTask]:
        async with self._conn() as conn:
            rows = await conn.fetch(
                "SELECT tenant, owner, id, context_id, state, version, lease FROM tasks"
                f" WHERE state IN {_UNFINISHED_SQL}")
        return [UnfinishedTask(Scope(tenant, owner), task_id, context_id, TaskState(state),
                               version, lease)
                for tenant, owner, task_id, context_id, state, version, lease in rows]

    async def purge_finished(self, before: str) -> int:
        async with self._conn() as conn:
            status = await conn.execute(
                # by tasks_finished: the final status is written no later than
                # the last write; a status stamped by a clock ahead of the
                # writer's only keeps its task longer
                f"DELETE FROM tasks WHERE state IN {_TERMINAL_SQL} AND stamp < $1"
                " AND updated_at < $1", before)
            await conn.execute(
                "DELETE FROM messages WHERE task_pk IS NULL AND created_at < $1", before)
        return _count(status)

    # ------------------------------------------------------------------ leases

    async def acquire_lease(self, holder: str, now: float,
                            timeout: float | None = None) -> Lease:
        async with self._conn() as conn:
            epoch = await conn.fetchval(
                "INSERT INTO leases (holder, started, heartbeat, timeout) VALUES ($1, $2, $2, $3)"
                " RETURNING epoch", holder, now, timeout)
        return Lease(int(epoch), holder, now, now, timeout)

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
                "SELECT epoch, holder, started, heartbeat, timeout FROM leases ORDER BY epoch")
        return [Lease(int(e), h, float(s), float(b), None if t is None else float(t))
                for e, h, s, b, t in rows]

    async def revoke_lease(self, epoch: int, *, unless_after: float | None = None) -> bool:
        # A write in flight under the lease holds its fence: the revocation waits
        # for it, but briefly. A writer that stopped mid-transaction (a paused
        # process) holds it as long as its session lasts. PostgreSQL ends a session
        # left idle in a transaction (see open), but not one stopped in the middle
        # of a pipeline or of a message, which it counts as active: those sessions
        # of the holder are ended here, and the revocation tried again.
        revoked = await self._revoke(epoch, unless_after)
        if revoked is None and await self._end_sessions_of(epoch, unless_after):
            revoked = await self._revoke(epoch, unless_after)
        return bool(revoked)

    async def _revoke(self, epoch: int, unless_after: float | None) -> bool | None:
        """Whether the lease was revoked; None when a write under it held it longer
        than a moment."""
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
            return None
        return _count(status) == 1

    async def _end_sessions_of(self, epoch: int, unless_after: float | None) -> int:
        """End the sessions in a transaction of the holder of lease ``epoch`` (while
        the lease is still as silent as its revoker judged it); returns how many.
        Its writes would be refused once the lease is revoked: only their locks go
        with them. Sessions are known by their name (``session_tag``); a store whose
        URL names its sessions otherwise is left to PostgreSQL's own timeouts."""
        async with self._conn() as conn:
            holder = await conn.fetchval(
                "SELECT holder FROM leases WHERE epoch = $1"
                " AND ($2::double precision IS NULL OR heartbeat <= $2)", epoch, unless_after)
            if holder is None:
                return 0
            try:
                ended = await conn.fetchval(
                    "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))"
                    " FROM pg_stat_activity WHERE application_name = $1"
                    " AND datname = current_database() AND pid <> pg_backend_pid()"
                    " AND xact_start IS NOT NULL", session_tag(holder))
            except asyncpg.exceptions.InsufficientPrivilegeError as exc:
                log.warning("cannot end the sessions of %s, whose lease is being revoked: %s",
                            holder, exc)
                return 0
        if ended:
            log.warning("ended %d PostgreSQL session(s) of %s (lease %d), stopped inside a "
                        "transaction", ended, holder, epoch)
        return int(ended)
