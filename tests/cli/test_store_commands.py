"""Commands that work on a store (``push …``, ``db upgrade``) say in one line why a store
cannot be used: a path where none is, a folder that cannot be made, a URL no store takes,
a database that cannot be reached. Never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from interlingua.cli.main import main


def _run(*args: str) -> tuple[int, str]:
    done = CliRunner().invoke(main, list(args), prog_name="interlingua")
    assert done.exception is None or isinstance(done.exception, SystemExit), done.exception
    return done.exit_code, done.output


@pytest.mark.parametrize("command", [["push", "outbox"], ["push", "dead"],
                                     ["push", "redrive", "1"], ["push", "rotate-key"]])
def test_a_push_command_on_a_store_that_is_not_there(command: list[str],
                                                     tmp_path: Path) -> None:
    missing = tmp_path / "typo" / "tasks.db"
    code, output = _run(*command, "--store", f"sqlite:///{missing}")
    assert code == 2, output
    assert output.startswith(f"error: no store at {missing}: check the path"), output
    assert not missing.parent.exists()  # nothing made in its place


def test_store_commands_that_cannot_use_their_store_say_why(tmp_path: Path) -> None:
    code, output = _run("push", "outbox", "--store", "bogus://x")
    assert code == 2 and output.startswith("error: unsupported store URL (bogus://)"), output
    # a database that cannot be reached: exit 3 on every command, as serve says it
    for command in (["push", "dead"], ["push", "outbox"], ["db", "upgrade"]):
        code, output = _run(*command, "--store", "postgresql://nobody@127.0.0.1:1/db")
        assert code == 3, (command, output)
        assert "cannot reach PostgreSQL" in output.splitlines()[0], output
    regular = tmp_path / "plain-file"
    regular.write_text("not a folder")
    code, output = _run("db", "upgrade", "--store", f"sqlite:///{regular}/t.db")
    assert code == 2 and f"{regular} is a file, not a folder" in output, output


def test_a_store_path_with_escapes_is_the_file_the_store_opens(tmp_path: Path) -> None:
    # sqlite:///…/my%20tasks.db is the file "my tasks.db": checked there, and nothing
    # made under the escaped name
    url = f"sqlite:///{tmp_path}/my%20tasks.db"
    code, output = _run("db", "upgrade", "--store", url)
    assert code == 0, output
    code, output = _run("push", "outbox", "--store", url)
    assert code == 0 and "pending: 0" in output, output
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".db") == ["my tasks.db"]



def _newer(kind: str, tmp_path: Path, pg_url: str) -> str:
    """A store whose schema a later version wrote (version 99)."""
    import asyncio
    import sqlite3

    if kind == "sqlite":
        path = tmp_path / "later.db"
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA user_version = 99")
        conn.close()
        return f"sqlite:///{path}"
    import asyncpg

    from interlingua.stores.postgres import upgrade
    from interlingua.stores.postgres.schema import parse_postgres_url

    async def later() -> None:
        await upgrade(pg_url)
        conn = await asyncpg.connect(pg_url.split("?")[0])
        try:
            await conn.execute(
                f'UPDATE "{parse_postgres_url(pg_url).schema}".schema_version SET version = 99')
        finally:
            await conn.close()

    asyncio.run(later())
    return pg_url


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_store_a_later_version_wrote_is_one_line_on_every_command(
        kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """A schema newer than this version reads: ``serve`` said so in one line on
    PostgreSQL and with a traceback on SQLite (where it opened the store only once it
    served); ``push outbox``/``dead``/``redrive`` with a traceback on both."""
    import subprocess
    import sys

    url = _newer(kind, tmp_path, request.getfixturevalue("pg_url") if kind == "postgres"
                 else "")
    said = "the database has schema version 99; this version of interlingua knows"
    for command in (["push", "outbox"], ["push", "dead"], ["push", "redrive", "1"]):
        code, output = _run(*command, "--store", url)
        assert code == 1, (command, output)
        assert output.startswith(f"error: cannot use the store: {said}"), output
    # (db upgrade wrote "Error: ..." of its own, where every command writes "error: ...")
    code, output = _run("db", "upgrade", "--store", url)
    assert code == 1 and output.startswith(f"error: {said}"), output
    done = subprocess.run(
        [sys.executable, "-m", "interlingua.cli.main", "serve", "examples/echo.py",
         "--port", "0", "--store", url], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"error: {said}"), done.stderr
    assert "Traceback" not in done.stderr and "Serving" not in done.stdout


def test_a_file_that_is_no_database_is_one_line_on_every_command(tmp_path: Path) -> None:
    # (serve and db upgrade gave a traceback; push said it in its own words, exit 1)
    import subprocess
    import sys

    text = tmp_path / "notes.db"
    text.write_text("a text file someone named .db, not a database\n" * 40)
    url = f"sqlite:///{text}"
    said = f"error: cannot use the store {url}: file is not a database"
    for command in (["push", "outbox"], ["push", "dead"], ["db", "upgrade"]):
        code, output = _run(*command, "--store", url)
        assert code == 2 and output.startswith(said), (command, output)
    done = subprocess.run(
        [sys.executable, "-m", "interlingua.cli.main", "serve", "examples/echo.py",
         "--port", "0", "--store", url], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.startswith(said), done.stderr


def test_the_gateway_checks_its_store_folder_before_it_serves(tmp_path: Path) -> None:
    # (it served, and every request to an agent was a 500 once it made the agent's file)
    regular = tmp_path / "plain-file"
    regular.write_text("not a folder")
    code, output = _run("gateway", "--mesh", "mqtt://127.0.0.1:1", "--namespace", "x",
                        "--port", "0", "--store", f"sqlite:///{regular}")
    assert code == 2, output
    assert f"{regular} is no folder the gateway can write in (File exists)" in output, output


@pytest.mark.parametrize("store", ["memory://", "postgresql://nobody@127.0.0.1:1/db"])
def test_rotating_the_key_of_a_store_without_a_key_file_names_that_store(store: str) -> None:
    # (a PostgreSQL store was called memory://)
    code, output = _run("push", "rotate-key", "--store", store)
    assert code == 1, output
    assert f"a server on {store} keeps no key file" in output, output
