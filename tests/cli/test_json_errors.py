"""With ``--json``, every error is also one JSON object on stdout, ``{"error":
{"message": …}}`` (and the error's ``code`` where it has one), whatever the command and
whatever the error: an agent's, a store's, a port taken, a usage error. The one line on
stderr and the exit status stay as they are without ``--json``."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

from interlingua.cli.main import main


def _cases() -> list[tuple[str, list[str], int]]:
    # {url}: a live agent; {port}: a port taken; {db}: a store file with no deliveries
    return [
        ("agent error", ["get", "{url}", "nosuch"], 1),
        ("not found in a store", ["push", "redrive", "999", "--store", "{db}"], 1),
        ("store unreachable", ["push", "outbox", "--store",
                               "postgresql://nobody@127.0.0.1:1/db"], 3),
        ("unknown option", ["send", "{url}", "hi", "--bogus"], 2),
        ("bad URL", ["send", "notaurl", "hi"], 2),
        ("a call the dialect lacks", ["tasks", "{url}", "--dialect", "0.3"], 2),
        ("agent unreachable", ["card", "http://127.0.0.1:1/"], 3),
        ("serve, port taken", ["serve", "examples/echo.py", "--port", "{port}"], 2),
        ("listen, port taken", ["listen", "--port", "{port}"], 2),
        ("bad store URL", ["push", "outbox", "--store", "bogus://x"], 2),
    ]


@pytest.mark.parametrize(("args", "code"), [(a, c) for _, a, c in _cases()],
                         ids=[name for name, _, _ in _cases()])
def test_every_error_with_json_is_one_json_object_on_stdout(
        args: list[str], code: int, agent_url: str, taken: int, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/tasks.db"
    runner = CliRunner()
    if "{db}" in args:
        assert runner.invoke(main, ["db", "upgrade", "--store", db]).exit_code == 0
    args = [a.format(url=agent_url, port=taken, db=db) for a in args]
    plain = runner.invoke(main, args, prog_name="interlingua")
    done = runner.invoke(main, [*args, "--json"], prog_name="interlingua")
    assert done.exit_code == plain.exit_code == code, (done.stdout, done.stderr)
    # the line on stderr as without --json
    [line] = done.stderr.splitlines()
    assert line.startswith("error: ") and line == plain.stderr.strip(), (line, plain.stderr)
    answer = msgspec.json.decode(done.stdout)
    assert set(answer) == {"error"} and answer["error"]["message"], done.stdout
    assert answer["error"]["message"] in line
    assert plain.stdout == ""
