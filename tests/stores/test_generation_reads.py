"""Every read of a task gives its true generation (A2A 1.1), whatever it leaves out.

A read without artifacts folds no artifact event, and one without history and
artifacts folds nothing: the generation must still be that of the task's last
status or artifact event (core/generation.py), in every store.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from interlingua.core.calls import ListTasks
from interlingua.core.generation import after
from interlingua.core.model import Event, TaskState
from interlingua.stores import Scope, SQLiteStore, Store

from .builders import agent, chunk, created, said, status, ts, user

A = Scope("acme", "alice")

#: the reads a server makes of one task: (history_length, include_artifacts)
READS = [(None, True), (None, False), (0, False), (1, False), (0, True)]


async def _write(store: Store, task_id: str, batches: list[list[Event]]) -> int:
    """The task written in ``batches`` (the first creates it), numbered as the
    writer numbers them; its generation."""
    first = created(task_id, at=ts(0), history=[user(f"{task_id}-m")])
    first.task.generation = 1
    generation = after(batches[0], 1)
    version = await store.create_task(A, [first, *batches[0]], dialect="1.0", now=ts(0))
    for n, batch in enumerate(batches[1:], 1):
        generation = after(batch, generation)
        version = await store.append(A, task_id, version, batch, now=ts(n))
    return generation


async def _generations(store: Store, task_id: str) -> set[int]:
    seen = set()
    for history_length, artifacts in READS:
        rec = await store.get_task(A, task_id, history_length=history_length,
                                   include_artifacts=artifacts)
        assert rec is not None
        seen.add(rec.task.generation)
    for history_length, artifacts in READS:
        page = await store.list_tasks(A, ListTasks(history_length=history_length,
                                                   include_artifacts=artifacts))
        seen |= {t.generation for t in page.tasks if t.id == task_id}
    return seen


async def test_a_task_whose_last_event_is_an_artifact_reads_at_its_generation(
        store: Store) -> None:
    working = status("t-1", TaskState.WORKING, ts(1))
    # a text run (chunks of one artifact), then one artifact event alone
    texts = [chunk("t-1", "a", "x"), *(chunk("t-1", "a", f"{n}", append=True)
                                       for n in range(4))]
    assert await _write(store, "t-1", [[working], texts, [chunk("t-1", "b", "y")]]) == 8
    assert await _generations(store, "t-1") == {8}


async def test_a_run_of_several_artifacts_then_a_history_entry_reads_at_its_generation(
        store: Store) -> None:
    working = status("t-2", TaskState.WORKING, ts(1))
    several = [chunk("t-2", "a", "x"), chunk("t-2", "b", "y"), chunk("t-2", "c", "z")]
    assert await _write(store, "t-2", [[working, *several], [said(agent("t-2-r"))]]) == 5
    assert await _generations(store, "t-2") == {5}


async def test_a_task_ending_with_its_status_and_one_never_moved_read_at_theirs(
        store: Store) -> None:
    events: list[Event] = [status("t-3", TaskState.WORKING, ts(1)), chunk("t-3", "a", "x"),
                           status("t-3", TaskState.COMPLETED, ts(2))]
    assert await _write(store, "t-3", [events]) == 4
    assert await _generations(store, "t-3") == {4}
    assert await _write(store, "t-4", [[]]) == 1
    assert await _generations(store, "t-4") == {1}


async def test_a_log_written_before_generations_reads_as_unknown(store: Store) -> None:
    events: list[Event] = [created("t-5", at=ts(0)), status("t-5", TaskState.WORKING, ts(1)),
                           chunk("t-5", "a", "x")]
    await store.create_task(A, events, dialect="1.0", now=ts(0))
    assert await _generations(store, "t-5") == {0}


async def test_a_sqlite_row_not_current_reads_it_from_the_log(tmp_path: Path) -> None:
    # as after a write by a process that does not know the row's generation, or a
    # task stored before it was kept
    path = tmp_path / "kept.db"
    async with SQLiteStore(f"sqlite:///{path}") as db:
        texts = [chunk("t-6", "a", "x"), chunk("t-6", "a", "y", append=True)]
        assert await _write(db, "t-6", [[status("t-6", TaskState.WORKING, ts(1))],
                                        texts, [said(agent("t-6-r"))]]) == 4
        raw = sqlite3.connect(path)
        assert raw.execute("SELECT generation, generation_at = version FROM tasks").fetchall() \
            == [(4, 1)]  # kept, and current after a batch that moved it not
        raw.execute("UPDATE tasks SET generation = 99, generation_at = version - 1")
        raw.commit()
        raw.close()
        assert await _generations(db, "t-6") == {4}


async def test_a_write_at_no_version_is_numbered_on_from_the_stored_generation(
        store: Store) -> None:
    # (a write of a process that does not run the task's turn: the store numbers it)
    texts = [chunk("t-7", "a", "x"), chunk("t-7", "a", "y", append=True)]
    assert await _write(store, "t-7", [[status("t-7", TaskState.WORKING, ts(1))], texts,
                                       [said(user("t-7-r"))]]) == 4
    canceled = status("t-7", TaskState.CANCELED, ts(2))
    await store.append(A, "t-7", None, [said(user("t-7-s")), canceled], now=ts(2))
    assert canceled.generation == 5
    assert await _generations(store, "t-7") == {5}


async def test_a_write_at_no_version_to_a_sqlite_row_not_current_reads_the_log(
        tmp_path: Path) -> None:
    path = tmp_path / "kept.db"
    async with SQLiteStore(f"sqlite:///{path}") as db:
        assert await _write(db, "t-8", [[status("t-8", TaskState.WORKING, ts(1))],
                                        [chunk("t-8", "a", "x")]]) == 3
        raw = sqlite3.connect(path)
        raw.execute("UPDATE tasks SET generation = 99, generation_at = version - 1")
        raw.commit()
        raw.close()
        update = chunk("t-8", "a", "y", append=True)
        await db.append(A, "t-8", None, [update], now=ts(2))
        assert update.generation == 4
        assert await _generations(db, "t-8") == {4}
