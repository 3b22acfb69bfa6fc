"""The PostgreSQL store's push configs and delivery outbox."""


from __future__ import annotations

from ...core.model import PushConfig
from ..base import (
    DEAD,
    MAX_ROW_ID,
    PENDING,
    Delivery,
    PushConfigRecord,
    Scope,
    TooManyPushConfigs,
)
from .connection import Database, reads_rows
from .rows import (
    _DELIVERY_COLUMNS,
    _PENDING_HEAD,
    _config_record,
    _count,
    _delivery,
    _no_nul,
    _put_config,
    _task_pk,
)


class Outbox(Database):
    """Push configs and the outbox of deliveries, claimed across replicas."""

    async def put_push_config(
        self, scope: Scope, task_id: str, config: PushConfig, *, dialect: str, now: str,
        at_most: int | None = None,
    ) -> PushConfigRecord:
        _no_nul(config.id)
        async with self._tx() as conn:
            pk = await _task_pk(conn, scope, task_id)
            if at_most is not None:
                # the task's row locked: concurrent puts to it are counted one by one
                await conn.execute("SELECT 1 FROM tasks WHERE pk = $1 FOR NO KEY UPDATE", pk)
                others = await conn.fetchval(
                    "SELECT count(*) FROM push_configs WHERE task_pk = $1 AND id != $2",
                    pk, config.id)
                if others >= at_most:
                    raise TooManyPushConfigs(task_id, others)
            return await _put_config(conn, pk, task_id, config, dialect, now)

    @reads_rows
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

    @reads_rows
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
        if not 0 < delivery_id <= MAX_ROW_ID:  # (no row has it: not one for asyncpg to refuse)
            return False
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
