"""The machine's PostgreSQL and Redis for tests (``scripts/services`` starts them).

Each test session works in a database of its own, made here and dropped at the
end; each test that wants a store gets a schema of its own in it. A missing
service skips the tests that need it, except under ``CI=true``, where it fails
them: CI must run everything.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import pytest

from tests.ports import free_port

T = TypeVar("T")

PG_HOST, PG_PORT = "127.0.0.1", 5432
REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379
# trust authentication on loopback: the first of these roles that exists
PG_USERS = ("postgres", "root")


def reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def missing(what: str) -> None:
    """Skip (or, under CI, fail) a test whose service is not there."""
    message = f"{what} is not running (scripts/services starts it)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


def run_async(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to its end from sync code, even inside a running loop."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


def new_name(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


async def _admin_connect() -> tuple[object, str]:
    import asyncpg

    last: Exception | None = None
    for user in PG_USERS:
        try:
            conn = await asyncpg.connect(host=PG_HOST, port=PG_PORT, user=user,
                                         database="postgres")
        except Exception as exc:  # a role that does not exist: try the next
            last = exc
            continue
        return conn, user
    raise RuntimeError(f"no PostgreSQL role of {PG_USERS} can log in: {last}")


def create_database() -> str:
    """A new, empty database; returns its URL (trust auth, no password)."""
    name = new_name("interlingua_test")

    async def make() -> str:
        conn, user = await _admin_connect()
        try:
            await conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[attr-defined]
        finally:
            await conn.close()  # type: ignore[attr-defined]
        return f"postgresql://{user}@{PG_HOST}:{PG_PORT}/{name}"

    return run_async(make)


def drop_database(url: str) -> None:
    name = url.rsplit("/", 1)[-1].split("?")[0]

    async def drop() -> None:
        conn, _ = await _admin_connect()
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[attr-defined]
        finally:
            await conn.close()  # type: ignore[attr-defined]

    run_async(drop)


def with_option(url: str, option: str) -> str:
    return url + ("&" if "?" in url else "?") + option




class PrivateRedis:
    """A redis-server of a test's own (on a free port), to stop and start at will."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> PrivateRedis:
        import shutil

        if shutil.which("redis-server") is None:
            missing("redis-server (the redis-server package)")
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not reachable("127.0.0.1", self.port):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("the private redis-server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None


def pg_server_binary(name: str, lib: str = "/usr/lib/postgresql") -> str | None:
    """A PostgreSQL server program (initdb, pg_ctl): on PATH, else where Debian's packages
    put it (``lib``/VERSION/bin, not on PATH), the newest version first."""
    import shutil
    from pathlib import Path

    found = shutil.which(name)
    if found:
        return found
    candidates = [p for p in Path(lib).glob(f"*/bin/{name}") if p.parts[-3].isdigit()]
    candidates.sort(key=lambda p: int(p.parts[-3]), reverse=True)
    return str(candidates[0]) if candidates else None


class PrivatePostgres:
    """A PostgreSQL cluster of a test's own (initdb, pg_ctl) on a free port, to
    stop and start at will. As root, its commands run as the postgres user,
    since PostgreSQL refuses to run as root."""

    def __init__(self) -> None:
        import tempfile

        self.port = free_port()
        # not under pytest's tmp_path: the postgres user must be able to reach it
        self.dir = tempfile.mkdtemp(prefix="interlingua-pg-")
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *cmd: str) -> None:
        exe = pg_server_binary(cmd[0])
        if exe is None:
            missing(f"{cmd[0]} (PostgreSQL's server binaries)")
            return
        cmd = (exe, *cmd[1:])
        if os.geteuid() == 0:
            cmd = ("runuser", "-u", "postgres", "--", *cmd)
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed: {done.stderr or done.stdout}")

    def init(self) -> PrivatePostgres:
        if os.geteuid() == 0:
            import pwd

            user = pwd.getpwnam("postgres")
            os.chown(self.dir, user.pw_uid, user.pw_gid)
        self._run("initdb", "-D", f"{self.dir}/data", "-A", "trust", "-U", "postgres",
                  "--no-sync")
        return self.start()

    def start(self) -> PrivatePostgres:
        self._run("pg_ctl", "-D", f"{self.dir}/data", "-l", f"{self.dir}/log", "-w",
                  "-o", f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1"
                        " -c fsync=off", "start")
        return self

    def stop(self) -> None:
        self._run("pg_ctl", "-D", f"{self.dir}/data", "-m", "fast", "-w", "stop")

    def remove(self) -> None:
        import shutil

        try:
            self.stop()
        except RuntimeError:
            pass  # not running
        shutil.rmtree(self.dir, ignore_errors=True)


def own_database() -> Iterator[str]:
    """The URL of a new database, dropped when the generator closes (a fixture's body)."""
    if not reachable(PG_HOST, PG_PORT):
        missing("PostgreSQL on 127.0.0.1:5432")
    url = create_database()
    try:
        yield url
    finally:
        drop_database(url)
