"""What is particular to the PostgreSQL store: its URL, its migrations, and
several processes (here: several pools) writing one database at once."""

from __future__ import annotations

import asyncio
import logging

import asyncpg
import pytest
from click.testing import CliRunner

from interlingua.cli.main import main
from interlingua.core.calls import ListTasks
from interlingua.core.errors import InvalidParams
from interlingua.core.lifecycle import TERMINAL_STATES
from interlingua.core.model import PushConfig, TaskState
from interlingua.stores import MessageExists, MessageRecord, Scope, open_store
from interlingua.stores.holders import holder_name, session_tag
from interlingua.stores.postgres import PostgresStore, StoreUnavailable
from interlingua.stores.postgres.connection import _OUTAGE_IN_ONE_LINE
from interlingua.stores.postgres.schema import MIGRATIONS, SCHEMA_VERSION, parse_postgres_url
from interlingua.stores.sqlite import schema as sqlite_schema
from interlingua.stores.sqlite.schema import _TERMINAL_SQL, _UNFINISHED_SQL

from ..services import PG_PORT, with_option
from ..tcp_proxy import TcpProxy
from .builders import agent, chunk, created, said, status, ts, user
from .stalled_session import StalledSession

A = Scope("acme", "alice")
S = TaskState


def schema_of(url: str) -> str:
    return parse_postgres_url(url).schema


async def admin(url: str) -> asyncpg.Connection:
    return await asyncpg.connect(url.split("?")[0])


# ----------------------------------------------------------------------- URL


def test_pool_and_store_options_come_from_the_url() -> None:
    s = parse_postgres_url("postgresql://u:pw@db.example:6543/tasks?min_size=2&max_size=20"
                           "&command_timeout=5&max_inactive_lifetime=60&schema=a2a"
                           "&sslmode=disable&migrate=0")
    assert (s.min_size, s.max_size, s.command_timeout, s.max_inactive_lifetime) == (2, 20, 5, 60)
    assert s.schema == "a2a" and s.migrate is False
    # what asyncpg understands is passed on, our own options are not
    assert s.dsn == "postgresql://u:pw@db.example:6543/tasks?sslmode=disable"
    assert s.where == "db.example:6543/tasks"
    assert parse_postgres_url("postgres://h/db").schema == "interlingua"
    # an IPv6 host said as a URL writes it (it read "::1:5432/db")
    assert parse_postgres_url("postgresql://u@[::1]:5432/db").where == "[::1]:5432/db"


@pytest.mark.parametrize(("option", "complaint"), [
    ("max_size=0", "max_size"),
    ("min_size=x", "min_size"),
    ("max_size=\u00b2", "max_size"),  # passes str.isdigit(), which int() refuses
    ("min_size=5&max_size=2", "above max_size"),
    ("command_timeout=-1", "command_timeout"),
    ("schema=Robert');DROP", "schema"),
    ("migrate=perhaps", "migrate"),
])
def test_bad_options_are_refused_clearly(option: str, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint) as caught:
        PostgresStore(f"postgresql://admin:s3cret@db/tasks?{option}")
    assert "s3cret" not in str(caught.value)


@pytest.mark.parametrize("port", ["99999", "x", "\u00b2"])
def test_a_port_out_of_range_is_refused_without_the_password(port: str) -> None:
    with pytest.raises(ValueError, match="port is not a number from 0 to 65535") as caught:
        PostgresStore(f"postgresql://admin:s3cret@db:{port}/tasks")
    assert "s3cret" not in str(caught.value)


def test_open_store_chooses_postgres_for_both_schemes() -> None:
    for url in ["postgresql://u@h/db", "postgres://u@h/db"]:
        store = open_store(url)
        assert isinstance(store, PostgresStore) and store.url == url


async def test_an_unreachable_server_is_a_clear_error_without_the_password() -> None:
    store = PostgresStore("postgresql://u:s3cret@127.0.0.1:1/db")
    with pytest.raises(StoreUnavailable, match=r"cannot reach PostgreSQL at 127\.0\.0\.1:1/db") \
            as caught:
        await store.open()
    assert "s3cret" not in str(caught.value)


async def test_a_server_given_in_the_query_is_the_one_named() -> None:
    """Before: host= and port= of the query were left out, and the message named
    localhost:5432, which was not the server tried."""
    store = PostgresStore("postgresql://u:s3cret@/db?host=127.0.0.1&port=1")
    with pytest.raises(StoreUnavailable, match=r"cannot reach PostgreSQL at 127\.0\.0\.1:1/db"):
        await store.open()
    where = [parse_postgres_url(f"postgresql://u@{url}").where for url in (
        "/db?host=/var/run/postgresql", "?host=a,b&port=5433&dbname=tasks",
        "?host=a,b&port=1,2&database=d")]
    assert where == ["/var/run/postgresql:5432/db", "a:5433,b:5433/tasks", "a:1,b:2/d"]


def test_a_connection_that_timed_out_says_so() -> None:
    # (a port that takes the connection and never answers: asyncpg's timeout, whose
    # text is empty, was said as "cannot reach PostgreSQL at ...: " and no reason)
    from interlingua.stores.postgres.connection import _unreachable

    said = _unreachable(TimeoutError(), "127.0.0.1:5/db")
    assert str(said) == "cannot reach PostgreSQL at 127.0.0.1:5/db: no answer in time"


async def test_an_outage_is_one_line_of_asyncpg_s_pool_per_try(
        pg_url: str, caplog: pytest.LogCaptureFixture) -> None:
    """Before: each try of asyncpg's pool to restore its connection floor while the
    database was out of reach logged a whole traceback."""
    caplog.set_level(logging.WARNING, "asyncpg.pool")
    with TcpProxy(PG_PORT) as proxy:
        store = PostgresStore(with_option(pg_url.replace(f":{PG_PORT}/", f":{proxy.port}/", 1),
                                          "min_size=1&max_size=1"))
        await store.open()
        try:
            proxy.cut()
            with pytest.raises(StoreUnavailable):
                await store.get_task(A, "t")
            for _ in range(50):
                if caplog.records:
                    break
                await asyncio.sleep(0.05)
            [record, *_] = caplog.records
            assert record.exc_info is None and record.exc_text is None
            line = caplog.text.strip().splitlines()[0]
            assert "connection floor" in line and "Connect call failed" in line, caplog.text
            assert "Traceback" not in caplog.text
            proxy.restore()
        finally:
            await store.close()
    # any other failure keeps its traceback
    other = logging.LogRecord("asyncpg.pool", logging.WARNING, __file__, 1, "floor", (),
                              (ValueError, ValueError("x"), None))
    assert _OUTAGE_IN_ONE_LINE.filter(other) and other.exc_info is not None


async def test_pool_sizes_are_applied(pg_url: str) -> None:
    store = PostgresStore(with_option(pg_url, "min_size=1&max_size=3"))
    await store.open()
    try:
        assert store._pool is not None and store._pool.get_max_size() == 3
        assert store.effective["schema_version"] == SCHEMA_VERSION
    finally:
        await store.close()


# ---------------------------------------------------------------- migrations


async def test_replicas_starting_at_once_migrate_once(pg_url: str) -> None:
    stores = [PostgresStore(pg_url) for _ in range(3)]
    try:
        await asyncio.gather(*(s.open() for s in stores))
        conn = await admin(pg_url)
        try:
            rows = await conn.fetch(f'SELECT version FROM "{schema_of(pg_url)}".schema_version')
        finally:
            await conn.close()
        assert [r[0] for r in rows] == [SCHEMA_VERSION]
        # and they share it
        await stores[0].create_task(A, [created("t-1")], dialect="1.0", now=ts(0))
        assert await stores[2].get_task(A, "t-1") is not None
    finally:
        for s in stores:
            await s.close()


async def test_migrate_0_refuses_a_schema_behind_until_db_upgrade(pg_url: str) -> None:
    held = PostgresStore(with_option(pg_url, "migrate=0"))
    with pytest.raises(RuntimeError, match="interlingua db upgrade"):
        await held.open()
    result = await asyncio.to_thread(
        CliRunner().invoke, main, ["db", "upgrade", "--store", pg_url])
    assert result.exit_code == 0, result.output
    assert f"Made the schema, version {SCHEMA_VERSION}: no store was there." in result.output
    again = await asyncio.to_thread(
        CliRunner().invoke, main, ["db", "upgrade", "--store", pg_url])
    assert "up to date" in again.output
    await held.open()
    await held.close()


def test_db_upgrade_says_what_it_cannot_reach() -> None:
    result = CliRunner().invoke(main, ["db", "upgrade", "--store",
                                       "postgresql://u:s3cret@127.0.0.1:1/db"])
    assert result.exit_code == 3  # (unreachable, as serve says it)
    assert "cannot reach PostgreSQL" in result.output and "s3cret" not in result.output
    bad = CliRunner().invoke(main, ["db", "upgrade", "--store", "memory://"])
    assert bad.exit_code == 2 and "postgresql://" in bad.output


async def test_a_version_1_schema_lists_its_tasks_from_their_logs(pg_url: str) -> None:
    async with PostgresStore(pg_url) as store:
        v = await store.create_task(A, [created("t-1", at=ts(0), history=[user("m-1")])],
                                    dialect="1.0", now=ts(0))
    schema = schema_of(pg_url)
    conn = await admin(pg_url)
    try:  # back to version 1: the tasks keep no history of their own
        await conn.execute(f'ALTER TABLE "{schema}".tasks DROP COLUMN history,'
                           ' DROP COLUMN history_at, DROP COLUMN generation,'
                           f' DROP COLUMN generation_at; DROP INDEX "{schema}".tasks_finished;'
                           f' ALTER TABLE "{schema}".messages DROP COLUMN claim,'
                           ' DROP COLUMN reply, DROP COLUMN created_at,'
                           ' ALTER COLUMN task_pk SET NOT NULL;'
                           f' ALTER TABLE "{schema}".messages'
                           ' ADD PRIMARY KEY (tenant, owner, message_id);'
                           f' ALTER TABLE "{schema}".push_outbox DROP COLUMN nonce;'
                           f' ALTER TABLE "{schema}".leases DROP COLUMN timeout;'
                           f' UPDATE "{schema}".schema_version SET version = 1')
    finally:
        await conn.close()
    async with PostgresStore(pg_url) as store:
        assert store.effective["schema_version"] == SCHEMA_VERSION
        await store.append(A, "t-1", v, [status("t-1", S.INPUT_REQUIRED, ts(1),
                                                message=agent("m-2"))], now=ts(1))
        await store.create_task(A, [created("t-2", at=ts(2), history=[user("m-3")])],
                                dialect="1.0", now=ts(2))
        page = await store.list_tasks(A, ListTasks())
        assert [(t.id, [m.message_id for m in t.history]) for t in page.tasks] == [
            ("t-2", ["m-3"]), ("t-1", ["m-1", "m-2"])]


async def test_a_write_that_leaves_the_history_behind_is_not_trusted(pg_url: str) -> None:
    async def row() -> tuple[bytes | None, int | None]:
        conn = await admin(pg_url)
        try:
            found = await conn.fetchrow(
                f'SELECT history, history_at FROM "{schema_of(pg_url)}".tasks WHERE id = $1',
                "t-1")
        finally:
            await conn.close()
        return found[0], found[1]

    async def listed(store: PostgresStore) -> list[str]:
        page = await store.list_tasks(A, ListTasks())
        return [m.message_id for m in page.tasks[0].history]

    async with PostgresStore(pg_url) as store:
        v = await store.create_task(A, [created("t-1", at=ts(0), history=[user("m-1")])],
                                    dialect="1.0", now=ts(0))
        old, _ = await row()
        # the short way (no message added) keeps the history current
        v = await store.append(A, "t-1", v, [status("t-1", S.WORKING, ts(1))], now=ts(1))
        assert await row() == (old, v)
        v = await store.append(A, "t-1", v, [said(user("m-2"))], now=ts(2))
        # as a process of an older version writes: events and version, not the history
        conn = await admin(pg_url)
        try:
            await conn.execute(f'UPDATE "{schema_of(pg_url)}".tasks SET history = $1,'
                               ' history_at = $2', old, v - 1)
        finally:
            await conn.close()
        assert await listed(store) == ["m-1", "m-2"]
        await store.append(A, "t-1", v, [status("t-1", S.WORKING, ts(3))], now=ts(3))
        assert (await row())[1] is None
        assert await listed(store) == ["m-1", "m-2"]


async def test_a_new_task_whose_message_meets_a_reply_that_does_not_read_back(
        pg_clean_url: str) -> None:
    """A reply's bytes overwritten where PostgreSQL's checks do not look: a new task
    (with push configs: its own transaction) whose message id the reply holds is
    told the store is damaged, as a read is (it was msgspec's DecodeError, an
    internal error and a traceback)."""
    from interlingua.stores.base import StoreDamaged

    async with PostgresStore(pg_clean_url) as store:
        await store.record_reply(A, "m-1", b"d", agent("r-1"), now=ts(0))
        conn = await admin(pg_clean_url)
        try:
            await conn.execute(f'UPDATE "{schema_of(pg_clean_url)}".messages'
                               " SET reply = convert_to('{\"kind\": ', 'UTF8')")
        finally:
            await conn.close()
        with pytest.raises(StoreDamaged, match="a stored row does not read back"):
            await store.create_task(A, [created("t-1", at=ts(1))], dialect="1.0", now=ts(1),
                                    message_id="m-1", digest=b"d",
                                    push_configs=[PushConfig(url="http://h/", id="c")])


async def test_a_newer_schema_is_refused(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    await store.open()
    await store.close()
    conn = await admin(pg_url)
    try:
        await conn.execute(f'UPDATE "{schema_of(pg_url)}".schema_version SET version = 99')
    finally:
        await conn.close()
    with pytest.raises(RuntimeError, match="schema version 99"):
        await PostgresStore(pg_url).open()


# ------------------------------------------------------------ several writers


async def test_two_pools_sending_one_message_make_one_task(pg_clean_url: str) -> None:
    one, two = PostgresStore(pg_clean_url), PostgresStore(pg_clean_url)
    await one.open()
    await two.open()
    try:
        results = await asyncio.gather(*(
            (one if n % 2 else two).create_task(A, [created(f"t-{n}")], dialect="1.0",
                                                now=ts(0), message_id="m-1", digest=b"d")
            for n in range(10)), return_exceptions=True)
        made = [r for r in results if isinstance(r, int)]
        refused = [r for r in results if isinstance(r, MessageExists)]
        assert len(made) == 1 and len(refused) == 9, results
    finally:
        await one.close()
        await two.close()


async def test_claims_from_several_pools_never_overlap(pg_clean_url: str) -> None:
    stores = [PostgresStore(pg_clean_url) for _ in range(3)]
    for s in stores:
        await s.open()
    try:
        for n in range(30):
            await stores[0].create_task(
                A, [created(f"t-{n}")], dialect="1.0", now=ts(0),
                push_configs=[PushConfig(url="https://h.example/", id="c")])
        batches = await asyncio.gather(*(s.claim_deliveries(100.0, 130.0, 7)
                                         for s in stores for _ in range(3)))
        ids = [d.id for batch in batches for d in batch]
        assert len(ids) == len(set(ids)) == 30
    finally:
        for s in stores:
            await s.close()


async def test_a_whole_task_delivery_claimed_meanwhile_is_not_moved_on(
        pg_clean_url: str) -> None:
    """A write that queues a v0.3 (whole task) delivery while a dispatcher claims the
    untried one before it: the claimed one goes out as claimed and the new status
    queues behind it. (The write moved the claimed row on to its status: the claim
    sent the old one and, done, deleted the row, and the new status was never sent.)"""
    store = PostgresStore(pg_clean_url)
    await store.open()
    try:
        v = await store.create_task(A, [created("t-1")], dialect="0.3", now=ts(0),
                                    push_configs=[PushConfig(url="https://h.example/", id="c")])
        conn = await admin(pg_clean_url)
        try:
            # a dispatcher's claim of the queued delivery, in its transaction
            tx = conn.transaction()
            await tx.start()
            claimed = await conn.fetchval(
                f'UPDATE "{schema_of(pg_clean_url)}".push_outbox SET claimed_until = 130'
                " WHERE seq = 1 RETURNING pk")
            writing = asyncio.create_task(
                store.append(A, "t-1", v, [status("t-1", S.COMPLETED, ts(1))], now=ts(1)))
            await asyncio.sleep(0.3)
            await tx.commit()
            v = await writing
        finally:
            await conn.close()
        await store.delivery_done(claimed)  # the claimed delivery went out
        [final] = await store.claim_deliveries(131.0, 160.0, 10)
        assert final.seq == v == 2
    finally:
        await store.close()


async def test_a_revocation_waits_for_a_write_in_flight(pg_clean_url: str) -> None:
    store = PostgresStore(pg_clean_url)
    await store.open()
    try:
        lease = await store.acquire_lease("h:1", 1.0)
        v = await store.create_task(A, [created("t-1"), status("t-1", S.WORKING, ts(0))],
                                    dialect="1.0", now=ts(0), lease=lease.epoch)
        conn = await admin(pg_clean_url)
        try:
            # a writer holds the fence (as append does) while the revocation runs
            tx = conn.transaction()
            await tx.start()
            await conn.execute(f'SELECT 1 FROM "{schema_of(pg_clean_url)}".leases'
                               " WHERE epoch = $1 FOR KEY SHARE", lease.epoch)
            revoking = asyncio.create_task(store.revoke_lease(lease.epoch))
            await asyncio.sleep(0.3)
            assert not revoking.done()
            await tx.commit()
            assert await revoking
        finally:
            await conn.close()
        from interlingua.stores import LeaseLost
        with pytest.raises(LeaseLost):
            await store.append(A, "t-1", v, [status("t-1", S.COMPLETED, ts(1))], now=ts(1),
                               lease=lease.epoch)
    finally:
        await store.close()


# ------------------------------------------------------------------- layout


async def test_events_are_stored_as_runs(pg_clean_url: str) -> None:
    store = PostgresStore(pg_clean_url)
    await store.open()
    try:
        v = await store.create_task(A, [created("t-1"), status("t-1", S.WORKING, ts(0))],
                                    dialect="1.0", now=ts(0))
        chunks = [chunk("t-1", "a", f"c{i}", append=i > 0) for i in range(300)]
        v = await store.append(A, "t-1", v, chunks, now=ts(1))
        conn = await admin(pg_clean_url)
        try:
            rows = await conn.fetch(f'SELECT seq, n FROM "{schema_of(pg_clean_url)}".events'
                                    " ORDER BY seq")
        finally:
            await conn.close()
        # created, working: two kinds, then 300 chunks in runs of at most 256
        assert [(r[0], r[1]) for r in rows] == [(1, 1), (2, 1), (3, 256), (259, 44)]
        middle = await store.read_events(A, "t-1", after=100, limit=3)
        assert [e.seq for e in middle] == [101, 102, 103]
        rec = await store.get_task(A, "t-1")
        assert rec is not None and len(rec.task.artifacts[0].parts) == 300
    finally:
        await store.close()


async def test_a_write_of_chunks_leaves_the_indexes_alone(pg_url: str) -> None:
    # No index names a column such a write changes, so PostgreSQL can make it a
    # heap-only (HOT) update: no index is written. (A schema of its own: the
    # counts are the table's since it was made.)
    schema = schema_of(pg_url)
    store = PostgresStore(pg_url)
    await store.open()
    try:
        v = await store.create_task(A, [created("t-1"), status("t-1", S.WORKING, ts(0))],
                                    dialect="1.0", now=ts(0))
        for i in range(3):
            v = await store.append(A, "t-1", v, [chunk("t-1", "a", f"c{i}", append=i > 0)],
                                   now=ts(1 + i))
        await store.append(A, "t-1", v, [status("t-1", S.COMPLETED, ts(9))], now=ts(9))
    finally:
        await store.close()  # its sessions end, and report their counts
    conn = await admin(pg_url)
    try:
        for _ in range(50):
            updates, hot = await conn.fetchrow(
                "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables"
                " WHERE schemaname = $1 AND relname = 'tasks'", schema)
            if updates >= 4:
                break
            await asyncio.sleep(0.1)
        # the three chunk writes; the final status moves the task in its indexes
        assert (updates, hot) == (4, 3)
        # the unfinished and the finished tasks are found by an index of their own
        await conn.execute(f'SET search_path TO "{schema}"')
        await conn.execute("SET enable_seqscan = off")
        for sql, index in [
            (f"SELECT id FROM tasks WHERE state IN {_UNFINISHED_SQL}", "tasks_lifecycle"),
            ("SELECT id FROM tasks WHERE state = ANY('{submitted,working}')", "tasks_lifecycle"),
            (f"DELETE FROM tasks WHERE state IN {_TERMINAL_SQL} AND stamp < 'x'"
             " AND updated_at < 'x'", "tasks_finished"),
        ]:
            plan = "\n".join(r[0] for r in await conn.fetch("EXPLAIN " + sql))
            assert index in plan, (sql, plan)
    finally:
        await conn.close()


def test_the_partial_indexes_are_what_the_queries_ask_for() -> None:
    # A migration is written once, as text; the queries spell the states from
    # constants, which must stay the migrations' own words for the planner.
    assert _UNFINISHED_SQL == "(" + ", ".join(
        f"'{s.value}'" for s in (S.SUBMITTED, S.WORKING)) + ")"
    assert _TERMINAL_SQL == "(" + ", ".join(sorted(f"'{s.value}'" for s in TERMINAL_STATES)) + ")"
    # (the steps that made the indexes last)
    for last in (MIGRATIONS[3], sqlite_schema.MIGRATIONS[9]):
        assert any(s.endswith(f"WHERE state IN {_UNFINISHED_SQL}") for s in last)
    assert any(s.endswith(f"WHERE state IN {_TERMINAL_SQL}") for s in MIGRATIONS[3])
    for later in (*MIGRATIONS[4:], *sqlite_schema.MIGRATIONS[10:]):
        assert not any("tasks_lifecycle" in s or "tasks_finished" in s for s in later)


async def test_listing_pages_on_an_index(pg_url: str) -> None:
    # a schema of its own, as migrated: the shared one's statistics (what the other
    # tests wrote, analyzed by autovacuum at any moment) can steer the planner elsewhere
    from interlingua.stores.postgres import upgrade

    await upgrade(pg_url)
    conn = await admin(pg_url)
    try:
        await conn.execute(f'SET search_path TO "{schema_of(pg_url)}"')
        await conn.execute("SET enable_seqscan = off")
        plan = "\n".join(r[0] for r in await conn.fetch(
            "EXPLAIN SELECT pk, id FROM tasks WHERE tenant = 'a' AND owner = 'b'"
            " AND (stamp, id) < ('x', 'y') ORDER BY stamp DESC, id DESC LIMIT 11"))
    finally:
        await conn.close()
    assert "tasks_recent" in plan and "Sort" not in plan, plan


async def test_nul_in_an_id_is_invalid_params(pg_clean_url: str) -> None:
    store = PostgresStore(pg_clean_url)
    await store.open()
    try:
        with pytest.raises(InvalidParams, match="NUL"):
            await store.create_task(A, [created("t-\x00")], dialect="1.0", now=ts(0))
        assert await store.get_task(A, "t-\x00") is None
        assert await store.find_message(A, "m\x00") is None
    finally:
        await store.close()


async def test_a_claim_of_a_process_that_died_lapses_to_another(pg_clean_url: str) -> None:
    dead, alive = PostgresStore(pg_clean_url), PostgresStore(pg_clean_url)
    await dead.open()
    await alive.open()
    try:
        await alive.create_task(A, [created("t-1")], dialect="1.0", now=ts(0),
                                push_configs=[PushConfig(url="https://h.example/", id="c")])
        (taken,) = await dead.claim_deliveries(100.0, 130.0, 10)
        await dead.close()  # it dies holding the claim
        assert await alive.claim_deliveries(129.0, 159.0, 10) == []
        (again,) = await alive.claim_deliveries(131.0, 161.0, 10)
        assert again.id == taken.id and again.seq == taken.seq
    finally:
        await alive.close()
        await dead.close()


async def test_a_writer_stopped_mid_transaction_does_not_block_revocation_for_long(
        pg_clean_url: str) -> None:
    store = PostgresStore(pg_clean_url)
    await store.open()
    try:
        lease = await store.acquire_lease("h:1", 1.0)
        # a writer of the store (its session settings) that stops inside a write
        assert store._pool is not None
        async with store._pool.acquire() as stopped:
            tx = stopped.transaction()
            await tx.start()
            await stopped.execute("SELECT 1 FROM leases WHERE epoch = $1 FOR KEY SHARE",
                                  lease.epoch)
            # the revocation does not hang on it: it says not yet...
            began = asyncio.get_running_loop().time()
            assert not await store.revoke_lease(lease.epoch)
            assert asyncio.get_running_loop().time() - began < 3
            # ...and once PostgreSQL has ended the idle session, it goes through
            await asyncio.sleep(5.5)
            assert await store.revoke_lease(lease.epoch)
    finally:
        await store.close()


async def _stalled_under(url: str, holder: str, epoch: int) -> StalledSession:
    """A session named as ``holder``'s, stopped inside a write that holds lease ``epoch``'s
    fence, as a process paused in the middle of a pipeline leaves it."""
    session = StalledSession(url, session_tag(holder))
    await session.open()
    await session.stall_in(
        f'SELECT 1 FROM "{schema_of(url)}".leases WHERE epoch = {epoch} FOR KEY SHARE')
    return session


async def test_a_writer_stopped_mid_pipeline_has_its_sessions_ended_by_the_revocation(
        pg_clean_url: str) -> None:
    async with PostgresStore(pg_clean_url) as store:
        lease = await store.acquire_lease("elsewhere/boot:7", 100.0)
        stalled = await _stalled_under(pg_clean_url, "elsewhere/boot:7", lease.epoch)
        try:
            conn = await admin(pg_clean_url)
            try:  # the case PostgreSQL's idle timeout leaves alone: an active session
                state = await conn.fetchval(
                    "SELECT state FROM pg_stat_activity WHERE application_name = $1",
                    session_tag("elsewhere/boot:7"))
            finally:
                await conn.close()
            assert state == "active"
            # a lease that beat since the revoker looked: nothing is ended
            assert not await store.revoke_lease(lease.epoch, unless_after=99.0)
            assert await store.live_leases() == [lease]
            # a silent one: its stalled writer's session is ended, and it is revoked at once
            began = asyncio.get_running_loop().time()
            assert await store.revoke_lease(lease.epoch, unless_after=101.0)
            assert asyncio.get_running_loop().time() - began < 3
            assert await store.live_leases() == []
            async with asyncio.timeout(5):
                assert await stalled.ended()
        finally:
            await stalled.close()


async def test_only_the_revoked_holders_sessions_are_ended(pg_clean_url: str) -> None:
    async with PostgresStore(pg_clean_url) as store:
        lease = await store.acquire_lease("elsewhere/boot:7", 100.0)
        # a stalled session of another process holds the fence: not ended, not revoked
        bystander = await _stalled_under(pg_clean_url, "elsewhere/boot:8", lease.epoch)
        try:
            assert not await store.revoke_lease(lease.epoch, unless_after=101.0)
            conn = await admin(pg_clean_url)
            try:
                assert await conn.fetchval(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
                    session_tag("elsewhere/boot:8")) == 1
            finally:
                await conn.close()
        finally:
            await bystander.close()


async def test_sessions_are_named_after_their_process_unless_the_url_names_them(
        pg_clean_url: str) -> None:
    async def settings(url: str) -> tuple[str, str]:
        async with PostgresStore(url) as store:
            assert store._pool is not None
            async with store._pool.acquire() as conn:
                return (await conn.fetchval("SHOW application_name"),
                        await conn.fetchval("SHOW idle_in_transaction_session_timeout"))

    assert await settings(pg_clean_url) == (session_tag(holder_name()), "5s")
    own = with_option(with_option(pg_clean_url, "application_name=billing"),
                      "idle_in_transaction_session_timeout=9000")
    assert await settings(own) == ("billing", "9s")


async def test_a_version_4_schema_keys_its_message_ids_by_content(pg_url: str) -> None:
    async with PostgresStore(pg_url) as store:
        v = await store.create_task(A, [created("t-1"), status("t-1", S.INPUT_REQUIRED, ts(0))],
                                    dialect="1.0", now=ts(0), message_id="m-1", digest=b"d1")
        await store.append(A, "t-1", v, [said(user("m-2")), status("t-1", S.WORKING, ts(1))],
                           now=ts(1), message=("m-2", b"d2"))
        await store.create_task(A, [created("t-0")], dialect="1.0", now=ts(0),
                                message_id="m-0")  # recorded without a digest
    schema = schema_of(pg_url)
    conn = await admin(pg_url)
    try:  # back to version 4: one row per message id
        await conn.execute(f'ALTER TABLE "{schema}".tasks DROP COLUMN generation,'
                           ' DROP COLUMN generation_at;'
                           f' ALTER TABLE "{schema}".messages DROP COLUMN claim,'
                           ' DROP COLUMN reply, DROP COLUMN created_at,'
                           ' ALTER COLUMN task_pk SET NOT NULL;'
                           f' ALTER TABLE "{schema}".messages'
                           ' ADD PRIMARY KEY (tenant, owner, message_id);'
                           f' ALTER TABLE "{schema}".push_outbox DROP COLUMN nonce;'
                           f' ALTER TABLE "{schema}".leases DROP COLUMN timeout;'
                           f' UPDATE "{schema}".schema_version SET version = 4')
    finally:
        await conn.close()
    async with PostgresStore(pg_url) as store:
        assert store.effective["schema_version"] == SCHEMA_VERSION
        # a message recorded before, sent again: refused, naming its task
        with pytest.raises(MessageExists) as caught:
            await store.create_task(A, [created("t-9")], dialect="1.0", now=ts(2),
                                    message_id="m-1", digest=b"d1")
        assert caught.value.record == MessageRecord("t-1", b"d1")
        with pytest.raises(MessageExists):
            await store.create_task(A, [created("t-9")], dialect="1.0", now=ts(2),
                                    message_id="m-2", digest=b"d2")
        # other content under its id: another message
        await store.create_task(A, [created("t-2")], dialect="1.0", now=ts(2),
                                message_id="m-1", digest=b"d9")
        assert await store.find_message(A, "m-1", b"d9") == MessageRecord("t-2", b"d9")
        assert await store.find_message(A, "m-1", b"d1") == MessageRecord("t-1", b"d1")
        # an id recorded without a digest holds it alone
        with pytest.raises(MessageExists):
            await store.create_task(A, [created("t-3")], dialect="1.0", now=ts(2),
                                    message_id="m-0", digest=b"d3", strict=True)


async def test_a_version_6_schema_gives_each_queued_delivery_a_nonce(pg_url: str) -> None:
    """The nonce that makes a notification's id unique (stores/base.py, Delivery): rows
    queued before the column take one each, and so do rows a replica of an earlier
    version writes without it."""
    assert SCHEMA_VERSION == 9
    hook = PushConfig(url="https://hooks.example.com/", id="c")
    async with PostgresStore(pg_url) as store:
        for task_id in ("t-1", "t-2"):
            await store.create_task(A, [created(task_id)], dialect="1.0", now=ts(0),
                                    push_configs=(hook,))
    schema = schema_of(pg_url)
    conn = await admin(pg_url)
    try:  # back to version 6: no nonce
        await conn.execute(f'ALTER TABLE "{schema}".push_outbox DROP COLUMN nonce;'
                           f' ALTER TABLE "{schema}".messages DROP COLUMN reply,'
                           ' DROP COLUMN created_at, ALTER COLUMN task_pk SET NOT NULL;'
                           f' ALTER TABLE "{schema}".leases DROP COLUMN timeout;'
                           f' UPDATE "{schema}".schema_version SET version = 6')
    finally:
        await conn.close()
    async with PostgresStore(pg_url) as store:
        assert store.effective["schema_version"] == SCHEMA_VERSION
        conn = await admin(pg_url)
        try:  # a row as a replica of version 6 writes it
            await conn.execute(f'INSERT INTO "{schema}".push_outbox'
                               " (task_pk, config_id, seq, state) SELECT task_pk, config_id,"
                               f" 2, 'pending' FROM \"{schema}\".push_outbox LIMIT 1")
        finally:
            await conn.close()
        claimed = await store.claim_deliveries(1.0, 2.0, 10)
        assert sorted((d.task_id, d.seq) for d in claimed) == [("t-1", 1), ("t-2", 1)]
        for d in claimed:
            await store.delivery_done(d.id)
        [extra] = await store.claim_deliveries(3.0, 4.0, 10)
    nonces = [d.nonce for d in (*claimed, extra)]
    assert len(set(nonces)) == 3 and all(len(n) == 32 and int(n, 16) >= 0 for n in nonces)


async def test_a_version_8_schema_keeps_each_leases_own_timeout(pg_url: str) -> None:
    """A lease records its holder's own timeout, by which the others judge it; one
    taken before the column has none (it is judged by each judge's own)."""
    async with PostgresStore(pg_url) as store:
        await store.acquire_lease("h:1", 100.0)
    schema = schema_of(pg_url)
    conn = await admin(pg_url)
    try:  # back to version 8: leases without a timeout
        await conn.execute(f'ALTER TABLE "{schema}".leases DROP COLUMN timeout;'
                           f' UPDATE "{schema}".schema_version SET version = 8')
    finally:
        await conn.close()
    async with PostgresStore(pg_url) as store:
        assert store.effective["schema_version"] == SCHEMA_VERSION
        (old,) = await store.live_leases()
        assert (old.holder, old.timeout) == ("h:1", None)
        new = await store.acquire_lease("h:2", 101.0, 2.5)
        assert new.timeout == 2.5
        assert await store.live_leases() == [old, new]
