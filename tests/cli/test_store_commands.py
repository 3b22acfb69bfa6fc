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
    code, output = _run("push", "dead", "--store", "postgresql://nobody@127.0.0.1:1/db")
    assert code == 1, output
    assert output.startswith("error: cannot use the store: cannot reach PostgreSQL"), output
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

