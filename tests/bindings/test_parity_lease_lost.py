"""A process whose lease another process on its store revoked (it was paused past its
timeout) before its own heartbeat has noticed: a send it takes then is written under
the new lease it takes at once, and a cancel of a turn still running under the lost
lease is refused as unavailable (503, ``UNAVAILABLE``), on every binding; so is a send
whose task a turn of the lost lease was to write. None is answered with an internal
error."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from interlingua import Agent, Context
from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.server import EngineConfig
from tests.live import bind_loopback, live_server, url_of

from .drivers import DRIVERS, Driver, Refused
from .test_parity import send
from .test_parity_drain import UNAVAILABLE
from .test_parity_store_busy import IN_STREAM


async def _waits(ctx: Context) -> None:
    await ctx.update("working on it")
    await asyncio.sleep(60)


WAITS = Agent("Waits", "Works until stopped.", _waits)


@pytest.fixture(params=["shared", "alone"])
def store_file(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A server (all bindings) on a SQLite file, whose heartbeat comes too late for
    the test to see (its lease is revoked behind its back, as another process does).
    ``shared``: another process's lease is live on the store when it starts (a new
    task is then written before its turn runs), else none."""
    from interlingua.bindings.grpc import add_grpc
    from interlingua.host import create_app
    from interlingua.stores import open_store

    path = tmp_path / "tasks.db"
    if request.param == "shared":
        async def other() -> None:
            store = open_store(f"sqlite:///{path}")
            await store.open()
            try:
                await store.acquire_lease("elsewhere/boot:7", time.time())
            finally:
                await store.close()

        asyncio.run(other())
    sock = bind_loopback()
    app = create_app(WAITS, public_url=url_of(sock), store=f"sqlite:///{path}",
                     engine_config=EngineConfig(lease_interval=600, lease_timeout=1200))
    add_grpc(app, "127.0.0.1:0")
    with live_server(app, sock=sock) as url:
        yield url, path


def _revoke_all(path: Path) -> None:
    """Revoke every lease on the store, as another process revokes a silent one's."""
    conn = sqlite3.connect(path, timeout=10)
    try:
        with conn:
            assert conn.execute("DELETE FROM leases").rowcount >= 1
    finally:
        conn.close()


def _working(d: Driver) -> m.Task:
    """A new task whose turn works (its first write made)."""
    task = d.call(send("1", blocking=False))
    assert isinstance(task, m.Task)
    deadline = time.monotonic() + 10
    while task.status.state is not m.TaskState.WORKING:
        assert time.monotonic() < deadline, task
        time.sleep(0.02)
        got = d.call(c.GetTask(id=task.id))
        assert isinstance(got, m.Task)
        task = got
    return task


@pytest.mark.parametrize("kind", list(DRIVERS))
def test_a_process_that_lost_its_lease_serves_on_under_a_new_one(
        kind: str, store_file: tuple[str, Path]) -> None:
    url, path = store_file
    shared = _leases(path) > 1
    with httpx.Client(timeout=30) as client:
        d = DRIVERS[kind](client, url)
        running = _working(d)
        _revoke_all(path)
        # its turn's lease is lost: the cancel is not written, and can be sent again
        with pytest.raises(Refused) as refused:
            d.call(c.CancelTask(id=running.id))
        assert (refused.value.status, refused.value.reason) == UNAVAILABLE[kind]
        assert "lease" in refused.value.message
        # a new task is written under the new lease, and its turn run under it
        task = d.call(send("2", blocking=False))
        assert isinstance(task, m.Task), task
        got = d.call(c.GetTask(id=task.id))
        assert isinstance(got, m.Task) and got.id == task.id
        assert _working(d).status.state is m.TaskState.WORKING
        _revoke_all(path)
        call = send("3", streaming=True)
        if shared:  # written before its turn runs: under the new lease
            items = d.stream(call, limit=2)
            assert isinstance(items[0][1], m.Task), items
        else:  # written by its turn, begun under the lease lost: sent again
            with pytest.raises(Refused) as refused:
                d.stream(call)
            assert (refused.value.status, refused.value.reason) == IN_STREAM[kind]
            assert "send it again" in refused.value.message
            items = d.stream(call, limit=2)
            assert isinstance(items[0][1], m.Task), items


def _leases(path: Path) -> int:
    conn = sqlite3.connect(path, timeout=10)
    try:
        return int(conn.execute("SELECT count(*) FROM leases").fetchone()[0])
    finally:
        conn.close()
