"""The memory-tasks and memory-streams cases: what one stored task and one idle open
stream cost a server in memory.

Both run on a server started for the case alone. ``memory-tasks`` sends a warm-up, reads
the server's RSS (and, on SQLite, the database's logical size), sends exactly N more
unary echo requests, and reads them again: the growth divided by N. ``memory-streams``
opens a few idle streams as warm-up, reads RSS and the open descriptors, opens N more
idle streams and reads again; then it closes them all, cancels their tasks where the
server can, and reads RSS a last time.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path
from urllib.parse import unquote

import bulk
import idle
import launch
import procstat
from payloads import IDLE_TEXT, VerificationError, verify_cancel
from report_cases import StreamMemorySample, TaskMemorySample
from stream import StreamError

SETTLE_S = 0.5  # pause before each reading, so late frees and writes are done
CONCURRENCY = 16  # connections of the unary sender and of the canceler
OPEN_PARALLEL = 32  # idle streams being opened at once
QUIET_S = 0.3  # how long a verified idle stream must stay quiet


def sqlite_path(store_url: str | None) -> Path | None:
    """The database file of a ``sqlite:///`` store URL, else None."""
    prefix = "sqlite:///"
    if not store_url or not store_url.startswith(prefix):
        return None
    path = unquote(store_url[len(prefix) :].partition("?")[0])
    return None if path == ":memory:" else Path(path)


def db_bytes(path: Path | None) -> int:
    """Logical size of a live SQLite database, WAL included; -1 without a database.

    Read through a read-only connection of our own: ``page_count`` counts the pages of
    the latest commit, also those not yet copied from the WAL into the main file.
    """
    if path is None:
        return -1
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        pages: int = conn.execute("PRAGMA page_count").fetchone()[0]
        size: int = conn.execute("PRAGMA page_size").fetchone()[0]
    finally:
        conn.close()
    return pages * size


def measure_tasks(
    running: launch.Running, count: int, warmup: int, round_no: int
) -> TaskMemorySample:
    target = running.target
    dialect = target.dialect
    db = sqlite_path(running.store_url)

    def send(first: int, n: int) -> bulk.BulkResult:
        # A fresh template (fresh message-id nonce) per batch: no send repeats one.
        return bulk.send_template(
            launch.HOST,
            running.port,
            target.rpc_path,
            dialect.headers,
            dialect.body_template(),
            range(first, first + n),
            CONCURRENCY,
            dialect.completed_marker,
        )

    warm = send(1, warmup)
    if warm.errors:
        raise VerificationError(f"warm-up sends failed ({warm.errors}): {warm.first_error}")
    time.sleep(SETTLE_S)
    rss_before, disk_before = procstat.rss_bytes(running.pid), db_bytes(db)
    result = send(warmup + 1, count)
    time.sleep(SETTLE_S)
    return TaskMemorySample(
        server=target.name,
        round=round_no,
        tasks=result.requests - result.errors,
        rss_before_bytes=rss_before,
        rss_after_bytes=procstat.rss_bytes(running.pid),
        disk_before_bytes=disk_before,
        disk_after_bytes=db_bytes(db),
        duration_s=result.duration_s,
        errors=result.errors,
    )


async def _cancel(running: launch.Running, task_ids: list[str]) -> bulk.BulkResult:
    dialect = running.target.dialect

    def check(n: int, status: int, body: bytes) -> str:
        try:
            verify_cancel(dialect, n, status, body)
        except VerificationError as exc:
            return str(exc)
        return ""

    return await bulk.post_many(
        launch.HOST,
        running.port,
        running.target.rpc_path,
        dialect.headers,
        lambda n: dialect.cancel_body(n, task_ids[n]),
        range(len(task_ids)),
        CONCURRENCY,
        check,
    )


def verify_idle(running: launch.Running) -> None:
    """One idle stream: its task and ``working`` update arrive, then nothing final for
    a while; its task is then canceled where the server can cancel."""
    target = running.target
    path = target.idle_path
    assert path is not None
    dialect = target.dialect

    async def check() -> None:
        body = dialect.body(3, dialect.stream_method, IDLE_TEXT)
        stream = await idle.open_one(launch.HOST, running.port, path, dialect, body)
        try:
            try:
                more = await asyncio.wait_for(stream.reader.read(1 << 16), QUIET_S)
            except TimeoutError:
                more = b""
            for state in ("COMPLETED", "completed", "FAILED", "failed"):
                if state.encode() in more:
                    raise VerificationError(f"the idle stream went on to {state}: {more[:300]!r}")
            if target.cancel:
                result = await _cancel(running, [stream.task_id])
                if result.errors:
                    raise VerificationError(result.first_error)
        finally:
            await idle.close([stream])

    try:
        bulk.run_async(check())
    except (OSError, TimeoutError, ValueError, asyncio.IncompleteReadError, StreamError) as exc:
        raise VerificationError(f"idle stream failed: {exc!r}") from exc


def measure_streams(
    running: launch.Running, count: int, warm: int, round_no: int
) -> StreamMemorySample:
    target = running.target
    assert target.idle_path is not None
    path = target.idle_path
    dialect = target.dialect
    template = dialect.body_template(dialect.stream_method, IDLE_TEXT)

    async def go() -> StreamMemorySample:
        first = await idle.open_many(
            launch.HOST, running.port, path, dialect, template, range(1, warm + 1), OPEN_PARALLEL
        )
        if first.errors:
            raise VerificationError(f"warm-up idle streams failed: {first.first_error}")
        await asyncio.sleep(SETTLE_S)
        rss_before, fds_before = procstat.rss_bytes(running.pid), procstat.open_fds(running.pid)
        start = time.perf_counter()
        more = await idle.open_many(
            launch.HOST,
            running.port,
            path,
            dialect,
            template,
            range(warm + 1, warm + count + 1),
            OPEN_PARALLEL,
        )
        open_s = time.perf_counter() - start
        await asyncio.sleep(SETTLE_S)
        rss_open, fds_open = procstat.rss_bytes(running.pid), procstat.open_fds(running.pid)
        streams = first.streams + more.streams
        await idle.close(streams)
        cancel_errors, canceled = -1, 0
        if target.cancel:
            result = await _cancel(running, [s.task_id for s in streams])
            cancel_errors, canceled = result.errors, result.requests - result.errors
        await asyncio.sleep(SETTLE_S)
        return StreamMemorySample(
            server=target.name,
            round=round_no,
            warm_streams=len(first.streams),
            streams=len(more.streams),
            rss_before_bytes=rss_before,
            rss_open_bytes=rss_open,
            rss_closed_bytes=procstat.rss_bytes(running.pid),
            fds_before=fds_before,
            fds_open=fds_open,
            open_s=open_s,
            errors=more.errors,
            cancel_errors=cancel_errors,
            canceled=canceled,
        )

    return bulk.run_async(go())
