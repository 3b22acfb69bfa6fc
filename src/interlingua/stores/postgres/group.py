"""Group commit for the PostgreSQL store: the one-statement writes and look-ups
of the requests in flight at once share one transaction.

Each statement run on its own is a transaction of its own: a commit (and, for a
write, a WAL flush) per statement. Statements queued while a group is with the
database run next, in the order they came, as one transaction on one connection:
one commit for all of them (docs/architecture.md, "PostgreSQL commits in groups").

* Durable before seen: a caller gets its result only once the group's COMMIT
  returned.
* One failure fails one caller: a statement that fails aborts the group's
  transaction, so nothing of the group is kept; each statement then runs again
  on its own, in order, and only the one that fails again fails its caller.
* A lost connection fails the whole group with ``StoreUnavailable`` and nothing
  is run again: whether its COMMIT was applied is not known, as for a
  statement on its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import asyncpg

from ..base import StoreUnavailable

#: one statement of a group: given the group's connection, its result
Statement = Callable[[asyncpg.Connection], Awaitable[Any]]
_Queued = tuple[Statement, "asyncio.Future[Any]"]


def _settle(fut: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if fut.done():  # its caller was cancelled: the result goes nowhere
        return
    if ok:
        fut.set_result(value)
    else:
        fut.set_exception(value)


class GroupCommit:
    """The queue of statements and the one task that commits them in groups."""

    def __init__(self, conn: Callable[[], AbstractAsyncContextManager[asyncpg.Connection]]) -> None:
        self._conn = conn
        self._queued: list[_Queued] = []
        self._flusher: asyncio.Task[None] | None = None
        #: transactions committed, and statements they held (what tests count)
        self.groups = 0
        self.statements = 0

    async def run(self, statement: Statement) -> Any:
        """``statement``'s result, once the transaction it ran in has committed."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Any] = loop.create_future()
        self._queued.append((statement, fut))
        if self._flusher is None:
            # a task of its own: a caller cancelled mid-group does not cut the group short
            self._flusher = loop.create_task(self._flush())
        return await fut

    async def drain(self) -> None:
        """Wait until every statement queued has run (before the pool closes)."""
        while (flusher := self._flusher) is not None:
            await asyncio.shield(flusher)

    async def _flush(self) -> None:
        try:
            while self._queued:
                group, self._queued = self._queued, []
                try:
                    await self._commit(group)
                except BaseException as exc:
                    closed = (
                        exc
                        if isinstance(exc, Exception)
                        else StoreUnavailable("the PostgreSQL store was closed")
                    )
                    for _, fut in group:
                        _settle(fut, False, closed)
                    raise
        finally:
            self._flusher = None

    async def _commit(self, group: list[_Queued]) -> None:
        if len(group) == 1:
            await self._alone(*group[0])
            return
        try:
            async with self._conn() as conn, conn.transaction():
                results = [await statement(conn) for statement, _ in group]
        except StoreUnavailable as exc:
            for _, fut in group:
                _settle(fut, False, exc)
            return
        except Exception:
            # one statement failed, and nothing of the group was kept
            for queued in group:
                await self._alone(*queued)
            return
        self.groups += 1
        self.statements += len(group)
        for (_, fut), result in zip(group, results, strict=True):
            _settle(fut, True, result)

    async def _alone(self, statement: Statement, fut: asyncio.Future[Any]) -> None:
        try:
            async with self._conn() as conn:
                result = await statement(conn)
        except Exception as exc:
            _settle(fut, False, exc)
            return
        self.groups += 1
        self.statements += 1
        _settle(fut, True, result)
