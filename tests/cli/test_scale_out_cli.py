"""``interlingua serve`` with a PostgreSQL store or a Redis bus it cannot reach,
or a schema it must not migrate: one clear line, no traceback, no password."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ..e2e.procs import ROOT


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


def test_a_schema_behind_with_migrations_off_is_refused_clearly(pg_url: str) -> None:
    done = serve("--store", pg_url + "&migrate=0")
    assert done.returncode == 2
    assert "interlingua db upgrade" in done.stderr and "Traceback" not in done.stderr
