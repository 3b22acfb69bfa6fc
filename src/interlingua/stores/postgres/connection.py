"""The PostgreSQL store's database: its connection pool, transactions and migrations."""


from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any, Concatenate, ParamSpec, Self, TypeVar

import asyncpg
import msgspec

from ..base import (
    SchemaMismatch,
    StoreDamaged,
    StoreUnavailable,
    StoreUnusable,
    schema_behind,
)
from ..holders import holder_name, session_tag
from .group import GroupCommit
from .rows import IDLE_IN_TRANSACTION_MS, _store_down
from .schema import MIGRATIONS, SCHEMA_VERSION, PostgresSettings, parse_postgres_url

P = ParamSpec("P")
T = TypeVar("T")
D = TypeVar("D", bound="Database")


def _unreachable(exc: BaseException, where: str, *,
                 connecting: bool = True) -> StoreUnavailable | None:
    """What a failed connect (``connecting``; else a statement of the open) says to
    the operator in one line (None: not an outage, ``_store_down``). The server
    refusing the login (an unknown role, a wrong password, a database that does not
    exist or takes no connections, too many connections) is said as the server says
    it."""
    if not _store_down(exc, connecting=connecting):
        return None
    if isinstance(exc, asyncpg.PostgresError) and not isinstance(
            exc, asyncpg.exceptions.PostgresConnectionError):
        how = "refused the connection" if connecting else "refused the store"
        return StoreUnavailable(f"PostgreSQL at {where} {how}: {exc}")
    # (a timeout says nothing of itself: a port that takes the connection and
    # never answers, say)
    why = str(exc) or ("no answer in time" if isinstance(exc, TimeoutError)
                       else type(exc).__name__)
    return StoreUnavailable(f"cannot reach PostgreSQL at {where}: {why}")


def _refused(exc: Exception, where: str, *, connecting: bool = True) -> Exception:
    """What a store that cannot be opened raises: ``_unreachable``'s, else, for what
    the server said (an option it does not know, a table of another program's, no
    right to make the store's tables), ``StoreUnusable`` saying it; else ``exc``."""
    if (down := _unreachable(exc, where, connecting=connecting)) is not None:
        return down
    if isinstance(exc, asyncpg.PostgresError):
        return StoreUnusable(f"PostgreSQL at {where} refused the store: "
                             f"{type(exc).__name__}: {exc}")
    return exc


class _OutageInOneLine(logging.Filter):
    """asyncpg's pool says each failed try to restore its connection floor with a
    traceback. While the database is out of reach (the store says so in lines of
    its own) that is one line naming the cause; anything else keeps its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None and _store_down(exc, connecting=True):
            why = str(exc) or type(exc).__name__
            record.msg, record.args = f"{record.getMessage()} ({why})", ()
            record.exc_info = record.exc_text = None
        return True


_OUTAGE_IN_ONE_LINE = _OutageInOneLine()


async def _keep_session(conn: asyncpg.Connection) -> None:
    """How the pool resets a connection given back: it has nothing to undo.

    The store leaves no state in a session: its locks are taken for a
    transaction (``FOR UPDATE``, ``pg_advisory_xact_lock``), its settings are
    ``SET LOCAL``, it listens to nothing and opens no cursor outside a
    transaction; a transaction left open is rolled back by asyncpg before this
    is called. asyncpg's default reset (``pg_advisory_unlock_all()``, ...)
    would cost every release a round trip to the server: two of the nine of a
    unary send."""


async def _version(conn: asyncpg.Connection, settings: PostgresSettings) -> int:
    """The version in the schema's ``schema_version`` table; ``StoreUnusable`` when the
    table is not the store's (one row, one integer column ``version``): another
    program's of that name (Flyway's, say), or one emptied, whose version is unknown."""
    schema = settings.schema
    rows = await conn.fetch(f'SELECT * FROM "{schema}".schema_version LIMIT 2')
    if len(rows) == 1 and list(rows[0].keys()) == ["version"]:
        version = rows[0]["version"]
        if isinstance(version, int) and version >= 0:
            return version
    raise StoreUnusable(
        f"the schema \"{schema}\" of PostgreSQL at {settings.where} cannot be used as the "
        "store: it holds a schema_version table of another program's (the store's has one "
        "row, its integer version); give the store a schema of its own (schema= in the URL)")


async def _migrate(conn: asyncpg.Connection, settings: PostgresSettings, *,
                   upgrade: bool, url: str = "") -> int:
    """Bring the schema to SCHEMA_VERSION (under an advisory lock); returns the
    version it had. With ``upgrade`` False, only check that it is current (a schema
    behind is refused naming ``url``, the store's)."""
    schema = settings.schema
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                           f"interlingua schema {schema}")
        exists = await conn.fetchval(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = $1"
            " AND table_name = 'schema_version'", schema)
        version = await _version(conn, settings) if exists else 0
        if version > SCHEMA_VERSION:
            raise SchemaMismatch(
                f"the database has schema version {version}; this version of interlingua "
                f"knows versions up to {SCHEMA_VERSION}")
        if version == SCHEMA_VERSION:
            return int(version)
        if not upgrade:
            # (migrate=0 in the URL is the operator's to drop; a command that reads the
            # store turns migrations off itself)
            hint = "" if settings.migrate else " (or drop migrate=0 from the URL)"
            raise schema_behind(version, SCHEMA_VERSION, url, hint=hint)
        await conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        await conn.execute(f'SET LOCAL search_path TO "{schema}"')
        if not exists:
            await conn.execute("CREATE TABLE schema_version (version integer NOT NULL)")
            await conn.execute("INSERT INTO schema_version VALUES (0)")
        for step in MIGRATIONS[version:]:
            for statement in step:
                await conn.execute(statement)
        await conn.execute("UPDATE schema_version SET version = $1", SCHEMA_VERSION)
    return int(version)


async def _connect(settings: PostgresSettings) -> asyncpg.Connection:
    """One connection to the store's database, for a command (not the pool)."""
    try:
        return await asyncpg.connect(settings.dsn)
    except Exception as exc:
        raise _refused(exc, settings.where) from None


async def holds_store(url: str) -> bool:
    """Whether the schema ``url`` names holds a store (its ``schema_version`` table),
    for a command that reads a store and makes none."""
    settings = parse_postgres_url(url)
    conn = await _connect(settings)
    try:
        found: bool = await conn.fetchval(
            "SELECT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = $1"
            " AND table_name = 'schema_version')", settings.schema)
        return found
    finally:
        await conn.close()


async def agents_stores(url: str) -> list[str]:
    """The schemas of the database ``url`` names that hold the stores of agents served
    together from ``url`` (``{schema}_{name}``, ``host.agents.store_url_for``), sorted:
    what a command that finds no store at ``url`` itself names."""
    settings = parse_postgres_url(url)
    conn = await _connect(settings)
    try:
        rows = await conn.fetch(
            "SELECT table_schema FROM information_schema.tables WHERE table_name ="
            " 'schema_version' AND left(table_schema, length($1)) = $1"
            " ORDER BY table_schema", settings.schema + "_")
        return [row[0] for row in rows]
    finally:
        await conn.close()


async def upgrade(url: str) -> tuple[int, int]:
    """Apply the migrations ``url``'s schema lacks; returns (before, after)."""
    settings = parse_postgres_url(url)
    conn = await _connect(settings)
    try:
        before = await _migrate(conn, settings, upgrade=True)
    except asyncpg.PostgresError as exc:
        raise _refused(exc, settings.where, connecting=False) from None
    finally:
        await conn.close()
    return before, SCHEMA_VERSION


def reads_rows(method: Callable[Concatenate[D, P], Coroutine[Any, Any, T]]
               ) -> Callable[Concatenate[D, P], Coroutine[Any, Any, T]]:
    """``method``, a read that decodes stored rows (some once their session is given
    back, so no ``_conn`` sees it), or a write that decodes the rows it meets (a task's
    history, a reply under its message id): a row that does not read back (its bytes
    overwritten where PostgreSQL's own checks do not look) is the store damaged, a
    503 as on SQLite, rather than an internal error with a traceback each request."""
    @functools.wraps(method)
    async def read(self: D, /, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await method(self, *args, **kwargs)
        except msgspec.DecodeError as exc:
            raise self._unreadable(exc) from exc
    return read


class Database:
    """The pool of connections to the store's database, opened with its schema current."""

    def __init__(self, url: str, *, migrate: bool = True) -> None:
        self.url = url
        self.settings = parse_postgres_url(url)
        #: migrate at open: the URL's ``migrate`` and the caller's (False for a
        #: command that only reads the store) must both allow it
        self.migrates = migrate and self.settings.migrate
        self.on_outbox: Callable[[], None] | None = None
        self._pool: asyncpg.Pool | None = None
        #: what /healthz reports (filled at open)
        self.effective: dict[str, Any] = {}
        #: (tenant, owner, task id) -> (pk, context id, state, version) as this
        #: process last wrote them: what lets the next write skip reading the row
        self._written: dict[tuple[str, str, str], tuple[int, str, str, int]] = {}
        #: the one-statement writes and look-ups of a send, committed in groups
        self._group = GroupCommit(self._conn)

    @property
    def schema_version(self) -> int:
        return int(self.effective.get("schema_version", 0))

    def describe(self) -> dict[str, Any]:
        return dict(self.effective)

    async def owners_namespaced(self) -> bool:
        # This store came after task owners were keyed by scheme: every owner id
        # it holds was written keyed.
        return True

    async def namespace_owners(self, owner_of: Callable[[str], str]) -> int:
        return 0

    async def open(self) -> None:
        if self._pool is not None:
            return
        s = self.settings
        logging.getLogger("asyncpg.pool").addFilter(_OUTAGE_IN_ONE_LINE)  # (added once)
        server_settings = {"search_path": f'"{s.schema}"'}
        if "idle_in_transaction_session_timeout=" not in s.dsn:
            # Our transactions never wait on anything but the database, so one
            # left idle is a writer that stopped (a paused process): its session
            # is ended, and with it the locks others wait for (the fence of its
            # lease, its task rows).
            server_settings["idle_in_transaction_session_timeout"] = str(
                IDLE_IN_TRANSACTION_MS)
        if "application_name=" not in s.dsn:
            # A session is named after this process: a replica that revokes this
            # process's lease ends the sessions that hold its locks (Store.revoke_lease).
            server_settings["application_name"] = session_tag(holder_name())
        try:
            pool = await asyncpg.create_pool(
                s.dsn, server_settings=server_settings, reset=_keep_session,
                **s.pool_options)
        except Exception as exc:
            raise _refused(exc, s.where) from None
        try:
            async with pool.acquire() as conn:
                await _migrate(conn, s, upgrade=self.migrates, url=self.url)
                server_version = await conn.fetchval("SHOW server_version")
        except asyncpg.PostgresError as exc:
            await pool.close()
            raise _refused(exc, s.where, connecting=False) from None
        except BaseException:
            await pool.close()
            raise
        self._pool = pool
        self.effective = {"database": s.where, "schema": s.schema,
                          "schema_version": SCHEMA_VERSION, "server_version": server_version,
                          "pool_min_size": s.min_size, "pool_max_size": s.max_size}

    async def close(self) -> None:
        if self._pool is not None:
            await self._group.drain()
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @asynccontextmanager
    async def _conn(self) -> AsyncIterator[asyncpg.Connection]:
        pool = self._pool
        if pool is None:
            raise RuntimeError("the PostgreSQL store is not open: await store.open() first")
        try:
            conn = await pool.acquire()  # (a new session is made here when one is needed)
        except Exception as exc:
            if _store_down(exc, connecting=True):
                raise self._unavailable(exc) from exc
            raise
        try:
            yield conn
        except Exception as exc:
            if isinstance(exc, asyncpg.exceptions.InternalClientError):
                conn.terminate()  # a session left mid-operation: never lent again
            if _store_down(exc):
                raise self._unavailable(exc) from exc
            raise
        finally:
            await pool.release(conn)

    def _unavailable(self, exc: Exception) -> StoreUnavailable:
        said = f": {exc}" if isinstance(exc, asyncpg.PostgresError) else ""
        return StoreUnavailable(f"the task store (PostgreSQL at {self.settings.where}) is "
                                f"unavailable: {type(exc).__name__}{said}")

    def _unreadable(self, exc: Exception) -> StoreDamaged:
        return StoreDamaged(f"the task store (PostgreSQL at {self.settings.where}) is damaged:"
                            f" a stored row does not read back ({exc})")

    @asynccontextmanager
    async def _tx(self, **options: Any) -> AsyncIterator[asyncpg.Connection]:
        async with self._conn() as conn, conn.transaction(**options):
            yield conn

    def _snapshot(self) -> Any:
        return self._tx(isolation="repeatable_read", readonly=True)

    def _queued(self, queued: bool) -> None:
        if queued and self.on_outbox is not None:
            self.on_outbox()

