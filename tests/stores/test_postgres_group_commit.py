"""The PostgreSQL store commits the statements of sends in flight at once in one
transaction, counted by PostgreSQL itself, and one send's failure stays its own."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import asyncpg
import pytest

from interlingua.core.model import TaskState
from interlingua.stores import LeaseLost, MessageExists, Scope, TaskExists
from interlingua.stores.postgres import PostgresStore

from ..services import create_database, drop_database, with_option
from .builders import created, status, ts

A = Scope("acme", "alice")
N = 16


@pytest.fixture
def fresh_db() -> Iterator[str]:
    """A database of this test's own: its transaction counter counts only this test."""
    url = create_database()
    try:
        yield url
    finally:
        drop_database(url)


async def _commits(url: str) -> int:
    """``xact_commit`` of ``url``'s database once its closed sessions have reported
    (read from another database, which the reading does not add to)."""
    name = url.rsplit("/", 1)[-1].split("?")[0]
    conn = await asyncpg.connect(url.rsplit("/", 1)[0] + "/postgres")
    try:
        seen, steady = -1, 0
        for _ in range(100):
            n = int(
                await conn.fetchval(
                    "SELECT xact_commit FROM pg_stat_database WHERE datname = $1", name
                )
            )
            steady = steady + 1 if n == seen else 0
            if steady == 4:
                return n
            seen = n
            await asyncio.sleep(0.05)
        return seen
    finally:
        await conn.close()


async def _send(store: PostgresStore, n: int) -> int:
    """What a unary send asks of the store: the look-up of its message id, then its
    task written whole."""
    assert await store.find_message(A, f"m-{n}", b"d") is None
    return await store.create_task(
        A,
        [created(f"t-{n}"), status(f"t-{n}", TaskState.COMPLETED, ts(1))],
        dialect="1.0",
        now=ts(1),
        message_id=f"m-{n}",
        digest=b"d",
    )


async def _write_transactions(url: str, first: int) -> int:
    """From a session of its own: the transactions that wrote the tasks of sends
    ``first`` to ``first + N - 1``, all of them there."""
    conn = await asyncpg.connect(url)
    try:
        ids = [f"t-{n}" for n in range(first, first + N)]
        assert (
            await conn.fetchval(
                "SELECT count(*) FROM interlingua.tasks WHERE id = ANY($1::text[])", ids
            )
            == N
        )
        return int(
            await conn.fetchval(
                "SELECT count(DISTINCT xmin::text) FROM interlingua.tasks WHERE id = ANY($1::text[])",
                ids,
            )
        )
    finally:
        await conn.close()


async def _rounds(url: str, rounds: int) -> int:
    """The transactions committed by a store (one connection) opened, sending
    ``rounds`` times N messages at once, and closed; each round's tasks are
    there for another session when its sends return, written by one transaction."""
    before = await _commits(url)
    store = PostgresStore(with_option(url, "max_size=1"))
    await store.open()
    try:
        for r in range(rounds):
            first = 1000 * rounds + r * N
            versions = await asyncio.gather(*(_send(store, n) for n in range(first, first + N)))
            assert versions == [2] * N
            assert await _write_transactions(url, first) == 1
    finally:
        await store.close()
    return await _commits(url) - before


async def test_sends_in_flight_at_once_share_their_transactions(fresh_db: str) -> None:
    # What opening and closing a store (and its first round: statements prepared on
    # its connection), and looking from another session, commit themselves: counted
    # by the same steps with one round fewer.
    sends = await _rounds(fresh_db, 2) - await _rounds(fresh_db, 1)
    # one by one, 2 per send (a look-up, then a write): here one for the look-ups and
    # one for the writes; and 3 for the look from another session (its login, two reads)
    assert sends - 3 == 2, sends


async def test_a_send_that_fails_in_a_group_fails_alone(pg_clean_url: str) -> None:
    one, two = PostgresStore(pg_clean_url), PostgresStore(pg_clean_url)
    await one.open()
    await two.open()
    try:
        # written by another process: a message id and a task id already taken
        await two.create_task(
            A, [created("t-taken")], dialect="1.0", now=ts(0), message_id="m-taken", digest=b"d"
        )
        lease = await one.acquire_lease("h:1", 1.0)
        assert await two.revoke_lease(lease.epoch)

        def new(
            n: int,
            task_id: str | None = None,
            message_id: str | None = None,
            epoch: int | None = None,
        ) -> object:
            tid = task_id or f"t-{n}"
            return one.create_task(
                A,
                [created(tid), status(tid, TaskState.WORKING, ts(1))],
                dialect="1.0",
                now=ts(1),
                message_id=message_id or f"m-{n}",
                digest=b"d",
                lease=epoch,
            )

        sends = [
            new(3, message_id="m-taken")
            if n == 3  # fails the group's transaction
            else new(5, task_id="t-taken")
            if n == 5
            else new(7, epoch=lease.epoch)
            if n == 7
            else new(n)
            for n in range(10)
        ]
        results = await asyncio.gather(*sends, return_exceptions=True)  # type: ignore[arg-type]
        assert isinstance(results[3], MessageExists) and results[3].record.task_id == "t-taken"
        assert isinstance(results[5], TaskExists)
        assert isinstance(results[7], LeaseLost)
        ok = [n for n, r in enumerate(results) if r == 2]
        assert ok == [0, 1, 2, 4, 6, 8, 9], results
        for n in ok:
            rec = await two.get_task(A, f"t-{n}")
            assert rec is not None and rec.version == 2
            assert (await two.find_message(A, f"m-{n}", b"d")).task_id == f"t-{n}"  # type: ignore[union-attr]
        for n in (3, 7):
            assert await two.get_task(A, f"t-{n}") is None
    finally:
        await one.close()
        await two.close()


async def test_appends_to_one_task_keep_their_order_in_a_group(pg_clean_url: str) -> None:
    store = PostgresStore(pg_clean_url)
    await store.open()
    try:
        versions = await asyncio.gather(
            *(
                store.create_task(
                    A,
                    [created(f"t-{n}"), status(f"t-{n}", TaskState.WORKING, ts(0))],
                    dialect="1.0",
                    now=ts(0),
                )
                for n in range(4)
            )
        )

        async def turn(n: int, v: int) -> int:
            for k in range(5):
                v = await store.append(
                    A, f"t-{n}", v, [status(f"t-{n}", TaskState.WORKING, ts(k + 1))], now=ts(k + 1)
                )
            return await store.append(
                A, f"t-{n}", v, [status(f"t-{n}", TaskState.COMPLETED, ts(9))], now=ts(9)
            )

        assert await asyncio.gather(*(turn(n, v) for n, v in enumerate(versions))) == [8] * 4
        assert store._group.groups * 2 <= store._group.calls  # 4 tasks at a time
        for n in range(4):
            events = await store.read_events(A, f"t-{n}")
            assert [e.seq for e in events] == list(range(1, 9))
    finally:
        await store.close()


async def test_a_group_cut_short_fails_its_callers_rather_than_leave_them_waiting(
    pg_clean_url: str,
) -> None:
    from interlingua.stores.postgres import StoreUnavailable

    store = PostgresStore(pg_clean_url)
    await store.open()
    try:
        first = [asyncio.ensure_future(store.find_message(A, f"m-{n}")) for n in range(4)]
        group = store._group
        for _ in range(100):  # until the first group is with the database
            await asyncio.sleep(0)
            if group._flushers and not group._queued:
                break
        behind = [asyncio.ensure_future(store.find_message(A, f"m-{n}")) for n in range(4, 6)]
        await asyncio.sleep(0)
        (flusher,) = group._flushers.values()
        flusher.cancel()
        results = await asyncio.wait_for(asyncio.gather(*first, *behind, return_exceptions=True), 5)
        assert all(isinstance(r, StoreUnavailable) for r in results), results
        # the next call runs as ever
        assert await store.find_message(A, "m-0") is None
    finally:
        await store.close()
