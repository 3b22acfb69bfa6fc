"""The SQLite store keeps each task's listing in v1.0 JSON: a ListTasks page made
from it must say exactly what the page built from the tasks says."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import msgspec

from interlingua.core.calls import ListTasks, ListTasksResult
from interlingua.core.dialects import get_codec
from interlingua.core.model import (
    DataPart,
    Event,
    FilePart,
    Message,
    Role,
    TaskState,
    TextPart,
)
from interlingua.stores import Scope, SQLiteStore
from interlingua.stores._projection import HISTORY_MAX
from interlingua.stores.sqlite import SCHEMA_VERSION

from .builders import agent, chunk, created, said, status, ts, user
from .test_sqlite import V8_UNDONE

S = TaskState
A = Scope("acme", "alice")
V1 = get_codec("1.0")


def answer(query: ListTasks, page: ListTasksResult) -> Any:
    """The v1.0 JSON-RPC result the page is written as, parsed."""
    return msgspec.json.decode(V1.encode_result(query, page))


async def same_page(store: SQLiteStore, query: ListTasks) -> ListTasksResult:
    """The page from the kept listings, checked against the page built from tasks."""
    kept = await store.list_tasks(A, msgspec.structs.replace(query, v1_json=True))
    built = await store.list_tasks(A, query)
    assert kept.encoded is not None and kept.tasks == []
    assert built.encoded is None
    assert answer(query, kept) == answer(query, built)
    assert (kept.next_page_token, kept.page_size, kept.total_size) == (
        built.next_page_token, built.page_size, built.total_size)
    return kept


def kept_as(page: ListTasksResult) -> str | list[str]:
    """"page" when the store gave the page as one JSON array, else what each task was."""
    if type(page.encoded) is msgspec.Raw:
        return "page"
    return [type(e).__name__ for e in page.encoded or []]


async def test_pages_of_kept_listings_keep_the_order_and_the_tokens(db: SQLiteStore) -> None:
    # 23 tasks, some sharing a status timestamp (ordered by id then), ids with
    # characters below any in a timestamp
    for n in range(23):
        task_id = f"t\u0001{n:02d}" if n % 3 else f"t {n:02d}"
        await db.create_task(A, [created(task_id, at=ts(n // 4))], dialect="1.0", now=ts(0))
    for size in (1, 4, 7, 23, 50):
        seen: list[str] = []
        token: str | None = None
        while True:
            page = await same_page(db, ListTasks(page_size=size, page_token=token))
            assert kept_as(page) == "page"
            seen += [t["id"] for t in answer(ListTasks(), page)["tasks"]]
            if not page.next_page_token:
                break
            token = page.next_page_token
        built = await db.list_tasks(A, ListTasks(page_size=50))
        assert seen == [t.id for t in built.tasks] and len(seen) == 23
    # a page ending on the last task has no token: 23 = 1 * 23
    assert (await db.list_tasks(A, ListTasks(page_size=23, v1_json=True))).next_page_token == ""
    empty = await same_page(db, ListTasks(status=S.FAILED))
    assert answer(ListTasks(), empty)["tasks"] == [] and empty.total_size == 0


async def test_tasks_without_a_current_listing_are_built_in_their_places(
    db: SQLiteStore,
) -> None:
    # newest first: t 05 .. t 00; those without a listing stand first, last and
    # side by side, between ids holding the byte that marks their places
    for n in range(6):
        await db.create_task(A, [created(f"t\u0001{n:02d}", at=ts(n), history=[user(f"m-{n}")])],
                             dialect="1.0", now=ts(0))
    raw = sqlite3.connect(db.path)
    try:
        raw.execute("UPDATE tasks SET listed_at = NULL WHERE id IN (?, ?, ?, ?)",
                    ("t\u000105", "t\u000103", "t\u000102", "t\u000100"))
        raw.commit()
    finally:
        raw.close()
    page = await same_page(db, ListTasks())
    assert kept_as(page) == ["Task", "Raw", "Task", "Task", "Raw", "Task"]
    assert [t["id"] for t in answer(ListTasks(), page)["tasks"]] == [
        f"t\u0001{n:02d}" for n in range(5, -1, -1)]
    await same_page(db, ListTasks(page_size=4))


def rich(message_id: str) -> Message:
    """A message with every kind of part, metadata and references."""
    return Message(
        message_id=message_id,
        role=Role.AGENT,
        parts=[TextPart("t\u00e9\"x\\t\n", metadata={"k": [1, None]}),
               FilePart(raw=b"\x00\xff", media_type="application/octet-stream", filename="f"),
               FilePart(uri="https://example.com/x", media_type="text/plain"),
               DataPart({"a": {"b": [True, 1.5]}})],
        metadata={"m": "v"},
        reference_task_ids=["other"],
        extensions=["https://example.com/ext"],
    )


async def test_pages_from_kept_listings_match_pages_built_from_tasks(db: SQLiteStore) -> None:
    odd_id = 'q"uo\\te\u0001'
    cases: list[tuple[str, list[Event], list[list[Event]]]] = [
        ("plain", [created("plain", at=ts(0), history=[user("m-1")])], []),
        ("meta", [created("meta", at=ts(1), metadata={"x": {"y": [1, 2]}})],
         [[status("meta", S.WORKING, ts(2))]]),
        (odd_id, [created(odd_id, "c\u00e9", at=ts(3), history=[user("m-2", odd_id)])],
         [[status(odd_id, S.WORKING, ts(4), ctx="c\u00e9", message=agent("m-3", odd_id))]]),
        # only the history moves, then only the status, then both
        ("turns", [created("turns", at=ts(5), history=[user("m-4")])],
         [[said(user("m-5"))],
          [status("turns", S.WORKING, ts(6))],
          [chunk("turns", "a", "x")],
          [status("turns", S.INPUT_REQUIRED, ts(7), message=rich("m-6"))]]),
        ("done", [created("done", at=ts(8), history=[user("m-7")])],
         [[status("done", S.WORKING, ts(9)), chunk("done", "a", "one"),
           status("done", S.COMPLETED, ts(10), message=agent("m-8"))]]),
    ]
    for task_id, first, appends in cases:
        version = await db.create_task(A, first, dialect="1.0", now=ts(0))
        for events in appends:
            version = await db.append(A, task_id, version, events, now=ts(11))
    page = await same_page(db, ListTasks(page_size=50))
    assert kept_as(page) == "page"  # none needed building
    await same_page(db, ListTasks(page_size=2))
    await same_page(db, ListTasks(page_size=50, status=S.WORKING))
    first_page = await db.list_tasks(A, ListTasks(page_size=2, v1_json=True))
    await same_page(db, ListTasks(page_size=2, page_token=first_page.next_page_token))


async def test_a_history_too_long_to_keep_is_built_from_the_log(db: SQLiteStore) -> None:
    long = [user(f"m-{n}", "x" * 200) for n in range(HISTORY_MAX // 200 + 2)]
    await db.create_task(A, [created("long", at=ts(0), history=long)], dialect="1.0", now=ts(0))
    await db.create_task(A, [created("short", at=ts(1))], dialect="1.0", now=ts(1))
    page = await same_page(db, ListTasks())
    assert kept_as(page) == ["Raw", "Task"]


async def test_a_listing_not_current_is_not_listed_from(db: SQLiteStore) -> None:
    version = await db.create_task(A, [created("t-1", at=ts(0), history=[user("m-1")])],
                                   dialect="1.0", now=ts(0))
    raw = sqlite3.connect(db.path)
    try:
        stale = raw.execute("SELECT listed, listed_at FROM tasks").fetchone()
        version = await db.append(A, "t-1", version, [status("t-1", S.WORKING, ts(1))],
                                  now=ts(1))
        # As a process that does not know the listing leaves it: the task moved on.
        raw.execute("UPDATE tasks SET listed = ?, listed_at = ?", stale)
        raw.commit()
    finally:
        raw.close()
    page = await same_page(db, ListTasks())
    assert kept_as(page) == ["Task"]
    assert answer(ListTasks(), page)["tasks"][0]["status"]["state"] == "TASK_STATE_WORKING"
    # its next status makes the listing whole again
    await db.append(A, "t-1", version, [status("t-1", S.COMPLETED, ts(2))], now=ts(2))
    page = await same_page(db, ListTasks())
    assert kept_as(page) == "page"


async def test_what_a_listing_leaves_out_or_trims_is_built_from_the_tasks(
    db: SQLiteStore,
) -> None:
    await db.create_task(A, [created("t-1", at=ts(0), history=[user("m-1"), user("m-2")]),
                             chunk("t-1", "a", "x")], dialect="1.0", now=ts(0))
    for query in (ListTasks(history_length=1, v1_json=True),
                  ListTasks(include_artifacts=True, v1_json=True)):
        page = await db.list_tasks(A, query)
        assert page.encoded is None and len(page.tasks) == 1


async def test_a_version_7_database_lists_its_tasks_and_keeps_them_from_their_next_status(
    tmp_path: Path,
) -> None:
    path = tmp_path / "v7.db"
    async with SQLiteStore(f"sqlite:///{path}") as store:
        version = await store.create_task(
            A, [created("t-1", at=ts(0), history=[user("m-1")])], dialect="1.0", now=ts(0))
    raw = sqlite3.connect(path)
    try:
        raw.executescript(V8_UNDONE + " PRAGMA user_version = 7;")
    finally:
        raw.close()
    async with SQLiteStore(f"sqlite:///{path}") as store:
        assert store.schema_version == SCHEMA_VERSION
        page = await same_page(store, ListTasks())
        assert kept_as(page) == ["Task"]
        await store.append(A, "t-1", version, [status("t-1", S.WORKING, ts(1))], now=ts(1))
        page = await same_page(store, ListTasks())
        assert kept_as(page) == "page"
