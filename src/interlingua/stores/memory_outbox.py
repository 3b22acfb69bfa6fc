"""The memory store's push outbox: a queue per (task, config) of delivery ids in
sequence order; its head is the only delivery of that queue that may be claimed.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence

import msgspec

from ..core.model import Event
from .base import (
    DEAD,
    PENDING,
    Delivery,
    PushConfigRecord,
    Scope,
    delivery_nonce,
    push_mode,
    wants_delivery,
)

__all__ = ["MemoryOutbox"]

_QueueKey = tuple[Scope, str, str]  # (scope, task id, config id)


class _Row:
    """A delivery as the memory store keeps it (``Delivery`` plus its claim)."""

    __slots__ = ("claimed_until", "delivery")

    def __init__(self, delivery: Delivery) -> None:
        self.delivery = delivery
        self.claimed_until: float | None = None



class MemoryOutbox:
    """The outbox half of ``MemoryStore`` (nothing awaits inside a method)."""

    def __init__(self) -> None:
        self.on_outbox: Callable[[], None] | None = None
        self._rows: dict[int, _Row] = {}  # every delivery, pending or dead
        self._queues: dict[_QueueKey, list[int]] = {}  # pending ids, sequence order
        self._ids = itertools.count(1)

    def _queue(
        self, scope: Scope, task_id: str, configs: Mapping[str, PushConfigRecord],
        first_seq: int, events: Sequence[Event],
    ) -> None:
        """Queue the deliveries the task's ``configs`` want for ``events``."""
        queued = False
        for config_id, record in configs.items():
            mode = push_mode(record.dialect)
            seqs = [seq for seq, e in enumerate(events, first_seq) if wants_delivery(mode, e)]
            if not seqs:
                continue
            queue = self._queues.setdefault((scope, task_id, config_id), [])
            if mode == "task":
                # Move a delivery nobody has tried yet on to the newest status.
                tail = self._rows[queue[-1]] if queue else None
                if tail is not None and tail.delivery.attempts == 0 and tail.claimed_until is None:
                    tail.delivery.seq = seqs[-1]
                    queued = True
                    continue
                seqs = seqs[-1:]
            for seq in seqs:
                delivery = Delivery(next(self._ids), scope, task_id, config_id, seq,
                                    nonce=delivery_nonce())
                self._rows[delivery.id] = _Row(delivery)
                queue.append(delivery.id)
            queued = True
        if queued and self.on_outbox is not None:
            self.on_outbox()

    def _drop_queue(self, scope: Scope, task_id: str, config_id: str) -> None:
        self._queues.pop((scope, task_id, config_id), None)
        for rid in [
            rid
            for rid, row in self._rows.items()
            if (row.delivery.scope, row.delivery.task_id, row.delivery.config_id)
            == (scope, task_id, config_id)
        ]:
            del self._rows[rid]

    def _heads(self) -> list[_Row]:
        return [self._rows[queue[0]] for queue in self._queues.values() if queue]

    async def claim_deliveries(self, now: float, lease_until: float, limit: int) -> list[Delivery]:
        due = [
            row
            for row in self._heads()
            if row.delivery.next_at <= now
            and (row.claimed_until is None or row.claimed_until < now)
        ]
        due.sort(key=lambda row: (row.delivery.next_at, row.delivery.id))
        out = []
        for row in due[: max(limit, 0)]:
            row.claimed_until = lease_until
            out.append(_copy_delivery(row.delivery))
        return out

    async def next_delivery_at(self) -> float | None:
        times = [max(row.delivery.next_at, row.claimed_until or 0.0) for row in self._heads()]
        return min(times) if times else None

    async def delivery_done(self, delivery_id: int) -> None:
        row = self._rows.pop(delivery_id, None)
        if row is not None:
            self._unqueue(row.delivery)

    async def delivery_failed(
        self, delivery_id: int, *, error: str, attempted_at: float, retry_at: float | None
    ) -> None:
        row = self._rows.get(delivery_id)
        if row is None or row.delivery.state != PENDING:
            return
        d = row.delivery
        d.attempts += 1
        d.last_error = error
        d.last_attempt_at = attempted_at
        row.claimed_until = None
        if retry_at is None:
            d.state = DEAD
            self._unqueue(d)
        else:
            d.next_at = retry_at

    async def dead_deliveries(
        self, scope: Scope | None = None, task_id: str | None = None, limit: int = 100
    ) -> list[Delivery]:
        dead = [
            row.delivery
            for row in self._rows.values()
            if row.delivery.state == DEAD
            and (scope is None or row.delivery.scope == scope)
            and (task_id is None or row.delivery.task_id == task_id)
        ]
        return [_copy_delivery(d) for d in dead[: max(limit, 0)]]

    async def revive_delivery(self, delivery_id: int) -> bool:
        row = self._rows.get(delivery_id)
        if row is None or row.delivery.state != DEAD:
            return False
        d = row.delivery
        d.state, d.attempts, d.next_at = PENDING, 0, 0.0
        queue = self._queues.setdefault((d.scope, d.task_id, d.config_id), [])
        queue.append(d.id)
        queue.sort(key=lambda rid: (self._rows[rid].delivery.seq, rid))
        if self.on_outbox is not None:
            self.on_outbox()
        return True

    async def release_claims(self) -> int:
        n = 0
        for row in self._rows.values():
            if row.claimed_until is not None:
                row.claimed_until = None
                n += 1
        return n

    async def outbox_counts(self) -> dict[str, int]:
        dead = sum(1 for row in self._rows.values() if row.delivery.state == DEAD)
        return {PENDING: len(self._rows) - dead, DEAD: dead}

    def _unqueue(self, d: Delivery) -> None:
        key = (d.scope, d.task_id, d.config_id)
        queue = self._queues.get(key)
        if queue is not None and d.id in queue:
            queue.remove(d.id)
            if not queue:
                del self._queues[key]


def _copy_delivery(d: Delivery) -> Delivery:
    return msgspec.structs.replace(d)
