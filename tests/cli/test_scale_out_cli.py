"""``interlingua serve`` with a PostgreSQL store or a Redis bus it cannot reach,
or a schema it must not migrate: one clear line, no traceback, no password."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ..e2e.procs import ROOT
from ..services import PG_HOST, PG_PORT, new_name


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "interlingua.cli.main", "serve", "examples/echo.py",
         "--port", "0", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(("args", "said"), [
    (("--store", "postgresql://u:s3cret@127.0.0.1:1/db"),
     "cannot reach PostgreSQL at 127.0.0.1:1/db"),
    (("--store", "memory://", "--bus", "redis://:s3cret@127.0.0.1:1/0"),
     "cannot reach Redis at 127.0.0.1:1"),
    (("--store", "memory://", "--bus", "kafka://x"), "use local:// or redis://"),
])
def test_unreachable_services_are_one_clear_error(args: tuple[str, ...], said: str) -> None:
    done = serve(*args)
    assert done.returncode in (2, 3), done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], done.stderr
    assert "s3cret" not in done.stderr + done.stdout and "Serving" not in done.stdout


@pytest.mark.parametrize(("bus", "said"), [
    ("redis://:s3cret@127.0.0.1:6379/9?bogus=1", "bogus= in the Redis bus URL"),
    ("redis://:s3cret@127.0.0.1:6379/9?ssl_cert_reqs=none", "ssl_cert_reqs= in the Redis"),
    ("rediss://:s3cret@127.0.0.1:6379/9?ssl_cert_reqs=bogus", "Certificate Requirements"),
    ("redis://:s3cret@127.0.0.1:6379/abc", "path /abc: give a database number"),
])
def test_a_redis_bus_url_with_a_wrong_option_or_database_is_refused(bus: str, said: str) -> None:
    """Before: an option redis-py does not take was a TypeError's traceback (exit 1),
    and a database not a number was database 0."""
    done = serve("--store", "memory://", "--bus", bus)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], done.stderr
    assert "s3cret" not in done.stderr + done.stdout and "Serving" not in done.stdout


def test_a_unix_socket_bus_out_of_reach_is_named(tmp_path: Path) -> None:
    done = serve("--store", "memory://", "--bus", f"unix://{tmp_path}/none.sock")
    assert done.returncode == 3, done.stderr
    assert f"cannot reach Redis at {tmp_path}/none.sock:" in done.stderr, done.stderr


def test_a_postgres_that_refuses_the_login_is_one_clear_error(pg_database: str) -> None:
    """An unknown role and a database that does not exist: the server's own reason in
    one line, exit 3, as for a closed port."""
    role, db = new_name("nouser"), new_name("nodb")
    server = pg_database.rsplit("/", 1)[0]
    for url, said in ((f"postgresql://{role}:s3cret@{PG_HOST}:{PG_PORT}/{db}",
                       f'role "{role}" does not exist'),
                      (f"{server}/{db}", f'database "{db}" does not exist')):
        done = serve("--store", url)
        assert done.returncode == 3, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and said in lines[0], done.stderr
        assert f"PostgreSQL at {PG_HOST}:{PG_PORT}/{db}" in lines[0], done.stderr
        assert "s3cret" not in done.stderr + done.stdout and "Serving" not in done.stdout


def test_a_schema_behind_with_migrations_off_is_refused_clearly(pg_url: str) -> None:
    done = serve("--store", pg_url + "&migrate=0")
    assert done.returncode == 2
    assert "interlingua db upgrade" in done.stderr and "Traceback" not in done.stderr
