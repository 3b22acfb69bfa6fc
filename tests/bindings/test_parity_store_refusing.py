"""A PostgreSQL store whose database answers but refuses the store's sessions (made
read-only, closed to new connections): a send is refused on every binding with its
own "unavailable" answer (503, ``UNAVAILABLE``) saying that the store is unavailable,
as for a database that is down, not with an internal error; once the database takes
the store again, sends are served. A database of the test's own, on the machine's
PostgreSQL."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from interlingua.core import calls as c
from tests.live import bind_loopback, live_server, url_of
from tests.services import (
    _admin_connect,
    own_database,
    run_async,
)

from .drivers import DRIVERS, Refused
from .test_parity import AGENT, send
from .test_parity_drain import UNAVAILABLE

#: what the database is made to do to the store's sessions (as postgres), and how
#: it is undone; {db} is the database's name
REFUSALS = {
    "read-only": ('ALTER DATABASE "{db}" SET default_transaction_read_only = on',
                  'ALTER DATABASE "{db}" RESET default_transaction_read_only'),
    "no-connections": ('ALTER DATABASE "{db}" ALLOW_CONNECTIONS false',
                       'ALTER DATABASE "{db}" ALLOW_CONNECTIONS true'),
}


def admin(*statements: str) -> None:
    async def run() -> None:
        conn, _ = await _admin_connect()
        try:
            for statement in statements:
                await conn.execute(statement)  # type: ignore[attr-defined]
        finally:
            await conn.close()  # type: ignore[attr-defined]

    run_async(run)


def end_sessions(db: str) -> str:
    return ("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            f" WHERE datname = '{db}' AND pid <> pg_backend_pid()")


@pytest.fixture
def database() -> Iterator[str]:
    """A database of the test's own: the test makes it refuse the store."""
    yield from own_database()


@pytest.mark.parametrize("refusal", list(REFUSALS))
def test_a_send_to_a_database_refusing_the_store_is_unavailable_not_an_internal_error(
        refusal: str, database: str) -> None:
    from interlingua.bindings.grpc import add_grpc
    from interlingua.host import create_app

    db = database.rsplit("/", 1)[-1]
    refuse, allow = (s.format(db=db) for s in REFUSALS[refusal])
    sock = bind_loopback()
    app = create_app(AGENT, public_url=url_of(sock), store=database + "?max_size=4")
    add_grpc(app, "127.0.0.1:0")
    with live_server(app, sock=sock) as url, httpx.Client(timeout=30) as client:
        drivers = {kind: DRIVERS[kind](client, url) for kind in DRIVERS}
        for d in drivers.values():  # (the gRPC drivers read the card first)
            assert d.call(send("1")).status.state.value == "completed"  # type: ignore[union-attr]
        admin(refuse, end_sessions(db))
        time.sleep(0.3)  # the pool sees its sessions ended
        try:
            for kind, d in drivers.items():
                for _ in range(2):  # a session ended, then a new one refused
                    with pytest.raises(Refused) as refused:
                        d.call(send("1"))
                    assert (refused.value.status, refused.value.reason) == UNAVAILABLE[kind]
                    assert "store" in refused.value.message, refused.value.message
        finally:
            admin(allow, end_sessions(db))
        deadline = time.monotonic() + 10
        for d in drivers.values():
            while True:
                try:
                    done = d.call(send("1"))
                    break
                except Refused:
                    assert time.monotonic() < deadline
                    time.sleep(0.1)
            assert done.status.state.value == "completed"  # type: ignore[union-attr]
            if d.lists_tasks:
                page = d.call(c.ListTasks(page_size=100))
                assert isinstance(page, c.ListTasksResult) and page.tasks


def test_a_session_left_mid_operation_is_unavailable_not_an_internal_error(
        database: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pooled session whose backend was ended while it sat idle can answer its next
    statement with asyncpg's ``InternalClientError`` ("cannot switch to state 12;
    another operation (2) is in progress"): the store is unavailable for the moment
    (503), not an internal error, and the sessions after it serve."""
    import asyncpg
    from asyncpg.connection import Connection

    from interlingua.host import create_app

    broken = [False]

    def failing(real: Any) -> Any:
        async def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            if broken[0]:
                raise asyncpg.exceptions.InternalClientError(
                    "cannot switch to state 12; another operation (2) is in progress")
            return await real(self, *args, **kwargs)
        return method

    for name in ("fetch", "fetchrow", "fetchval", "execute", "executemany"):
        monkeypatch.setattr(Connection, name, failing(getattr(Connection, name)))
    sock = bind_loopback()
    app = create_app(AGENT, public_url=url_of(sock), store=database + "?max_size=4")
    with live_server(app, sock=sock) as url, httpx.Client(timeout=30) as client:
        for kind in ("jsonrpc-1.0", "rest-1.0"):
            d = DRIVERS[kind](client, url)
            assert d.call(send("1")).status.state.value == "completed"  # type: ignore[union-attr]
            broken[0] = True
            try:
                with pytest.raises(Refused) as refused:
                    d.call(send("1"))
            finally:
                broken[0] = False
            assert (refused.value.status, refused.value.reason) == UNAVAILABLE[kind]
            assert "store" in refused.value.message, refused.value.message
            assert d.call(send("1")).status.state.value == "completed"  # type: ignore[union-attr]
