"""``--save DIR`` with file names the agent chose that this machine cannot write: a NUL
(no file name holds one) is saved under a name of the CLI's own, as an empty name or
``..`` is; a write the file system refuses (a name too long for it, a folder that may
not be written) is one line naming the file and the reason, exit 2, the failure being
local. It was a traceback, or "cannot reach URL", exit 3, as if the agent were gone."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner, Result

from interlingua import Agent, Context, file_part
from interlingua.cli.main import main
from tests.live import live_agent

#: the file name each first word asks for
NAMES = {"nul": "bad\x00name.txt", "long": "x" * 300 + ".txt", "plain": "report.csv"}


async def run(ctx: Context) -> None:
    name = NAMES[ctx.text]
    await ctx.complete(artifact=file_part(raw=b"a,b\n", media_type="text/csv", filename=name),
                       name="file")


@pytest.fixture(scope="module")
def agent_url() -> Iterator[str]:
    with live_agent(Agent("Namer", "Sends a file named as asked.", run)) as url:
        yield url


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), prog_name="interlingua")


def one_line(result: Result) -> str:
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    [line] = result.stderr.splitlines()
    assert line.startswith("error: ")
    return line


def test_a_name_with_a_nul_is_saved_under_a_name_of_its_own(agent_url: str,
                                                            tmp_path: Path) -> None:
    done = cli("send", agent_url, "nul", "--save", str(tmp_path))
    assert done.exit_code == 0, (done.stderr, done.exception)
    assert [p.name for p in tmp_path.iterdir()] == ["file-1"]
    assert (tmp_path / "file-1").read_bytes() == b"a,b\n"
    assert f"saved {tmp_path / 'file-1'} (4 bytes)" in done.stdout


def test_get_saves_it_the_same(agent_url: str, tmp_path: Path) -> None:
    sent = cli("send", agent_url, "nul", "--json")
    task_id = msgspec.json.decode(sent.stdout)["task"]["id"]
    done = cli("get", agent_url, task_id, "--save", str(tmp_path))
    assert done.exit_code == 0, (done.stderr, done.exception)
    assert (tmp_path / "file-1").read_bytes() == b"a,b\n"


def test_a_name_too_long_to_write_is_a_local_error(agent_url: str, tmp_path: Path) -> None:
    done = cli("send", agent_url, "long", "--save", str(tmp_path))
    assert done.exit_code == 2
    line = one_line(done)
    assert line.startswith(f"error: cannot save {tmp_path / NAMES['long']}: ")
    assert line.endswith("File name too long")
    assert "cannot reach" not in line
    # with --json: the task, then the error as JSON
    done = cli("send", agent_url, "long", "--save", str(tmp_path), "--json")
    assert done.exit_code == 2
    *_, last = done.stdout.splitlines()
    assert msgspec.json.decode(last)["error"]["message"].endswith("File name too long")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into any folder")
def test_a_folder_that_may_not_be_written_is_a_local_error(agent_url: str,
                                                           tmp_path: Path) -> None:
    folder = tmp_path / "shut"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        done = cli("send", agent_url, "plain", "--save", str(folder))
    finally:
        folder.chmod(0o700)
    assert done.exit_code == 2
    assert one_line(done) == (f"error: cannot save {folder / 'report.csv'}: "
                              "Permission denied")


def test_a_write_that_fails_is_a_local_error(agent_url: str, tmp_path: Path) -> None:
    # (a link to a folder that is not there: the name looks free, and the write fails)
    (tmp_path / "report.csv").symlink_to(tmp_path / "gone" / "report.csv")
    done = cli("send", agent_url, "plain", "--save", str(tmp_path))
    assert done.exit_code == 2
    assert one_line(done) == (f"error: cannot save {tmp_path / 'report.csv'}: "
                              "No such file or directory")
