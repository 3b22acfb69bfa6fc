"""``SQLiteStore``: the store's calls, on its connection, with group commits."""

from __future__ import annotations

import asyncio
import functools
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Concatenate

import msgspec

from ...core.calls import ListTasks, ListTasksResult
from ...core.model import (
    Event,
    Message,
    PushConfig,
)
from .. import _paging, _projection
from ..base import (
    MAX_ROW_ID,
    Delivery,
    Lease,
    MessageRecord,
    PushConfigRecord,
    Scope,
    StoredEvent,
    StoreUnavailable,
    StoreUnusable,
    TaskRecord,
    UnfinishedTask,
)
from . import ownership as _own
from .checkpoint import WalCheckpointer
from .connection import (
    P,
    StoreRefused,
    T,
    _close,
    _connect,
    _Connection,
    _finish_checkpoint,
    _group_locked,
    _in_transaction,
    _pages_written,
    _read_settings,
    _write_group,
    folder_refusal,
    is_locked,
    parse_sqlite_url,
    unavailable,
    unreadable,
    waiting,
    write_group_waiting,
)
from .outbox import (
    _claim,
    _dead,
    _delete_push_config,
    _delivery_done,
    _delivery_failed,
    _get_push_config,
    _list_push_configs,
    _next_delivery_at,
    _outbox_counts,
    _put_push_config,
    _release_claims,
    _revive,
)
from .reads import _get, _list, _purge, _read_events, _unfinished
from .rows import _encode
from .schema import HISTORY_VERSION
from .writes import _LOOK_UP, _append, _create, _fill_histories
from .writes import record_reply as _record_reply

# ----------------------------------------------------------------------- store


class SQLiteStore:
    """Tasks and logs in one SQLite file (or ``:memory:``), WAL mode.

    After ``open()`` the effective settings, read back from SQLite, are in
    ``journal_mode`` ("wal"; "memory" for ``:memory:``), ``synchronous``
    ("normal" by default, "full" with ``?synchronous=full``), ``busy_timeout_ms``,
    ``foreign_keys`` and ``schema_version``; ``effective`` holds all of them
    (with ``cache_size_kib`` and ``page_size``) as a dict, as ``/healthz`` reports.
    """

    def __init__(self, url: str, *, migrate: bool = True) -> None:
        self.url = url
        self.settings = parse_sqlite_url(url)
        #: migrate at open (False: refuse a schema that is behind, for a command that
        #: only reads the store)
        self.migrates = migrate
        self.path = self.settings.path
        refused = folder_refusal(url, self.path)
        if refused is not None:
            raise ValueError(refused)
        #: the settings read back from the database at open() (empty before)
        self.effective: dict[str, Any] = {}
        self._pool: ThreadPoolExecutor | None = None
        self._conn: _Connection | None = None
        self.on_outbox: Callable[[], None] | None = None
        # Calls run on the event loop's thread unless a commit waits for fsync
        # (synchronous=full/extra); see _run. ``?thread=1`` forces the worker.
        self._inline = self.settings.synchronous in ("normal", "off") and not self.settings.threaded
        # group commit: writes waiting for the next transaction
        self._writes: list[tuple[Callable[..., Any], tuple[Any, ...], asyncio.Future[Any]]] = []
        self._write_scheduled = False
        self._write_lock = asyncio.Lock()
        self._flushers: set[asyncio.Task[None]] = set()
        #: calls of this store on the worker thread, running or queued: while there
        #: are any, an inline store uses its connection only there (one user at a time)
        self._jobs = 0
        #: background WAL checkpoints (a file in WAL mode only)
        self.checkpointer: WalCheckpointer | None = None
        self._pages_seen = 0
        #: the file opened (device, inode), to see it removed or replaced under us
        self._file: tuple[int, int] | None = None
        #: why the file the connection writes is no longer the store's path: writes
        #: are refused (they would go to a file nobody opens again)
        self._lost: str | None = None

    async def open(self) -> None:
        if self._pool is not None:
            return
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="interlingua-sqlite")
        loop = asyncio.get_running_loop()
        try:
            conn, effective = await loop.run_in_executor(
                pool, functools.partial(_connect, self.settings, self.url,
                                        migrate=self.migrates))
        except sqlite3.Error as exc:
            pool.shutdown(wait=False)
            raise _refused(exc) from None
        except BaseException:
            pool.shutdown(wait=False)
            raise
        if 0 < conn.migrated_from < HISTORY_VERSION:  # 0: a new database
            try:
                await loop.run_in_executor(pool, _fill_histories, conn)
            except BaseException:
                conn.close()
                pool.shutdown(wait=False)
                raise
        if self._inline:
            # Commits on the event loop must not wait there for another process's
            # write lock (SQLite's busy handler sleeps): a call that finds the
            # database locked is run again on the worker thread, which waits for
            # it up to busy_timeout (_run, _flush_writes_inline).
            conn.execute("PRAGMA busy_timeout = 0")
        self._pool, self._conn = pool, conn
        self.effective = effective
        if effective["journal_mode"] == "wal":
            self.checkpointer = WalCheckpointer(self.path, self.settings.busy_timeout_ms)
        self._pages_seen = _pages_written(conn)
        try:
            self._file = _identity(self.path)
        except OSError:
            self._file = None  # (no file to watch)

    def _check_file(self) -> None:
        """Raises ``StoreRefused`` once the store's path no longer names the file the
        connection has open (removed, or another put in its place)."""
        if self._lost is None and self._file is not None and self._file_changed():
            where = self._conn.where if self._conn is not None else self.path
            self._lost = (f"{where}: its file was removed or replaced while open; writes "
                          "are refused, as they would be lost: restart the server")
        if self._lost is not None:
            raise StoreRefused(self._lost)

    def _file_changed(self) -> bool:
        """Whether the path names no file, or another: a stat that fails otherwise (a
        permission, a stale network handle) tells nothing, and is asked again at the
        next heartbeat."""
        try:
            return _identity(self.path) != self._file
        except OSError:
            return False

    def describe(self) -> dict[str, Any]:
        return dict(self.effective)

    @property
    def journal_mode(self) -> str:
        return str(self.effective.get("journal_mode", ""))

    @property
    def synchronous(self) -> str:
        return str(self.effective.get("synchronous", ""))

    @property
    def busy_timeout_ms(self) -> int:
        return int(self.effective.get("busy_timeout_ms", 0))

    @property
    def foreign_keys(self) -> bool:
        return bool(self.effective.get("foreign_keys", False))

    @property
    def schema_version(self) -> int:
        return int(self.effective.get("schema_version", 0))

    async def close(self) -> None:
        pool, conn = self._pool, self._conn
        if pool is None or conn is None:
            return
        self._pool = self._conn = None
        checkpointer, self.checkpointer = self.checkpointer, None
        try:
            if checkpointer is not None:
                # before the writer's close, which (as the last connection)
                # checkpoints what is left and removes the WAL
                await asyncio.to_thread(checkpointer.close)
            # queued behind any call still running, which thus completes first
            await asyncio.get_running_loop().run_in_executor(pool, _close, conn)
        finally:
            pool.shutdown(wait=True)

    async def __aenter__(self) -> SQLiteStore:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def pragmas(self) -> dict[str, Any]:
        """The settings as SQLite reports them now, from the live connection."""
        live = await self._run(_read_settings)
        if self._inline:  # waited for by the store itself, not by SQLite (see open)
            live["busy_timeout_ms"] = self.settings.busy_timeout_ms
        return live

    async def _run(
        self,
        fn: Callable[Concatenate[_Connection, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        pool, conn = self._pool, self._conn
        if pool is None or conn is None:
            raise RuntimeError("the SQLite store is not open: await store.open() first")
        inline = self._inline
        if inline and not self._jobs:
            # A commit that does not wait for the disk (synchronous=normal/off)
            # costs less than handing it to the worker thread and back, so it
            # runs right here (docs/architecture.md, "SQLite commits in groups").
            try:
                return fn(conn, *args, **kwargs)
            except sqlite3.DatabaseError as exc:
                if not is_locked(exc):  # (a lock is waited for, below)
                    down = unavailable(conn, exc)
                    if down is exc:
                        raise
                    raise down from exc
            except msgspec.DecodeError as exc:
                raise unreadable(conn, exc) from exc
        call: Callable[[], T] = functools.partial(fn, conn, *args, **kwargs)
        if inline:  # the lock is waited for on the worker thread, the loop free meanwhile
            call = functools.partial(waiting, self._deadline(), call)
        try:
            return await self._in_thread(pool, call)
        except sqlite3.DatabaseError as exc:
            down = unavailable(conn, exc)
            if down is exc:
                raise
            raise down from exc
        except msgspec.DecodeError as exc:  # a stored row that does not read back
            raise unreadable(conn, exc) from exc

    def _deadline(self) -> float:
        return time.monotonic() + self.settings.busy_timeout_ms / 1000

    async def _in_thread(self, pool: ThreadPoolExecutor, call: Callable[[], T]) -> T:
        self._jobs += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(pool, call)
        finally:
            self._jobs -= 1

    def _write(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """A task write, committed together with the others queued meanwhile:
        its outcome, to await (a future, not a coroutine: one frame fewer a write).

        Writes that arrive while the loop is busy (many requests at once) share
        one transaction: one commit, and one WAL append, for all of them.
        """
        if self._pool is None or self._conn is None:
            raise RuntimeError("the SQLite store is not open: await store.open() first")
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[T] = loop.create_future()
        if self._lost is not None:
            fut.set_exception(StoreRefused(self._lost))
            return fut
        self._writes.append((fn, args, fut))
        if not self._write_scheduled:
            self._write_scheduled = True
            if self._inline:
                # One loop turn later than the next: the requests that arrived
                # with this one are then further along and join the same commit,
                # for a wait of a few microseconds.
                loop.call_soon(loop.call_soon, self._flush_writes_inline)
            else:
                self._flush_on_thread(None)
        return fut

    def _take_writes(self) -> list[tuple[Callable[..., Any], tuple[Any, ...], asyncio.Future[Any]]]:
        writes, self._writes = self._writes, []
        self._write_scheduled = False
        return writes

    @staticmethod
    def _settle(writes: list[tuple[Any, Any, asyncio.Future[Any]]],
                outcomes: list[tuple[bool, Any]]) -> None:
        for (_, _, fut), (ok, value) in zip(writes, outcomes, strict=True):
            if fut.done():
                continue
            if ok:
                fut.set_result(value)
            else:
                fut.set_exception(value)

    def _flush_writes_inline(self) -> None:
        if self._jobs:  # the worker thread has the connection: the group goes there
            self._flush_on_thread(None)
            return
        writes = self._take_writes()
        conn = self._conn
        if conn is None:
            error = RuntimeError("the SQLite store was closed")
            self._settle(writes, [(False, error)] * len(writes))
            return
        outcomes = _write_group(conn, [(fn, args) for fn, args, _ in writes])
        # (the first outcome tested here: no call for a group that went through)
        if outcomes and not outcomes[0][0] and _group_locked(outcomes):  # locked: wait off the loop
            self._flush_on_thread(writes)
            return
        self._settle(writes, outcomes)
        if self._committed(conn):
            _finish_checkpoint(conn)

    def _flush_on_thread(self, writes: list[tuple[Callable[..., Any], tuple[Any, ...],
                                                  asyncio.Future[Any]]] | None) -> None:
        task = asyncio.get_running_loop().create_task(self._flush_writes_threaded(writes))
        self._flushers.add(task)
        task.add_done_callback(self._flushers.discard)

    def _committed(self, conn: _Connection) -> bool:
        """Tell the checkpointer what was written; True: checkpoint on the writer now."""
        if self.checkpointer is None:
            return False
        seen = _pages_written(conn)
        pages, self._pages_seen = seen - self._pages_seen, seen
        return self.checkpointer.wrote(pages)

    async def _flush_writes_threaded(
        self, taken: list[tuple[Callable[..., Any], tuple[Any, ...], asyncio.Future[Any]]]
        | None = None,
    ) -> None:
        """Commit a group on the worker thread: the writes queued (those ``taken``
        already, when an inline group found the database locked)."""
        # Writes queued while this group is on the worker thread form the next group.
        async with self._write_lock:
            writes = self._take_writes() if taken is None else taken
            pool, conn = self._pool, self._conn
            if pool is None or conn is None:
                error = RuntimeError("the SQLite store was closed")
                self._settle(writes, [(False, error)] * len(writes))
                return
            pairs = [(fn, args) for fn, args, _ in writes]
            call: Callable[[], list[tuple[bool, Any]]] = (
                functools.partial(write_group_waiting, conn, pairs, self._deadline())
                if self._inline else functools.partial(_write_group, conn, pairs))
            outcomes = await self._in_thread(pool, call)
            self._settle(writes, outcomes)
            if self._committed(conn):
                await self._in_thread(pool, functools.partial(_finish_checkpoint, conn))

    # ------------------------------------------------------------------ writes

    async def create_task(
        self,
        scope: Scope,
        events: Sequence[Event],
        *,
        dialect: str,
        now: str,
        message_id: str | None = None,
        push_configs: Sequence[PushConfig] = (),
        push_dialect: str | None = None,
        digest: bytes = b"",
        lease: int | None = None,
        strict: bool = False,
        looked_up: bool = False,
        other_found: MessageRecord | None = None,
    ) -> int:
        created = _projection.created_task(events)
        # Validate the batch and find the task's status before touching the disk.
        probe = _projection.probe(created.id, created.context_id, created.status)
        probe.history = list(created.history)  # the history the row keeps
        _projection.advance_probe(probe, events[1:])
        stamp = _projection.sort_stamp(probe.status, now)
        if push_configs and any(not c.id for c in push_configs):
            raise ValueError("a stored push config needs its id")
        version, queued = await self._write(
            _create,
            scope,
            created,
            probe.status,
            probe.history,
            stamp,
            events,
            dialect,
            message_id,
            now,
            push_configs,
            push_dialect or dialect,
            digest,
            b"" if strict else digest,
            lease,
            other_found if looked_up else _LOOK_UP,
        )
        if queued:
            self._queued(queued)
        return version

    async def append(
        self,
        scope: Scope,
        task_id: str,
        expected_version: int | None,
        events: Sequence[Event],
        *,
        now: str,
        lease: int | None = None,
        message: tuple[str, bytes] | None = None,
        strict: bool = False,
        if_generation: int | None = None,
    ) -> int:
        claimed = None if message is None else (*message, b"" if strict else message[1])
        version, queued = await self._write(_append, scope, task_id, expected_version, events,
                                            now, lease, claimed, if_generation)
        if queued:
            self._queued(queued)
        return version

    async def record_reply(self, scope: Scope, message_id: str, digest: bytes,
                           reply: Message, *, now: str, strict: bool = False) -> None:
        await self._run(_record_reply, scope, message_id, digest, b"" if strict else digest,
                        _encode(reply), now)

    def _queued(self, queued: bool) -> None:
        if queued and self.on_outbox is not None:
            self.on_outbox()

    # ------------------------------------------------------------------- reads

    async def get_task(
        self,
        scope: Scope,
        task_id: str,
        *,
        history_length: int | None = None,
        include_artifacts: bool = True,
    ) -> TaskRecord | None:
        _projection.check_history_length(history_length)
        return await self._run(_get, scope, task_id, history_length, include_artifacts)

    async def list_tasks(self, scope: Scope, query: ListTasks) -> ListTasksResult:
        _paging.check_query(query)
        fingerprint = _paging.filter_fingerprint(scope, query)
        cursor = _paging.decode_token(query.page_token, fingerprint) if query.page_token else None
        return await self._run(_list, scope, query, fingerprint, cursor)

    async def read_events(
        self, scope: Scope, task_id: str, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        return await self._run(_read_events, scope, task_id, after, limit)

    async def task_for_message(self, scope: Scope, message_id: str) -> str | None:
        found = await self.find_message(scope, message_id)
        return None if found is None else found.task_id

    async def find_message(self, scope: Scope, message_id: str,
                           digest: bytes = b"") -> MessageRecord | None:
        conn = self._conn
        if self._inline and conn is not None:
            # as _run would, without its coroutine: a new send looks its message up first
            try:
                return _own.find_message(conn, scope, message_id, digest)
            except sqlite3.DatabaseError as exc:
                down = unavailable(conn, exc)
                if down is exc:
                    raise
                raise down from exc
            except msgspec.DecodeError as exc:  # a reply that does not read back
                raise unreadable(conn, exc) from exc
        return await self._run(_own.find_message, scope, message_id, digest)

    async def acquire_lease(self, holder: str, now: float,
                            timeout: float | None = None) -> Lease:
        return await self._write(_in_transaction(_own.acquire), holder, now, timeout)

    async def renew_lease(self, epoch: int, now: float) -> bool:
        self._check_file()  # (a heartbeat's look: one stat, every few seconds)
        return await self._write(_in_transaction(_own.renew), epoch, now)

    async def release_lease(self, epoch: int) -> None:
        await self._write(_in_transaction(_own.release), epoch)

    async def live_leases(self) -> list[Lease]:
        return await self._run(_own.live)

    async def owners_namespaced(self) -> bool:
        return await self._run(_own.owners_namespaced)

    async def namespace_owners(self, owner_of: Callable[[str], str]) -> int:
        return await self._write(_in_transaction(_own.namespace_owners), owner_of)

    async def revoke_lease(self, epoch: int, *, unless_after: float | None = None) -> bool:
        return await self._write(_in_transaction(_own.revoke), epoch, unless_after)

    async def unfinished_tasks(self) -> list[UnfinishedTask]:
        return await self._run(_unfinished)

    async def purge_finished(self, before: str) -> int:
        return await self._run(_purge, before)

    # ------------------------------------------------------------ push configs

    async def put_push_config(
        self, scope: Scope, task_id: str, config: PushConfig, *, dialect: str, now: str,
        at_most: int | None = None,
    ) -> PushConfigRecord:
        return await self._run(_put_push_config, scope, task_id, config, dialect, now, at_most)

    async def get_push_config(
        self, scope: Scope, task_id: str, config_id: str
    ) -> PushConfigRecord | None:
        return await self._run(_get_push_config, scope, task_id, config_id)

    async def list_push_configs(self, scope: Scope, task_id: str) -> list[PushConfigRecord]:
        return await self._run(_list_push_configs, scope, task_id)

    async def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> bool:
        return await self._run(_delete_push_config, scope, task_id, config_id)

    # ------------------------------------------------------------------ outbox

    async def claim_deliveries(self, now: float, lease_until: float, limit: int) -> list[Delivery]:
        return await self._run(_claim, now, lease_until, limit)

    async def next_delivery_at(self) -> float | None:
        return await self._run(_next_delivery_at)

    async def delivery_done(self, delivery_id: int) -> None:
        await self._run(_delivery_done, delivery_id)

    async def delivery_failed(
        self, delivery_id: int, *, error: str, attempted_at: float, retry_at: float | None
    ) -> None:
        await self._run(_delivery_failed, delivery_id, error, attempted_at, retry_at)

    async def dead_deliveries(
        self, scope: Scope | None = None, task_id: str | None = None, limit: int = 100
    ) -> list[Delivery]:
        return await self._run(_dead, scope, task_id, limit)

    async def revive_delivery(self, delivery_id: int) -> bool:
        if not 0 < delivery_id <= MAX_ROW_ID:  # (no row has it: not one sqlite3 can bind)
            return False
        revived = await self._run(_revive, delivery_id)
        self._queued(revived)
        return revived

    async def release_claims(self) -> int:
        return await self._run(_release_claims)

    async def outbox_counts(self) -> dict[str, int]:
        return await self._run(_outbox_counts)


def _refused(exc: sqlite3.Error) -> Exception:
    """What opening the store's file raised, said for its operator: a write lock that
    another process holds past the busy timeout (``StoreUnavailable``: try again), a
    file that cannot be used as the store's (``StoreUnusable``: a table of another
    program's, say); a file that is no database is ``sqlite3.DatabaseError`` as it is."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        return StoreUnavailable(f"the store's file is locked by another process's write: "
                                f"{text}")
    if isinstance(exc, sqlite3.OperationalError):
        return StoreUnusable(f"the store's file cannot be used as the store: {text}")
    return exc


def _identity(path: str) -> tuple[int, int] | None:
    """The (device, inode) of the file at ``path``; None where there is none (an
    in-memory database, or no file there); ``OSError`` when the system cannot say."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return None
    return st.st_dev, st.st_ino
