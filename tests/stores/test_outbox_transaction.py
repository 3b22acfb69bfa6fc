"""SQLite: a batch of events and the push deliveries it queues are one transaction.

The outbox write is made to fail after the events of its batch were written
(a trigger refuses it): then neither may be stored, alone or in a group commit
beside another task's write, which must not be harmed. Without the failure
both are stored. Otherwise a crash or an error between the two would leave
events nobody is notified of, or notifications of events that do not exist.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from interlingua.core.model import PushConfig, TaskState
from interlingua.stores import Scope, Store, open_store

from .builders import created, status, ts

#: these tests need the push outbox (see conftest.py)
NEEDS_PUSH = True

SCOPE = Scope(tenant="", owner="p")
REFUSE = """
CREATE TRIGGER refuse_{verb} BEFORE {verb} ON push_outbox
WHEN (SELECT id FROM tasks WHERE pk = NEW.task_pk) = 'refused'
BEGIN SELECT RAISE(ABORT, 'the outbox refused this write'); END
"""


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[tuple[Store, Path]]:
    path = tmp_path / "tasks.db"
    store = open_store(f"sqlite:///{path}")
    await store.open()
    for task_id in ("refused", "other"):
        await store.create_task(
            SCOPE, [created(task_id, at=ts(0))], dialect="1.0", now=ts(0),
            push_configs=[PushConfig(url=f"https://hooks.example.com/{task_id}", id="c1",
                                     task_id=task_id)])
    yield store, path
    await store.close()


def refuse_outbox_writes(path: Path, on: bool) -> None:
    """Through a connection of its own, as a fault in the middle of the store's transaction."""
    with sqlite3.connect(path) as conn:
        for verb in ("INSERT", "UPDATE"):
            conn.execute(REFUSE.format(verb=verb) if on else f"DROP TRIGGER refuse_{verb}")
    conn.close()


async def stored(store: Store, task_id: str) -> tuple[int, int]:
    """(the task's version, how many events its log holds)."""
    rec = await store.get_task(SCOPE, task_id)
    assert rec is not None
    return rec.version, len(await store.read_events(SCOPE, task_id, after=0))


async def queued(store: Store) -> int:
    return sum((await store.outbox_counts()).values())


def working(task_id: str) -> list[object]:
    return [status(task_id, TaskState.WORKING, ts(1))]


async def test_a_failed_outbox_write_stores_none_of_the_batch(
        db: tuple[Store, Path]) -> None:
    store, path = db
    before, outbox = await stored(store, "refused"), await queued(store)
    assert before == (1, 1) and outbox == 2  # each task's creation was queued with it
    refuse_outbox_writes(path, True)
    with pytest.raises(Exception, match="the outbox refused"):
        await store.append(SCOPE, "refused", 1, working("refused"), now=ts(1))
    assert await stored(store, "refused") == before
    assert await queued(store) == outbox
    # without the fault the same write stores both
    refuse_outbox_writes(path, False)
    assert await store.append(SCOPE, "refused", 1, working("refused"), now=ts(1)) == 2
    assert await stored(store, "refused") == (2, 2)
    assert await queued(store) == outbox + 1


async def test_in_a_group_commit_the_failed_write_is_undone_and_its_neighbour_kept(
        db: tuple[Store, Path]) -> None:
    store, path = db
    outbox = await queued(store)
    refuse_outbox_writes(path, True)
    # issued together, the two writes share one transaction
    refused, other = await asyncio.gather(
        store.append(SCOPE, "refused", 1, working("refused"), now=ts(1)),
        store.append(SCOPE, "other", 1, working("other"), now=ts(1)),
        return_exceptions=True)
    assert isinstance(refused, Exception) and "the outbox refused" in str(refused)
    assert other == 2
    assert await stored(store, "refused") == (1, 1)
    assert await stored(store, "other") == (2, 2)
    assert await queued(store) == outbox + 1  # the neighbour's delivery only
