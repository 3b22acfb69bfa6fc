"""Two processes on one database: what one wrote must refuse, redirect or reach the
other's next write, on every store that processes share (SQLite in a file, PostgreSQL).
A store may write a task it wrote last without reading its row first, or read a task's
push configs and its lease with the row: those shortcuts are tested here."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from interlingua.core.errors import ConcurrentModification
from interlingua.core.model import PushConfig
from interlingua.core.model import TaskState as S
from interlingua.stores import LeaseLost, Scope, Store, open_store

from .builders import chunk, created, status, ts
from .conftest import store_url

A = Scope("acme", "alice")


@pytest.fixture(params=["sqlite-file", "postgres"])
async def two(request: pytest.FixtureRequest, tmp_path: Path
              ) -> AsyncIterator[tuple[Store, Store]]:
    """Two stores on one database, as two processes have them."""
    url = store_url(request.param, tmp_path, request)
    one, other = open_store(url), open_store(url)
    await one.open()
    await other.open()
    try:
        yield one, other
    finally:
        await one.close()
        await other.close()


async def test_a_process_writing_from_what_it_wrote_last_still_sees_the_others(
        two: tuple[Store, Store]) -> None:
    one, other = two
    v = await one.create_task(A, [created("t-1"), status("t-1", S.WORKING, ts(0))],
                              dialect="1.0", now=ts(0))
    assert await other.append(A, "t-1", v, [chunk("t-1", "a", "two")], now=ts(1)) == v + 1
    with pytest.raises(ConcurrentModification):
        await one.append(A, "t-1", v, [chunk("t-1", "a", "one")], now=ts(1))
    v = await one.append(A, "t-1", v + 1, [chunk("t-1", "a", "one", append=True)], now=ts(1))
    rec = await other.get_task(A, "t-1")
    assert rec is not None and rec.version == v == 4
    assert [p.text for p in rec.task.artifacts[0].parts] == ["two", "one"]


async def test_an_append_sees_a_push_config_another_process_set(
        two: tuple[Store, Store]) -> None:
    one, other = two
    v = await one.create_task(A, [created("t-1"), status("t-1", S.WORKING, ts(0))],
                              dialect="1.0", now=ts(0))
    v = await one.append(A, "t-1", v, [chunk("t-1", "a", "x")], now=ts(1))
    assert await other.claim_deliveries(100.0, 130.0, 10) == []  # no config: nothing queued
    await other.put_push_config(A, "t-1", PushConfig(url="https://h.example/", id="c"),
                                dialect="1.0", now=ts(2))
    v = await one.append(A, "t-1", v, [status("t-1", S.INPUT_REQUIRED, ts(3))], now=ts(3))
    claimed = await other.claim_deliveries(100.0, 130.0, 10)
    assert [(d.task_id, d.seq) for d in claimed] == [("t-1", v)]


async def test_an_append_under_a_lease_another_process_revoked_is_refused(
        two: tuple[Store, Store]) -> None:
    one, other = two
    lease = await one.acquire_lease("h:1", 1.0)
    v = await one.create_task(A, [created("t-2"), status("t-2", S.WORKING, ts(0))],
                              dialect="1.0", now=ts(0), lease=lease.epoch)
    v = await one.append(A, "t-2", v, [chunk("t-2", "a", "x")], now=ts(1), lease=lease.epoch)
    assert await other.revoke_lease(lease.epoch)
    with pytest.raises(LeaseLost):
        await one.append(A, "t-2", v, [chunk("t-2", "a", "late", append=True)], now=ts(1),
                         lease=lease.epoch)
    with pytest.raises(LeaseLost):  # before saying the task is not there
        await one.append(A, "t-9", 1, [chunk("t-9", "a", "x")], now=ts(1), lease=lease.epoch)
    rec = await other.get_task(A, "t-2")  # nothing of the refused write
    assert rec is not None and rec.version == v
    assert [p.text for p in rec.task.artifacts[0].parts] == ["x"]
