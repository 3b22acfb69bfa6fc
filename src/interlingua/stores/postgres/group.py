"""Group commit for the PostgreSQL store: the one-statement writes and look-ups
of the requests in flight at once share one transaction.

Each statement run on its own is a transaction of its own: a commit (and, for a
write, a WAL flush) per statement. Here the calls of one statement (the same SQL,
other arguments) queued while that statement's group is with the database go
next as one pipeline (asyncpg's ``fetchmany``): one round trip, and one implicit
transaction, committed at its end, for all of them (docs/architecture.md,
"PostgreSQL commits in groups"). Every statement grouped returns exactly one row.

* Durable before seen: a caller gets its row only once the group's transaction
  committed.
* One failure fails one caller: a call that fails aborts the group's
  transaction, so nothing of the group is kept; each call then runs again on its
  own, in the order they came, and only the one that fails again fails its caller.
* A lost connection fails the whole group with ``StoreUnavailable`` and nothing
  is run again: whether its commit was applied is not known, as for a
  statement on its own.
* Order: a caller awaits each of its statements before the next, so its own
  statements are never in one group; the calls of one group are concurrent, and
  run in the order they came.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import asyncpg

from ..base import StoreUnavailable

_Queued = tuple[tuple[Any, ...], "asyncio.Future[asyncpg.Record]"]


def _settle(fut: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if fut.done():  # its caller was cancelled: the result goes nowhere
        return
    if ok:
        fut.set_result(value)
    else:
        fut.set_exception(value)


class GroupCommit:
    """A queue per statement, and a task per statement that commits its calls in groups."""

    def __init__(self, conn: Callable[[], AbstractAsyncContextManager[asyncpg.Connection]]) -> None:
        self._conn = conn
        self._queued: dict[str, list[_Queued]] = {}
        self._flushers: dict[str, asyncio.Task[None]] = {}
        #: transactions committed, and calls they held (what tests count)
        self.groups = 0
        self.calls = 0

    async def row(self, sql: str, args: tuple[Any, ...]) -> asyncpg.Record:
        """``sql``'s one row for ``args``, once the transaction it ran in has committed."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[asyncpg.Record] = loop.create_future()
        queue = self._queued.get(sql)
        if queue is None:
            queue = self._queued[sql] = []
        queue.append((args, fut))
        if sql not in self._flushers:
            # a task of its own: a caller cancelled mid-group does not cut the group short
            self._flushers[sql] = loop.create_task(self._flush(sql))
        return await fut

    async def drain(self) -> None:
        """Wait until every call queued has run (before the pool closes)."""
        while self._flushers:
            await asyncio.wait(list(self._flushers.values()))

    async def _flush(self, sql: str) -> None:
        try:
            while group := self._queued.pop(sql, None):
                try:
                    await self._commit(sql, group)
                except BaseException as exc:
                    closed = (
                        exc
                        if isinstance(exc, Exception)
                        else StoreUnavailable("the PostgreSQL store was closed")
                    )
                    # this group and the calls queued behind it: no task is left to run them
                    for _, fut in group + self._queued.pop(sql, []):
                        _settle(fut, False, closed)
                    raise
        finally:
            del self._flushers[sql]

    async def _commit(self, sql: str, group: list[_Queued]) -> None:
        if len(group) == 1:
            await self._alone(sql, *group[0])
            return
        try:
            async with self._conn() as conn:
                rows = await conn.fetchmany(sql, [args for args, _ in group])
        except StoreUnavailable as exc:
            for _, fut in group:
                _settle(fut, False, exc)
            return
        except Exception:
            # one call failed, and nothing of the group was kept
            for args, fut in group:
                await self._alone(sql, args, fut)
            return
        self.groups += 1
        self.calls += len(group)
        for (_, fut), row in zip(group, rows, strict=True):
            _settle(fut, True, row)

    async def _alone(
        self, sql: str, args: tuple[Any, ...], fut: asyncio.Future[asyncpg.Record]
    ) -> None:
        try:
            async with self._conn() as conn:
                row = await conn.fetchrow(sql, *args)
        except Exception as exc:
            _settle(fut, False, exc)
            return
        self.groups += 1
        self.calls += 1
        _settle(fut, True, row)
