"""Suite-wide: the interop peers' environments are set up before any test runs, and
fixtures for the real services (PostgreSQL, Redis) every part of the suite may use.

Setting up a peer environment (an install from a package registry) can take
minutes; inside a test it would count against that test's time limit. Tests that
need one are marked ``interop``, with ``envs=[...]`` when they need only some.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import signal
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import IO

import pytest

from .ci import IN_CI
from .httpx_tls import share_default_context
from .hypothesis_budget import THOROUGH  # noqa: F401  (registered before --hypothesis-profile is read)
from .reference import shared_dir
from .services import (
    REDIS_HOST,
    REDIS_PORT,
    missing,
    new_name,
    own_database,
    reachable,
    run_async,
    with_option,
)


@pytest.fixture(scope="session")
def pg_database() -> Iterator[str]:
    """The URL of a database of this test session's own, dropped at its end."""
    yield from own_database()


@pytest.fixture
def pg_url(pg_database: str) -> str:
    """A store URL with a schema of this test's own in the session's database."""
    return with_option(pg_database, f"schema={new_name('t')}")


@pytest.fixture(scope="session")
def pg_shared_schema(pg_database: str) -> str:
    """A schema migrated once for the session, for tests that empty it first."""
    from interlingua.stores.postgres import upgrade

    url = with_option(pg_database, "schema=shared")
    run_async(lambda: upgrade(url))
    return url


@pytest.fixture
def pg_clean_url(pg_shared_schema: str) -> str:
    """The session's shared schema, emptied (cheaper than a schema per test)."""

    async def empty() -> None:
        import asyncpg

        conn = await asyncpg.connect(pg_shared_schema.split("?")[0])
        try:
            # the rest of the tables hang off the first two (ON DELETE CASCADE), but
            # for the messages answered with a bare message, which no task holds
            await conn.execute("DELETE FROM shared.leases; DELETE FROM shared.tasks;"
                               " DELETE FROM shared.messages")
        finally:
            await conn.close()

    run_async(empty)
    return pg_shared_schema


@pytest.fixture
def redis_url() -> str:
    if not reachable(REDIS_HOST, REDIS_PORT):
        missing("Redis on 127.0.0.1:6379")
    # a key prefix of this test's own keeps tests apart on the shared server
    return f"redis://{REDIS_HOST}:{REDIS_PORT}/0?prefix={new_name('t')}"


def pytest_configure(config: pytest.Config) -> None:
    share_default_context()  # one CA bundle read per worker, not one per client
    config.addinivalue_line(
        "markers", "interop(envs=None): talks to the official A2A SDKs, whose environments "
        "scripts/interop-setup makes (all of them, or the ones named)")
    config.addinivalue_line(
        "markers", "serial: asserts a time bound, so under pytest-xdist it runs while no "
        "other test runs (the ``alone`` fixture narrows that to a part of a test)")
    config.addinivalue_line(
        "markers", "needs_shared: reads the published texts of the shared folder beside the "
        "repository; deselected where it is missing, except under CI")
    # decided here, not at collection: under xdist the controller collects nothing
    config.stash[_SHARED_MISSING] = not shared_dir().is_dir() and not IN_CI


_SHARED_MISSING = pytest.StashKey[bool]()
_DESELECTED = pytest.StashKey[int]()


# The modules with the suite's longest tests (external checkers, peer SDKs, replica
# clusters, fuzzing), slowest first. They run first: the xdist workers take the tests in
# this order and share out what is left at the end, so a long test started last would
# keep one worker busy while the other has nothing to do. Only an order: a module
# missing here runs in its usual place.
SLOW_FIRST = (
    "tests/interop/test_peers_crewai.py",
    "tests/interop/test_checkers.py",
    "tests/interop/test_peers_adk_strands.py",
    "tests/mesh/test_broker_restart.py",
    "tests/e2e/test_replica_push.py",
    "tests/e2e/test_ownership.py",
    "tests/e2e/test_outages.py",
    "tests/dialects/test_fuzz.py",
    "tests/e2e/test_drain.py",
    "tests/e2e/test_replicas.py",
    "tests/cli/test_grpc_cli.py",
    "tests/e2e/test_replica_limits.py",
    "tests/interop/test_official_agents.py",
    "tests/interop/test_peers_in_the_wild.py",
    "tests/interop/test_peers_beeai.py",
    "tests/interop/test_peers_maf.py",
    "tests/cli/test_scale_out_cli.py",
    "tests/e2e/test_llm_examples.py",
    "tests/bindings/test_grpc_serve.py",
    "tests/mesh/test_gateway.py",
    "tests/interop/test_official_clients.py",
    "tests/client/test_stream_resume.py",
    "tests/e2e/test_balancer.py",
    "tests/cli/test_serve_several.py",
    "tests/mesh/test_restarts.py",
    "tests/structure/test_dialect_branches.py",
    "tests/structure/test_run_state.py",
    "tests/e2e/test_message_ids.py",
    "tests/e2e/test_generations_replicas.py",
    "tests/mesh/test_serve_cli.py",
    "tests/e2e/test_streaming.py",
    "tests/e2e/test_listening_replicas.py",
    "tests/client/test_grpc_client.py",
    "tests/mesh/test_gateway_warmup.py",
    "tests/mesh/test_instance_killed.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {module: n for n, module in enumerate(SLOW_FIRST)}
    # The modules with ``serial`` tests come before even those: a serial test waits
    # for the other worker's test under way to end, and at the start that worker runs
    # the short tests of the other half of the list (pytest-xdist's worksteal gives
    # each worker one half), not the peer SDKs' tests of up to 30 s each.
    serial = {item.nodeid.partition("::")[0] for item in items
              if item.get_closest_marker("serial") is not None}
    # stable: each module's tests stay together and in their order
    items.sort(key=lambda item: (item.nodeid.partition("::")[0] not in serial,
                                 rank.get(item.nodeid.partition("::")[0], len(rank))))
    if not config.stash[_SHARED_MISSING]:
        return
    dropped = [item for item in items if item.get_closest_marker("needs_shared") is not None]
    config.stash[_DESELECTED] = len(dropped)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item.get_closest_marker("needs_shared") is None]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter,
                            config: pytest.Config) -> None:
    # unknown under xdist's controller, which collects nothing itself
    count = config.stash.get(_DESELECTED, None)
    if config.stash[_SHARED_MISSING] and count != 0:
        what = "the tests marked needs_shared" if count is None else f"{count} needs_shared tests"
        terminalreporter.write_line(
            f"{what} deselected: {shared_dir()} is missing (they check "
            "tests/reference/extracted/ against the published texts)")


def _serial_dir(config: pytest.Config) -> Path | None:
    """The folder the workers of one xdist run share for the serial lock."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        return None  # not a worker: one test at a time already
    path = Path(tempfile.gettempdir()) / f"interlingua-serial-{workerinput['testrunuid']}"
    path.mkdir(exist_ok=True)
    return path


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    """A readers-writer lock across xdist workers: every test holds it shared, a
    ``serial`` test alone. A waiting serial test announces itself first, so the
    other workers start nothing new until it has run (writer preference).
    Outermost (tryfirst), so the wait is not counted in a test's timeout."""
    folder = _serial_dir(item.config)
    if folder is None:
        return (yield)
    worker = item.config.workerinput["workerid"]  # type: ignore[attr-defined]
    serial = item.get_closest_marker("serial") is not None
    pending = folder / f"pending-{worker}"
    with open(folder / "lock", "a+") as lock:
        item.stash[_HELD] = (lock, pending)
        if serial:
            pending.touch()
            fcntl.flock(lock, fcntl.LOCK_EX)
        else:
            while _others_pending(folder, pending):
                while _others_pending(folder, pending):
                    time.sleep(0.02)
                # The serial tests of a module come one after another: the next one
                # announces itself a moment after the last ends, and then runs at
                # once instead of waiting for the whole of a test started meanwhile.
                time.sleep(0.1)
            fcntl.flock(lock, fcntl.LOCK_SH)
        try:
            return (yield)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
            if serial:
                pending.unlink(missing_ok=True)


_HELD = pytest.StashKey[tuple[IO[str], Path]]()


def _others_pending(folder: Path, mine: Path) -> bool:
    """Whether a test of another worker waits to run alone."""
    return any(p != mine for p in folder.glob("pending-*"))


@contextlib.contextmanager
def _timeout_paused() -> Iterator[None]:
    """pytest-timeout's alarm (its signal method) stopped meanwhile: a wait for the
    other tests to end is not the test's own time, as for a ``serial`` test."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    left, _ = signal.getitimer(signal.ITIMER_REAL)
    if left > 0:
        signal.setitimer(signal.ITIMER_REAL, 0)
    try:
        yield
    finally:
        if left > 0:
            signal.setitimer(signal.ITIMER_REAL, left)


@pytest.fixture
def alone(request: pytest.FixtureRequest) -> Callable[[], contextlib.AbstractContextManager[None]]:
    """``with alone():`` runs the part of a test that asserts a time bound while no
    other test runs, as a ``serial`` test runs whole; its slow setup (starting
    servers, filling stores) runs beside other tests. Not from a running event loop:
    the wait blocks."""

    @contextlib.contextmanager
    def section() -> Iterator[None]:
        held = request.node.stash.get(_HELD, None)
        if held is None:
            yield  # not under xdist: one test at a time already
            return
        lock, pending = held
        pending.touch()  # the other workers start nothing new meanwhile
        with _timeout_paused():
            fcntl.flock(lock, fcntl.LOCK_UN)
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_SH)
            pending.unlink(missing_ok=True)

    return section


@pytest.fixture
def alone_async(request: pytest.FixtureRequest
                ) -> Callable[[], contextlib.AbstractAsyncContextManager[None]]:
    """``async with alone_async():``, as ``alone`` in an async test: the wait runs in
    a thread, so the test's event loop goes on serving its connections meanwhile."""

    @contextlib.asynccontextmanager
    async def section() -> AsyncIterator[None]:
        held = request.node.stash.get(_HELD, None)
        if held is None:
            yield
            return
        lock, pending = held
        pending.touch()
        with _timeout_paused():
            fcntl.flock(lock, fcntl.LOCK_UN)
            await asyncio.to_thread(fcntl.flock, lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_SH)
            pending.unlink(missing_ok=True)

    return section


def pytest_collection_finish(session: pytest.Session) -> None:
    needed: dict[str, None] = {}
    for item in session.items:
        marker = item.get_closest_marker("interop")
        if marker is None:
            continue
        from tests.interop.matrix import ROWS

        for env in marker.kwargs.get("envs") or [row.env for row in ROWS]:
            needed[env] = None
    if needed:
        from tests.interop.harness import prepare_envs

        prepare_envs(needed)
