"""What only the SQLite store has: a file, URL options, PRAGMAs, a schema, query plans."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import msgspec
import pytest

from interlingua.core.calls import ListTasks
from interlingua.core.errors import ConcurrentModification
from interlingua.core.model import Event, PushConfig, TaskState, TextPart
from interlingua.stores import (
    MemoryStore,
    MessageExists,
    MessageRecord,
    Scope,
    SQLiteStore,
    StoreUnavailable,
    open_store,
)
from interlingua.stores.sqlite import SCHEMA_VERSION, parse_sqlite_url
from interlingua.stores.sqlite.checkpoint import (
    CHECKPOINT_PAGES,
    WRITER_THRESHOLD_FRAMES,
    WalCheckpointer,
)
from interlingua.stores.sqlite.connection import _close, _transaction

from .builders import agent, chunk, created, said, status, ts, user
from .locks import write_locked, write_locked_for

#: these tests need the push outbox (see conftest.py)
NEEDS_PUSH = True

S = TaskState
A = Scope("acme", "alice")
B = Scope("", "")


async def fill(store: SQLiteStore) -> None:
    """A few tasks in two scopes, with history, artifact chunks and finished ones."""
    for i in range(6):
        scope = A if i % 2 else B
        task_id = f"t-{i}"
        events: list[Event] = [
            created(task_id, f"ctx-{i % 3}", at=ts(i), history=[user(f"m-{i}")]),
            status(task_id, S.WORKING, ts(i)),
        ]
        await store.create_task(scope, events, dialect="0.1", now=ts(i), message_id=f"m-{i}")
        more: list[Event] = [
            chunk(task_id, "a", "one"),
            chunk(task_id, "a", "two", append=True, last=True),
            said(user(f"m-{i}-more")),
        ]
        if i % 3 == 0:
            more.append(status(task_id, S.COMPLETED, ts(10 + i), message=agent(f"r-{i}")))
        await store.append(scope, task_id, 2, more, now=ts(10 + i))


async def snapshot(store: SQLiteStore) -> dict[str, object]:
    seen: dict[str, object] = {}
    for scope in (A, B):
        for i in range(6):
            record = await store.get_task(scope, f"t-{i}")
            if record is not None:
                seen[f"{scope}/t-{i}"] = (record, await store.read_events(scope, f"t-{i}"))
        seen[f"{scope}/list"] = await store.list_tasks(scope, ListTasks(include_artifacts=True))
        seen[f"{scope}/message"] = await store.task_for_message(scope, "m-1")
    seen["unfinished"] = sorted((u.task_id, u.version) for u in await store.unfinished_tasks())
    return seen


async def test_tasks_survive_closing_and_reopening(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/data/tasks.db"
    first = SQLiteStore(url)
    await first.open()
    await fill(first)
    before = await snapshot(first)
    await first.close()

    again = SQLiteStore(url)
    await again.open()
    try:
        assert await snapshot(again) == before
        record = await again.get_task(A, "t-1")
        assert record is not None
        assert record.version == 5 and record.dialect == "0.1"
        assert record.task.artifacts[0].parts == [TextPart("one"), TextPart("two")]
        # versions carry over: a stale write is still refused, a current one goes on
        with pytest.raises(ConcurrentModification):
            await again.append(A, "t-1", 2, [said(user("x"))], now=ts(30))
        assert await again.append(A, "t-1", 5, [status("t-1", S.FAILED, ts(30))], now=ts(30)) == 6
        assert [e.seq for e in await again.read_events(A, "t-1")] == [1, 2, 3, 4, 5, 6]
    finally:
        await again.close()


async def test_pragmas_are_in_effect(db: SQLiteStore) -> None:
    live = await db.pragmas()
    assert live == {
        "journal_mode": "wal",
        "synchronous": "normal",
        "busy_timeout_ms": 5000,
        "foreign_keys": True,
        "cache_size_kib": 65536,
        "page_size": 2048,
        "wal_autocheckpoint": WRITER_THRESHOLD_FRAMES,
        "schema_version": SCHEMA_VERSION,
    }
    assert (db.journal_mode, db.synchronous, db.busy_timeout_ms) == ("wal", "normal", 5000)
    assert db.foreign_keys is True
    # WAL and the schema version are properties of the file, seen by any connection
    other = sqlite3.connect(db.path)
    try:
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert other.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 15
    finally:
        other.close()


async def test_the_wal_is_copied_into_the_database_off_the_writer(tmp_path: Path) -> None:
    store = SQLiteStore(f"sqlite:///{tmp_path}/tasks.db")
    await store.open()
    db_file = tmp_path / "tasks.db"
    try:
        checkpointer = store.checkpointer
        assert checkpointer is not None
        await store.create_task(B, [created("t-1")], dialect="1.0", now=ts(1))
        checkpointer.wait()
        size_before = db_file.stat().st_size
        done_before = checkpointer.completed
        version = 1
        # Well short of the writer's own threshold: any copy is the checkpointer's.
        for batch in range(CHECKPOINT_PAGES // 10):  # about 17 pages a batch
            # an artifact each: a run of one artifact's text chunks is stored in less
            events: list[Event] = [
                chunk("t-1", f"a-{batch}-{n}", f"{batch}-{n} " * 20) for n in range(100)
            ]
            version = await store.append(B, "t-1", version, events, now=ts(2))
        checkpointer.wait()
        assert checkpointer.completed > done_before
        frames, copied = checkpointer.last_result
        # (appends may have landed while it ran: those frames wait for the next one)
        assert 0 < copied <= frames < WRITER_THRESHOLD_FRAMES
        assert db_file.stat().st_size > size_before
        record = await store.get_task(B, "t-1")
        assert record is not None and record.version == version
    finally:
        await store.close()
    # The writer closed last: it checkpointed the rest and removed the WAL.
    assert not (tmp_path / "tasks.db-wal").exists()


def wal_writer(path: str) -> sqlite3.Connection:
    """A connection to a new WAL database with one table, checkpointing nothing itself."""
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute("CREATE TABLE t (x)")
    return writer


def test_a_checkpoint_is_due_after_enough_pages_or_enough_time(tmp_path: Path) -> None:
    path = str(tmp_path / "plain.db")
    writer = wal_writer(path)
    by_pages = WalCheckpointer(path, 1000, pages=10, interval_s=3600)
    try:
        writer.execute("INSERT INTO t VALUES (1)")
        by_pages.wrote(1)  # 1 page of 10, and the hour is not over
        by_pages.wait()
        assert by_pages.completed == 0
        writer.executemany("INSERT INTO t VALUES (?)", [(n,) for n in range(9)])
        by_pages.wrote(9)
        by_pages.wait()
        assert by_pages.completed == 1
        frames, copied = by_pages.last_result
        assert frames > 0 and copied == frames
        by_pages.wrote(0)  # nothing written since: nothing to do
        by_pages.wait()
        assert by_pages.completed == 1
    finally:
        by_pages.close()
    by_time = WalCheckpointer(path, 1000, pages=10**9, interval_s=0.0)
    try:
        writer.execute("INSERT INTO t VALUES (2)")
        by_time.wrote(1)
        by_time.wait()
        assert by_time.completed == 1
    finally:
        by_time.close()
        writer.close()
    by_time.wrote(1)  # after close: ignored, no thread to run it
    assert by_time.completed == 1


def test_commits_during_a_checkpoint_have_the_writer_finish_it(tmp_path: Path) -> None:
    path = str(tmp_path / "plain.db")
    writer = wal_writer(path)
    checkpointer = WalCheckpointer(path, 1000, pages=10, interval_s=3600, finish_frames=10)
    gate = threading.Event()
    checkpointer._pool.submit(gate.wait)  # its thread is held: the next one waits
    try:
        writer.executemany("INSERT INTO t VALUES (?)", [(n,) for n in range(10)])
        assert checkpointer.wrote(10) is False  # due: started, and held
        writer.execute("INSERT INTO t VALUES (10)")
        assert checkpointer.wrote(1) is False  # landed while it runs
        gate.set()
        checkpointer.wait()
        assert checkpointer.completed == 1
        # the next commit is told to checkpoint on the writer, once
        assert checkpointer.wrote(0) is True and checkpointer.finishing == 1
        assert checkpointer.wrote(0) is False
        busy, frames, copied = writer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        assert busy == 0 and copied == frames > 0
        writer.execute("INSERT INTO t VALUES (11)")  # the WAL starts over
        assert writer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1] < frames
    finally:
        gate.set()
        checkpointer.close()
        writer.close()


def test_a_short_wal_is_left_to_the_next_checkpoint(tmp_path: Path) -> None:
    # Commits overlapped a checkpoint, but the WAL is shorter than finish_frames:
    # the writer is not held up for it; the next checkpoint copies those frames.
    path = str(tmp_path / "plain.db")
    writer = wal_writer(path)
    checkpointer = WalCheckpointer(path, 1000, pages=10, interval_s=3600, finish_frames=10_000)
    gate = threading.Event()
    checkpointer._pool.submit(gate.wait)
    try:
        writer.executemany("INSERT INTO t VALUES (?)", [(n,) for n in range(10)])
        assert checkpointer.wrote(10) is False
        writer.execute("INSERT INTO t VALUES (10)")
        assert checkpointer.wrote(1) is False  # landed while it runs
        gate.set()
        checkpointer.wait()
        frames, copied = checkpointer.last_result
        assert checkpointer.completed == 1 and frames < 10_000
        assert checkpointer.wrote(0) is False and checkpointer.finishing == 0
        writer.executemany("INSERT INTO t VALUES (?)", [(n,) for n in range(10)])
        assert checkpointer.wrote(10) is False
        checkpointer.wait()
        frames, copied = checkpointer.last_result
        assert checkpointer.completed == 2 and copied == frames
    finally:
        gate.set()
        checkpointer.close()
        writer.close()


async def test_consecutive_events_of_one_kind_share_a_row(db: SQLiteStore) -> None:
    events: list[Event] = [
        created("t-1"),
        status("t-1", S.WORKING, ts(1)),
        *[chunk("t-1", "a", f"c{n}", append=n > 0) for n in range(600)],
        said(user("m-2")),
        chunk("t-1", "a", "last", append=True, last=True),
    ]
    await db.create_task(B, events[:1], dialect="1.0", now=ts(0))
    await db.append(B, "t-1", 1, events[1:], now=ts(1))
    raw = sqlite3.connect(db.path)
    try:
        rows = raw.execute("SELECT seq, kind, n FROM events ORDER BY seq").fetchall()
    finally:
        raw.close()
    # created, status, three runs of chunks (at most RUN_MAX each), history, a chunk
    assert rows == [
        (1, 0, 1), (2, 1, 1), (3, 2, 256), (259, 2, 256), (515, 2, 88), (603, 3, 1), (604, 2, 1)
    ]
    assert [e.event for e in await db.read_events(B, "t-1", after=258, limit=2)] == events[258:260]


@pytest.mark.parametrize("rows", [1, 3, 8, 9, 20])
async def test_a_write_of_many_rows_keeps_them_all_in_order(db: SQLiteStore, rows: int) -> None:
    # up to ROWS_AT_ONCE rows are one statement, more an executemany
    events: list[Event] = [created("t-1")]
    for n in range(1, rows):
        events.append(status("t-1", S.WORKING, ts(n)) if n % 2
                      else chunk("t-1", f"a-{n}", f"text {n}"))
    v = await db.create_task(B, events, dialect="1.0", now=ts(0))
    more = [chunk("t-1", "b", "x"), status("t-1", S.WORKING, ts(99))] * 5
    await db.append(B, "t-1", v, more, now=ts(99))
    raw = sqlite3.connect(db.path)
    try:
        seqs = [r[0] for r in raw.execute("SELECT seq FROM events ORDER BY seq")]
    finally:
        raw.close()
    assert seqs == list(range(1, rows + 11))
    assert [e.event for e in await db.read_events(B, "t-1")] == events + more
    assert [e.seq for e in await db.read_events(B, "t-1")] == seqs


async def test_a_run_of_text_chunks_is_stored_as_its_texts(db: SQLiteStore) -> None:
    events: list[Event] = [
        created("t-1"),
        *[chunk("t-1", "a", f"chunk {n:04d} ", append=n > 0) for n in range(300)],
        chunk("t-1", "a", "one", "two", append=True),  # two parts: heads a run of its own
        *[chunk("t-1", "a", f"more {n} ", append=True) for n in range(5)],
    ]
    await db.create_task(B, events, dialect="1.0", now=ts(0))
    raw = sqlite3.connect(db.path)
    try:
        rows = raw.execute("SELECT seq, n, payload FROM events ORDER BY seq").fetchall()
    finally:
        raw.close()
    assert [(seq, n) for seq, n, _ in rows] == [(1, 1), (2, 256), (258, 44), (302, 6)]
    # the first chunk whole, then each other chunk's text: 15 bytes for 12 of text
    whole = len(msgspec.json.encode(events[1]))
    assert [p[:1] for _, _, p in rows] == [b"{", b"\x03", b"\x03", b"\x03"]
    assert len(rows[1][2]) < whole + 255 * 15 and whole > 130
    assert [e.event for e in await db.read_events(B, "t-1")] == events


async def test_an_existing_database_keeps_its_page_size(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    plain = sqlite3.connect(path)
    plain.execute("PRAGMA page_size = 4096")
    plain.execute("CREATE TABLE unrelated (x)")  # the file now exists with 4 KiB pages
    plain.close()
    store = SQLiteStore(f"sqlite:///{path}")
    await store.open()
    try:
        assert (await store.pragmas())["page_size"] == 4096
        await store.create_task(A, [created("t-1")], dialect="1.0", now=ts(1))
        record = await store.get_task(A, "t-1")
        assert record is not None and record.version == 1
    finally:
        await store.close()


async def test_url_options(tmp_path: Path) -> None:
    store = SQLiteStore(f"sqlite:///{tmp_path}/t.db?synchronous=full&busy_timeout=1234")
    await store.open()
    try:
        live = await store.pragmas()
        assert (live["synchronous"], live["busy_timeout_ms"]) == ("full", 1234)
        assert (store.synchronous, store.busy_timeout_ms) == ("full", 1234)
    finally:
        await store.close()


async def test_in_memory_database() -> None:
    store = SQLiteStore("sqlite:///:memory:")
    await store.open()
    try:
        assert store.journal_mode == "memory"  # SQLite has no WAL without a file
        assert store.path == ":memory:"
        await store.create_task(B, [created("t-1")], dialect="1.0", now=ts(0))
        assert await store.get_task(B, "t-1") is not None
    finally:
        await store.close()


async def test_relative_and_absolute_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    relative = SQLiteStore("sqlite:///var/lib/tasks.db")
    absolute = SQLiteStore(f"sqlite:///{tmp_path}/abs/deeper/tasks.db")
    assert absolute.url.startswith("sqlite:////")
    for store in (relative, absolute):
        await store.open()
        await store.create_task(B, [created("t-1")], dialect="1.0", now=ts(0))
        await store.close()
    assert (tmp_path / "var" / "lib" / "tasks.db").is_file()  # parent directories made
    assert (tmp_path / "abs" / "deeper" / "tasks.db").is_file()


def test_parse_url() -> None:
    assert parse_sqlite_url("sqlite:///a/b.db") == ("a/b.db", "normal", 5000, False)
    assert parse_sqlite_url("sqlite:////srv/b.db?synchronous=FULL") == ("/srv/b.db", "full", 5000, False)
    assert parse_sqlite_url("sqlite:///t.db?thread=1").threaded is True
    assert parse_sqlite_url("sqlite:///t.db?thread=off").threaded is False
    assert parse_sqlite_url("sqlite:///t.db?busy_timeout=2147483647").busy_timeout_ms == 2**31 - 1
    assert parse_sqlite_url("sqlite:///:memory:").path == ":memory:"
    assert parse_sqlite_url("sqlite:///my%20tasks.db").path == "my tasks.db"


@pytest.mark.parametrize(
    ("url", "complaint"),
    [
        ("sqlite:///", "names no file"),
        ("sqlite:///?synchronous=full", "names no file"),
        ("sqlite://host/x.db", "sqlite:///"),
        ("sqlite:///x.db?synchronous=sometimes", "synchronous"),
        ("sqlite:///x.db?busy_timeout=soon", "busy_timeout"),
        # "²" passes str.isdigit(); past 2**31 - 1 SQLite would not wait at all
        ("sqlite:///x.db?busy_timeout=\u00b2", "busy_timeout"),
        ("sqlite:///x.db?busy_timeout=2147483648", "at most 2147483647"),
        ("sqlite:///x.db?thread=maybe", "thread"),
        ("sqlite:///x.db?journal=delete", "unknown option"),
    ],
)
def test_bad_sqlite_urls(url: str, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        SQLiteStore(url)


def test_open_store_chooses_by_scheme(tmp_path: Path) -> None:
    assert isinstance(open_store("memory://"), MemoryStore)
    store = open_store(f"sqlite:///{tmp_path}/x.db")
    assert isinstance(store, SQLiteStore) and store.url == f"sqlite:///{tmp_path}/x.db"
    for url in ["mysql://admin:s3cret@db/tasks", "redis://x", "tasks.db", ""]:
        with pytest.raises(ValueError, match=r"memory://, sqlite:///") as caught:
            open_store(url)
        assert "s3cret" not in str(caught.value)


async def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    store = SQLiteStore(f"sqlite:///{path}")
    with pytest.raises(RuntimeError, match="schema version"):
        await store.open()


# what schema version 14 added (a lease's own timeout), taken away
V15_UNDONE = " ALTER TABLE leases DROP COLUMN timeout;"
# what schema version 13 added (the messages answered with a bare message), taken away
V14_UNDONE = V15_UNDONE + " DROP TABLE message_replies;"
# what schema version 12 added (a delivery's nonce), taken away again
V13_UNDONE = V14_UNDONE + (
    " DROP TRIGGER push_outbox_nonce; ALTER TABLE push_outbox DROP COLUMN nonce;")
# what schema version 11 added (the row's generation), taken away again
V12_UNDONE = V13_UNDONE + (
    " ALTER TABLE tasks DROP COLUMN generation; ALTER TABLE tasks DROP COLUMN generation_at;")
# what schema version 10 added, taken away again
V11_UNDONE = V12_UNDONE + (
    " DROP INDEX tasks_message; ALTER TABLE tasks DROP COLUMN claim;"
    " CREATE UNIQUE INDEX tasks_message ON tasks (tenant, owner, message_id)"
    " WHERE message_id IS NOT NULL;"
    " CREATE TABLE task_messages_old (tenant TEXT NOT NULL, owner TEXT NOT NULL,"
    " message_id TEXT NOT NULL, task_pk INTEGER NOT NULL REFERENCES tasks (pk)"
    " ON DELETE CASCADE, digest BLOB, PRIMARY KEY (tenant, owner, message_id)) WITHOUT ROWID;"
    " INSERT INTO task_messages_old SELECT tenant, owner, message_id, task_pk, digest"
    " FROM task_messages;"
    " DROP TABLE task_messages; ALTER TABLE task_messages_old RENAME TO task_messages;"
    " CREATE INDEX task_messages_task ON task_messages (task_pk);"
)
# what schema version 7 added, taken away again
V8_UNDONE = V11_UNDONE + (
    " ALTER TABLE tasks DROP COLUMN listed; ALTER TABLE tasks DROP COLUMN listed_split;"
    " ALTER TABLE tasks DROP COLUMN listed_at;"
)
V7_UNDONE = V8_UNDONE + (
    " ALTER TABLE tasks DROP COLUMN history; ALTER TABLE tasks DROP COLUMN history_at;"
)
# what schema versions 5 to 8 added, taken away again (a database of an older version)
V5_UNDONE = V7_UNDONE + (
    " DROP TABLE meta; DROP TABLE leases; DROP TABLE task_messages; ALTER TABLE tasks DROP COLUMN lease;"
    " ALTER TABLE tasks DROP COLUMN digest; DROP INDEX tasks_message;"
    " CREATE INDEX tasks_message ON tasks (tenant, owner, message_id)"
    " WHERE message_id IS NOT NULL;"
)


async def test_a_version_4_database_keeps_the_earliest_task_of_a_repeated_message(
        tmp_path: Path) -> None:
    path = tmp_path / "v4.db"
    async with SQLiteStore(f"sqlite:///{path}") as store:
        for n in range(3):
            await store.create_task(A, [created(f"t-{n}", at=ts(n))], dialect="1.0",
                                    now=ts(n), message_id=f"m-{n}")
    raw = sqlite3.connect(path)
    raw.executescript(V5_UNDONE + " PRAGMA user_version = 4;")
    # two more tasks of m-0, as version 4 let concurrent sends make them
    raw.execute("UPDATE tasks SET message_id = 'm-0'")
    raw.commit()
    raw.close()
    async with SQLiteStore(f"sqlite:///{path}") as store:
        assert store.schema_version == SCHEMA_VERSION
        assert await store.task_for_message(A, "m-0") == "t-0"
        for n in range(3):  # every task is still readable
            assert (await store.get_task(A, f"t-{n}")) is not None
        with pytest.raises(MessageExists) as caught:
            await store.create_task(A, [created("t-9", at=ts(9))], dialect="1.0",
                                    now=ts(9), message_id="m-0")
        assert caught.value.record.task_id == "t-0"


async def test_a_version_1_database_is_migrated_and_keeps_its_tasks(tmp_path: Path) -> None:
    from interlingua.core.model import PushConfig

    path = tmp_path / "old.db"
    first = created("t-1", at=ts(0), history=[user("m-1", "t-1")])
    async with SQLiteStore(f"sqlite:///{path}") as store:
        v = await store.create_task(A, [first], dialect="1.0", now=ts(0))
    # back to the version-1 schema: no push tables, one event a row, ids written out
    raw = sqlite3.connect(path)
    raw.executescript(
        V5_UNDONE + " DROP TABLE push_outbox; DROP TABLE push_configs;"
        " ALTER TABLE events DROP COLUMN n; PRAGMA user_version = 1;"
    )
    raw.execute("UPDATE events SET payload = ?", (msgspec.json.encode(first),))
    raw.execute("UPDATE tasks SET status = ?", (msgspec.json.encode(first.task.status),))
    raw.commit()
    raw.close()
    async with SQLiteStore(f"sqlite:///{path}") as store:
        assert store.schema_version == SCHEMA_VERSION == 15
        rec = await store.get_task(A, "t-1")
        assert rec is not None and rec.version == v
        await store.put_push_config(A, "t-1", PushConfig(url="https://x.example/", id="c"),
                                    dialect="1.0", now=ts(0))
        await store.append(A, "t-1", v, [status("t-1", S.WORKING, ts(1))], now=ts(1))
        assert [d.seq for d in await store.claim_deliveries(1.0, 2.0, 10)] == [2]
        # rows of the old shape and runs of the new one read as one log
        chunks = [chunk("t-1", "a", f"c{n}", append=n > 0) for n in range(5)]
        assert await store.append(A, "t-1", v + 1, chunks, now=ts(2)) == v + 6
        log = await store.read_events(A, "t-1")
        assert [e.seq for e in log] == list(range(1, v + 7))
        assert log[0].event == first
        assert [e.event for e in log[v + 1:]] == chunks


async def test_calls_need_an_open_store(tmp_path: Path) -> None:
    store = SQLiteStore(f"sqlite:///{tmp_path}/x.db")
    with pytest.raises(RuntimeError, match="not open"):
        await store.get_task(B, "t-1")
    await store.open()
    await store.open()  # opening twice is harmless
    await store.close()
    await store.close()
    with pytest.raises(RuntimeError, match="not open"):
        await store.get_task(B, "t-1")


async def test_two_stores_on_one_file_see_each_others_writes(tmp_path: Path) -> None:
    # as two processes would: separate connections, versions checked inside the write
    url = f"sqlite:///{tmp_path}/shared.db"
    one, two = SQLiteStore(url), SQLiteStore(url)
    await one.open()
    await two.open()
    try:
        await one.create_task(
            A, [created("t-1"), status("t-1", S.WORKING, ts(1))], dialect="1.0", now=ts(1)
        )
        assert await two.append(A, "t-1", 2, [status("t-1", S.CANCELED, ts(2))], now=ts(2)) == 3
        with pytest.raises(ConcurrentModification):
            await one.append(A, "t-1", 2, [status("t-1", S.COMPLETED, ts(3))], now=ts(3))
        record = await one.get_task(A, "t-1")
        assert record is not None
        assert (record.version, record.task.status.state) == (3, S.CANCELED)
    finally:
        await one.close()
        await two.close()


async def traced(store: SQLiteStore, call: object) -> list[str]:
    statements: list[str] = []
    conn = store._conn
    assert conn is not None
    conn.set_trace_callback(statements.append)
    try:
        await call  # type: ignore[misc]
    finally:
        conn.set_trace_callback(None)
    return statements


def with_stats(store: SQLiteStore, table: str, rows: list[tuple[str, str]]) -> None:
    """Give the planner ``rows`` (index, stat) of ``sqlite_stat1`` for ``table``, as
    ``PRAGMA optimize`` leaves them; connections opened later plan with them."""
    conn = sqlite3.connect(store.path)
    try:
        with conn:
            conn.execute("ANALYZE")
            conn.execute("DELETE FROM sqlite_stat1 WHERE tbl = ?", (table,))
            conn.executemany("INSERT INTO sqlite_stat1 VALUES (?, ?, ?)",
                             [(table, index, stat) for index, stat in rows])
    finally:
        conn.close()


async def query_plans(store: SQLiteStore, calls: list[object]) -> list[tuple[str, list[str]]]:
    """Each SELECT the calls run, with its EXPLAIN QUERY PLAN steps."""
    queries: list[str] = []
    for call in calls:
        queries += [s for s in await traced(store, call) if s.startswith("SELECT")]
    plans = sqlite3.connect(store.path)
    try:
        return [(sql, [row[-1] for row in plans.execute("EXPLAIN QUERY PLAN " + sql)])
                for sql in queries]
    finally:
        plans.close()


async def test_a_write_lock_held_past_busy_timeout_is_said_as_the_store_unavailable(
        tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    async with SQLiteStore(f"sqlite:///{path}?busy_timeout=100") as store:
        await store.create_task(A, [created("t-1")], dialect="1.0", now=ts(1))
        with write_locked(path):  # by another process
            # a task write (a group commit) and a write on its own
            with pytest.raises(StoreUnavailable) as refused:
                await store.create_task(A, [created("t-2")], dialect="1.0", now=ts(2))
            assert str(path) in str(refused.value) and "busy_timeout (100 ms)" in str(
                refused.value)
            assert isinstance(refused.value.__cause__, sqlite3.OperationalError)
            with pytest.raises(StoreUnavailable):
                await store.put_push_config(A, "t-1", PushConfig(url="https://h.example/",
                                                                 id="c"), dialect="1.0", now=ts(2))
            # reads go on (WAL): only writers wait on the lock
            assert await store.get_task(A, "t-1") is not None
        await store.create_task(A, [created("t-2")], dialect="1.0", now=ts(3))


@pytest.mark.parametrize("threaded", [False, True], ids=["inline", "thread"])
async def test_a_write_waiting_for_another_process_leaves_the_event_loop_free(
        tmp_path: Path, threaded: bool) -> None:
    import asyncio

    path = tmp_path / "shared.db"
    url = f"sqlite:///{path}?busy_timeout=5000" + ("&thread=1" if threaded else "")
    async with SQLiteStore(url) as store:
        await store.create_task(A, [created("t-1")], dialect="1.0", now=ts(1))
        # another process holds the write lock for a second
        with write_locked_for(path, 1.0) as released:
            writing = asyncio.ensure_future(
                store.create_task(A, [created("t-2")], dialect="1.0", now=ts(2)))
            await asyncio.sleep(0.1)
            # the loop went on while the lock was held: the write waits elsewhere
            assert not released.is_set()
            assert not writing.done()
            reading = asyncio.ensure_future(store.get_task(A, "t-1"))
            assert await writing == 1  # written once the other process let go
            # (the holder says so after its ROLLBACK, which the write may beat)
            assert released.wait(10)
            assert await reading is not None
        # and the store is back on its usual path
        await store.append(A, "t-2", 1, [status("t-2", S.WORKING, ts(3))], now=ts(3))
        assert (await store.pragmas())["busy_timeout_ms"] == 5000


async def test_the_dispatcher_reads_the_outbox_by_its_due_index(db: SQLiteStore) -> None:
    # The statistics of an outbox of 100,000 dead rows: one state, as far as
    # they tell. The dispatcher's two reads run at every wake-up.
    with_stats(db, "push_outbox", [("push_outbox_due", "100000 100000 100000"),
                                   ("push_outbox_queue", "100000 1 1 1 1")])
    plans = await query_plans(db, [db.claim_deliveries(100.0, 130.0, 10), db.next_delivery_at()])
    assert len(plans) == 2
    for sql, plan in plans:
        assert any(step.startswith("SEARCH o USING INDEX push_outbox_due") for step in plan), (
            sql, plan)


async def test_bare_reads_do_not_touch_the_log(db: SQLiteStore) -> None:
    await fill(db)
    bare = ListTasks(history_length=0)
    for call in [
        db.list_tasks(A, bare),
        db.list_tasks(A, ListTasks(history_length=0, page_size=1)),
        db.get_task(A, "t-1", history_length=0, include_artifacts=False),
    ]:
        statements = await traced(db, call)
        assert statements, "nothing was traced"
        assert not [s for s in statements if "events" in s]
    # without artifacts, artifact events are left unread
    statements = await traced(db, db.get_task(A, "t-1", include_artifacts=False))
    (read,) = [s for s in statements if "FROM events" in s]
    assert "kind IN (0, 1, 3)" in read


#: EXPLAIN QUERY PLAN lines that search no table themselves (a scan of a
#: subquery reads the rows its own steps found)
_PLAN_HEADINGS = ("SCALAR SUBQUERY", "COMPOUND QUERY", "LEFT-MOST SUBQUERY", "UNION ALL",
                  "CO-ROUTINE", "SCAN (subquery-")


#: sqlite_stat1 of ``tasks`` as ``PRAGMA optimize`` (run as a store closes) leaves it
#: for a store of 100,000 tasks in 1,000 contexts, all finished: completed, or failed
_LARGE_STORE_STATS = [
    ("sqlite_autoindex_tasks_1", "100000 100000 100000 1"),
    ("tasks_recent", "100000 100000 100000 1 1"),
    ("tasks_context", "100000 100000 100000 100 1 1"),
    ("tasks_state", "100000 100000 100000 50000 1 1"),
    ("tasks_message", "100000 100000 100000 1"),
    ("tasks_lifecycle", "2 1"),  # the unfinished tasks alone
]


@pytest.mark.parametrize("stats", ["none", "a large store's"])
async def test_listing_queries_use_indexes(db: SQLiteStore, stats: str) -> None:
    await fill(db)
    if stats != "none":
        # A planner that knows most tasks share a state once scanned the whole
        # table for the unfinished ones, at every lease heartbeat.
        with_stats(db, "tasks", _LARGE_STORE_STATS)
    token = (await db.list_tasks(B, ListTasks(page_size=1))).next_page_token
    calls = [
        db.list_tasks(B, ListTasks(page_size=1, page_token=token)),
        # v1.0 answers: the page of kept listings, and the probe for a next page
        db.list_tasks(B, ListTasks(page_size=1, page_token=token, v1_json=True)),
        db.list_tasks(B, ListTasks(status=S.WORKING, page_size=1, v1_json=True)),
        db.list_tasks(B, ListTasks(context_id="ctx-0", include_artifacts=True)),
        db.list_tasks(B, ListTasks(status=S.WORKING, status_timestamp_after=ts(1))),
        db.task_for_message(B, "m-0"),
        db.read_events(B, "t-0", after=1),
        db.get_task(B, "t-0"),
        db.unfinished_tasks(),
    ]
    plans = await query_plans(db, calls)
    assert len(plans) >= 10
    for sql, plan in plans:
        # every table is searched by an index (the other steps head a subquery's
        # steps, or the arms of a compound query)
        steps = [step for step in plan if not step.startswith(_PLAN_HEADINGS)]
        assert all(step.startswith("SEARCH") and " USING " in step for step in steps), (
            sql, plan)
        assert not [step for step in plan if "TEMP B-TREE" in step], (sql, plan)


async def test_only_unfinished_tasks_are_in_the_lifecycle_index(db: SQLiteStore) -> None:
    # A finished task, or a write that keeps the state, costs that index nothing.
    await fill(db)
    conn = sqlite3.connect(db.path)
    try:
        def indexed() -> int:
            return int(conn.execute(
                "SELECT SUM(ncell) FROM dbstat WHERE name = 'tasks_lifecycle'"
                " AND pagetype = 'leaf'").fetchone()[0])

        unfinished = len(await db.unfinished_tasks())
        assert unfinished == 4 and indexed() == unfinished
        await db.append(A, "t-1", 5, [status("t-1", S.COMPLETED, ts(20))], now=ts(20))
        assert indexed() == unfinished - 1
        # as a process of an earlier schema version, still running, asks for them
        assert len(conn.execute(
            "SELECT id FROM tasks INDEXED BY tasks_lifecycle"
            " WHERE state IN ('submitted', 'working')").fetchall()) == unfinished - 1
    finally:
        conn.close()


async def test_purging_reads_each_scopes_finished_tasks_by_index(db: SQLiteStore) -> None:
    await fill(db)
    with_stats(db, "tasks", _LARGE_STORE_STATS)
    statements = await traced(db, db.purge_finished(ts(11)))
    # (a statement is traced again as each trigger it fires begins)
    deletes = set(s for s in statements if s.startswith("DELETE FROM tasks"))
    assert len(deletes) == 2  # one for each scope
    conn = sqlite3.connect(db.path)
    try:
        for delete in deletes:
            plan = [row[-1] for row in conn.execute("EXPLAIN QUERY PLAN " + delete)]
            assert [step for step in plan
                    if step.startswith("SEARCH tasks USING INDEX tasks_state")], plan
            assert not [step for step in plan if step.startswith("SCAN")], plan
    finally:
        conn.close()


async def test_counts_follow_every_change(db: SQLiteStore) -> None:
    await fill(db)
    await db.append(A, "t-1", 5, [status("t-1", S.WORKING, ts(20))], now=ts(20))
    await db.append(A, "t-5", 5, [status("t-5", S.INPUT_REQUIRED, ts(21))], now=ts(21))
    assert await db.purge_finished(ts(11)) == 1  # t-0 (in B); t-3 finished later

    conn = sqlite3.connect(db.path)
    try:
        actual = dict(
            ((tenant, owner, state), n)
            for tenant, owner, state, n in conn.execute(
                "SELECT tenant, owner, state, COUNT(*) FROM tasks GROUP BY 1, 2, 3"
            )
        )
        counted = {
            (tenant, owner, state): n
            for tenant, owner, state, n in conn.execute("SELECT * FROM task_counts WHERE n")
        }
        orphans = conn.execute(
            "SELECT COUNT(*) FROM events WHERE task_pk NOT IN (SELECT pk FROM tasks)"
        ).fetchone()[0]
    finally:
        conn.close()
    assert counted == actual
    assert actual == {
        ("acme", "alice", "completed"): 1,
        ("acme", "alice", "working"): 1,
        ("acme", "alice", "input-required"): 1,
        ("", "", "working"): 2,
    }
    assert orphans == 0  # the purged task's log went with it
    for scope, state, total in [(A, None, 3), (A, S.WORKING, 1), (B, None, 2), (B, S.COMPLETED, 0)]:
        page = await db.list_tasks(scope, ListTasks(status=state))
        assert page.total_size == total == len(page.tasks)


@pytest.mark.parametrize("threaded", [False, True])
async def test_concurrent_writes_share_a_commit_and_keep_their_own_outcomes(
    tmp_path: Path, threaded: bool
) -> None:
    import asyncio

    from interlingua.stores import TaskExists

    url = f"sqlite:///{tmp_path}/g.db" + ("?thread=1" if threaded else "")
    store = SQLiteStore(url)
    await store.open()
    try:
        await store.create_task(A, [created("dup", at=ts(0))], dialect="1.0", now=ts(0))
        commits = 0

        def count(statement: str) -> None:
            nonlocal commits
            commits += statement.strip().upper() == "COMMIT"

        assert store._conn is not None
        store._conn.set_trace_callback(count)
        results = await asyncio.gather(
            *(store.create_task(A, [created(f"g-{i}", at=ts(i))], dialect="1.0", now=ts(i))
              for i in range(10)),
            store.create_task(A, [created("dup", at=ts(1))], dialect="1.0", now=ts(1)),
            store.append(A, "dup", 99, [status("dup", S.WORKING, ts(2))], now=ts(2)),
            return_exceptions=True,
        )
        store._conn.set_trace_callback(None)
        assert results[:10] == [1] * 10
        assert isinstance(results[10], TaskExists)
        assert isinstance(results[11], ConcurrentModification)
        # twelve writes, far fewer commits: they were grouped
        assert 1 <= commits < 12
        for i in range(10):
            assert (await store.get_task(A, f"g-{i}")) is not None
        dup = await store.get_task(A, "dup")
        assert dup is not None and dup.version == 1 and dup.task.status.state is S.SUBMITTED
    finally:
        await store.close()


async def test_a_row_keeps_null_where_a_task_has_no_value_and_blobs_where_it_has(
    tmp_path: Path,
) -> None:
    # blobs are bound as bytearray, and an absent one as an empty blob under NULLIF
    async with SQLiteStore(f"sqlite:///{tmp_path}/n.db") as store:
        await store.create_task(A, [created("n-1", at=ts(0))], dialect="1.0", now=ts(0),
                                message_id="m-1")
        v = await store.create_task(A, [created("n-2", at=ts(0))], dialect="1.0", now=ts(0),
                                    message_id="m-2", digest=b"d2")
        await store.append(A, "n-2", v, [status("n-2", TaskState.WORKING, ts(1))], now=ts(1))
        assert store._conn is not None
        rows = store._conn.execute(
            "SELECT id, typeof(status), typeof(metadata), digest, claim, typeof(history),"
            " typeof(listed) FROM tasks ORDER BY id").fetchall()
        assert rows == [("n-1", "blob", "null", None, b"", "blob", "blob"),
                        ("n-2", "blob", "null", b"d2", b"d2", "blob", "blob")]
        kinds = store._conn.execute("SELECT DISTINCT typeof(payload) FROM events").fetchall()
        assert kinds == [("blob",)]
        rec = await store.get_task(A, "n-2")
        assert rec is not None and rec.task.metadata is None
        assert (await store.find_message(A, "m-2", b"d2")) == MessageRecord("n-2", b"d2")


@pytest.mark.parametrize("threaded", [False, True])
async def test_a_group_reads_a_lease_once_and_a_revocation_in_it_fences_the_writes_after(
    tmp_path: Path, threaded: bool
) -> None:
    import asyncio

    from interlingua.stores import LeaseLost

    url = f"sqlite:///{tmp_path}/l.db" + ("?thread=1" if threaded else "")
    async with SQLiteStore(url) as store:
        lease = (await store.acquire_lease("h:1", 100.0)).epoch
        reads = 0

        def count(statement: str) -> None:
            nonlocal reads
            reads += statement.startswith("SELECT 1 FROM leases")

        def new(n: int) -> object:
            return store.create_task(A, [created(f"l-{n}", at=ts(n))], dialect="1.0",
                                     now=ts(n), lease=lease)

        assert store._conn is not None
        store._conn.set_trace_callback(count)
        # one group of four writes under the lease: it is read once
        assert await asyncio.gather(*(new(n) for n in range(4))) == [1] * 4  # type: ignore[arg-type]
        assert reads == 1
        # one group: writes under the lease, its revocation, two more: those fail
        results = await asyncio.gather(
            new(4), store.revoke_lease(lease), new(5), new(6),
            return_exceptions=True)  # type: ignore[arg-type]
        store._conn.set_trace_callback(None)
        assert results[:2] == [1, True]
        assert isinstance(results[2], LeaseLost) and isinstance(results[3], LeaseLost)
        assert [await store.get_task(A, f"l-{n}") is not None for n in range(7)] == [
            True, True, True, True, True, False, False]


@pytest.mark.parametrize("threaded", [False, True])
@pytest.mark.parametrize("others", [0, 5])
async def test_a_write_that_fails_halfway_leaves_nothing_and_its_group_commits(
    tmp_path: Path, threaded: bool, others: int
) -> None:
    import asyncio

    url = f"sqlite:///{tmp_path}/h.db" + ("?thread=1" if threaded else "")
    store = SQLiteStore(url)
    await store.open()

    def half(conn: sqlite3.Connection) -> None:
        # shaped like the store's own writes: a transaction of its own
        with _transaction(conn):
            conn.execute(
                "INSERT INTO tasks (tenant, owner, id, context_id, state, status, stamp,"
                " dialect, version, created_at, updated_at)"
                " VALUES ('', '', 'half', 'c', 'working', x'7b7d', 's', '1.0', 1, 'n', 'n')"
            )
            raise RuntimeError("failed after its first statement")

    try:
        results = await asyncio.gather(
            *(store.create_task(A, [created(f"k-{i}", at=ts(i))], dialect="1.0", now=ts(i))
              for i in range(others)),
            store._write(half),
            *(store.create_task(A, [created(f"m-{i}", at=ts(i))], dialect="1.0", now=ts(i))
              for i in range(others)),
            return_exceptions=True,
        )
        assert isinstance(results[others], RuntimeError)
        assert results[:others] + results[others + 1:] == [1] * (2 * others)
        assert store._conn is not None
        rows = store._conn.execute("SELECT id FROM tasks ORDER BY id").fetchall()
        assert [r[0] for r in rows] == sorted(
            [f"k-{i}" for i in range(others)] + [f"m-{i}" for i in range(others)]
        )
        # the connection is usable afterwards, outside any transaction
        assert not store._conn.in_transaction
        await store.create_task(A, [created("after", at=ts(9))], dialect="1.0", now=ts(9))
        assert (await store.get_task(A, "after")) is not None
    finally:
        await store.close()


@pytest.mark.parametrize("threaded", [False, True])
async def test_writes_fail_as_the_store_unavailable_when_another_writer_holds_the_database(
    tmp_path: Path, threaded: bool
) -> None:
    import asyncio

    path = tmp_path / "locked.db"
    url = f"sqlite:///{path}?busy_timeout=50" + ("&thread=1" if threaded else "")
    store = SQLiteStore(url)
    await store.open()
    try:
        with write_locked(path):  # another process writing, for longer than the timeout
            results = await asyncio.wait_for(asyncio.gather(
                *(store.create_task(A, [created(f"l-{i}", at=ts(i))], dialect="1.0", now=ts(i))
                  for i in range(3)),
                return_exceptions=True,
            ), 10)
            # said as the store being unavailable (503 to a caller), SQLite's error its cause
            assert all(isinstance(r, StoreUnavailable) for r in results), results
            assert all(isinstance(r.__cause__, sqlite3.OperationalError) for r in results)
            assert "locked" in str(results[0].__cause__) and "busy" in str(results[0])
        # the store is usable again once the other writer is done
        assert await store.create_task(A, [created("after", at=ts(5))], dialect="1.0",
                                       now=ts(5)) == 1
    finally:
        await store.close()


def test_close_survives_a_failed_optimize() -> None:
    """PRAGMA optimize at close fails at once when another process committed
    since its snapshot; the connection must still be closed, with no error."""

    class Busy:
        closed = False

        def execute(self, sql: str) -> None:
            raise sqlite3.OperationalError("database is locked")

        def close(self) -> None:
            self.closed = True

    conn = Busy()
    _close(conn)  # type: ignore[arg-type]
    assert conn.closed


@pytest.mark.parametrize(("task_id", "context_id"), [
    ("t-1", "ctx-1"),
    ("same", "same"),  # a client may name its task as its context
    ('q"uo\\te', "\u00e9t\u00e9\n\u0001"),  # escaped in JSON, and a control character
])
async def test_rows_name_their_task_and_context_by_reference(
    tmp_path: Path, task_id: str, context_id: str
) -> None:
    path = tmp_path / "refs.db"
    # texts equal to the ids, or holding them, come back as they were
    history = [user("m-1", task_id), user("m-2", f'"{context_id}"'), user("m-3", context_id)]
    first = created(task_id, context_id, at=ts(0), history=history)
    then = [status(task_id, S.WORKING, ts(1), ctx=context_id, message=agent("m-4", task_id)),
            chunk(task_id, "a", task_id, context_id, ctx=context_id)]
    async with SQLiteStore(f"sqlite:///{path}") as store:
        v = await store.create_task(A, [first], dialect="1.0", now=ts(0))
        await store.append(A, task_id, v, then, now=ts(1))
        assert [e.event for e in await store.read_events(A, task_id)] == [first, *then]
        rec = await store.get_task(A, task_id, history_length=0, include_artifacts=False)
        assert rec is not None and rec.task.status == then[0].status
        listed = await store.list_tasks(A, ListTasks(include_artifacts=True))
        assert listed.tasks[0].history == [*history, then[0].status.message]
        assert listed.tasks[0].artifacts[0].parts == then[1].artifact.parts
    raw = sqlite3.connect(path)
    try:
        payloads = [p for (p,) in raw.execute("SELECT payload FROM events")]
        payloads.append(raw.execute("SELECT status FROM tasks").fetchone()[0])
    finally:
        raw.close()
    # the ids themselves are stored once, in the task's row, not in its events
    named = msgspec.json.encode(task_id)
    assert all(named not in p for p in payloads[:-1] if b"\x01" in p)
    assert sum(p.count(b'"\x01"') for p in payloads) >= 6


def _histories(path: Path) -> dict[str, bytes | None]:
    raw = sqlite3.connect(path)
    try:
        return dict(raw.execute("SELECT id, history FROM tasks").fetchall())
    finally:
        raw.close()


async def test_a_long_history_is_left_to_the_log(tmp_path: Path) -> None:
    path = tmp_path / "long.db"
    long = "x" * 500  # three such messages pass HISTORY_MAX
    async with SQLiteStore(f"sqlite:///{path}") as store:
        v = await store.create_task(A, [created("t-1", at=ts(0), history=[user("m-0")])],
                                    dialect="1.0", now=ts(0))
        assert _histories(path)["t-1"] is not None
        for n in range(1, 4):
            v = await store.append(A, "t-1", v, [said(user(f"m-{n}", long))], now=ts(n))
        assert _histories(path)["t-1"] is None
        # it stays with the log from then on, and lists as the log folds
        v = await store.append(A, "t-1", v, [status("t-1", S.WORKING, ts(5),
                                                    message=agent("m-9"))], now=ts(5))
        assert _histories(path)["t-1"] is None
        for history_length in (None, 2):
            page = await store.list_tasks(A, ListTasks(history_length=history_length))
            record = await store.get_task(A, "t-1", history_length=history_length,
                                          include_artifacts=False)
            assert record is not None and page.tasks == [record.task]
        assert [m.message_id for m in page.tasks[0].history] == ["m-3", "m-9"]


async def test_a_version_6_database_gets_its_histories_at_open(tmp_path: Path) -> None:
    path = tmp_path / "v6.db"
    async with SQLiteStore(f"sqlite:///{path}") as store:
        v = await store.create_task(A, [created("t-1", at=ts(0), history=[user("m-1")])],
                                    dialect="1.0", now=ts(0))
        await store.append(A, "t-1", v, [status("t-1", S.INPUT_REQUIRED, ts(1),
                                                message=agent("m-2"))], now=ts(1))
        await store.create_task(A, [created("t-2", at=ts(2), history=[user("m-3", "x" * 2000)])],
                                dialect="1.0", now=ts(2))
        before = (await store.list_tasks(A, ListTasks())).tasks
    raw = sqlite3.connect(path)
    raw.executescript(V7_UNDONE + " PRAGMA user_version = 6;")
    raw.close()
    async with SQLiteStore(f"sqlite:///{path}") as store:
        assert store.schema_version == SCHEMA_VERSION
        kept = _histories(path)
        # folded from the log, as the store writes it; too long a one is left to the log
        assert kept["t-1"] is not None and kept["t-2"] is None
        assert (await store.list_tasks(A, ListTasks())).tasks == before
        assert [m.message_id for m in before[1].history] == ["m-1", "m-2"]


async def test_ids_that_look_like_references_are_left_to_the_log(tmp_path: Path) -> None:
    path = tmp_path / "odd.db"
    odd = msgspec.structs.replace(user("m-1"), task_id="\x01", context_id="\x02")
    own = msgspec.structs.replace(user("m-2"), task_id="t-2", context_id="ctx-1")
    async with SQLiteStore(f"sqlite:///{path}") as store:
        await store.create_task(A, [created("t-1", at=ts(0), history=[odd])],
                                dialect="1.0", now=ts(0))
        await store.create_task(A, [created("t-2", at=ts(1), history=[own])],
                                dialect="1.0", now=ts(1))
        rows = _histories(path)
        assert rows["t-1"] is None and rows["t-2"] is not None
        page = await store.list_tasks(A, ListTasks())
        assert [t.history for t in page.tasks] == [[own], [odd]]


async def test_a_log_that_does_not_fold_does_not_stop_the_fill(tmp_path: Path) -> None:
    path = tmp_path / "v6.db"
    async with SQLiteStore(f"sqlite:///{path}") as store:
        for n in (1, 2):
            await store.create_task(A, [created(f"t-{n}", at=ts(n), history=[user(f"m-{n}")])],
                                    dialect="1.0", now=ts(n))
    raw = sqlite3.connect(path)
    raw.executescript(V7_UNDONE + " PRAGMA user_version = 6;")
    raw.execute("UPDATE events SET payload = CAST('not json' AS BLOB)"
                " WHERE task_pk = (SELECT pk FROM tasks WHERE id = 't-1')")
    raw.commit()
    raw.close()
    async with SQLiteStore(f"sqlite:///{path}") as store:
        kept = _histories(path)
        assert kept["t-1"] is None and kept["t-2"] is not None
        page = await store.list_tasks(A, ListTasks(history_length=0))
        assert [t.id for t in page.tasks] == ["t-2", "t-1"]


async def test_a_write_that_leaves_the_history_behind_is_not_trusted(tmp_path: Path) -> None:
    # as a process of an older version writes: events and version, not the history
    path = tmp_path / "mixed.db"
    async with SQLiteStore(f"sqlite:///{path}") as store:
        v = await store.create_task(A, [created("t-1", at=ts(0), history=[user("m-1")])],
                                    dialect="1.0", now=ts(0))
        old = _histories(path)["t-1"]
        v = await store.append(A, "t-1", v, [said(user("m-2"))], now=ts(1))
        raw = sqlite3.connect(path)
        raw.execute("UPDATE tasks SET history = ?, history_at = 1", (old,))
        raw.commit()
        raw.close()
        page = await store.list_tasks(A, ListTasks())
        assert [m.message_id for m in page.tasks[0].history] == ["m-1", "m-2"]
        await store.append(A, "t-1", v, [said(user("m-3"))], now=ts(2))
        assert _histories(path)["t-1"] is None
        page = await store.list_tasks(A, ListTasks())
        assert [m.message_id for m in page.tasks[0].history] == ["m-1", "m-2", "m-3"]


async def test_a_version_10_database_keys_its_message_ids_by_content(tmp_path: Path) -> None:
    path = tmp_path / "v10.db"
    async with SQLiteStore(f"sqlite:///{path}") as store:
        v = await store.create_task(A, [created("t-1"), status("t-1", S.INPUT_REQUIRED, ts(0))],
                                    dialect="1.0", now=ts(0), message_id="m-1", digest=b"d1")
        await store.append(A, "t-1", v, [said(user("m-2")), status("t-1", S.WORKING, ts(1))],
                           now=ts(1), message=("m-2", b"d2"))
        await store.create_task(A, [created("t-0")], dialect="1.0", now=ts(0),
                                message_id="m-0")  # recorded without a digest
    raw = sqlite3.connect(path)
    raw.executescript(V11_UNDONE + " PRAGMA user_version = 10;")
    raw.close()
    async with SQLiteStore(f"sqlite:///{path}") as store:
        assert store.schema_version == SCHEMA_VERSION
        # a message recorded before, sent again: refused, naming its task
        with pytest.raises(MessageExists) as caught:
            await store.create_task(A, [created("t-9")], dialect="1.0", now=ts(2),
                                    message_id="m-1", digest=b"d1")
        assert caught.value.record == MessageRecord("t-1", b"d1")
        assert await store.find_message(A, "m-2", b"d2") == MessageRecord("t-1", b"d2")
        # other content under its id: another message
        await store.create_task(A, [created("t-2")], dialect="1.0", now=ts(2),
                                message_id="m-1", digest=b"d9")
        assert await store.find_message(A, "m-1", b"d9") == MessageRecord("t-2", b"d9")
        assert await store.find_message(A, "m-1", b"d1") == MessageRecord("t-1", b"d1")
        # an id recorded without a digest holds it alone
        with pytest.raises(MessageExists):
            await store.create_task(A, [created("t-3")], dialect="1.0", now=ts(2),
                                    message_id="m-0", digest=b"d3", strict=True)


async def test_a_new_task_the_send_looked_up_is_not_looked_up_again(
        db: SQLiteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """The send's look-up of the message id is handed down: the write does not
    repeat it (a query per new task), and looks itself when nobody did."""
    from interlingua.stores.sqlite import writes

    looked: list[str] = []
    find = writes._own.find_message

    def counted(*args: object, **kwargs: object) -> object:
        looked.append(str(args[2]))
        return find(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(writes._own, "find_message", counted)
    scope = Scope("", "")
    await db.create_task(scope, [created("t-1")], dialect="1.0", now=ts(0),
                         message_id="m-1", digest=b"d1", looked_up=True)
    assert looked == []
    await db.create_task(scope, [created("t-2")], dialect="1.0", now=ts(0),
                         message_id="m-2", digest=b"d2")
    assert looked == ["m-2"]


async def test_a_version_12_database_gives_each_queued_delivery_a_nonce(
        tmp_path: Path) -> None:
    """The nonce that makes a notification's id unique (stores/base.py, Delivery): rows
    queued before the column take one each, and so do rows a process of an earlier
    version writes without it."""
    from interlingua.core.model import PushConfig

    path = tmp_path / "v12.db"
    hook = PushConfig(url="https://hooks.example.com/", id="c")
    async with SQLiteStore(f"sqlite:///{path}") as store:
        for task_id in ("t-1", "t-2"):
            await store.create_task(A, [created(task_id)], dialect="1.0", now=ts(0),
                                    push_configs=(hook,))
    raw = sqlite3.connect(path)
    raw.executescript(V13_UNDONE + " PRAGMA user_version = 12;")
    raw.close()
    async with SQLiteStore(f"sqlite:///{path}") as store:
        assert store.schema_version == SCHEMA_VERSION
    raw = sqlite3.connect(path)
    try:  # a row as a process of version 12 writes it
        raw.execute("INSERT INTO push_outbox (task_pk, config_id, seq, state)"
                    " SELECT task_pk, config_id, 2, 'pending' FROM push_outbox LIMIT 1")
        raw.commit()
    finally:
        raw.close()
    async with SQLiteStore(f"sqlite:///{path}") as store:
        claimed = await store.claim_deliveries(1.0, 2.0, 10)
        assert [(d.task_id, d.seq) for d in claimed] == [("t-1", 1), ("t-2", 1)]
        for d in claimed:
            await store.delivery_done(d.id)
        [extra] = await store.claim_deliveries(3.0, 4.0, 10)  # behind t-1's first
        assert (extra.task_id, extra.seq) == ("t-1", 2)
    nonces = [d.nonce for d in (*claimed, extra)]
    assert len(set(nonces)) == 3 and all(len(n) == 32 and int(n, 16) >= 0 for n in nonces)


async def test_a_version_14_database_keeps_each_leases_own_timeout(tmp_path: Path) -> None:
    """A lease records its holder's own timeout, by which the others judge it; one
    taken before the column has none (it is judged by each judge's own)."""
    path = tmp_path / "v14.db"
    async with SQLiteStore(f"sqlite:///{path}") as store:
        await store.acquire_lease("h:1", 100.0)
    raw = sqlite3.connect(path)
    raw.executescript(V15_UNDONE + " PRAGMA user_version = 14;")
    raw.close()
    async with SQLiteStore(f"sqlite:///{path}") as store:
        assert store.schema_version == SCHEMA_VERSION
        (old,) = await store.live_leases()
        assert (old.holder, old.timeout) == ("h:1", None)
        new = await store.acquire_lease("h:2", 101.0, 2.5)
        assert new.timeout == 2.5
        assert await store.live_leases() == [old, new]


async def test_a_stored_event_that_does_not_read_back_is_a_damaged_store(tmp_path: Path) -> None:
    """An event's bytes overwritten where SQLite's own checks do not look: the caller
    is told the store is unavailable, as for a page SQLite finds malformed (it was
    msgspec's DecodeError, an internal error and a traceback for each request)."""
    from interlingua.stores.base import StoreUnavailable

    path = tmp_path / "tasks.db"
    store = SQLiteStore(f"sqlite:///{path}")
    await store.open()
    try:
        await store.create_task(A, [created("t-1")], dialect="1.0", now=ts(1))
        with sqlite3.connect(path) as plain:
            plain.execute("UPDATE events SET payload = CAST('{\"kind\": ' AS BLOB)")
        with pytest.raises(StoreUnavailable, match=r"is damaged: a stored row does not read"):
            await store.get_task(A, "t-1")
    finally:
        await store.close()


@pytest.mark.parametrize("threaded", [False, True])
async def test_a_write_that_meets_a_row_that_does_not_read_back_fails_alone(
        tmp_path: Path, threaded: bool) -> None:
    """A task's kept history overwritten: a write that reads it is told the store is
    damaged (it was msgspec's DecodeError, an internal error and a traceback), and
    the other writes of its group commit, as for any write that fails."""
    import asyncio

    from interlingua.stores.base import StoreDamaged

    path = tmp_path / "tasks.db"
    store = SQLiteStore(f"sqlite:///{path}" + ("?thread=1" if threaded else ""))
    await store.open()
    try:
        for task_id in ("t-0", "t-1", "t-2"):
            await store.create_task(A, [created(task_id, history=[user(f"{task_id}-m")])],
                                    dialect="1.0", now=ts(1))
        with sqlite3.connect(path) as plain:
            plain.execute("UPDATE tasks SET history = CAST('{\"kind\": ' AS BLOB)"
                          " WHERE id = 't-1'")
        plain.close()
        results = await asyncio.gather(
            *(store.append(A, task_id, 1, [said(user(f"{task_id}-n"))], now=ts(2))
              for task_id in ("t-0", "t-1", "t-2")),
            return_exceptions=True)
        assert results[0] == results[2] == 2
        assert isinstance(results[1], StoreDamaged), results[1]
        assert "a stored row does not read back" in str(results[1])
        for task_id, version in (("t-0", 2), ("t-1", 1), ("t-2", 2)):
            rec = await store._run(lambda conn, t=task_id: conn.execute(
                "SELECT version FROM tasks WHERE id = ?", (t,)).fetchone())
            assert rec == (version,), task_id
    finally:
        await store.close()
