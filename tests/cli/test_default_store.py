"""``interlingua serve FILE`` with no ``--store``: each agent its own SQLite file under
``./.interlingua/``, also for names that read alike as a file name; a file an earlier
version made for an agent is still that agent's; a file made for another agent is refused.
The CLI runs as a subprocess, in a folder of the test's own."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec
import pytest

from interlingua import Agent, Client
from interlingua.cli.serve import StoreError, check_services, default_store_for

AGENT = '''
from interlingua import Agent


async def echo(text: str) -> str:
    return text


agent = Agent(name={name!r}, description="Echoes.", executor=echo)
'''

#: names that read alike as a file name: each pair was served on one file
ALIKE = [("翻訳", "要約"), ("C++ helper", "C helper"),
         ("a" * 64 + " one", "a" * 64 + " two")]


def _agent_file(folder: Path, name: str) -> Path:
    path = folder / f"agent_{hashlib.sha256(name.encode()).hexdigest()[:8]}.py"
    path.write_text(AGENT.format(name=name), encoding="utf-8")
    return path


def _command(folder: Path, name: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "interlingua.cli.main", "serve", str(_agent_file(folder, name)),
            "--json", "--log-level", "warning", "--port", "0", *args]


@contextmanager
def serving(folder: Path, name: str, *args: str) -> Iterator[dict[str, Any]]:
    proc = subprocess.Popen(_command(folder, name, *args), cwd=folder,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else b""
        yield msgspec.json.decode(line)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=40)
    assert b"Traceback" not in err, err


async def _send(info: dict[str, Any], text: str) -> str:
    async with Client(info["jsonrpc"]) as client:
        return (await client.send(text)).id


async def _listed(info: dict[str, Any]) -> list[str]:
    async with Client(info["jsonrpc"]) as client:
        return [t.id for t in (await client.list_tasks()).tasks]


@pytest.mark.parametrize(("first", "second"), ALIKE)
async def test_agents_served_in_turn_from_one_folder_keep_their_own_tasks(
        tmp_path: Path, first: str, second: str) -> None:
    with serving(tmp_path, first) as info:
        await _send(info, f"a secret of {first}")
        first_store = info["store"]
    with serving(tmp_path, second) as info:
        assert await _listed(info) == []
        assert info["store"] != first_store


def test_a_plain_name_keeps_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name, file in (("Echo", "echo"), ("Echo Agent", "echo-agent"),
                       ("Flight_booker", "flight-booker"), ("weather-bot 2.1", "weather-bot-2-1")):
        agent = Agent(name=name, description="", executor=lambda text: text)
        assert default_store_for(agent) == f"sqlite:///.interlingua/{file}.db"


@pytest.mark.parametrize(("name", "other", "old_file"), [
    ("翻訳", "要約", "agent.db"), ("C++ helper", "C helper", "c-helper.db")])
async def test_a_file_an_earlier_version_made_for_an_agent_is_still_its(
        tmp_path: Path, name: str, other: str, old_file: str) -> None:
    old = f"sqlite:///.interlingua/{old_file}"
    # where an earlier version kept the agent's tasks by default (it recorded no name)
    with serving(tmp_path, name, "--store", old) as info:
        task_id = await _send(info, "kept from before")
    with serving(tmp_path, name) as info:
        assert info["store"] == old
        assert await _listed(info) == [task_id]
    pushed = subprocess.run(
        [sys.executable, "-m", "interlingua.cli.main", "push", "outbox", "--agent",
         str(_agent_file(tmp_path, name))], cwd=tmp_path, capture_output=True, text=True,
        timeout=60)
    assert pushed.returncode == 0, pushed.stderr
    # the other agent, whose name made the same file name, gets a file of its own
    with serving(tmp_path, other) as info:
        assert await _listed(info) == []
        assert info["store"] != old


async def test_names_alike_but_for_case_get_a_store_each(tmp_path: Path) -> None:
    with serving(tmp_path, "Echo") as info:
        assert info["store"] == "sqlite:///.interlingua/echo.db"
        echo_task = await _send(info, "Echo's")
    with serving(tmp_path, "echo") as info:  # echo.db is Echo's
        assert await _listed(info) == []
        lower = info["store"]
        assert lower.startswith("sqlite:///.interlingua/echo-") and lower.endswith(".db")
    pushed = subprocess.run(
        [sys.executable, "-m", "interlingua.cli.main", "push", "outbox", "--agent",
         str(_agent_file(tmp_path, "echo"))], cwd=tmp_path, capture_output=True, text=True,
        timeout=60)
    assert pushed.returncode == 0, pushed.stderr
    with serving(tmp_path, "Echo") as info:
        assert await _listed(info) == [echo_task]
    with serving(tmp_path, "echo") as info:
        assert info["store"] == lower


def test_a_default_store_made_for_another_agent_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # (as when two agents alike in name start at once, before either made its file)
    monkeypatch.chdir(tmp_path)
    store = "sqlite:///.interlingua/echo.db"
    check_services(store, "local://", default_of="Echo")
    check_services(store, "local://", default_of="Echo")  # its own: again
    with pytest.raises(StoreError) as refused:
        check_services(store, "local://", default_of="echo")
    said = str(refused.value)
    assert "'Echo'" in said and "'echo'" in said and "--store" in said and "\n" not in said
